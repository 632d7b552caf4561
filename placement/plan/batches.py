"""Split a plan into ordered batches an operator can run one at a time
(docs/formats.md, batch directory).

Each batch is a valid reassignment file of its own. Its rollback file is the current
assignment of exactly its partitions. Its summary gives the partitions, replicas added,
bytes, the brokers that send and receive, and an ETA under a replication throttle.

- **Caps.** A batch holds at most ``batch_size`` partitions; per broker, at most
  ``max_moves_per_broker`` replica moves; and at most ``batch_bytes`` bytes copied. A move
  counts each replica the broker receives and each one it gives up, like Cruise Control's
  concurrent movements per broker. The bytes a batch copies are the bytes to move of its
  partitions (docs/definitions.md, movement): each one's size times the replicas it gains;
  unknown when one of them gains a replica and has no size.
  Every cap given holds at once. A partition that copies more than ``batch_bytes`` on its
  own can never fit, so it is a batch alone (``oversized``); no other partition joins it.
- **Sizes under a byte cap.** ``batch_bytes`` needs the size of every partition that gains
  a replica. One without a size is refused (a usage error naming it), not counted as 0 or
  set apart: the cap is a promise about each batch, and an unknown size cannot keep it.
- **One move per partition.** A partition's whole change is one move, so a batch never
  holds two moves of one partition, and every partition of the plan is in exactly one
  batch.
- **Order and packing.** Partitions whose busiest broker has the most moves in the whole
  plan are placed first (ties in (topic, partition) order); under a byte cap, the
  partitions that copy the most bytes come first, in that order among equals. Each goes to
  the first batch with room for it (first fit decreasing), so batches are dense and the
  output is deterministic. No split can use fewer batches than ``lower_bound``: the moves
  of the busiest broker over the per-broker cap, the partitions over the batch size, or the
  oversized partitions plus the bytes of the others over the byte cap, rounded up.
- **Leadership.** Data moves first, leadership last. A partition whose preferred leader
  changes keeps its current leader first in its batch, when that broker stays a sync
  replica. So copying data never moves leadership. The `leaders` step then reorders
  those partitions to the planned order (no data moves), and its election file makes
  Kafka elect the new preferred leaders. Partitions whose plan only reorders replicas
  are in that step alone.
- **Sender.** The broker that sends a partition's data is its current leader (`sender`,
  docs/definitions.md, movement): new replicas fetch from the leader. Where no leader is
  recorded (reassignment JSON, an offline partition), the first replica.
- **ETA.** Under ``throttle`` bytes/s, which `kafka-reassign-partitions --throttle` sets
  on both sides (leader and follower replication quotas), a batch takes as long as its
  busiest broker: ``max over brokers of bytes sent or received / throttle``. A leader
  feeding several new replicas sends their bytes through one leader-side quota.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from placement.diagnostics.jsonout import report_json
from placement.errors import UsageError
from placement.io.reassignment import render_election, render_reassignment
from placement.model.assignment import Key, PartitionAssignment

if TYPE_CHECKING:
    from placement.plan.checker import PlanProblem


@dataclass(frozen=True)
class Caps:
    """What one batch may hold; None: no such cap. Every cap given holds at once."""

    batch_size: int | None = None  # partitions
    max_moves_per_broker: int | None = None  # replicas a broker receives plus gives up
    batch_bytes: int | None = None  # bytes copied (an oversized partition: a batch alone)


@dataclass(frozen=True)
class Batch:
    number: int  # 1-based: plan-0001.json is batch 1
    entries: list[PartitionAssignment]  # what to apply, (topic, partition) order
    rollback: list[PartitionAssignment]  # the current assignment of the same partitions
    replicas_added: int
    bytes: int | None  # None: a partition gaining a replica here has no known size
    senders: dict[int, int]  # broker -> bytes it sends (a partition of unknown size: 0)
    receivers: dict[int, int]  # broker -> bytes it receives
    moves: dict[int, int]  # broker -> replicas it receives plus replicas it gives up
    oversized: bool = False  # one partition copying more than the byte cap on its own

    def eta_seconds(self, throttle: int | None) -> float | None:
        """Seconds under ``throttle`` bytes/s on each side: the broker that sends or
        receives the most bounds it."""
        if throttle is None or self.bytes is None:
            return None
        busiest = max([*self.receivers.values(), *self.senders.values()], default=0)
        return busiest / throttle


@dataclass(frozen=True)
class BatchPlan:
    batches: list[Batch]
    leaders: list[PartitionAssignment] = field(default_factory=list)  # final order, no data
    leaders_rollback: list[PartitionAssignment] = field(default_factory=list)
    lower_bound: int = 0  # no split under these caps has fewer batches
    caps: Caps = Caps()

    @property
    def election(self) -> list[Key]:
        """Partitions whose preferred leader the leaders step changes."""
        return [
            a.key
            for a, before in zip(self.leaders, self.leaders_rollback, strict=True)
            if a.leader != before.leader
        ]


@dataclass(frozen=True, slots=True)
class _Move:
    """One partition's whole change, as a batch applies it."""

    entry: PartitionAssignment  # the planned brokers, the current leader kept first
    old: PartitionAssignment | None  # None: a new partition, which has no data yet
    touched: set[int]  # brokers that receive or give up a replica
    gained: list[int]  # brokers that receive one
    copied: int | None  # bytes: its size times len(gained); None: no known size


def sender(old: PartitionAssignment, leader: int | None) -> int | None:
    """The broker a new replica of ``old`` copies its data from: its current ``leader``
    (describe's ``Leader:``, a snapshot's ``leader``), followers fetch from it; where none
    is recorded (reassignment JSON, an offline partition), the first replica. None: no
    replica at all."""
    return leader if leader is not None else old.leader


def _move(
    entry: PartitionAssignment, old: PartitionAssignment | None, sizes: Mapping[Key, int]
) -> _Move:
    before = set(old.replicas) if old is not None else set()
    gained = [b for b in entry.replicas if b not in before]
    size = sizes.get(entry.key) if old is not None and gained else 0
    copied = None if size is None else size * len(gained)
    return _Move(entry, old, set(entry.replicas) ^ before, gained, copied)


def need_sizes() -> UsageError:
    """--batch-bytes without any partition size."""
    return UsageError(
        "--batch-bytes caps the bytes each batch copies, and no partition size is known",
        "give --sizes FILE (a sizes CSV or kafka-log-dirs --describe output) with --current, "
        "or a snapshot that holds sizes",
    )


def _keep_leader(old: PartitionAssignment, new: PartitionAssignment) -> PartitionAssignment:
    """``new`` with ``old``'s preferred leader first, when it stays a sync replica."""
    lead = old.leader
    if lead is None or lead == new.leader or lead not in new.sync:
        return new
    sync = (lead, *(b for b in new.sync if b != lead))
    return PartitionAssignment(new.topic, new.partition, sync + new.observers, new.observers)


def _check_caps(caps: Caps, sizes: Mapping[Key, int]) -> None:
    """At least one cap, each at least 1; a byte cap needs the partitions' sizes."""
    given = [
        c for c in (caps.batch_size, caps.max_moves_per_broker, caps.batch_bytes) if c is not None
    ]
    if not given:
        raise UsageError(
            "say how to split: --batch-size N, --max-moves-per-broker K, --batch-bytes SIZE, "
            "or several of them"
        )
    if min(given) < 1:
        raise UsageError(
            "--batch-size, --max-moves-per-broker and --batch-bytes must be at least 1"
        )
    if caps.batch_bytes is not None and not sizes:
        raise need_sizes()


def _moves(
    plan: Sequence[PartitionAssignment],
    current: Mapping[Key, PartitionAssignment],
    sizes: Mapping[Key, int],
    leaders: list[PartitionAssignment],
    leaders_rollback: list[PartitionAssignment],
) -> list[_Move]:
    """The entries of ``plan`` that move data, by partition, each keeping its current
    leader while it moves; a new order (or leader) goes to ``leaders``, and what it
    replaces to ``leaders_rollback``."""
    moving: list[_Move] = []
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
        moving.append(_move(entry, old, sizes))
    return moving


def split(
    plan: Sequence[PartitionAssignment],
    current: Mapping[Key, PartitionAssignment],
    sizes: Mapping[Key, int],
    *,
    batch_size: int | None = None,
    max_moves_per_broker: int | None = None,
    batch_bytes: int | None = None,
    current_leaders: Mapping[Key, int | None] | None = None,
) -> BatchPlan:
    """Batches for ``plan`` (entries whose partition is absent from ``current`` are new
    assignments: everything they list is received, nothing given up). ``current_leaders``:
    each partition's recorded leader, which sends its data (`sender`); absent: the
    first replica."""
    caps = Caps(batch_size, max_moves_per_broker, batch_bytes)
    _check_caps(caps, sizes)
    cap = max_moves_per_broker
    groups: list[list[_Move]] = []
    load: list[dict[int, int]] = []  # per batch: broker -> moves
    # batches only fill up, so the lowest batch with room only moves forward: per broker
    # for the moves cap, and overall for the partitions cap
    open_for: dict[int, int] = {}
    not_full = 0
    leaders: list[PartitionAssignment] = []
    leaders_rollback: list[PartitionAssignment] = []
    moving = _moves(plan, current, sizes, leaders, leaders_rollback)
    total: dict[int, int] = {}  # broker -> moves over the whole plan
    for move in moving:
        for b in move.touched:
            total[b] = total.get(b, 0) + 1
    room = None
    if batch_bytes is not None:
        if any(m.copied is None for m in moving):
            raise _unsized(moving)
        room = _Room(len(moving), batch_bytes)
    # first fit, busiest brokers' partitions first: they bound the number of batches;
    # under a byte cap the largest copies first
    moving.sort(
        key=lambda m: (
            -(m.copied or 0) if room is not None else 0,
            -max((total[b] for b in m.touched), default=0),
            m.entry.key,
        )
    )
    for move in moving:
        touched = move.touched
        i = max([not_full, *(open_for.get(b, 0) for b in touched)])
        while True:
            if room is not None:
                i = room.first(i, move.copied or 0, len(groups))
            if i == len(groups) or _fits(groups[i], load[i], touched, batch_size, cap):
                break
            i += 1
        if i == len(groups):
            groups.append([])
            load.append({})
        groups[i].append(move)
        if room is not None:
            room.take(i, move.copied or 0)
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
        group.sort(key=lambda m: m.entry.key)
    bound = max(
        -(-len(moving) // batch_size) if batch_size else 0,
        -(-max(total.values(), default=0) // cap) if cap else 0,
        _bytes_bound(moving, batch_bytes) if batch_bytes else 0,
    )
    led = current_leaders or {}
    batches = [_batch(n + 1, g, sizes, load[n], batch_bytes, led) for n, g in enumerate(groups)]
    return BatchPlan(batches, leaders, leaders_rollback, bound, caps)


def _unsized(moving: Sequence[_Move]) -> UsageError:
    """Partitions that copy data and have no size, under a byte cap."""
    unknown = [m.entry.key for m in moving if m.copied is None]
    shown = ", ".join(f"{t}-{p}" for t, p in unknown[:3])
    more = f" and {len(unknown) - 3:,} more" if len(unknown) > 3 else ""
    return UsageError(
        f"--batch-bytes: {len(unknown):,} partition(s) gaining replicas have no known size "
        f"({shown}{more}): no batch holding them could be kept under the cap",
        "give --sizes FILE covering every partition (kafka-log-dirs --describe of every "
        "broker, taken again), or a snapshot with their sizes",
    )


def _bytes_bound(moving: Sequence[_Move], limit: int) -> int:
    """The fewest batches under a byte cap of ``limit``: each oversized partition is a
    batch alone, the others copy at most ``limit`` per batch. (The total over ``limit``
    is no bound: one partition ten times the cap needs one batch, not ten.)"""
    copied = [m.copied or 0 for m in moving]
    rest = sum(c for c in copied if c <= limit)
    return sum(1 for c in copied if c > limit) + -(-rest // limit)


class _Room:
    """The bytes each batch may still copy under a cap, in a max segment tree: the first
    batch from some index on with room for a partition in O(log batches), not a scan of
    every batch (first fit over thousands of batches). Batches not made yet have the
    whole cap; an oversized partition leaves its batch below 0, so nothing joins it."""

    def __init__(self, most: int, limit: int) -> None:
        self.leaves = 1 << max(0, most - 1).bit_length()  # at least one per batch
        self.tree = [limit] * (2 * self.leaves)

    def first(self, start: int, need: int, count: int) -> int:
        """The first of the ``count`` batches from ``start`` on with room for ``need``
        bytes; ``count`` (a new batch) when none has. Batch ``count`` is not made yet and
        has the whole cap, so no later one is ever found."""
        tree, node = self.tree, self.leaves + start
        while tree[node] < need:  # no room here: on to the next subtree to the right
            while node & 1:  # a right child: its parent's range ends where its own does
                node >>= 1
            if node == 0:  # past the root: only an oversized partition finds no room
                return count
            node += 1
        while node < self.leaves:  # down to the leftmost leaf with room
            node = 2 * node if tree[2 * node] >= need else 2 * node + 1
        return node - self.leaves

    def take(self, index: int, copied: int) -> None:
        """Batch ``index`` now copies ``copied`` bytes more."""
        tree, node = self.tree, self.leaves + index
        tree[node] -= copied
        while node > 1:
            node >>= 1
            most = max(tree[2 * node], tree[2 * node + 1])
            if tree[node] == most:  # rooms above are unchanged
                break
            tree[node] = most


def _same_data(old: PartitionAssignment, new: PartitionAssignment) -> bool:
    """The same brokers in the same roles: only the order may differ."""
    return set(old.replicas) == set(new.replicas) and set(old.observers) == set(new.observers)


def _fits(
    group: list[_Move],
    load: dict[int, int],
    touched: set[int],
    batch_size: int | None,
    cap: int | None,
) -> bool:
    """Room under the partitions and moves caps (the bytes cap: `_Room`)."""
    if batch_size is not None and len(group) >= batch_size:
        return False
    return cap is None or all(load.get(b, 0) < cap for b in touched)


def _batch(
    number: int,
    group: list[_Move],
    sizes: Mapping[Key, int],
    moves: dict[int, int],
    batch_bytes: int | None,
    leaders: Mapping[Key, int | None],
) -> Batch:
    senders: dict[int, int] = {}
    receivers: dict[int, int] = {}
    added = 0
    copied: int | None = 0
    for m in group:
        size = sizes.get(m.entry.key, 0)
        added += len(m.gained)
        copied = None if copied is None or m.copied is None else copied + m.copied
        for b in m.gained:
            receivers[b] = receivers.get(b, 0) + size
        source = None if m.old is None else sender(m.old, leaders.get(m.entry.key))
        if source is not None and m.gained:
            senders[source] = senders.get(source, 0) + size * len(m.gained)
    return Batch(
        number=number,
        entries=[m.entry for m in group],
        rollback=[m.old for m in group if m.old is not None],
        replicas_added=added,
        bytes=copied,
        senders=dict(sorted(senders.items())),
        receivers=dict(sorted(receivers.items())),
        moves=dict(sorted(moves.items())),
        oversized=batch_bytes is not None and copied is not None and copied > batch_bytes,
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
    batch_bytes: int | None = None,
    current_leaders: Mapping[Key, int | None] | None = None,
) -> BatchPlan:
    """`split`, then the independent checks over the batches (a failure is a bug, exit
    101: nothing is written)."""
    from placement.plan.checker import PlanCheckError, check_batches

    batches = split(
        plan,
        current,
        sizes,
        batch_size=batch_size,
        max_moves_per_broker=max_moves_per_broker,
        batch_bytes=batch_bytes,
        current_leaders=current_leaders,
    )
    entries = [b.entries for b in batches.batches]
    problems = check_batches(
        plan,
        current,
        entries,
        batches.leaders,
        batch_size=batch_size,
        max_moves_per_broker=max_moves_per_broker,
    )
    problems += check_bytes(current, entries, sizes, batch_bytes)
    if problems:
        raise PlanCheckError(problems)
    return batches


def check_bytes(
    current: Mapping[Key, PartitionAssignment],
    batches: Iterable[Iterable[PartitionAssignment]],
    sizes: Mapping[Key, int],
    batch_bytes: int | None,
) -> list[PlanProblem]:
    """The byte cap, checked from the batch entries alone (not `split`'s sums): a batch of
    more than one partition copies at most ``batch_bytes``, counting for each entry its
    size times the brokers it lists that ``current`` does not (a new partition copies
    nothing), and every entry that copies data has a size."""
    from placement.plan.checker import PlanProblem

    if batch_bytes is None:
        return []
    problems: list[PlanProblem] = []
    for number, batch in enumerate(batches, 1):
        entries = list(batch)
        copied = 0
        for a in entries:
            old = current.get(a.key)
            added = len(set(a.replicas) - set(old.replicas)) if old is not None else 0
            if added and a.key not in sizes:
                problems.append(
                    PlanProblem(*a.key, f"batch {number}: copies data of no known size")
                )
            copied += sizes.get(a.key, 0) * added
        if copied > batch_bytes and len(entries) > 1:
            problems.append(
                PlanProblem(
                    *entries[0].key,
                    f"batch {number} copies {copied:,} bytes, over the cap of {batch_bytes:,}",
                )
            )
    return problems


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
                "oversized": batch.oversized,
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
    caps = plan.caps
    return {
        "throttle_bytes_per_s": throttle,
        "caps": {
            "batch_size": caps.batch_size,
            "max_moves_per_broker": caps.max_moves_per_broker,
            "batch_bytes": caps.batch_bytes,
        },
        "total": {
            "batches": len(plan.batches),
            "batches_lower_bound": plan.lower_bound,
            "partitions": sum(len(b.entries) for b in plan.batches),
            "replicas_added": sum(b.replicas_added for b in plan.batches),
            "bytes": None if None in sizes else sum(s or 0 for s in sizes),
            "eta_seconds": sum(e or 0 for e in etas) if known and throttle else None,
            "oversized": sum(b.oversized for b in plan.batches),
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
