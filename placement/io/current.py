"""The current state of a cluster from whatever the operator has: reassignment JSON (or the
block `kafka-reassign-partitions` prints), `kafka-topics --describe` output, or a snapshot
directory. One loader for `assign`, `simulate` and the benchmarks."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from placement.io.describe import SNIFF_BYTES, looks_like_describe, read_describe
from placement.io.reassignment import read_reassignment
from placement.io.snapshot import (
    cluster_policy,
    read_snapshot,
    snapshot_assignments,
    snapshot_policies,
)
from placement.model.assignment import Key, PartitionAssignment
from placement.model.policy import PlacementPolicy


@dataclass(frozen=True)
class CurrentState:
    assignments: list[PartitionAssignment]
    policies: dict[str, PlacementPolicy] = field(default_factory=dict)  # from describe/snapshot
    sizes: dict[Key, int] = field(default_factory=dict)
    min_isr: dict[str, int] = field(default_factory=dict)  # from describe/snapshot configs


def read_current(path: str | Path) -> CurrentState:
    """Reassignment JSON, `kafka-topics --describe` text, or a snapshot directory."""
    p = Path(path)
    if p.is_dir():
        snap = read_snapshot(p)
        assignments, sizes = snapshot_assignments(snap)
        min_isr = {
            topic: m
            for topic, m in zip(
                snap.topics.column("topic").to_pylist(),
                snap.topics.column("min_isr").to_pylist(),
                strict=True,
            )
            if m is not None
        }
        return CurrentState(assignments, snapshot_policies(p, snap.topics), sizes, min_isr)
    if p.is_file():
        with p.open("rb") as fh:
            head = fh.read(SNIFF_BYTES)
    else:
        head = b""
    if looks_like_describe(head):
        described = read_describe(p)
        policies = {}
        for name, topic in described.topics.items():
            if topic.placement is not None and topic.placement.value.strip():
                policies[name] = cluster_policy(str(p), name, topic.placement.value)
        min_isr = {n: t.min_isr for n, t in described.topics.items() if t.min_isr is not None}
        return CurrentState([d.assignment() for d in described.partitions], policies, {}, min_isr)
    return CurrentState(read_reassignment(p))
