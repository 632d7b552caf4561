"""Split a plan into ordered batches an operator can run one at a time
(docs/formats.md, batch directory).

Each batch is a valid reassignment file of its own. Its rollback file is the current
assignment of exactly its partitions. Its summary gives the partitions, replicas added,
bytes, the brokers that send and receive, and an ETA under a replication throttle.

- **Caps.** A batch holds at most ``batch_size`` partitions and, per broker, at most
  ``max_moves_per_broker`` replica moves. A move counts each replica the broker receives
  and each one it gives up, like Cruise Control's concurrent movements per broker.
- **One move per partition.** A partition's whole change is one move, so a batch never
  holds two moves of one partition, and every partition of the plan is in exactly one
  batch.
- **Order and packing.** Partitions whose busiest broker has the most moves in the whole
  plan are placed first (ties in (topic, partition) order). Each goes to the first batch
  with room for it (first fit decreasing), so batches are dense and the output is
  deterministic. No split can use fewer batches than ``lower_bound``: the moves of the
  busiest broker over the per-broker cap, or the partitions over the batch size.
- **Leadership.** Data moves first, leadership last. A partition whose preferred leader
  changes keeps its current leader first in its batch, when that broker stays a sync
  replica. So copying data never moves leadership. The `leaders` step then reorders
  those partitions to the planned order (no data moves), and its election file makes
  Kafka elect the new preferred leaders. Partitions whose plan only reorders replicas
  are in that step alone.
- **Sender.** The broker that sends a partition's data is its current preferred leader:
  new replicas fetch from the leader, and the preferred leader is assumed to lead.
- **ETA.** Under ``throttle`` bytes/s, a batch takes as long as its slowest receiver:
  ``max over receiving brokers of bytes received / throttle``. Kafka's leader-side throttle
  can make a sender that feeds many receivers slower still. The summary shows each
  sender's bytes, so that case can be seen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from placement.diagnostics.jsonout import report_json
from placement.errors import UsageError
from placement.io.reassignment import render_election, render_reassignment
from placement.model.assignment import Key, PartitionAssignment


@dataclass(frozen=True)
class Batch:
    number: int  # 1-based: plan-0001.json is batch 1
    entries: list[PartitionAssignment]  # what to apply, (topic, partition) order
    rollback: list[PartitionAssignment]  # the current assignment of the same partitions
    replicas_added: int
    bytes: int | None  # None: no partition size is known
    senders: dict[int, int]  # broker -> bytes it sends (0 when sizes are unknown)
    receivers: dict[int, int]  # broker -> bytes it receives
    moves: dict[int, int]  # broker -> replicas it receives plus replicas it gives up

    def eta_seconds(self, throttle: int | None) -> float | None:
        """Seconds under ``throttle`` bytes/s: the slowest receiving broker bounds it."""
        if throttle is None or self.bytes is None:
            return None
        return max(self.receivers.values(), default=0) / throttle


@dataclass(frozen=True)
class BatchPlan:
    batches: list[Batch]
    leaders: list[PartitionAssignment] = field(default_factory=list)  # final order, no data
    leaders_rollback: list[PartitionAssignment] = field(default_factory=list)
    lower_bound: int = 0  # no split has fewer batches: the caps against the busiest broker

    @property
    def election(self) -> list[Key]:
        """Partitions whose preferred leader the leaders step changes."""
        return [
            a.key
            for a, before in zip(self.leaders, self.leaders_rollback, strict=True)
            if a.leader != before.leader
        ]


def _keep_leader(old: PartitionAssignment, new: PartitionAssignment) -> PartitionAssignment:
    """``new`` with ``old``'s preferred leader first, when it stays a sync replica."""
    lead = old.leader
    if lead is None or lead == new.leader or lead not in new.sync:
        return new
    sync = (lead, *(b for b in new.sync if b != lead))
    return PartitionAssignment(new.topic, new.partition, sync + new.observers, new.observers)


def split(
    plan: Sequence[PartitionAssignment],
    current: Mapping[Key, PartitionAssignment],
    sizes: Mapping[Key, int],
    *,
    batch_size: int | None = None,
    max_moves_per_broker: int | None = None,
) -> BatchPlan:
    """Batches for ``plan`` (entries whose partition is absent from ``current`` are new
    assignments: everything they list is received, nothing given up)."""
    if batch_size is None and max_moves_per_broker is None:
        raise UsageError("say how to split: --batch-size N, --max-moves-per-broker K, or both")
    if (batch_size is not None and batch_size < 1) or (
        max_moves_per_broker is not None and max_moves_per_broker < 1
    ):
        raise UsageError("--batch-size and --max-moves-per-broker must be at least 1")
    cap = max_moves_per_broker
    groups: list[list[tuple[PartitionAssignment, PartitionAssignment | None]]] = []
    load: list[dict[int, int]] = []  # per batch: broker -> moves
    # batches only fill up, so the lowest batch with room only moves forward: per broker
    # for the moves cap, and overall for the partitions cap
    open_for: dict[int, int] = {}
    not_full = 0
    leaders: list[PartitionAssignment] = []
    leaders_rollback: list[PartitionAssignment] = []
    moving: list[tuple[PartitionAssignment, PartitionAssignment | None, set[int]]] = []
    total: dict[int, int] = {}  # broker -> moves over the whole plan
    for new in sorted(plan, key=lambda a: a.key):
        old = current.get(new.key)
        if old is not None and _same_data(old, new):
            if old != new:  # a new order only: no data to move, the leaders step does it
                leaders.append(new)
                leaders_rollback.append(old)
            continue
        entry = new if old is None else _keep_leader(old, new)
        if entry != new:
            leaders.append(new)
            leaders_rollback.append(entry)
        before = set(old.replicas) if old is not None else set()
        touched = (set(entry.replicas) - before) | (before - set(entry.replicas))
        moving.append((entry, old, touched))
        for b in touched:
            total[b] = total.get(b, 0) + 1
    # first fit, busiest brokers' partitions first: they bound the number of batches
    moving.sort(key=lambda m: (-max((total[b] for b in m[2]), default=0), m[0].key))
    for entry, old, touched in moving:
        i = max([not_full, *(open_for.get(b, 0) for b in touched)])
        while i < len(groups) and not _fits(groups[i], load[i], touched, batch_size, cap):
            i += 1
        if i == len(groups):
            groups.append([])
            load.append({})
        groups[i].append((entry, old))
        for b in touched:
            load[i][b] = load[i].get(b, 0) + 1
            while cap is not None and open_for.get(b, 0) < len(groups):
                if load[open_for.get(b, 0)].get(b, 0) < cap:
                    break
                open_for[b] = open_for.get(b, 0) + 1
        while batch_size is not None and not_full < len(groups):
            if len(groups[not_full]) < batch_size:
                break
            not_full += 1
    for group in groups:
        group.sort(key=lambda g: g[0].key)
    bound = max(
        -(-len(moving) // batch_size) if batch_size else 0,
        -(-max(total.values(), default=0) // cap) if cap else 0,
    )
    known = bool(sizes)
    batches = [_batch(n + 1, g, sizes, known, load[n]) for n, g in enumerate(groups)]
    return BatchPlan(batches, leaders, leaders_rollback, bound)


def _same_data(old: PartitionAssignment, new: PartitionAssignment) -> bool:
    """The same brokers in the same roles: only the order may differ."""
    return set(old.replicas) == set(new.replicas) and set(old.observers) == set(new.observers)


def _fits(
    group: list[tuple[PartitionAssignment, PartitionAssignment | None]],
    load: dict[int, int],
    touched: set[int],
    batch_size: int | None,
    cap: int | None,
) -> bool:
    if batch_size is not None and len(group) >= batch_size:
        return False
    return cap is None or all(load.get(b, 0) < cap for b in touched)


def _batch(
    number: int,
    group: list[tuple[PartitionAssignment, PartitionAssignment | None]],
    sizes: Mapping[Key, int],
    known_sizes: bool,
    moves: dict[int, int],
) -> Batch:
    senders: dict[int, int] = {}
    receivers: dict[int, int] = {}
    added = total = 0
    for entry, old in group:
        size = sizes.get(entry.key, 0)
        new_ones = [b for b in entry.replicas if old is None or b not in old.replicas]
        added += len(new_ones)
        total += size * len(new_ones)
        for b in new_ones:
            receivers[b] = receivers.get(b, 0) + size
        if old is not None and old.leader is not None and new_ones:
            senders[old.leader] = senders.get(old.leader, 0) + size * len(new_ones)
    return Batch(
        number=number,
        entries=[entry for entry, _ in group],
        rollback=[old for _, old in group if old is not None],
        replicas_added=added,
        bytes=total if known_sizes else None,
        senders=dict(sorted(senders.items())),
        receivers=dict(sorted(receivers.items())),
        moves=dict(sorted(moves.items())),
    )


def file_names(count: int) -> list[str]:
    """``plan-0001.json`` ...: four digits, more when there are more batches."""
    width = max(4, len(str(count)))
    return [f"plan-{n:0{width}d}.json" for n in range(1, count + 1)]


def split_checked(
    plan: Sequence[PartitionAssignment],
    current: Mapping[Key, PartitionAssignment],
    sizes: Mapping[Key, int],
    *,
    batch_size: int | None = None,
    max_moves_per_broker: int | None = None,
) -> BatchPlan:
    """`split`, then the independent checker over the batches (a failure is a bug, exit
    101: nothing is written)."""
    from placement.plan.checker import PlanCheckError, check_batches

    batches = split(
        plan, current, sizes, batch_size=batch_size, max_moves_per_broker=max_moves_per_broker
    )
    problems = check_batches(
        plan,
        current,
        [b.entries for b in batches.batches],
        batches.leaders,
        batch_size=batch_size,
        max_moves_per_broker=max_moves_per_broker,
    )
    if problems:
        raise PlanCheckError(problems)
    return batches


def summary(plan: BatchPlan, throttle: int | None) -> dict[str, Any]:
    """The ``summary.json`` document: per batch and in total, in the order to apply."""
    names = file_names(len(plan.batches))
    rows = []
    for batch, name in zip(plan.batches, names, strict=True):
        rows.append(
            {
                "batch": batch.number,
                "file": name,
                "rollback": name.replace("plan-", "rollback-") if batch.rollback else None,
                "partitions": len(batch.entries),
                "replicas_added": batch.replicas_added,
                "bytes": batch.bytes,
                "senders": [{"broker": b, "bytes": n} for b, n in batch.senders.items()],
                "receivers": [{"broker": b, "bytes": n} for b, n in batch.receivers.items()],
                "max_moves_per_broker": max(batch.moves.values(), default=0),
                "eta_seconds": batch.eta_seconds(throttle),
            }
        )
    etas = [r["eta_seconds"] for r in rows]
    known = all(e is not None for e in etas)
    leaders = None
    order = list(names)
    if plan.leaders:
        leaders = {
            "file": "leaders.json",
            "rollback": "rollback-leaders.json",
            "partitions": len(plan.leaders),
            "election": "election.json" if plan.election else None,
            "elections": len(plan.election),
        }
        order += ["leaders.json"] + (["election.json"] if plan.election else [])
    sizes = [b.bytes for b in plan.batches]
    return {
        "throttle_bytes_per_s": throttle,
        "total": {
            "batches": len(plan.batches),
            "batches_lower_bound": plan.lower_bound,
            "partitions": sum(len(b.entries) for b in plan.batches),
            "replicas_added": sum(b.replicas_added for b in plan.batches),
            "bytes": None if None in sizes else sum(s or 0 for s in sizes),
            "eta_seconds": sum(e or 0 for e in etas) if known and throttle else None,
        },
        "order": order,
        "batches": rows,
        "leaders": leaders,
    }


def render_files(plan: BatchPlan, throttle: int | None) -> dict[str, str]:
    """Every file of an ``--out-dir``, by name: batches, rollbacks, the leaders step, the
    election file and ``summary.json``."""
    files = {}
    for batch, name in zip(plan.batches, file_names(len(plan.batches)), strict=True):
        files[name] = render_reassignment(batch.entries)
        if batch.rollback:
            files[name.replace("plan-", "rollback-")] = render_reassignment(batch.rollback)
    if plan.leaders:
        files["leaders.json"] = render_reassignment(plan.leaders)
        files["rollback-leaders.json"] = render_reassignment(plan.leaders_rollback)
        if plan.election:
            files["election.json"] = render_election(plan.election)
    files["summary.json"] = report_json(summary(plan, throttle))
    return files
