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
from typing import TYPE_CHECKING, Any

from placement.io.columns import Columns
from placement.io.describe import read_describe
from placement.io.formats import current_format
from placement.io.reassignment import read_plan_entries
from placement.model.assignment import Key, PartitionAssignment

if TYPE_CHECKING:  # pydantic and pyarrow load only to read what needs them (a snapshot,
    # a describe's placements): reading reassignment JSON goes without
    from placement.io.snapshot import Snapshot
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
    # partitions whose reassignment is in flight (describe output's `Adding Replicas`/
    # `Removing Replicas`, a snapshot's `adding`/`removing`): their assignment above is the
    # move's target, and no plan may start another move of them
    in_flight: frozenset[Key] = frozenset()


def _shared(isr: tuple[int, ...], a: PartitionAssignment) -> tuple[int, ...]:
    """``isr``, as the replicas' own tuple when equal (the common case: no copy per
    partition of a large cluster)."""
    return a.replicas if isr == a.replicas else isr


def target(a: PartitionAssignment, removing: tuple[int, ...]) -> PartitionAssignment:
    """The layout a reassignment in flight leads to: while it runs Kafka lists the target
    replicas first and the replicas being removed after them (the union), so the target
    is the replicas less those being removed, in the same order."""
    if not removing:
        return a
    gone = set(removing)
    return PartitionAssignment(
        a.topic,
        a.partition,
        tuple(b for b in a.replicas if b not in gone),
        tuple(b for b in a.observers if b not in gone),
    )


def read_current(path: str | Path) -> CurrentState:
    """Reassignment JSON, `kafka-topics --describe` text, or a snapshot directory."""
    p = Path(path)
    kind = current_format(p).name  # docs/formats.md; io/formats.py tells them apart
    if kind == "snapshot":
        from placement.io.snapshot import read_snapshot

        return snapshot_state(read_snapshot(p))
    if kind == "describe":
        from placement.io.snapshot import cluster_policy

        described = read_describe(p, in_flight=True)
        policies = {}
        for name, topic in described.topics.items():
            if topic.placement is not None and topic.placement.value.strip():
                policies[name] = cluster_policy(str(p), name, topic.placement.value)
        min_isr = {n: t.min_isr for n, t in described.topics.items() if t.min_isr is not None}
        parts = [target(d.assignment(), d.removing) for d in described.partitions]
        isr: list[Isr] = [
            _shared(tuple(b for b in d.isr if b not in d.offline), a)
            for d, a in zip(described.partitions, parts, strict=True)
        ]
        leaders = [d.leader for d in described.partitions]
        moving = frozenset((d.topic, d.partition) for d in described.reassigning)
        return CurrentState(parts, policies, {}, min_isr, isr, leaders, in_flight=moving)
    entries, columns = read_plan_entries(p, "the current assignment")
    return CurrentState(entries, columns=columns)


def snapshot_state(snap: Snapshot) -> CurrentState:
    """The current state a snapshot records (read from a directory, or from a live
    cluster); an invalid policy is the InputError naming its source and the topic."""
    from placement.io.snapshot import list_column, snapshot_assignments, snapshot_policies

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
    moving = _snapshot_in_flight(snap.partitions, assignments)
    return CurrentState(
        assignments,
        snapshot_policies(snap.source, snap.topics),
        sizes,
        min_isr,
        isr,
        leaders,
        in_flight=moving,
    )


def _snapshot_in_flight(partitions: Any, assignments: list[PartitionAssignment]) -> frozenset[Key]:
    """The keys of the snapshot rows with a reassignment in flight (an `adding` or a
    `removing` list that is not empty); their entries of ``assignments`` become the move's
    target, in place. Only those rows (a few) are looked at one by one."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    def lengths(name: str) -> Any:
        return pc.fill_null(pc.list_value_length(partitions.column(name)), 0).to_numpy(
            zero_copy_only=False
        )

    rows = np.flatnonzero(lengths("adding") + lengths("removing"))
    if not rows.size:
        return frozenset()
    removing = partitions.column("removing").take(pa.array(rows)).to_pylist()
    for row, gone in zip(rows.tolist(), removing, strict=True):
        assignments[row] = target(assignments[row], tuple(gone or ()))
    return frozenset(assignments[row].key for row in rows.tolist())
