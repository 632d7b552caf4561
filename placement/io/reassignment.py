"""Kafka reassignment JSON (docs/formats.md, reassignment JSON): read with Kafka's rules,
write deterministic bytes.

Reading uses the standard library parser first (plans can hold a million partitions)
and falls back to the position-tracking parser only to say where a problem is (it is
iterative: a 100,000-deep document is refused with a position, never a RecursionError).
Every plan a command reads goes through `read_plan_file`; what only the cluster knows
(does the topic, the partition, the broker exist) is checked by `PlanFile.check` where
the cluster is known, and named by the entry's line too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from placement.errors import InputError
from placement.io.atomic import open_atomic
from placement.io.jsonsrc import (
    JsonSyntaxError,
    ParsedJson,
    ShapeError,
    SyntaxKind,
    is_json_int,
    parse_json,
)
from placement.io.positions import LineIndex, Position
from placement.io.textfile import read_text
from placement.model.assignment import PartitionAssignment
from placement.model.kafka import INT32_MAX, TOPIC_NAME_HINT, topic_name_error

CURRENT_BLOCK = re.compile(r"^\s*Current partition replica assignment\s*$", re.MULTILINE)
PROPOSED_BLOCK = re.compile(r"^\s*Proposed partition reassignment configuration\s*$", re.MULTILINE)
# the first line of the files `render_reassignment` writes: then one entry per line
OWN_HEADER = '{"version":1,"partitions":['
SHAPE_HINT = '{"version": 1, "partitions": [{"topic": ..., "partition": ..., "replicas": [...]}]}'


def _broker_list(entry: dict[str, Any], field: str, ptr: str) -> tuple[int, ...]:
    value = entry[field]
    # the common case at C speed (plans hold up to millions of these); the loop below
    # only runs to name a problem
    if (
        type(value) is list
        and set(map(type, value)) <= _INT
        and (not value or (min(value) >= 0 and max(value) <= INT32_MAX))
        and len(set(value)) == len(value)
    ):
        return tuple(value)
    if not isinstance(value, list):
        raise ShapeError(f"{ptr}/{field}", f'"{field}" must be an array of broker ids')
    for j, b in enumerate(value):
        if not is_json_int(b) or b < 0 or b > INT32_MAX:
            shown = json.dumps(b) if not isinstance(b, (dict, list)) else type(b).__name__
            raise ShapeError(
                f"{ptr}/{field}/{j}",
                f'"{field}" holds {shown}, not a broker id',
                f"broker ids are integers from 0 to {INT32_MAX} (Java ints)",
            )
    dup = next(b for j, b in enumerate(value) if b in value[:j])
    raise ShapeError(
        f"{ptr}/{field}",
        f'broker {dup} appears twice in "{field}"',
        "Kafka rejects duplicate brokers in a replica list",
    )


_INT: frozenset[type] = frozenset({int})
_STR: frozenset[type] = frozenset({str})
_ALLOWED = frozenset({"topic", "partition", "replicas", "observers", "log_dirs"})
_REQUIRED = frozenset({"topic", "partition", "replicas"})


def _entry(entry: Any, ptr: str, names: set[str]) -> PartitionAssignment:
    """One partition entry; ``names``: topic names already found legal."""
    if not isinstance(entry, dict):
        raise ShapeError(ptr, "a partition entry must be an object")
    if not entry.keys() <= _ALLOWED:
        key = next(k for k in entry if k not in _ALLOWED)
        raise ShapeError(
            f"{ptr}/{key}",
            f'unknown key "{key}" in a partition entry',
            "allowed: " + ", ".join(sorted(_ALLOWED)),
            key=True,
        )
    if not entry.keys() >= _REQUIRED:
        key = next(k for k in ("topic", "partition", "replicas") if k not in entry)
        raise ShapeError(ptr, f'partition entry lacks "{key}"')
    topic, partition = entry["topic"], entry["partition"]
    if type(topic) is not str or topic not in names:  # a list is not hashable: type first
        if not isinstance(topic, str) or not topic:
            raise ShapeError(f"{ptr}/topic", '"topic" must be a non-empty string')
        bad_name = topic_name_error(topic)
        if bad_name is not None:
            raise ShapeError(f"{ptr}/topic", bad_name, TOPIC_NAME_HINT)
        names.add(topic)
    if not is_json_int(partition) or partition < 0 or partition > INT32_MAX:
        raise ShapeError(
            f"{ptr}/partition", f'"partition" must be an integer from 0 to {INT32_MAX}'
        )
    replicas = _broker_list(entry, "replicas", ptr)
    if not replicas:
        raise ShapeError(f"{ptr}/replicas", f"{topic}-{partition} has an empty replica list")
    observers = _broker_list(entry, "observers", ptr) if "observers" in entry else ()
    if observers and replicas[len(replicas) - len(observers) :] != observers:
        raise ShapeError(
            f"{ptr}/observers",
            f"observers {list(observers)} of {topic}-{partition} are not the last "
            f"entries of replicas {list(replicas)}",
            "list sync replicas first and observers last, in the same order",
        )
    if len(observers) == len(replicas):
        raise ShapeError(f"{ptr}/observers", f"{topic}-{partition} has no sync replica")
    if "log_dirs" in entry:
        dirs = entry["log_dirs"]
        if type(dirs) is not list or not set(map(type, dirs)) <= _STR:
            raise ShapeError(f"{ptr}/log_dirs", '"log_dirs" must be an array of strings')
        if len(dirs) != len(replicas):
            raise ShapeError(
                f"{ptr}/log_dirs",
                f'"log_dirs" has {len(dirs)} entries but "replicas" has {len(replicas)}',
                'use "any" for each replica',
            )
    return PartitionAssignment(topic, partition, replicas, observers)


def _entries(value: Any) -> list[PartitionAssignment]:
    if not isinstance(value, dict):
        raise ShapeError("", "a reassignment file must be a JSON object", SHAPE_HINT)
    unknown = sorted(set(value) - {"version", "partitions"})
    if unknown:
        raise ShapeError(f"/{unknown[0]}", f'unknown key "{unknown[0]}"', key=True)
    if "version" in value and (not is_json_int(value["version"]) or value["version"] != 1):
        shown = value["version"] if not isinstance(value["version"], (dict, list)) else "?"
        raise ShapeError("/version", f"unsupported version {shown!r}: Kafka knows only 1")
    parts = value.get("partitions")
    if not isinstance(parts, list):
        raise ShapeError(
            "/partitions" if "partitions" in value else "",
            '"partitions" must be an array of partition entries',
            SHAPE_HINT,
        )
    if not parts:
        raise ShapeError(
            "/partitions", "the partition list is empty", "Kafka rejects an empty reassignment"
        )
    out = []
    seen: dict[tuple[str, int], int] = {}
    names: set[str] = set()
    for i, raw in enumerate(parts):
        a = _entry(raw, f"/partitions/{i}", names)
        key = (a.topic, a.partition)
        first = seen.setdefault(key, i)
        if first != i:
            raise ShapeError(
                f"/partitions/{i}",
                f"{a.topic}-{a.partition} is listed twice (first at /partitions/{first})",
                "Kafka rejects such a reassignment: keep one entry per partition",
            )
        out.append(a)
    return out


def _json_region(text: str, path: str) -> tuple[int, int]:
    """Where the assignment JSON sits: the whole file, or the block Kafka's tool printed."""
    m = CURRENT_BLOCK.search(text)
    if m is None:
        return 0, len(text)
    start = text.find("{", m.end())
    if start < 0:
        raise InputError(path, "no JSON follows 'Current partition replica assignment'")
    nxt = PROPOSED_BLOCK.search(text, start)
    stop = nxt.start() if nxt else len(text)
    close = text.rfind("}", start, stop)
    return start, (close + 1 if close >= 0 else stop)  # unclosed: the parser says where


# tokens that matter to find an entry: strings (skipped whole) and brackets
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[][{}]')


@dataclass(frozen=True)
class PlanFile:
    """A reassignment file read with Kafka's rules: its entries, and where each one is.

    ``one_per_line``: the layout `render_reassignment` writes (the header line, then exactly
    one entry per line, then ``]}``), which Spark can read line by line in parallel."""

    path: str
    entries: list[PartitionAssignment]
    text: str
    start: int
    one_per_line: bool

    def position(self, i: int) -> Position:
        """Where entry ``i`` starts in the file."""
        if self.one_per_line:
            return Position(i + 2, 1)
        depth, count = 0, -1
        for m in _TOKENS.finditer(self.text, self.start):
            tok = m.group()
            if tok in "[{":
                depth += 1
                if depth == 3 and tok == "{":  # root object > partitions array > entry
                    count += 1
                    if count == i:
                        return LineIndex(self.text).position(m.start())
            elif tok in "]}":
                depth -= 1
        return Position(1, 1)

    def error(self, i: int, message: str, hint: str = "") -> InputError:
        pos = self.position(i)
        return InputError(self.path, message, hint, line=pos.line, column=pos.column)

    def check(
        self,
        *,
        where: str,
        topics: Collection[str] | None = None,
        partitions: Callable[[str, int], bool] | None = None,
        brokers: Collection[int] | None = None,
    ) -> None:
        """Refuse the first entry (in file order) for a topic not in ``topics``, a partition
        ``partitions`` does not know, or a broker not in ``brokers``; ``where`` names the
        cluster's source (\"the snapshot\", \"the inventory\") in the message."""
        for i, a in enumerate(self.entries):
            if topics is not None and a.topic not in topics:
                raise self.error(
                    i,
                    f"topic {a.topic} is not in {where}",
                    "a plan for another cluster, or a topic created since the snapshot",
                )
            if partitions is not None and not partitions(a.topic, a.partition):
                raise self.error(
                    i,
                    f"partition {a.partition} of topic {a.topic} is not in {where}",
                    "Kafka rejects a reassignment of a partition that does not exist",
                )
            if brokers is not None:
                unknown = [b for b in a.replicas if b not in brokers]
                if unknown:
                    raise self.error(
                        i,
                        f"{a.topic}-{a.partition}: broker(s) "
                        f"{', '.join(map(str, unknown))} are not in {where}",
                        "Kafka rejects a reassignment onto a broker that does not exist",
                    )


def _one_per_line(text: str, count: int) -> bool:
    if "\r" in text or not text.startswith(OWN_HEADER + "\n"):
        return False
    lines = text.split("\n")
    if lines[count + 1 :] not in (["]}"], ["]}", ""]):
        return False
    return all(line.startswith('{"topic"') for line in lines[1 : count + 1])


def parse_plan(text: str, path: str = "<reassignment>") -> PlanFile:
    """Parse reassignment JSON (or `kafka-reassign-partitions` output) the way Kafka does;
    every problem is an `InputError` with the file's line and column."""
    start, end = _json_region(text, path)
    body = text[start:end]
    try:
        entries = _entries(json.loads(body, object_pairs_hook=_no_duplicates))
    except (ValueError, _DuplicateKeyError, ShapeError, RecursionError):
        pass  # re-read with positions to say where (ValueError: JSON's, or too many digits)
    else:
        whole = start == 0 and end == len(text)
        return PlanFile(path, entries, text, start, whole and _one_per_line(text, len(entries)))
    index = LineIndex(body, LineIndex(text), range(start, end)) if start else LineIndex(body)
    try:
        doc: ParsedJson = parse_json(body, index)
    except JsonSyntaxError as exc:
        pos = index.position(exc.offset)
        hint = exc.hint
        if exc.kind in (SyntaxKind.EMPTY, SyntaxKind.TOO_DEEP):
            hint = f"a reassignment file is {SHAPE_HINT}"
        raise InputError(path, exc.message, hint, line=pos.line, column=pos.column) from None
    if doc.duplicates:
        d = doc.duplicates[0]
        pos = doc.position(d.offset)
        raise InputError(path, f'duplicate key "{d.key}"', line=pos.line, column=pos.column)
    try:
        entries = _entries(doc.value)
    except ShapeError as p:
        pos = doc.locate(p.pointer, key=p.key)
        raise InputError(path, p.message, p.hint, line=pos.line, column=pos.column) from None
    return PlanFile(path, entries, text, start, one_per_line=False)


def parse_reassignment(text: str, path: str = "<reassignment>") -> list[PartitionAssignment]:
    """Parse reassignment JSON (or `kafka-reassign-partitions` output) the way Kafka does."""
    return parse_plan(text, path).entries


class _DuplicateKeyError(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKeyError
    return out


def read_plan_file(path: str | Path) -> PlanFile:
    """A plan file, read strictly (see `parse_plan`)."""
    return parse_plan(read_text(path, "the plan"), str(path))


def read_reassignment(path: str | Path) -> list[PartitionAssignment]:
    return read_plan_file(path).entries


def render_reassignment(assignments: Iterable[PartitionAssignment]) -> str:
    """Deterministic reassignment JSON: sorted, one partition per line, "any" log dirs."""
    rows = sorted(assignments, key=lambda a: (a.topic, a.partition))
    if not rows:
        raise ValueError("Kafka rejects an empty reassignment; nothing to write")
    lines = []
    for a in rows:
        entry = {
            "topic": a.topic,
            "partition": a.partition,
            "replicas": list(a.replicas),
            "observers": list(a.observers),
            "log_dirs": ["any"] * len(a.replicas),
        }
        lines.append(json.dumps(entry, separators=(",", ":"), ensure_ascii=False))
    return '{"version":1,"partitions":[\n' + ",\n".join(lines) + "\n]}\n"


def _election_lines(keys: Iterable[tuple[str, int]]) -> Iterator[str]:
    """The `kafka-leader-election --path-to-json-file` layout Kafka documents,
    ``{"partitions":[{"topic":...,"partition":...},...]}``, one partition a line, as text
    chunks; nothing at all for no partition (Kafka rejects an empty list)."""
    first = True
    for topic, partition in keys:
        yield '{"partitions":[\n' if first else ",\n"
        first = False
        entry = {"topic": topic, "partition": partition}
        yield json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
    if not first:
        yield "\n]}\n"


def render_election(keys: Iterable[tuple[str, int]]) -> str:
    """The election file for these partitions, sorted (`assign --election`)."""
    text = "".join(_election_lines(sorted(set(keys))))
    if not text:
        raise ValueError("no partition to elect a leader for; nothing to write")
    return text


def write_election_stream(path: str | Path, keys: Iterable[tuple[str, int]]) -> int:
    """Stream ``keys`` (sorted, distinct: a Spark result too big to hold) into an election
    file at ``path``, in the same layout as `render_election`, atomically
    (`simulate --unclean-out`). Returns how many were written; with none, nothing is
    written and the result is 0."""
    count = 0

    def counted() -> Iterator[tuple[str, int]]:
        nonlocal count
        for key in keys:
            count += 1
            yield key

    try:
        with open_atomic(path) as fh:
            for chunk in _election_lines(counted()):
                fh.write(chunk.encode("utf-8"))
            if not count:
                raise _NothingToWriteError
    except _NothingToWriteError:
        return 0
    return count


class _NothingToWriteError(Exception):
    pass
