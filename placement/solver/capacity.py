"""Disk capacity, a hard goal of `assign`: no broker ends above the bytes it may hold.

A broker's cap is its inventory ``capacity_bytes`` times ``--max-disk-usage``; a broker
without ``capacity_bytes`` is unlimited, and a partition of unknown size counts 0 bytes.

- :func:`check_capacity`, before planning, proves a request infeasible: per rack, the
  bytes the policies put there against the most its brokers can take. Moves never leave
  a rack, so no plan can do better than that bound.
- :func:`enforce_capacity`, after planning, moves replicas off brokers above their cap to
  brokers of the same rack with room: every policy's per-rack counts stay met.

Both fail with :class:`CapacityError` (exit 1, as every infeasible request) naming the
racks, the brokers and the bytes that do not fit.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain

from placement.errors import MrcPlanError, UsageError
from placement.model.assignment import Key, PartitionAssignment
from placement.model.inventory import Inventory
from placement.model.policy import PlacementPolicy
from placement.solver.feasibility import InfeasibleError

GIB = 2**30
HINT = "raise --max-disk-usage, add brokers or disks to the rack, or drain or exclude fewer brokers"
# brokers named per rack in a message; the exception carries them all
SHOWN = 8


def gib(n: int) -> str:
    return f"{n / GIB:,.2f} GiB"


def amount(n: int) -> str:
    """Bytes as an operator reads them and as a script compares them."""
    return f"{gib(n)} ({n:,} bytes)"


class CapacityError(InfeasibleError):
    """No plan keeps every broker within its disk cap (exit 1, as for InfeasibleError).

    ``brokers`` maps each broker concerned to (bytes it holds or would hold, its cap);
    ``missing`` is how many bytes do not fit.
    """

    def __init__(
        self,
        message: str,
        racks: Iterable[str],
        brokers: Mapping[int, tuple[int, int]],
        missing: int,
    ) -> None:
        # InfeasibleError's constructor words broker-count shortfalls; this one has none
        MrcPlanError.__init__(self, message, HINT)
        self.shortfalls = []
        self.racks = tuple(racks)
        self.brokers = dict(brokers)
        self.missing = missing


def disk_caps(inventory: Inventory, max_disk_usage: float) -> dict[int, int]:
    """broker -> the bytes it may hold: ``capacity_bytes * max_disk_usage``, for brokers
    that declare a capacity (the others are unlimited)."""
    if not 0 < max_disk_usage <= 1:
        raise UsageError(
            f"--max-disk-usage must be above 0 and at most 1, not {max_disk_usage}",
            "give the fraction of each disk a plan may fill, e.g. 0.85",
        )
    return {
        b.id: int(b.capacity_bytes * max_disk_usage)
        for b in inventory.brokers
        if b.capacity_bytes is not None
    }


def bytes_held(
    assignments: Iterable[PartitionAssignment], sizes: Mapping[Key, int]
) -> dict[int, int]:
    """Bytes per broker; e.g. for the partitions no policy manages, which stay where they are."""
    out: dict[int, int] = {}
    for a in assignments:
        size = sizes.get(a.key, 0)
        if size:
            for b in a.replicas:
                out[b] = out.get(b, 0) + size
    return out


@dataclass
class _Demand:
    """Bytes per rack and per broker that the capacity proof compares."""

    need: dict[str, int] = field(default_factory=dict)  # rack -> bytes its policies put there
    distinct: dict[str, int] = field(default_factory=dict)  # rack -> one copy of each partition
    fixed: dict[int, int] = field(default_factory=dict)  # partitions without a policy stay put
    held: dict[int, int] = field(default_factory=dict)  # partitions keeping replicas in the rack
    now: dict[int, int] = field(default_factory=dict)  # what each broker holds today

    @classmethod
    def of(
        cls,
        rack_of: Mapping[int, str | None],
        policies: Mapping[str, PlacementPolicy],
        current: Iterable[PartitionAssignment],
        sizes: Mapping[Key, int],
    ) -> _Demand:
        d = cls()
        wants: dict[str, dict[str, tuple[int, int]]] = {}  # per_rack() once per topic
        for a in current:
            size = sizes.get(a.key, 0)
            if not size:
                continue
            for b in a.replicas:
                d.now[b] = d.now.get(b, 0) + size
            policy = policies.get(a.topic)
            if policy is None:
                for b in a.replicas:
                    d.fixed[b] = d.fixed.get(b, 0) + size
                continue
            per_rack = wants.get(a.topic)
            if per_rack is None:
                per_rack = wants[a.topic] = policy.per_rack()
            for rack, (s, o) in per_rack.items():
                d.need[rack] = d.need.get(rack, 0) + size * (s + o)
                d.distinct[rack] = d.distinct.get(rack, 0) + size
            for b in a.replicas:
                if rack_of.get(b) in per_rack:
                    d.held[b] = d.held.get(b, 0) + size
        return d

    def room(
        self,
        rack: str,
        brokers: list[int],
        caps: Mapping[int, int],
        drained: frozenset[int],
        excluded: frozenset[int],
    ) -> tuple[int, list[str]]:
        """The most ``rack``'s brokers can take, with a note on each broker."""
        notes: list[str] = []
        room = 0
        for b in brokers:
            if b in drained:
                notes.append(f"{b} drained")
                continue
            takes = self.distinct[rack]
            cap = caps.get(b)
            if cap is not None:
                takes = min(takes, max(0, cap - self.fixed.get(b, 0)))
            if b in excluded:
                takes = min(takes, self.held.get(b, 0))
            room += takes
            what = f"{b} holds {gib(self.now.get(b, 0))}"
            what += f" of {gib(cap)}" if cap is not None else " (no capacity_bytes)"
            if b in excluded:
                what += ", excluded"
            notes.append(what)
        return room, notes


def check_capacity(
    inventory: Inventory,
    policies: Mapping[str, PlacementPolicy],
    current: Iterable[PartitionAssignment],
    sizes: Mapping[Key, int],
    caps: Mapping[int, int],
    *,
    drained: Iterable[int] = (),
    excluded: Iterable[int] = (),
) -> None:
    """Raise :class:`CapacityError` naming every rack that cannot hold its bytes.

    A rack must hold, for every partition with a policy, its size times the replicas (sync
    and observers) the policy puts there. Its brokers can take at most: nothing for a drained
    broker; for the others, its cap less the bytes of partitions without a policy in
    ``current`` (those stay put), no more than what it holds now if excluded (it takes no new
    replica), and no more than one replica of each partition. Partitions of unknown size
    count 0, so the bound only ever proves what is certain.
    """
    drained_set, excluded_set = frozenset(drained), frozenset(excluded)
    demand = _Demand.of(inventory.rack_of, policies, current, sizes)
    members = {rack: sorted(ids) for rack, ids in inventory.rack_members().items()}
    texts: list[str] = []
    racks: list[str] = []
    concerned: dict[int, tuple[int, int]] = {}
    missing = 0
    for rack in sorted(demand.need):
        brokers = members.get(rack, [])
        room, notes = demand.room(rack, brokers, caps, drained_set, excluded_set)
        need = demand.need[rack]
        if need <= room:
            continue
        racks.append(rack)
        missing += need - room
        for b in brokers:
            if b in caps:
                concerned[b] = (demand.now.get(b, 0), caps[b])
        shown = ", ".join(notes[:SHOWN]) + (
            f" and {len(notes) - SHOWN} more" if len(notes) > SHOWN else ""
        )
        texts.append(
            f'rack "{rack}" must hold {amount(need)} of replicas but its brokers can '
            f"take at most {amount(room)} ({shown or 'no brokers'}): "
            f"{amount(need - room)} do not fit"
        )
    if texts:
        raise CapacityError("disk capacity: " + "; ".join(texts), racks, concerned, missing)


@dataclass
class _Fill:
    """Bytes per broker while replicas move, and each rack's mean fill over its capped brokers."""

    load: dict[int, int]
    caps: Mapping[int, int]
    rack_load: dict[str, int]
    rack_cap: dict[str, int]

    def room(self, b: int) -> int | None:
        cap = self.caps.get(b)
        return None if cap is None else cap - self.load.get(b, 0)

    def above_mean(self, rack: str, b: int, extra: int) -> bool:
        # (load + extra) / cap > rack_load / rack_cap, in integers
        cap = self.caps.get(b)
        if cap is None:
            return False
        return (self.load.get(b, 0) + extra) * self.rack_cap[rack] > self.rack_load[rack] * cap


def _destination(
    fill: _Fill,
    rack: str,
    dests: tuple[int, ...],
    size: int,
    holds: tuple[int, ...],
    held_before: tuple[int, ...],
) -> int | None:
    """The receiver with room for ``size`` that does not hold the partition: one that held it
    before the plan first (the move back costs nothing), then one that stays at or below the
    rack's mean fill, then the most free room (unlimited brokers: the least loaded)."""
    best: tuple[bool, bool, int, int] | None = None
    for d in dests:
        if d in holds:
            continue
        room = fill.room(d)
        if room is not None and room < size:
            continue
        free = room if room is not None else 2**63 - fill.load.get(d, 0)
        rank = (d not in held_before, fill.above_mean(rack, d, size), -free, d)
        if best is None or rank < best:
            best = rank
    return None if best is None else best[3]


def _relieve(
    b: int,
    keys: list[Key],
    after: dict[Key, PartitionAssignment],
    before: Mapping[Key, PartitionAssignment],
    rack: str | None,
    dests: tuple[int, ...],
    sizes: Mapping[Key, int],
    fill: _Fill,
) -> int:
    """Move replicas off ``b`` until it is within its cap or nothing more can move; returns
    the bytes moved.

    Tiers, cheapest first: replicas this plan added (moving them again adds no transfer),
    followers and observers, the preferred leader last (added leaders before kept ones).
    Within a tier: the smallest replica that alone brings ``b`` under its cap, else the
    largest, and again — few replicas and little beyond what must leave.
    """
    if rack is None or not dests:
        return 0
    tiers: list[list[tuple[int, Key]]] = [[], [], [], []]
    for key in keys:
        size = sizes.get(key, 0)
        a = after[key]
        if size <= 0 or b not in a.replicas:
            continue
        old = before.get(key)
        kept = old is not None and b in old.replicas
        tiers[2 * kept + (a.replicas[0] == b)].append((size, key))
    moved = 0
    cap = fill.caps[b]
    for items in tiers:
        items.sort()
        while items and fill.load[b] > cap:
            pick = _take(items, fill.load[b] - cap, after, before, rack, dests, fill)
            if pick is None:
                break
            size, key, d = pick
            after[key] = after[key].with_broker(b, d)
            fill.load[b] -= size
            fill.load[d] = fill.load.get(d, 0) + size
            moved += size
    return moved


def _take(
    items: list[tuple[int, Key]],
    excess: int,
    after: Mapping[Key, PartitionAssignment],
    before: Mapping[Key, PartitionAssignment],
    rack: str,
    dests: tuple[int, ...],
    fill: _Fill,
) -> tuple[int, Key, int] | None:
    """(size, partition, destination) of the replica to move next, removed from ``items``
    (sorted by size), or None. Replicas found with nowhere to go are dropped as well: while
    one broker is relieved the receivers only fill up, so they never find a place later."""

    def where(i: int) -> int | None:
        size, key = items[i]
        old = before.get(key)
        held_before = old.replicas if old is not None else ()
        return _destination(fill, rack, dests, size, after[key].replicas, held_before)

    first = bisect.bisect_left(items, excess, key=lambda item: item[0])
    looked: set[int] = set()
    found: tuple[int, Key, int] | None = None
    for i in chain(range(first, len(items)), range(first - 1, -1, -1)):
        looked.add(i)
        d = where(i)
        if d is not None:
            found = (*items[i], d)
            break
    items[:] = [item for i, item in enumerate(items) if i not in looked]
    return found


def enforce_capacity(
    after: dict[Key, PartitionAssignment],
    before: Mapping[Key, PartitionAssignment],
    rack_of: Mapping[int, str | None],
    caps: Mapping[int, int],
    sizes: Mapping[Key, int],
    receivers: Mapping[str, tuple[int, ...]],
    *,
    fixed: Mapping[int, int] | None = None,
) -> int:
    """Bring every broker with a cap within it by moving replicas inside their rack.

    ``after`` (mutated) is the planned state of every managed partition, ``before`` the
    current one; ``receivers[rack]`` are the brokers of the rack that may take replicas (not
    drained nor excluded); ``fixed`` the bytes per broker the plan does not manage (see
    :func:`bytes_held`). A replica goes from an over-cap broker to a receiver of its rack
    that does not hold the partition and has room, in the same position (roles kept), so
    each partition keeps its per-rack counts and no broker is pushed over its cap.

    Returns the bytes of the replicas moved: at least the bytes above the caps. Raises
    :class:`CapacityError` naming the brokers still over and by how much.
    """
    load: dict[int, int] = dict(fixed or {})
    for key, a in after.items():
        size = sizes.get(key, 0)
        if size:
            for b in a.replicas:
                load[b] = load.get(b, 0) + size
    over = sorted(
        (b for b, cap in caps.items() if load.get(b, 0) > cap),
        key=lambda b: (caps[b] - load[b], b),
    )
    if not over:
        return 0
    rack_load: dict[str, int] = {}
    rack_cap: dict[str, int] = {}
    for b, cap in caps.items():
        rack = rack_of.get(b)
        if rack is not None:
            rack_load[rack] = rack_load.get(rack, 0) + load.get(b, 0)
            rack_cap[rack] = rack_cap.get(rack, 0) + cap
    fill = _Fill(load, caps, rack_load, rack_cap)
    on: dict[int, list[Key]] = {b: [] for b in over}  # in any order: tiers sort by size
    for key in after:
        for b in after[key].replicas:
            if b in on:
                on[b].append(key)
    moved = 0
    for b in over:
        rack = rack_of.get(b)
        dests = tuple(sorted(receivers.get(rack, ()))) if rack is not None else ()
        moved += _relieve(b, on[b], after, before, rack, dests, sizes, fill)
    still = [b for b in over if load[b] > caps[b]]
    if still:
        raise _still_over(still, rack_of, load, caps)
    return moved


def _still_over(
    still: list[int],
    rack_of: Mapping[int, str | None],
    load: Mapping[int, int],
    caps: Mapping[int, int],
) -> CapacityError:
    by_rack: dict[str, list[int]] = {}
    for b in sorted(still):
        by_rack.setdefault(rack_of.get(b) or "(no rack)", []).append(b)
    texts = []
    for rack, ids in sorted(by_rack.items()):
        notes = [
            f"{b} holds {gib(load[b])} of {gib(caps[b])}, {amount(load[b] - caps[b])} over"
            for b in ids
        ]
        shown = ", ".join(notes[:SHOWN]) + (
            f" and {len(notes) - SHOWN} more" if len(notes) > SHOWN else ""
        )
        texts.append(f'rack "{rack}": {shown}')
    missing = sum(load[b] - caps[b] for b in still)
    return CapacityError(
        "disk capacity: no replica can move within its rack to bring these brokers under "
        f"their cap: {'; '.join(texts)}; {amount(missing)} do not fit",
        sorted(by_rack),
        {b: (load[b], caps[b]) for b in still},
        missing,
    )
