"""Confluent's `kafka-replica-status` output (docs/formats.md, kafka-replica-status output):
per replica of each partition, as its leader sees it, whether it leads, is an observer, may
join the ISR, is in it, is caught up, how long ago it last caught up and last fetched
(`LastCaughtUpLagMs`, `LastFetchLagMs`) and its log start and end offsets.

The tool prints three forms, all read here (told apart by their first characters):

- `--verbose`: one `Key: value` line per field, a blank line between replicas;
- the default, compact: a header line of the twelve column names, then one row per
  replica, columns padded with spaces;
- `--json`: an array of topics, `{"Topic": ..., "Partitions": [{"Partition": ...,
  "Replicas": [{"Replica": ..., "IsLeader": ..., ...}]}]}`. An array of flat replica
  objects (`Topic` and `Partition` in each) is read too. Keys may start with a lower-case
  letter (`isLeader`, as the tool's documentation spells them).

Kafka's rules: topic names legal, partitions and broker ids Java ints from 0, offsets Java
longs from -1 (-1: the leader has no fetch from the replica yet), each replica once per
partition, at most one leader per partition. The lags are differences of the leader's
clock readings: -1 when unknown, and a large negative number for a partition the output
shows without a leader (the tool subtracts from 0); every negative lag reads as unknown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from placement.errors import InputError
from placement.io.jsonsrc import JsonSyntaxError, ShapeError, is_json_int, parse_json
from placement.io.limits import PARTITIONS_TOTAL, REPLICA_STATUS_BYTES, check_count
from placement.io.positions import LineIndex, position_in
from placement.io.textfile import (
    char_kind,
    cut,
    int_problem_short,
    read_text,
    short,
    short_key,
    starts_with,
    topic_name_problem,
)
from placement.model.assignment import Key
from placement.model.kafka import (
    INT32_MAX,
    INT64_MAX,
    TOPIC_NAME_HINT,
    parse_ascii_int,
)

# the columns the tool prints, in its order
COLUMNS = (
    "Topic",
    "Partition",
    "Replica",
    "IsLeader",
    "IsObserver",
    "IsIsrEligible",
    "IsInIsr",
    "IsCaughtUp",
    "LastCaughtUpLagMs",
    "LastFetchLagMs",
    "LogStartOffset",
    "LogEndOffset",
)
FLAGS = ("IsLeader", "IsObserver", "IsIsrEligible", "IsInIsr", "IsCaughtUp")
LAGS = ("LastCaughtUpLagMs", "LastFetchLagMs")
OFFSETS = ("LogStartOffset", "LogEndOffset")
REPLICA_FIELDS = COLUMNS[2:]  # what a replica object of the nested JSON holds
INT64_MIN = -INT64_MAX - 1

FORMS_HINT = (
    "pass what kafka-replica-status prints: --verbose (Key: value lines), the default "
    "columns, or --json"
)
JSON_HINT = (
    'kafka-replica-status --json prints [{"Topic":"orders","Partitions":[{"Partition":0,'
    '"Replicas":[{"Replica":1,"IsLeader":true,...,"LogEndOffset":10000}]}]}]'
)
OLD_FORM_HINT = (
    "this is the output of an older kafka-replica-status (Mode, IsInSync): run a newer one, "
    "which prints IsLeader, IsObserver and IsInIsr"
)


@dataclass(frozen=True, slots=True)
class ReplicaStatus:
    """One replica as its partition's leader reports it. A negative lag or offset: unknown."""

    replica: int
    is_leader: bool
    is_observer: bool
    is_isr_eligible: bool
    is_in_isr: bool
    is_caught_up: bool
    last_caught_up_lag_ms: int
    last_fetch_lag_ms: int
    log_start_offset: int
    log_end_offset: int


@dataclass(frozen=True)
class ReplicaStatusRead:
    """The replicas of each partition the output lists, by broker id, and where from."""

    path: str
    form: Literal["verbose", "compact", "json"]
    partitions: dict[Key, dict[int, ReplicaStatus]]

    @property
    def replicas(self) -> int:
        return sum(len(r) for r in self.partitions.values())


# a record's values by column, and how to fail at one of them (column, message, hint)
Fail = Callable[[str, str, str], InputError]


class _Builder:
    """The replicas read so far, with the rules that span records."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.partitions: dict[Key, dict[int, ReplicaStatus]] = {}
        self.cap = PARTITIONS_TOTAL.value()

    def add(self, topic: str, partition: int, status: ReplicaStatus, fail: Fail) -> None:
        replicas = self.partitions.get((topic, partition))
        if replicas is None:
            replicas = self.partitions[(topic, partition)] = {}
            if len(self.partitions) > self.cap:
                check_count(PARTITIONS_TOTAL, len(self.partitions), f"{self.path}: partitions")
        if status.replica in replicas:
            raise fail(
                "Replica",
                f"{cut(topic)}-{partition}: replica {status.replica} is listed twice",
                "the tool prints each replica of a partition once: was the file pieced together?",
            )
        if status.is_leader and any(r.is_leader for r in replicas.values()):
            raise fail(
                "IsLeader",
                f"{cut(topic)}-{partition}: a second leader (broker {status.replica})",
                "a partition has one leader: was the file pieced together from two runs?",
            )
        replicas[status.replica] = status


def _status(values: dict[str, Any]) -> ReplicaStatus:
    return ReplicaStatus(
        values["Replica"],
        values["IsLeader"],
        values["IsObserver"],
        values["IsIsrEligible"],
        values["IsInIsr"],
        values["IsCaughtUp"],
        values["LastCaughtUpLagMs"],
        values["LastFetchLagMs"],
        values["LogStartOffset"],
        values["LogEndOffset"],
    )


# -- the text forms ----------------------------------------------------------------------


def _text_value(column: str, raw: str) -> tuple[Any, str | None]:
    """(value, None) or (None, the problem) for one column's text."""
    if column == "Topic":
        return raw, topic_name_problem(raw)
    if column in FLAGS:
        if raw in ("true", "false"):
            return raw == "true", None
        return None, f"{column}: expected true or false, found {short(raw)}"
    if column in ("Partition", "Replica"):
        what = "partition" if column == "Partition" else "broker id"
        value = parse_ascii_int(raw)
        return value, None if value is not None else int_problem_short(raw, f"{column} ({what})")
    low = INT64_MIN if column in LAGS else -1
    value = parse_ascii_int(raw, low=low, high=INT64_MAX)
    if value is not None:
        return value, None
    return None, int_problem_short(raw, column, low=low, high=INT64_MAX)


def _hint(column: str) -> str:
    if column == "Topic":
        return TOPIC_NAME_HINT
    if column in ("Partition", "Replica"):
        return f"partitions and broker ids are integers from 0 to {INT32_MAX}"
    if column in OFFSETS:
        return "offsets are Java longs; -1 means the leader has no fetch from the replica yet"
    if column in LAGS:
        return "lags are Java longs in milliseconds; -1 means unknown"
    return "the tool prints true or false"


_VERBOSE_LINE = re.compile(r"([A-Za-z-]+):[ \t]?(.*)")


def _parse_verbose(text: str, path: str, out: _Builder) -> None:
    """Blocks of `Key: value` lines, one block per replica, blank lines between."""
    values: dict[str, Any] = {}
    where: dict[str, tuple[int, int]] = {}  # column -> (line, column of its value)
    first = 0  # the line of the block's first field

    def fail_at(column: str, message: str, hint: str) -> InputError:
        line, col = where.get(column, (first, 1))
        return InputError(path, message, hint, line=line, column=col)

    def close(end_line: int) -> None:
        missing = [c for c in COLUMNS if c not in values]
        if missing:
            raise InputError(
                path,
                f"the replica that starts on line {first} lacks {', '.join(missing)}",
                "--verbose prints every field of every replica, " + ", ".join(COLUMNS),
                line=end_line,
                column=1,
            )
        out.add(values["Topic"], values["Partition"], _status(values), fail_at)
        values.clear()
        where.clear()

    lines = text.splitlines()
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            if values:
                close(number)
            continue
        m = _VERBOSE_LINE.fullmatch(line)
        if m is None:
            # nothing of the line is quoted: it may be anything, a secret too
            raise InputError(
                path,
                "expected a `Key: value` line of kafka-replica-status --verbose, found a line "
                f"that starts with {starts_with(line)}",
                FORMS_HINT,
                line=number,
                column=1,
            )
        key, raw_value = m[1], m[2].strip()
        if key == "Topic-Partition-Replica" or key in ("Mode", "IsInSync"):
            raise InputError(path, f"unexpected field {key}", OLD_FORM_HINT, line=number, column=1)
        if key not in COLUMNS:
            raise InputError(
                path,
                f"unknown field {short(key)}",
                "kafka-replica-status --verbose prints " + ", ".join(COLUMNS),
                line=number,
                column=1,
            )
        if not values:
            first = number
        if key in values:
            raise InputError(
                path,
                f"{key} appears twice in the replica that starts on line {first}",
                "a blank line separates one replica from the next",
                line=number,
                column=1,
            )
        col = m.start(2) + 1 + (len(m[2]) - len(m[2].lstrip()))
        value, problem = _text_value(key, raw_value)
        if problem is not None:
            raise InputError(path, problem, _hint(key), line=number, column=col)
        values[key] = value
        where[key] = (number, col)
    if values:
        close(len(lines) + 1)


_FIELD = re.compile(r"\S+")


def _parse_compact(text: str, path: str, out: _Builder) -> None:
    """The default form: a header of the column names, one row per replica."""
    lines = text.splitlines()
    header_at = next(i for i, line in enumerate(lines) if line.strip())
    names = lines[header_at].split()
    if names != list(COLUMNS):
        old = "Mode" in names or "IsInSync" in names
        # the first column that differs, by its place alone: the line may be anything
        at = next((i for i, (a, b) in enumerate(zip(names, COLUMNS, strict=False)) if a != b), None)
        if at is None:
            found = f"{len(names)} columns, not {len(COLUMNS)}"
        else:
            found = f"column {at + 1} is not {COLUMNS[at]}"
        raise InputError(
            path,
            f"not the header of kafka-replica-status's columns: {found}",
            OLD_FORM_HINT if old else "kafka-replica-status prints " + " ".join(COLUMNS),
            line=header_at + 1,
            column=1,
        )
    for index in range(header_at + 1, len(lines)):
        line = lines[index].rstrip("\r")
        number = index + 1
        if not line.strip():
            continue
        fields = list(_FIELD.finditer(line))
        if len(fields) != len(COLUMNS):
            raise InputError(
                path,
                f"expected {len(COLUMNS)} columns, found {len(fields)}",
                "one replica per line, its values in the header's order",
                line=number,
                column=1,
            )
        values: dict[str, Any] = {}
        cols: dict[str, int] = {}
        for column, m in zip(COLUMNS, fields, strict=True):
            value, problem = _text_value(column, m[0])
            if problem is not None:
                raise InputError(path, problem, _hint(column), line=number, column=m.start() + 1)
            values[column] = value
            cols[column] = m.start() + 1
        out.add(
            values["Topic"], values["Partition"], _status(values), _row_fail(path, number, cols)
        )


def _row_fail(path: str, line: int, columns: dict[str, int]) -> Fail:
    def fail(column: str, message: str, hint: str) -> InputError:
        return InputError(path, message, hint, line=line, column=columns.get(column, 1))

    return fail


# -- the JSON form -----------------------------------------------------------------------


class _DuplicateKeyError(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKeyError
    return out


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _canonical(obj: dict[str, Any], ptr: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    """``obj`` with its keys spelt as the tool does (`isLeader` -> `IsLeader`); unknown
    keys and a key spelt both ways are refused."""
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = key[:1].upper() + key[1:]
        if name not in allowed:
            raise ShapeError(
                f"{ptr}/{_escape(key)}",
                f"unknown key {short(key)}",
                "the keys here are " + ", ".join(allowed),
                key=True,
            )
        if name in out:
            raise ShapeError(
                f"{ptr}/{_escape(key)}", f"{name} appears twice (spelt two ways)", "", key=True
            )
        out[name] = value
    missing = [k for k in allowed if k not in out]
    if missing:
        raise ShapeError(ptr, f"the object lacks {', '.join(missing)}", JSON_HINT)
    return out


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _spelling(obj: dict[str, Any], name: str) -> str:
    """The key of ``obj`` that spells column ``name`` (either first letter)."""
    return name if name in obj else name[:1].lower() + name[1:]


def _json_value(obj: dict[str, Any], column: str, ptr: str) -> Any:
    """Column ``column`` of the (canonical) object at ``ptr``, checked."""
    value = obj[column]
    at = f"{ptr}/{column}"
    if column == "Topic":
        if type(value) is not str:
            raise ShapeError(at, "Topic must be a string", TOPIC_NAME_HINT)
        problem = topic_name_problem(value)
        if problem is not None:
            raise ShapeError(at, problem, TOPIC_NAME_HINT)
        return value
    if column in FLAGS:
        if type(value) is not bool:
            raise ShapeError(at, f"{column} must be true or false", _hint(column))
        return value
    if column in ("Partition", "Replica"):
        low, high = 0, INT32_MAX
    else:
        low, high = (INT64_MIN if column in LAGS else -1), INT64_MAX
    if not is_json_int(value) or not low <= value <= high:
        raise ShapeError(at, f"{column} must be an integer from {low} to {high}", _hint(column))
    return value


def _parse_json(text: str, path: str, out: _Builder) -> None:
    decoder = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant)
    try:
        doc = decoder.decode(text)
    except (_DuplicateKeyError, ValueError, RecursionError):
        raise _json_problem(text, path) from None
    try:
        _walk(doc, out, path, text)
    except ShapeError as p:
        raise _located(text, path, p) from None


def _walk(doc: Any, out: _Builder, path: str, text: str) -> None:
    if type(doc) is dict:
        raise ShapeError(
            "",
            "a JSON object; kafka-replica-status --json prints an array",
            JSON_HINT,
        )
    if type(doc) is not list:
        raise ShapeError("", "expected the array kafka-replica-status --json prints", JSON_HINT)
    for i, entry in enumerate(doc):
        ptr = f"/{i}"
        if type(entry) is not dict:
            raise ShapeError(ptr, "expected an object per topic (or per replica)", JSON_HINT)
        nested = "Partitions" in entry or "partitions" in entry
        if nested:
            _topic_entry(entry, ptr, out, path, text)
        else:
            obj = _canonical(entry, ptr, COLUMNS)
            values = {c: _json_value(obj, c, ptr) for c in COLUMNS}
            out.add(
                values["Topic"],
                values["Partition"],
                _status(values),
                _json_fail(text, path, ptr, entry),
            )


def _topic_entry(entry: dict[str, Any], ptr: str, out: _Builder, path: str, text: str) -> None:
    topic_obj = _canonical(entry, ptr, ("Topic", "Partitions"))
    topic = _json_value(topic_obj, "Topic", ptr)
    parts = topic_obj["Partitions"]
    parts_ptr = f"{ptr}/{_spelling(entry, 'Partitions')}"
    if type(parts) is not list:
        raise ShapeError(parts_ptr, "Partitions must be an array", JSON_HINT)
    for j, part in enumerate(parts):
        pptr = f"{parts_ptr}/{j}"
        if type(part) is not dict:
            raise ShapeError(pptr, "expected an object per partition", JSON_HINT)
        part_obj = _canonical(part, pptr, ("Partition", "Replicas"))
        partition = _json_value(part_obj, "Partition", pptr)
        replicas = part_obj["Replicas"]
        rptr = f"{pptr}/{_spelling(part, 'Replicas')}"
        if type(replicas) is not list:
            raise ShapeError(rptr, "Replicas must be an array", JSON_HINT)
        for k, replica in enumerate(replicas):
            ptr_k = f"{rptr}/{k}"
            if type(replica) is not dict:
                raise ShapeError(ptr_k, "expected an object per replica", JSON_HINT)
            obj = _canonical(replica, ptr_k, REPLICA_FIELDS)
            values = {c: _json_value(obj, c, ptr_k) for c in REPLICA_FIELDS}
            out.add(topic, partition, _status(values), _json_fail(text, path, ptr_k, replica))


def _json_fail(text: str, path: str, ptr: str, obj: dict[str, Any]) -> Fail:
    def fail(column: str, message: str, hint: str) -> InputError:
        return _located(text, path, ShapeError(f"{ptr}/{_spelling(obj, column)}", message, hint))

    return fail


def _located(text: str, path: str, p: ShapeError) -> InputError:
    """The InputError for ``p``, at its value's line and column (the document parsed again
    by jsonsrc, which keeps positions: only on a problem)."""
    try:
        doc = parse_json(text)
    except JsonSyntaxError:  # what the standard library let through (a lone surrogate)
        return _json_problem(text, path)
    pos = doc.locate(p.pointer, key=p.key)
    return InputError(path, p.message, p.hint, line=pos.line, column=pos.column)


def _json_problem(text: str, path: str) -> InputError:
    """What the standard library refused, in jsonsrc's words and with its position."""
    try:
        doc = parse_json(text)
    except JsonSyntaxError as exc:
        pos = LineIndex(text).position(exc.offset)
        hint = exc.hint or "kafka-replica-status prints valid JSON: was the file edited or cut?"
        return InputError(path, exc.message, hint, line=pos.line, column=pos.column)
    if doc.duplicates:
        d = doc.duplicates[0]
        pos = doc.position(d.offset)
        return InputError(
            path,
            f"duplicate key {short_key(d.key)}",
            "the tool prints each key once: this file was edited or pieced together",
            line=pos.line,
            column=pos.column,
        )
    return InputError(path, "not valid JSON (NaN or Infinity?)", JSON_HINT, line=1, column=1)


# -- entry points ------------------------------------------------------------------------


def sniff(text: str) -> Literal["verbose", "compact", "json"] | None:
    """Which form ``text`` is in: JSON from its first character, else from its first line."""
    head = text.lstrip()
    if head.startswith(("[", "{")):
        return "json"
    first = head.split("\n", 1)[0]
    if first.startswith(("Topic:", "Topic-Partition-Replica:")):
        return "verbose"
    if first.split()[:2] == ["Topic", "Partition"]:
        return "compact"
    return None


def parse_replica_status(text: str, path: str = "<kafka-replica-status>") -> ReplicaStatusRead:
    """The output of `kafka-replica-status` in any of its forms; every problem is an
    InputError with line and column."""
    if not text.strip():
        raise InputError(path, "the file is empty", FORMS_HINT)
    form = sniff(text)
    out = _Builder(path)
    if form == "json":
        _parse_json(text, path, out)
    elif form == "verbose":
        _parse_verbose(text, path, out)
    elif form == "compact":
        _parse_compact(text, path, out)
    else:
        at = len(text) - len(text.lstrip())
        pos = position_in(text, at)
        # nothing of the file is quoted: it may be anything, a secret too
        raise InputError(
            path,
            f"not kafka-replica-status output: it starts with {char_kind(text[at])}",
            FORMS_HINT + " (keep only the tool's standard output)",
            line=pos.line,
            column=pos.column,
        )
    assert form is not None
    return ReplicaStatusRead(path, form, out.partitions)


def read_replica_status(path: str) -> ReplicaStatusRead:
    """The file at ``path``, refused before reading when above its size cap."""
    return parse_replica_status(
        read_text(path, "the kafka-replica-status output", REPLICA_STATUS_BYTES), path
    )
