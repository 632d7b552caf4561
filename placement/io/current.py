"""The current state of a cluster from whatever the operator has: reassignment JSON (or the
block `kafka-reassign-partitions` prints), `kafka-topics --describe` output, or a snapshot
directory. One loader for `assign`, `simulate` and the benchmarks.

Besides the assignment, describe output and snapshots record each partition's ISR and
leader (`simulate` reads them; reassignment JSON has neither: unknown). In describe output a
replica the `Offline:` column names is not counted in the ISR: Kafka keeps the last member
of an offline partition's ISR listed, but that replica's broker is down.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from placement.io.columns import Columns
from placement.io.describe import SNIFF_BYTES, looks_like_describe, read_describe
from placement.io.reassignment import read_plan_entries
from placement.model.assignment import Key, PartitionAssignment

if TYPE_CHECKING:  # pydantic and pyarrow load only to read what needs them (a snapshot,
    # a describe's placements): reading reassignment JSON goes without
    from placement.model.policy import PlacementPolicy

# a partition's recorded ISR; None: none recorded (the input has no ISR, or a null one)
Isr = tuple[int, ...] | None


@dataclass(frozen=True)
class CurrentState:
    assignments: list[PartitionAssignment]
    policies: dict[str, PlacementPolicy] = field(default_factory=dict)  # from describe/snapshot
    sizes: dict[Key, int] = field(default_factory=dict)
    min_isr: dict[str, int] = field(default_factory=dict)  # from describe/snapshot configs
    # aligned with `assignments` (None: the input records neither, as reassignment JSON):
    # each partition's ISR (None: not recorded) and leader (None: none, or not recorded)
    isr: list[Isr] | None = None
    leaders: list[int | None] | None = None
    columns: Columns | None = None  # `assignments` as arrays, when the reader made them


def _shared(isr: tuple[int, ...], a: PartitionAssignment) -> tuple[int, ...]:
    """``isr``, as the replicas' own tuple when equal (the common case: no copy per
    partition of a large cluster)."""
    return a.replicas if isr == a.replicas else isr


def read_current(path: str | Path) -> CurrentState:
    """Reassignment JSON, `kafka-topics --describe` text, or a snapshot directory."""
    p = Path(path)
    if p.is_dir():
        from placement.io.snapshot import (
            list_column,
            read_snapshot,
            snapshot_assignments,
            snapshot_policies,
        )

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
        column = snap.partitions.column("isr")
        isr: list[Isr] = list(map(_shared, list_column(column), assignments))
        for i in column.is_null().to_numpy(zero_copy_only=False).nonzero()[0].tolist():
            isr[i] = None  # not recorded
        leaders = snap.partitions.column("leader").to_pylist()
        return CurrentState(
            assignments, snapshot_policies(p, snap.topics), sizes, min_isr, isr, leaders
        )
    if p.is_file():
        with p.open("rb") as fh:
            head = fh.read(SNIFF_BYTES)
    else:
        head = b""
    if looks_like_describe(head):
        from placement.io.snapshot import cluster_policy

        described = read_describe(p)
        policies = {}
        for name, topic in described.topics.items():
            if topic.placement is not None and topic.placement.value.strip():
                policies[name] = cluster_policy(str(p), name, topic.placement.value)
        min_isr = {n: t.min_isr for n, t in described.topics.items() if t.min_isr is not None}
        parts = [d.assignment() for d in described.partitions]
        isr = [
            _shared(tuple(b for b in d.isr if b not in d.offline), a)
            for d, a in zip(described.partitions, parts, strict=True)
        ]
        leaders = [d.leader for d in described.partitions]
        return CurrentState(parts, policies, {}, min_isr, isr, leaders)
    entries, columns = read_plan_entries(p, "the current assignment")
    return CurrentState(entries, columns=columns)
