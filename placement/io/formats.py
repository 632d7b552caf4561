"""The input formats mrc-plan reads, one row each (docs/formats.md).

A row says what the format is called, how a file of it is told from the others (by its
name, its first bytes, or, for the JSON files, the keys at the top of the parsed object),
which function reads it, the size cap a file of it is held to (io/limits.py), the section
of docs/formats.md that describes it, and the fuzz family (fuzz/targets.py) that mutates
it. Every place that must tell formats apart asks this table:

- `--current`: `current_format` (a directory is a snapshot, a file starting like
  `kafka-topics --describe` output is that, anything else reassignment JSON);
- `--sizes`: `sizes_format` (`kafka-log-dirs` output, else the CSV);
- `validate`: `validate_format` for a file by its name and bytes, `json_format` for a
  `.json` file by its top-level keys.

Where formats overlap, the first row of `FORMATS` that recognises a file wins, among the
rows the place accepts; a place that accepts no row for a file takes its fallback.

This module imports no reader: a row names its reader as ``module:function``, imported
when `Format.reader` is called, so telling a file's format loads nothing else.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from placement.io import limits
from placement.io.limits import Limit

SNIFF_BYTES = 4096  # how much of a file's start telling its format needs

# the banners `kafka-log-dirs --describe` prints before its JSON document
QUERYING = "Querying brokers for log directories information"
RECEIVED = "Received log directory information from brokers"


@dataclass(frozen=True)
class Probe:
    """What a format is told from: the path (its name), whether it is a directory, and
    the file's first bytes (at least SNIFF_BYTES, or all of it; empty for a directory or
    a file that is not there). ``text``: the whole file decoded, when the caller has it
    already (the sizes reader: it decides on the text)."""

    path: Path
    head: bytes = b""
    is_dir: bool = False
    text: str | None = None


def looks_like_describe(head: bytes) -> bool:
    """Whether a file that starts with ``head`` is `kafka-topics --describe` output: a
    `Topic:` label at the start of the text, of a line or after a tab, within the first
    SNIFF_BYTES (the one test every command uses to tell it from JSON)."""
    head = head[:SNIFF_BYTES]
    return head.lstrip().startswith(b"Topic:") or b"\nTopic:" in head or b"\tTopic:" in head


def looks_like_logdirs(text: str) -> bool:
    """Whether a sizes file is `kafka-log-dirs` output rather than the CSV: a banner or a
    JSON object first (a CSV starts with its header)."""
    return text.lstrip().startswith(("{", QUERYING, RECEIVED))


def _suffix(*names: str) -> Callable[[Probe], bool]:
    def recognise(probe: Probe) -> bool:
        return probe.path.suffix.lower() in names

    return recognise


def _describe(probe: Probe) -> bool:
    return not probe.is_dir and looks_like_describe(probe.head)


def _logdirs(probe: Probe) -> bool:
    text = probe.text
    if text is None:
        text = probe.head.decode("utf-8", "replace")
    return looks_like_logdirs(text)


def _directory(probe: Probe) -> bool:
    return probe.is_dir


def _never(probe: Probe) -> bool:
    """Told by no name or bytes: the file is what a flag or a fallback says."""
    return False


_POLICY_ONLY_KEYS = frozenset(("replicas", "observers", "observerPromotionPolicy"))


def _keys(*required: str, any_of: Iterable[str] = ()) -> Callable[[dict[str, Any]], bool]:
    """A top-level object holding every key of ``required`` and one of ``any_of``."""
    wanted = frozenset(any_of)

    def holds(value: dict[str, Any]) -> bool:
        return all(k in value for k in required) and (not wanted or bool(wanted & value.keys()))

    return holds


def _policy_keys(value: dict[str, Any]) -> bool:
    """An object holding a policy's own keys is a policy, whatever else it holds."""
    return bool(_POLICY_ONLY_KEYS & value.keys())


@dataclass(frozen=True)
class Format:
    """One input format. ``recognise``: from the name and first bytes; ``keys``: from
    the top-level object of a parsed JSON file (None: not told by keys). ``reads``: the
    reader as ``module:function``. ``cap``: the limit a file of it is held to.
    ``anchor``: its section of docs/formats.md. ``fuzz``: its family in fuzz/targets.py."""

    name: str
    title: str
    recognised_by: str
    recognise: Callable[[Probe], bool]
    reads: str
    cap: Limit
    anchor: str
    fuzz: str
    keys: Callable[[dict[str, Any]], bool] | None = None

    @property
    def reader(self) -> Callable[..., Any]:
        module, _, function = self.reads.partition(":")
        found: Callable[..., Any] = getattr(importlib.import_module(module), function)
        return found

    def docs_link(self, base: str = "formats.md") -> str:
        return f"{base}#{self.anchor}"


FORMATS: tuple[Format, ...] = (
    Format(
        "snapshot",
        "Snapshot",
        "a directory (with `brokers`, `topics` and `partitions` tables)",
        _directory,
        "placement.io.snapshot:read_snapshot",
        limits.PARTITIONS_TOTAL,
        "snapshots",
        "snapshot",
    ),
    Format(
        "properties",
        "server.properties",
        "a name ending in `.properties`",
        _suffix(".properties"),
        "placement.io.properties:parse_properties",
        limits.PROPERTIES_BYTES,
        "serverproperties",
        "properties",
    ),
    Format(
        "policy",
        "Placement policy",
        "a name ending in `.json` (validate), holding an object with `replicas` or "
        "`observers`, or of no other JSON kind",
        _suffix(".json"),
        "placement.rules.validate:check_policy_text",
        limits.POLICY_BYTES,
        "placement-policy",
        "policy",
        _policy_keys,
    ),
    Format(
        "describe",
        "kafka-topics --describe output",
        f"a `Topic:` label at the start of a line or after a tab in the first "
        f"{SNIFF_BYTES:,} bytes",
        _describe,
        "placement.io.describe:read_describe",
        limits.DESCRIBE_BYTES,
        "kafka-topics---describe-output",
        "describe",
    ),
    Format(
        "inventory",
        "Inventory",
        'a top-level `"brokers"` (validate); the file given as `--inventory`',
        _never,
        "placement.io.inventory:load_inventory",
        limits.INVENTORY_BYTES,
        "inventory",
        "inventory-json",
        _keys("brokers"),
    ),
    Format(
        "topics",
        "Topics file",
        'a top-level `"topics"` or `"default_placement"` (validate); the file given as `--topics`',
        _never,
        "placement.plan.topics:read_topics",
        limits.TOPICS_BYTES,
        "topics-file",
        "topics",
        _keys(any_of=("topics", "default_placement")),
    ),
    Format(
        "summary",
        "Assign summary",
        'a top-level `"batches"` and `"total"` (validate); `summary.json` of a batch directory',
        _never,
        "placement.io.summary:read_summary",
        limits.PLAN_BYTES,
        "assign-summary",
        "summary",
        _keys("batches", "total"),
    ),
    Format(
        "reassignment",
        "Reassignment JSON",
        'a top-level `"partitions"` (validate); a `--current` file that is no describe output',
        _never,
        "placement.io.reassignment:read_plan_entries",
        limits.PLAN_BYTES,
        "reassignment-json",
        "reassignment",
        _keys("partitions"),
    ),
    Format(
        "logdirs",
        "kafka-log-dirs output",
        "a `--sizes` file starting with `{` or a kafka-log-dirs banner",
        _logdirs,
        "placement.io.logdirs:parse_logdirs",
        limits.LOGDIRS_BYTES,
        "kafka-log-dirs-output",
        "logdirs",
    ),
    Format(
        "sizes",
        "Sizes CSV",
        "a `--sizes` file that is no kafka-log-dirs output",
        _never,
        "placement.io.convert:sizes_csv",
        limits.SIZES_BYTES,
        "sizes-csv",
        "sizes",
    ),
    Format(
        "replica-status",
        "kafka-replica-status output",
        "the file given as `--replica-status`",
        _never,
        "placement.io.replicastatus:read_replica_status",
        limits.REPLICA_STATUS_BYTES,
        "kafka-replica-status-output",
        "replica-status",
    ),
)

BY_NAME: dict[str, Format] = {f.name: f for f in FORMATS}

# what each place accepts, and its fallback (the last name)
CURRENT = ("snapshot", "describe", "reassignment")
SIZES = ("logdirs", "sizes")
VALIDATE = ("properties", "policy", "describe", "policy")


def detect(probe: Probe, accepted: tuple[str, ...]) -> Format:
    """The first row of FORMATS among ``accepted[:-1]`` that recognises ``probe``, else
    the fallback ``accepted[-1]``."""
    among = set(accepted[:-1])
    for fmt in FORMATS:
        if fmt.name in among and fmt.recognise(probe):
            return fmt
    return BY_NAME[accepted[-1]]


def json_format(value: object) -> Format | None:
    """The first row of FORMATS whose keys a parsed JSON value's top-level object holds
    (None: not an object, or no row's keys)."""
    if not isinstance(value, dict):
        return None
    return next((f for f in FORMATS if f.keys is not None and f.keys(value)), None)


_Identity = tuple[str, int, int, int, int]
_heads: dict[_Identity, bytes] = {}


def _identity(path: Path, st: os.stat_result) -> _Identity:
    return (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def read_head(path: Path) -> bytes:
    """The first SNIFF_BYTES of a regular file (b"" when it is not one, or not there);
    OSError when it cannot be opened. Read once per file (as long as it is unchanged),
    however many places ask for the format of one `--current`."""
    try:
        st = path.stat()
    except OSError:
        return b""
    if not path.is_file():
        return b""
    key = _identity(path, st)
    head = _heads.get(key)
    if head is None:
        with path.open("rb") as fh:
            head = fh.read(SNIFF_BYTES)
        _heads.clear()  # one file at a time is what is asked again
        _heads[key] = head
    return head


def current_format(path: Path, *, quiet: bool = False) -> Format:
    """What `--current PATH` is read as. ``quiet``: a file that cannot be opened counts
    as reassignment JSON (reading it for real reports why), rather than raising OSError."""
    if path.is_dir():
        return BY_NAME["snapshot"]
    try:
        head = read_head(path)
    except OSError:
        if not quiet:
            raise
        head = b""
    return detect(Probe(path, head), CURRENT)


def sizes_format(path: Path, text: str) -> Format:
    """What a `--sizes` file (its whole text) is read as."""
    return detect(Probe(path, text=text), SIZES)


def validate_format(path: Path, data: bytes) -> Format:
    """What `validate` checks a file as: by its name, then its bytes; JSON (`policy`,
    then `json_format` on its keys) when nothing else recognises it."""
    return detect(Probe(path, data), VALIDATE)


def _cap_text(cap: Limit) -> str:
    """A cap's default as the docs say it: bytes in MiB when whole ones."""
    bytes_ = "bytes "
    if cap.what.startswith(bytes_) and cap.default % limits.MiB == 0:
        return f"{cap.default // limits.MiB:,} MiB {cap.what[len(bytes_) :]}"
    return f"{cap.default:,} {cap.what}"


def markdown_table(base: str = "formats.md") -> str:
    """The formats as a Markdown table: name, how a file is recognised, its size cap,
    and the link to its section of docs/formats.md (``base``: that file's path as the
    page holding the table links to it)."""
    rows = [
        "| Format | Recognised by | Size cap | Described in |",
        "|---|---|---|---|",
    ]
    for f in FORMATS:
        cap = f"{_cap_text(f.cap)} (`{f.cap.name}`)"
        rows.append(
            f"| `{f.name}` | {f.recognised_by} | {cap} | [{f.title}]({f.docs_link(base)}) |"
        )
    return "\n".join(rows) + "\n"
