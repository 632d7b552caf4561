"""The topics file: the planner's desired state (topics, partition counts, policies).

    {"default_placement": {...},
     "topics": [{"name": "orders", "partitions": 12, "placement": {...} | "orders.json",
                 "min_isr": 2}]}

A placement given as a string is a path relative to the topics file's directory (or to
an explicit root): an absolute path, a `..` that climbs out and a symlink that leads out
are refused, as are files that are not regular files or are larger than a policy can be.
A referenced file that is not a placement policy is refused without quoting any of it:
in CI the topics file comes from a pull request, and the reference could name a secret.
Every policy is checked with the `validate` rules; errors stop the read with their
diagnostics.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from placement.errors import InputError
from placement.io.jsonsrc import (
    EncodingError,
    JsonSyntaxError,
    ParsedJson,
    decode_utf8,
    parse_json,
    parse_json_file,
)
from placement.io.limits import (
    PARTITIONS_PER_TOPIC,
    PARTITIONS_TOTAL,
    POLICY_BYTES,
    TOPICS,
    TOPICS_BYTES,
    read_capped,
)
from placement.io.positions import LineIndex
from placement.io.textfile import read_text
from placement.model.diagnostic import Diagnostic, Severity
from placement.model.kafka import TOPIC_NAME_HINT, topic_name_error
from placement.model.policy import PlacementPolicy
from placement.rules.base import CheckContext
from placement.rules.schema import POLICY_KEYS
from placement.rules.validate import cap_diagnostics, check_policy_text, check_policy_value

NAME_MAX = 255  # bytes per path component (Linux, macOS)
PATH_MAX = 4096


class InvalidPoliciesError(InputError):
    """One or more policies in the topics file fail validation; carries the diagnostics."""

    def __init__(self, path: str, diagnostics: list[Diagnostic]) -> None:
        diagnostics = cap_diagnostics(diagnostics)
        errors = [d for d in diagnostics if d.severity is Severity.ERROR]
        first = errors[0]
        super().__init__(
            first.file,
            f"{len(errors)} placement error(s); first: {first.code} {first.message}",
            "fix the placement; the diagnostics below list every finding",
            line=first.line,
            column=first.column,
        )
        self.diagnostics = diagnostics


@dataclass(frozen=True, slots=True)
class TopicSpec:
    name: str
    partitions: int
    policy: PlacementPolicy
    min_isr: int | None = None


def _read_doc(path: Path) -> tuple[str, ParsedJson]:
    text = read_text(path, "the topics file", TOPICS_BYTES)
    return text, parse_json_file(text, str(path))


class RefusedReferenceError(Exception):
    """A placement reference that may not be read; the message quotes no file content."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def resolve_reference(directory: Path, ref: str, root: Path | None = None) -> Path:
    """The regular file ``ref`` names, relative to ``directory``, that lies inside ``root``
    (default: ``directory``); refuses absolute paths, names too long for the file system,
    and anything that resolves outside ``root`` (through `..` or a symlink)."""
    root = directory if root is None else root
    if not ref or "\x00" in ref:
        raise RefusedReferenceError(
            "a placement reference must be a non-empty path without NUL characters"
        )
    if os.path.isabs(ref) or ref.startswith("~"):
        raise RefusedReferenceError(
            f"placement reference {ref!r} is absolute",
            f"write a path relative to {directory}",
        )
    if len(ref.encode("utf-8", "surrogatepass")) > PATH_MAX or any(
        len(part.encode("utf-8", "surrogatepass")) > NAME_MAX for part in ref.split("/")
    ):
        raise RefusedReferenceError(
            f"placement reference of {len(ref)} characters is longer than a file name can be",
            f"file names have at most {NAME_MAX} bytes, paths {PATH_MAX}",
        )
    try:
        base = root.resolve()
        target = (directory.resolve() / ref).resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        raise RefusedReferenceError(
            f"placement reference {ref!r} cannot be resolved: {exc}"
        ) from None
    if not target.is_relative_to(base):
        raise RefusedReferenceError(
            f"placement reference {ref!r} leads outside {root}",
            "references are resolved inside the topics file's directory (or --root DIR); "
            "'..' and symlinks may not leave it",
        )
    try:
        st = target.stat()
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise RefusedReferenceError(
                f"placement file {ref!r} not found (relative to {directory})"
            ) from None
        raise RefusedReferenceError(
            f"placement file {ref!r} cannot be read: {exc.strerror}"
        ) from None
    if not stat.S_ISREG(st.st_mode):
        raise RefusedReferenceError(f"placement reference {ref!r} is not a regular file")
    return target


def _read_reference(target: Path, ref: str) -> str:
    """The text of a referenced policy, capped; refused without quoting it when it is not
    UTF-8 JSON shaped like a placement policy."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(target, flags)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise RefusedReferenceError(f"placement reference {ref!r} is not a regular file")
            data = read_capped(fh, str(target), POLICY_BYTES)
    except OSError as exc:
        raise RefusedReferenceError(
            f"placement file {ref!r} cannot be read: {exc.strerror}"
        ) from None
    except InputError:
        raise RefusedReferenceError(
            f"{ref!r} is not a placement policy: larger than {POLICY_BYTES.value():,} bytes",
            f"raise {POLICY_BYTES.name} if it really is one",
        ) from None
    not_policy = f"{ref!r} is not a placement policy"
    try:
        text, _ = decode_utf8(data)
    except EncodingError:
        raise RefusedReferenceError(f"{not_policy} (not UTF-8 text)") from None
    try:
        value = parse_json(text).value
    except JsonSyntaxError as exc:
        pos = LineIndex(text).position(exc.offset)
        raise RefusedReferenceError(
            f"{not_policy} (not valid JSON: {exc.kind.value} at line {pos.line}, "
            f"column {pos.column})",
            f"run `mrc-plan validate` on {ref} for the details",
        ) from None
    if not isinstance(value, dict) or not set(value) & set(POLICY_KEYS):
        raise RefusedReferenceError(
            f'{not_policy} (a policy is a JSON object with "version" and "replicas")'
        )
    return text


def read_topics(
    path: str | Path, ctx: CheckContext | None = None, *, refs_root: str | Path | None = None
) -> list[TopicSpec]:
    """Read and check a topics file; ``ctx`` adds inventory checks to every policy.

    Placement references are resolved inside ``refs_root`` (default: the topics file's
    directory) and may not leave it.
    """
    p = Path(path)
    name = str(p)
    ctx = ctx or CheckContext()
    confine = Path(refs_root) if refs_root is not None else None
    _, doc = _read_doc(p)

    def fail(ptr: str, message: str, hint: str = "", key: bool = False) -> InputError:
        pos = doc.locate(ptr, key=key)
        return InputError(name, message, hint, line=pos.line, column=pos.column)

    if doc.duplicates:
        d = doc.duplicates[0]
        raise fail(d.pointer, f'duplicate key "{d.key}"', key=True)
    root: Any = doc.value
    if not isinstance(root, dict):
        raise fail(
            "",
            "a topics file must be a JSON object",
            '{"default_placement": {...}, "topics": [...]}',
        )
    for key in root:
        if key not in ("default_placement", "topics"):
            raise fail(
                f"/{key}",
                f'unknown key "{key}"',
                'allowed: "default_placement", "topics"',
                key=True,
            )
    topics = root.get("topics")
    if not isinstance(topics, list) or not topics:
        raise fail("/topics" if "topics" in root else "", '"topics" must be a non-empty array')

    diagnostics: list[Diagnostic] = []
    cache: dict[str, PlacementPolicy | None] = {}

    def policy_at(ptr: str, value: Any, ctx: CheckContext) -> PlacementPolicy | None:
        if isinstance(value, str):
            try:
                ref = resolve_reference(p.parent, value, confine)
                key = f"{ref}|{ctx.min_insync_replicas}"
                text = _read_reference(ref, value) if key not in cache else ""
            except RefusedReferenceError as exc:
                raise fail(ptr, exc.message, exc.hint) from None
            if key not in cache:
                checked = check_policy_text(text, str(ref), ctx)
                diagnostics.extend(checked.diagnostics)
                cache[key] = checked.policy
            return cache[key]
        diags, policy = check_policy_value(doc, ptr, name, ctx)
        diagnostics.extend(diags)
        return policy

    default = None
    if "default_placement" in root:
        default = policy_at("/default_placement", root["default_placement"], ctx)
    if len(topics) > TOPICS.value():
        raise fail(
            "/topics", f"{len(topics):,} topics, above the cap of {TOPICS.value():,}", TOPICS.hint()
        )
    specs: list[TopicSpec] = []
    seen: dict[str, int] = {}
    total = 0
    per_topic_cap, total_cap = PARTITIONS_PER_TOPIC.value(), PARTITIONS_TOTAL.value()
    for i, t in enumerate(topics):
        ptr = f"/topics/{i}"
        if not isinstance(t, dict):
            raise fail(ptr, "a topic entry must be an object")
        for key in t:
            if key not in ("name", "partitions", "placement", "min_isr"):
                raise fail(
                    f"{ptr}/{key}",
                    f'unknown key "{key}" in a topic entry',
                    'allowed: "name", "partitions", "placement", "min_isr"',
                    key=True,
                )
        topic = t.get("name")
        if not isinstance(topic, str) or not topic:
            raise fail(f"{ptr}/name" if "name" in t else ptr, 'a topic needs a non-empty "name"')
        problem = topic_name_error(topic)
        if problem is not None:
            raise fail(f"{ptr}/name", problem, TOPIC_NAME_HINT)
        if topic in seen:
            raise fail(ptr, f'topic "{topic}" is listed twice (first at /topics/{seen[topic]})')
        seen[topic] = i
        count = t.get("partitions")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise fail(
                f"{ptr}/partitions" if "partitions" in t else ptr,
                f'topic "{topic}" needs "partitions": a positive integer',
            )
        if count > per_topic_cap:
            raise fail(
                f"{ptr}/partitions",
                f'topic "{topic}" asks for {count:,} partitions, above the cap of '
                f"{per_topic_cap:,} {PARTITIONS_PER_TOPIC.what}",
                PARTITIONS_PER_TOPIC.hint(),
            )
        total += count
        if total > total_cap:
            raise fail(
                f"{ptr}/partitions",
                f"the topics up to {topic!r} add up to {total:,} partitions, above the cap of "
                f"{total_cap:,} {PARTITIONS_TOTAL.what}",
                PARTITIONS_TOTAL.hint(),
            )
        min_isr = t.get("min_isr")
        if min_isr is not None and (
            not isinstance(min_isr, int) or isinstance(min_isr, bool) or min_isr < 1
        ):
            raise fail(f"{ptr}/min_isr", '"min_isr" must be a positive integer')
        if "placement" in t:
            topic_ctx = CheckContext(ctx.inventory, min_isr or ctx.min_insync_replicas, ctx.ibp)
            policy = policy_at(f"{ptr}/placement", t["placement"], topic_ctx)
        elif default is not None or "default_placement" in root:
            policy = default
        else:
            raise fail(
                ptr, f'topic "{topic}" has no "placement" and there is no "default_placement"'
            )
        if policy is not None:
            specs.append(TopicSpec(topic, count, policy, min_isr))
    if any(d.severity is Severity.ERROR for d in diagnostics):
        raise InvalidPoliciesError(name, diagnostics)
    return specs
