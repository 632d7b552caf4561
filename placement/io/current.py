"""The current state of a cluster from whatever the operator has: reassignment JSON (or the
block `kafka-reassign-partitions` prints), `kafka-topics --describe` output, or a snapshot
directory. One loader for `assign`, `simulate` and the benchmarks."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from placement.errors import InputError
from placement.io.describe import read_describe
from placement.io.reassignment import read_reassignment
from placement.io.snapshot import read_snapshot
from placement.model.assignment import PartitionAssignment
from placement.model.policy import PlacementPolicy

Key = tuple[str, int]


@dataclass(frozen=True)
class CurrentState:
    assignments: list[PartitionAssignment]
    policies: dict[str, PlacementPolicy] = field(default_factory=dict)  # from describe/snapshot
    sizes: dict[Key, int] = field(default_factory=dict)
    min_isr: dict[str, int] = field(default_factory=dict)  # from describe/snapshot configs


def _policy(text: str, source: str, topic: str) -> PlacementPolicy:
    try:
        return PlacementPolicy.model_validate_json(text)
    except ValidationError as exc:
        raise InputError(
            source,
            f"topic {topic}: its confluent.placement.constraints is not a "
            f"valid policy ({exc.errors()[0]['msg']})",
            f"run `mrc-plan validate {source}` to see every finding",
        ) from None


def read_current(path: str | Path) -> CurrentState:
    """Reassignment JSON, `kafka-topics --describe` text, or a snapshot directory."""
    p = Path(path)
    if p.is_dir():
        snap = read_snapshot(p)
        parts = snap.partitions
        rows = zip(
            *(
                parts.column(c).to_pylist()
                for c in ("topic", "partition", "replicas", "observers", "size_bytes")
            ),
            strict=True,
        )
        assignments, sizes = [], {}
        for topic, partition, replicas, observers, size in rows:
            assignments.append(
                PartitionAssignment(topic, partition, tuple(replicas), tuple(observers or ()))
            )
            if size is not None:
                sizes[(topic, partition)] = size
        policies, min_isr = {}, {}
        for topic, text, m in zip(
            snap.topics.column("topic").to_pylist(),
            snap.topics.column("placement").to_pylist(),
            snap.topics.column("min_isr").to_pylist(),
            strict=True,
        ):
            if text:
                policies[topic] = _policy(text, str(p), topic)
            if m is not None:
                min_isr[topic] = m
        return CurrentState(assignments, policies, sizes, min_isr)
    head = p.read_bytes()[:4096].lstrip() if p.is_file() else b""
    if head.startswith(b"Topic:") or b"\nTopic:" in head or b"\tTopic:" in head:
        described = read_describe(p)
        policies = {}
        for name, topic in described.topics.items():
            if topic.placement is not None and topic.placement.value.strip():
                policies[name] = _policy(topic.placement.value, str(p), name)
        min_isr = {n: t.min_isr for n, t in described.topics.items() if t.min_isr is not None}
        return CurrentState([d.assignment() for d in described.partitions], policies, {}, min_isr)
    return CurrentState(read_reassignment(p))
