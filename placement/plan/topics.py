"""The topics file (docs/formats.md, topics file): the planner's desired state, read
into one TopicSpec per topic (name, partition count if stated, the policy in force, min
ISR, and where the entry starts). Whether a missing or stated count fits the cluster is
for placement/plan/honest.py to tell, once the current state is read.

The file's shape is the model in placement/model/topics.py, published as
schemas/topics.schema.json. This reader checks it itself, entry by entry in file order,
to point at the first problem with a message of its own, and builds every entry it
accepts through that model.

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
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from placement.errors import InputError
from placement.io.jsonsrc import (
    EncodingError,
    JsonSyntaxError,
    ParsedJson,
    decode_utf8,
    is_json_int,
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
from placement.io.positions import LineIndex, escape_token
from placement.io.textfile import cut, read_text, short_key, shown, topic_name_problem
from placement.model.diagnostic import Diagnostic, Severity
from placement.model.kafka import TOPIC_NAME_HINT
from placement.model.policy import PlacementPolicy
from placement.model.topics import TopicEntry, TopicsFile
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
    partitions: int | None  # None: not stated (a topic the cluster has)
    policy: PlacementPolicy
    min_isr: int | None = None
    # where the entry starts in the topics file (1-based), for errors found later
    line: int | None = field(default=None, compare=False)
    column: int | None = field(default=None, compare=False)


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
            f"placement reference {shown(ref)} is absolute",
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
            f"placement reference {shown(ref)} cannot be resolved: "
            f"{getattr(exc, 'strerror', None) or type(exc).__name__}"
        ) from None
    if not target.is_relative_to(base):
        raise RefusedReferenceError(
            f"placement reference {shown(ref)} leads outside {root}",
            "references are resolved inside the topics file's directory (or --root DIR); "
            "'..' and symlinks may not leave it",
        )
    try:
        st = target.stat()
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise RefusedReferenceError(
                f"placement file {shown(ref)} not found (relative to {directory})"
            ) from None
        raise RefusedReferenceError(
            f"placement file {shown(ref)} cannot be read: {exc.strerror}"
        ) from None
    if not stat.S_ISREG(st.st_mode):
        raise RefusedReferenceError(f"placement reference {shown(ref)} is not a regular file")
    return target


def _read_reference(target: Path, ref: str) -> str:
    """The text of a referenced policy, capped; refused without quoting it when it is not
    UTF-8 JSON shaped like a placement policy."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(target, flags)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise RefusedReferenceError(
                    f"placement reference {shown(ref)} is not a regular file"
                )
            data = read_capped(fh, str(target), POLICY_BYTES)
    except OSError as exc:
        raise RefusedReferenceError(
            f"placement file {shown(ref)} cannot be read: {exc.strerror}"
        ) from None
    except InputError:
        raise RefusedReferenceError(
            f"{shown(ref)} is not a placement policy: larger than {POLICY_BYTES.value():,} bytes",
            f"raise {POLICY_BYTES.name} if it really is one",
        ) from None
    not_policy = f"{shown(ref)} is not a placement policy"
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
            "run `mrc-plan validate` on it for the details",
        ) from None
    if not isinstance(value, dict) or not set(value) & set(POLICY_KEYS):
        raise RefusedReferenceError(
            f'{not_policy} (a policy is a JSON object with "version" and "replicas")'
        )
    return text


@dataclass(frozen=True, slots=True)
class _Source:
    """The parsed topics file, and errors that point into it."""

    name: str
    doc: ParsedJson

    @classmethod
    def read(cls, path: Path) -> _Source:
        text = read_text(path, "the topics file", TOPICS_BYTES)
        try:
            return cls(str(path), parse_json_file(text, str(path)))
        except InputError as exc:
            exc.hint = (
                exc.hint or 'a topics file is JSON: {"default_placement": ..., "topics": [...]}'
            )
            raise

    def fail(self, ptr: str, message: str, hint: str = "", *, key: bool = False) -> InputError:
        pos = self.doc.locate(ptr, key=key)
        return InputError(self.name, message, hint, line=pos.line, column=pos.column)


# the keys the model defines, in its order (the hint lists them)
_FILE_KEYS = tuple(TopicsFile.model_fields)
_ENTRY_KEYS = tuple(TopicEntry.model_fields)


def _only_known_keys(
    src: _Source, ptr: str, obj: dict[str, Any], allowed: tuple[str, ...], where: str
) -> None:
    """Refuse the first key of ``obj`` that is not ``allowed``."""
    for key in obj:
        if key not in allowed:
            listed = ", ".join(f'"{k}"' for k in allowed)
            raise src.fail(
                f"{ptr}/{escape_token(key)}",
                f"unknown key {short_key(key)}{where}",
                f"allowed: {listed}",
                key=True,
            )


def _positive_int(value: Any) -> TypeGuard[int]:
    return is_json_int(value) and value >= 1


def _top_level(src: _Source) -> tuple[dict[str, Any], list[Any]]:
    """The document's object and its "topics" array, or the first problem with either."""
    if src.doc.duplicates:
        d = src.doc.duplicates[0]
        raise src.fail(d.pointer, f"duplicate key {short_key(d.key)}", "keep one of them", key=True)
    root: Any = src.doc.value
    if not isinstance(root, dict):
        raise src.fail(
            "",
            "a topics file must be a JSON object",
            '{"default_placement": {...}, "topics": [...]}',
        )
    _only_known_keys(src, "", root, _FILE_KEYS, "")
    topics = root.get("topics")
    if not isinstance(topics, list) or not topics:
        raise src.fail("/topics" if "topics" in root else "", '"topics" must be a non-empty array')
    return root, topics


class _Policies:
    """The policies of one topics file, inline or referenced, checked by the validate
    rules. Their findings are collected, so that the read stops on a policy error only
    after every entry is read; a referenced file is read and checked once per min ISR."""

    def __init__(self, src: _Source, directory: Path, confine: Path | None) -> None:
        self._src = src
        self._directory = directory
        self._confine = confine
        self._referenced: dict[str, PlacementPolicy | None] = {}
        # inline policies found clean, by their JSON and min ISR: a file of a thousand
        # topics often writes a handful of policies (a document with a key written twice
        # is checked policy by policy: the key's findings are where it is)
        self._clean: dict[tuple[str, int | None], PlacementPolicy] | None = (
            None if src.doc.duplicates else {}
        )
        self.diagnostics: list[Diagnostic] = []

    def at(self, ptr: str, value: Any, ctx: CheckContext) -> PlacementPolicy | None:
        """The policy written or referenced at ``ptr``; None when it is not one."""
        if isinstance(value, str):
            return self._reference(ptr, value, ctx)
        key = None
        if self._clean is not None and isinstance(value, dict):
            key = (json.dumps(value), ctx.min_insync_replicas)
            known = self._clean.get(key)
            if known is not None:
                return known
        diagnostics, policy = check_policy_value(self._src.doc, ptr, self._src.name, ctx)
        self.diagnostics.extend(diagnostics)
        if key is not None and policy is not None and not diagnostics and self._clean is not None:
            self._clean[key] = policy
        return policy

    def _reference(self, ptr: str, ref: str, ctx: CheckContext) -> PlacementPolicy | None:
        try:
            target = resolve_reference(self._directory, ref, self._confine)
            key = f"{target}|{ctx.min_insync_replicas}"
            if key in self._referenced:
                return self._referenced[key]
            text = _read_reference(target, ref)
        except RefusedReferenceError as exc:
            raise self._src.fail(ptr, exc.message, exc.hint) from None
        checked = check_policy_text(text, str(target), ctx)
        self.diagnostics.extend(checked.diagnostics)
        self._referenced[key] = checked.policy
        return checked.policy

    def raise_errors(self) -> None:
        if any(d.severity is Severity.ERROR for d in self.diagnostics):
            raise InvalidPoliciesError(self._src.name, self.diagnostics)


class _Entries:
    """Reads the topic entries in file order, remembering what the earlier ones leave:
    the names seen (a name listed twice) and the partitions counted (the cap on all)."""

    def __init__(
        self, src: _Source, policies: _Policies, ctx: CheckContext, root: dict[str, Any]
    ) -> None:
        self._src = src
        self._policies = policies
        self._ctx = ctx
        # in this order: the default policy (its refusal comes first), then the caps
        self._has_default = "default_placement" in root
        self._default = (
            policies.at("/default_placement", root["default_placement"], ctx)
            if self._has_default
            else None
        )
        count = len(root["topics"])
        if count > TOPICS.value():
            raise src.fail(
                "/topics", f"{count:,} topics, above the cap of {TOPICS.value():,}", TOPICS.hint()
            )
        self._seen: dict[str, int] = {}
        self._total = 0
        self._per_topic_cap = PARTITIONS_PER_TOPIC.value()
        self._total_cap = PARTITIONS_TOTAL.value()

    def read(self, index: int, value: Any) -> TopicSpec | None:
        """The topic at ``/topics/index``; None when its policy is invalid (the policy's
        findings say why, and the read fails once every entry is read)."""
        ptr = f"/topics/{index}"
        if not isinstance(value, dict):
            raise self._src.fail(ptr, "a topic entry must be an object")
        _only_known_keys(self._src, ptr, value, _ENTRY_KEYS, " in a topic entry")
        name = self._name(ptr, value, index)
        count = self._partitions(ptr, value, name)
        min_isr = value.get("min_isr")
        if min_isr is not None and not _positive_int(min_isr):
            raise self._src.fail(f"{ptr}/min_isr", '"min_isr" must be a positive integer')
        policy = self._policy(ptr, value, name, min_isr)
        if policy is None:
            return None
        members: dict[str, Any] = {"name": name, "min_isr": min_isr}
        if "placement" in value:  # a reference as written; an inline policy as checked
            written = value["placement"]
            members["placement"] = written if isinstance(written, str) else policy
        if count is not None:
            members["partitions"] = count
        entry = TopicEntry.model_validate(members)
        pos = self._src.doc.locate(ptr)
        return TopicSpec(entry.name, entry.partitions, policy, entry.min_isr, pos.line, pos.column)

    def _name(self, ptr: str, value: dict[str, Any], index: int) -> str:
        name = value.get("name")
        if not isinstance(name, str) or not name:
            where = f"{ptr}/name" if "name" in value else ptr
            raise self._src.fail(where, 'a topic needs a non-empty "name"')
        problem = topic_name_problem(name)
        if problem is not None:
            raise self._src.fail(f"{ptr}/name", problem, TOPIC_NAME_HINT)
        if name in self._seen:
            raise self._src.fail(
                ptr, f'topic "{cut(name)}" is listed twice (first at /topics/{self._seen[name]})'
            )
        self._seen[name] = index
        return name

    def _partitions(self, ptr: str, value: dict[str, Any], name: str) -> int | None:
        if "partitions" not in value:
            return None
        count = value["partitions"]
        if not _positive_int(count):
            raise self._src.fail(
                f"{ptr}/partitions", f'topic "{cut(name)}": "partitions" must be a positive integer'
            )
        if count > self._per_topic_cap:
            raise self._src.fail(
                f"{ptr}/partitions",
                f'topic "{cut(name)}" asks for {count:,} partitions, above the cap of '
                f"{self._per_topic_cap:,} {PARTITIONS_PER_TOPIC.what}",
                PARTITIONS_PER_TOPIC.hint(),
            )
        self._total += count
        if self._total > self._total_cap:
            raise self._src.fail(
                f"{ptr}/partitions",
                f"the topics up to {shown(name)} add up to {self._total:,} partitions, above the "
                f"cap of {self._total_cap:,} {PARTITIONS_TOTAL.what}",
                PARTITIONS_TOTAL.hint(),
            )
        return count

    def _policy(
        self, ptr: str, value: dict[str, Any], name: str, min_isr: int | None
    ) -> PlacementPolicy | None:
        if "placement" in value:
            ctx = self._ctx
            topic_ctx = CheckContext(ctx.inventory, min_isr or ctx.min_insync_replicas, ctx.ibp)
            return self._policies.at(f"{ptr}/placement", value["placement"], topic_ctx)
        if self._has_default:
            return self._default
        raise self._src.fail(
            ptr, f'topic "{cut(name)}" has no "placement" and there is no "default_placement"'
        )


def read_topics(
    path: str | Path, ctx: CheckContext | None = None, *, refs_root: str | Path | None = None
) -> list[TopicSpec]:
    """Read and check a topics file; ``ctx`` adds inventory checks to every policy.

    Placement references are resolved inside ``refs_root`` (default: the topics file's
    directory) and may not leave it. Problems with the file itself stop the read at the
    first one, in file order; policy findings are collected and raised together at the end.
    """
    p = Path(path)
    src = _Source.read(p)
    root, topics = _top_level(src)
    policies = _Policies(src, p.parent, None if refs_root is None else Path(refs_root))
    entries = _Entries(src, policies, ctx or CheckContext(), root)
    specs = [spec for i, t in enumerate(topics) if (spec := entries.read(i, t)) is not None]
    policies.raise_errors()
    return specs
