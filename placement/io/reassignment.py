"""Kafka reassignment JSON (SPEC §5): read with Kafka's rules, write deterministic bytes.

Reading uses the standard library parser first (plans can hold a million partitions)
and falls back to the position-tracking parser only to say where a problem is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from placement.errors import InputError
from placement.io.atomic import open_atomic, write_atomic
from placement.io.jsonsrc import JsonSyntaxError, ParsedJson, parse_json
from placement.io.positions import LineIndex
from placement.io.textfile import read_text
from placement.model.assignment import PartitionAssignment

CURRENT_BLOCK = re.compile(r"^\s*Current partition replica assignment\s*$", re.MULTILINE)
PROPOSED_BLOCK = re.compile(r"^\s*Proposed partition reassignment configuration\s*$", re.MULTILINE)


class _ProblemError(Exception):
    def __init__(self, pointer: str, message: str, hint: str = "", key: bool = False) -> None:
        super().__init__(message)
        self.pointer = pointer
        self.message = message
        self.hint = hint
        self.key = key


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _broker_list(entry: dict[str, Any], field: str, ptr: str) -> tuple[int, ...]:
    value = entry[field]
    if not isinstance(value, list):
        raise _ProblemError(f"{ptr}/{field}", f'"{field}" must be an array of broker ids')
    for j, b in enumerate(value):
        if not _is_int(b) or b < 0:
            raise _ProblemError(
                f"{ptr}/{field}/{j}",
                f'"{field}" holds {json.dumps(b)}, not a broker id',
                "broker ids are non-negative integers",
            )
    if len(set(value)) != len(value):
        dup = next(b for j, b in enumerate(value) if b in value[:j])
        raise _ProblemError(
            f"{ptr}/{field}",
            f'broker {dup} appears twice in "{field}"',
            "Kafka rejects duplicate brokers in a replica list",
        )
    return tuple(value)


def _entries(value: Any) -> list[PartitionAssignment]:
    if not isinstance(value, dict):
        raise _ProblemError(
            "", "a reassignment file must be a JSON object", '{"version": 1, "partitions": [...]}'
        )
    unknown = sorted(set(value) - {"version", "partitions"})
    if unknown:
        raise _ProblemError(f"/{unknown[0]}", f'unknown key "{unknown[0]}"', key=True)
    if "version" in value and (not _is_int(value["version"]) or value["version"] != 1):
        raise _ProblemError(
            "/version", f"unsupported version {value['version']!r}: Kafka knows only 1"
        )
    parts = value.get("partitions")
    if not isinstance(parts, list):
        raise _ProblemError(
            "/partitions" if "partitions" in value else "",
            '"partitions" must be an array of partition entries',
        )
    if not parts:
        raise _ProblemError(
            "/partitions", "the partition list is empty", "Kafka rejects an empty reassignment"
        )
    out = []
    seen: dict[tuple[str, int], int] = {}
    allowed = {"topic", "partition", "replicas", "observers", "log_dirs"}
    for i, entry in enumerate(parts):
        ptr = f"/partitions/{i}"
        if not isinstance(entry, dict):
            raise _ProblemError(ptr, "a partition entry must be an object")
        for key in entry:
            if key not in allowed:
                raise _ProblemError(
                    f"{ptr}/{key}",
                    f'unknown key "{key}" in a partition entry',
                    "allowed: " + ", ".join(sorted(allowed)),
                    key=True,
                )
        for key in ("topic", "partition", "replicas"):
            if key not in entry:
                raise _ProblemError(ptr, f'partition entry lacks "{key}"')
        topic, partition = entry["topic"], entry["partition"]
        if not isinstance(topic, str) or not topic:
            raise _ProblemError(f"{ptr}/topic", '"topic" must be a non-empty string')
        if not _is_int(partition) or partition < 0:
            raise _ProblemError(f"{ptr}/partition", '"partition" must be a non-negative integer')
        replicas = _broker_list(entry, "replicas", ptr)
        if not replicas:
            raise _ProblemError(f"{ptr}/replicas", f"{topic}-{partition} has an empty replica list")
        observers = _broker_list(entry, "observers", ptr) if "observers" in entry else ()
        if observers and replicas[len(replicas) - len(observers) :] != observers:
            raise _ProblemError(
                f"{ptr}/observers",
                f"observers {list(observers)} of {topic}-{partition} are not the last "
                f"entries of replicas {list(replicas)}",
                "list sync replicas first and observers last, in the same order",
            )
        if len(observers) == len(replicas):
            raise _ProblemError(f"{ptr}/observers", f"{topic}-{partition} has no sync replica")
        if "log_dirs" in entry:
            dirs = entry["log_dirs"]
            if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
                raise _ProblemError(f"{ptr}/log_dirs", '"log_dirs" must be an array of strings')
            if len(dirs) != len(replicas):
                raise _ProblemError(
                    f"{ptr}/log_dirs",
                    f'"log_dirs" has {len(dirs)} entries but "replicas" has {len(replicas)}',
                    'use "any" for each replica',
                )
        if (topic, partition) in seen:
            raise _ProblemError(
                ptr,
                f"{topic}-{partition} is listed twice (first at "
                f"/partitions/{seen[(topic, partition)]})",
            )
        seen[(topic, partition)] = i
        out.append(PartitionAssignment(topic, partition, replicas, observers))
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
    end = text.rfind("}", start, nxt.start() if nxt else len(text)) + 1
    return start, end


def parse_reassignment(text: str, path: str = "<reassignment>") -> list[PartitionAssignment]:
    """Parse reassignment JSON (or `kafka-reassign-partitions` output) the way Kafka does."""
    start, end = _json_region(text, path)
    body = text[start:end]
    try:
        return _entries(json.loads(body, object_pairs_hook=_no_duplicates))
    except (json.JSONDecodeError, _DuplicateKeyError, _ProblemError):
        pass  # re-read with positions to say where
    index = LineIndex(body, LineIndex(text), range(start, end)) if start else LineIndex(body)
    try:
        doc: ParsedJson = parse_json(body, index)
    except JsonSyntaxError as exc:
        pos = index.position(exc.offset)
        raise InputError(path, exc.message, exc.hint, line=pos.line, column=pos.column) from None
    if doc.duplicates:
        d = doc.duplicates[0]
        pos = doc.position(d.offset)
        raise InputError(path, f'duplicate key "{d.key}"', line=pos.line, column=pos.column)
    try:
        return _entries(doc.value)
    except _ProblemError as p:
        pos = doc.locate(p.pointer, key=p.key)
        raise InputError(path, p.message, p.hint, line=pos.line, column=pos.column) from None


class _DuplicateKeyError(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKeyError
    return out


def read_reassignment(path: str | Path) -> list[PartitionAssignment]:
    return parse_reassignment(read_text(path), str(path))


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


def write_reassignment(path: str | Path, assignments: Iterable[PartitionAssignment]) -> None:
    write_atomic(path, render_reassignment(assignments))


def _election_entry(topic: str, partition: int) -> str:
    return json.dumps(
        {"topic": topic, "partition": partition}, separators=(",", ":"), ensure_ascii=False
    )


def render_election(keys: Iterable[tuple[str, int]]) -> str:
    """The `kafka-leader-election --path-to-json-file` file for these partitions, sorted."""
    rows = sorted(set(keys))
    if not rows:
        raise ValueError("no partition to elect a leader for; nothing to write")
    lines = [_election_entry(t, p) for t, p in rows]
    return '{"partitions":[\n' + ",\n".join(lines) + "\n]}\n"


class _NothingToWriteError(Exception):
    pass


def write_election_stream(path: str | Path, keys: Iterable[tuple[str, int]]) -> int:
    """Stream ``keys`` (sorted, distinct: a Spark result too big to hold) into a
    `kafka-leader-election --path-to-json-file` file, in the layout Kafka itself prints,
    ``{"version":1,"partitions":[...]}``; atomically. Returns how many were written; with
    none, nothing is written (Kafka rejects an empty list) and the result is 0."""
    count = 0
    try:
        with open_atomic(path) as fh:
            for topic, partition in keys:
                fh.write(b'{"version":1,"partitions":[\n' if count == 0 else b",\n")
                fh.write(_election_entry(topic, partition).encode("utf-8"))
                count += 1
            if count == 0:
                raise _NothingToWriteError
            fh.write(b"\n]}\n")
    except _NothingToWriteError:
        return 0
    return count
