"""Writing Kafka's files: deterministic reassignment JSON (one partition a line, the
layout `ownlayout` reads back without a parser) and `kafka-leader-election` files."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from placement.model.assignment import PartitionAssignment


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

    from placement.io.atomic import open_atomic  # (writers only: readers go without)

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
