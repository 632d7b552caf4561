"""The cluster a plan leaves behind, as a new snapshot (`snapshot apply`), so that
what-ifs chain offline: drain, then fail a rack, then rebalance, each on the state the
step before left.

A what-if plan may break policies (the result counts the partitions that do), but it must
be one Kafka would accept on this cluster: the strict plan reader and `PlanFile.check`
refuse, naming the file and the entry, a partition or broker the snapshot lacks; the
independent checker's `check_form` then confirms the same before anything is written.

Each entry replaces its partition's `replicas` and `observers`; sizes, brokers and topics
stay. The reassignment is taken as completed, with Kafka's rules for what that leaves
(docs/formats.md, snapshots):

- `isr`: the sync replicas that were in the ISR stay in it, those the plan adds (or turns
  from observer to sync replica) are in it, since Kafka completes a reassignment only once
  they caught up; removed replicas and observers are out. A kept replica that was out of
  sync stays out, so a degraded partition stays degraded for `simulate`.
- `leader`: the current leader if it is still a sync replica (a reassignment moves no
  leadership; a preferred election is a separate step); otherwise the first sync replica
  in the new ISR (the first sync replica when no ISR is recorded), as Kafka's controller
  picks it.
- A partition without a leader (offline, or none recorded) stays so, and the replicas the
  plan adds to it are not counted in sync: they have nobody to copy from. An ISR that was
  not recorded (null) stays unrecorded: apply does not invent what the snapshot did not
  know. An entry equal to the partition's current replicas and observers changes nothing.
- `adding` and `removing` (a reassignment in flight when the snapshot was taken): a plan's
  entry for such a partition replaces the reassignment in flight, as Kafka does with a
  new target for a partition being reassigned, so once it completes neither is left
  (null); partitions the plan does not reassign keep theirs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pyarrow as pa

from placement.errors import InputError
from placement.io.reassignment import PlanFile, read_plan_file
from placement.io.snapshot import IN_FLIGHT, Snapshot
from placement.model.assignment import Key, PartitionAssignment
from placement.plan.checker import PlanCheckError, check_form
from placement.rules.partitions import violation_mask

IDS = pa.list_(pa.int32())


@dataclass(frozen=True)
class Applied:
    """The snapshot after the plan, and what the plan did to it."""

    snapshot: Snapshot
    entries: int  # entries in the plan
    changed: int  # partitions whose replicas or observers differ from before
    violations_before: int  # partitions breaking their topic's policy, before and after
    violations_after: int


def partition_rows(snap: Snapshot) -> dict[Key, int]:
    """(topic, partition) -> its row in the partitions table."""
    parts = snap.partitions
    topics, numbers = parts.column("topic").to_pylist(), parts.column("partition").to_pylist()
    return {key: row for row, key in enumerate(zip(topics, numbers, strict=True))}


def broker_ids(snap: Snapshot) -> set[int]:
    return set(snap.brokers.column("broker_id").to_pylist())


def read_plan_for(snap: Snapshot, path: str | Path, rows: Mapping[Key, int]) -> PlanFile:
    """The plan at ``path``, read strictly and held to the snapshot (``rows``: its
    partitions): an entry for a topic, partition or broker the snapshot lacks is the
    InputError naming the file, the entry's line and the partition."""
    if Path(path).is_dir():
        raise InputError(
            str(path),
            "the plan is a directory; snapshot apply takes one reassignment JSON file",
            "for a batch directory from assign --out-dir, apply its plan-NNNN.json files "
            "one at a time in order (then leaders.json), or the plan from assign --out",
        )
    plan = read_plan_file(path)
    where = f"the snapshot {snap.source}"
    plan.check(
        where=where,
        topics={topic for topic, _ in rows},
        partitions=lambda topic, partition: (topic, partition) in rows,
        brokers=broker_ids(snap),
    )
    return plan


def after(
    before: PartitionAssignment,
    isr: Sequence[int] | None,
    leader: int | None,
    new: PartitionAssignment,
) -> tuple[list[int] | None, int | None]:
    """(isr, leader) of a partition once its reassignment from ``before`` to ``new``
    completed (the module's docstring says why)."""
    sync = new.sync
    new_isr = None
    if isr is not None:
        was_sync, was_in_sync = set(before.sync), set(isr)
        # without a leader the brokers the plan adds have nobody to copy from
        caught_up = leader is not None
        new_isr = [b for b in sync if b in was_in_sync or (caught_up and b not in was_sync)]
    if leader is None or leader in sync:
        return new_isr, leader
    candidates = new_isr if new_isr is not None else sync
    return new_isr, (candidates[0] if candidates else None)


def overlay(
    snap: Snapshot, entries: Sequence[PartitionAssignment], rows: Mapping[Key, int]
) -> tuple[Snapshot, int]:
    """The snapshot with each entry's partition reassigned (every entry is one of the
    snapshot's ``rows``), and how many partitions changed."""
    parts = snap.partitions
    columns: tuple[str, ...] = ("replicas", "observers", "isr", "leader")
    changes: list[tuple[int, PartitionAssignment]] = []
    at = np.array([rows[a.key] for a in entries], dtype=np.int64)
    old = {c: parts.column(c).take(pa.array(at)).to_pylist() for c in columns}
    new_cols: dict[str, list[object]] = {c: [] for c in columns}
    for i, a in enumerate(entries):
        before = PartitionAssignment(
            a.topic, a.partition, tuple(old["replicas"][i]), tuple(old["observers"][i] or ())
        )
        if before == a:  # Kafka does nothing for a partition already so assigned
            continue
        isr, leader = after(before, old["isr"][i], old["leader"][i], a)
        changes.append((int(at[i]), a))
        new_cols["replicas"].append(list(a.replicas))
        new_cols["observers"].append(list(a.observers))
        new_cols["isr"].append(isr)
        new_cols["leader"].append(leader)
    if not changes:
        return snap, 0
    for name in IN_FLIGHT:  # the reassignment completed: nothing in flight on its rows
        if name in parts.schema.names:
            columns += (name,)
            new_cols[name] = [None] * len(changes)
    # row r of the result: row r of the table, or the change made to it (appended after)
    n = parts.num_rows
    index = np.arange(n, dtype=np.int64)
    index[[row for row, _ in changes]] = n + np.arange(len(changes))
    take = pa.array(index)
    table = parts
    for name in columns:
        field = parts.schema.field(name)
        added = pa.array(new_cols[name], type=field.type)
        whole = pa.concat_arrays([parts.column(name).combine_chunks(), added])
        table = table.set_column(parts.schema.get_field_index(name), field, whole.take(take))
    return replace(snap, partitions=table), len(changes)


def apply_plan_file(snap: Snapshot, path: str | Path) -> Applied:
    """The snapshot after the plan at ``path``: read and held to the snapshot (an
    InputError, exit 2, naming the file and the entry), confirmed by the independent
    checker (a failure there is a bug, exit 101), then overlaid."""
    rows = partition_rows(snap)
    plan = read_plan_for(snap, path, rows)
    where = f"the snapshot {snap.source}"
    problems = check_form(plan.entries, rows.keys(), broker_ids(snap), where)
    if problems:
        raise PlanCheckError(problems)
    result, changed = overlay(snap, plan.entries, rows)
    return Applied(
        snapshot=result,
        entries=len(plan.entries),
        changed=changed,
        violations_before=int(violation_mask(snap).sum()),
        violations_after=int(violation_mask(result).sum()),
    )
