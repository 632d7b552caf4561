"""Who leads each partition after the placement: goal `leaders` (preferred leaders per
broker of each lead rack) within goal `leadership` (fewest leadership changes), with the
leader rule of ``--leaders-in-first-rack``; `LeaderStats` is what the summary reports."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import eq, itemgetter, ne

from placement.io.columns import REPLICAS
from placement.model.assignment import Key, PartitionAssignment
from placement.model.policy import PlacementPolicy
from placement.solver.cluster import Cluster
from placement.solver.leaderflow import leader_flow
from placement.solver.repair import Request
from placement.solver.tallies import was


@dataclass(frozen=True)
class LeaderStats:
    changes: int  # partitions whose preferred leader differs from the current one
    forced: int  # of which the old leader could not stay (it left, or is an observer now)
    bound: int  # fewest changes any plan with these replicas needs (evened racks)
    uneven: tuple[str, ...]  # lead racks the choices left cannot even out


def choose_leaders(
    req: Request,
    before: Mapping[Key, PartitionAssignment],
    after: dict[Key, PartitionAssignment],
    *,
    balance_leaders: bool,
    derived: Mapping[Key, PlacementPolicy],
    alone: Collection[Key] = frozenset(),
) -> LeaderStats:
    """Leaders again, for a state another engine changed after the core (CP-SAT)."""
    touched = [k for k in sorted(after) if after[k] != before[k]]
    c = Cluster(req)
    return assign_leaders(req, c, before, after, touched, balance_leaders, derived, alone)


def assign_leaders(
    req: Request,
    c: Cluster,
    before: Mapping[Key, PartitionAssignment],
    after: dict[Key, PartitionAssignment],
    touched: list[Key],
    balance_leaders: bool,
    derived: Mapping[Key, PlacementPolicy],
    alone: Collection[Key] = frozenset(),
) -> LeaderStats:
    """Goal `leaders` (leaders per broker) within goal `leadership` (fewest leadership
    changes), `placement.solver.goals`.

    A partition whose old leader is no longer one of its sync replicas must change
    leader: it takes whichever of its sync replicas in the old leader's rack evens the
    leaders per broker (`leader_flow`), or any sync replica when none is left there. The
    others keep theirs, except under ``--balance-leaders``, where any partition may change
    leader and the flow makes the fewest changes that even every broker holding sync
    replicas. With ``--leaders-in-first-rack`` (`_first_rack_leaders`) the leader must
    also sit in its policy's first rack."""
    if req.first_rack:
        return _first_rack_leaders(req, c, before, after, touched, balance_leaders, derived, alone)
    forced = {k for k in touched if before[k].replicas[0] not in after[k].sync}
    keys = sorted(_free(req, after, alone)) if balance_leaders else sorted(forced)
    # preferred leaders per broker of the partitions that keep theirs, at C speed
    leading = Counter(map(itemgetter(0), filter(None, map(REPLICAS, after.values()))))
    leading.subtract(after[k].replicas[0] for k in keys if after[k].replicas)
    weight = {b: leading[b] for b in sorted(c.usable)}
    cands: list[list[int]] = []
    olds: list[int] = []
    swap: dict[tuple[Key, int], int] = {}
    kept = dict.fromkeys(weight, 0)
    # the forced ones choose within the old leader's rack, rack by rack (each rack evened
    # on its own); the rest (no sync replica left there, or --balance-leaders) over every
    # broker together
    groups: dict[str | None, list[int]] = {}
    for i, key in enumerate(keys):
        a = after[key]
        old = before[key].replicas[0]
        cand: list[int] = []
        home: str | None = None
        if key in forced and not balance_leaders:
            home = c.rack_of.get(old)
            if home is not None:
                cand = _leader_candidates(c, home, key, True, before, a, weight, swap)
        if not cand:
            home = None
            cand = [b for b in a.sync if b in weight]
        cands.append(cand)
        olds.append(old)
        groups.setdefault(home, []).append(i)
        if old in cand and key not in forced:
            kept[old] += 1
    fixed: dict[int, int] = {}
    for home in sorted(groups, key=lambda r: (r is None, r or "")):
        idx = groups[home]
        mine = [cands[i] for i in idx]
        used = set(chain.from_iterable(mine))
        members = weight.keys() if home is None else c.members.get(home, ())
        fixed = {b: weight[b] for b in members if b in weight and (weight[b] or b in used)}
        picks = leader_flow(fixed, mine, [olds[i] for i in idx], even=balance_leaders)
        for i, pick in zip(idx, picks, strict=True):
            key = keys[i]
            leader = pick if pick is not None else after[key].replicas[0]
            if leader in weight:
                weight[leader] += 1
                if leader in fixed:
                    fixed[leader] += 1
            after[key] = _led_by(after[key], leader, swap.get((key, leader)))
    bound, uneven = _leaders_bound(fixed, kept) if balance_leaders else (0, ())
    leads = map(itemgetter(0), map(REPLICAS, after.values()))
    led = map(itemgetter(0), map(REPLICAS, was(before, after)))
    changes = sum(map(ne, leads, led))  # at C speed: every partition of the cluster
    return LeaderStats(changes, len(forced), bound + len(forced), uneven)


def _leaders_bound(
    fixed: Mapping[int, int], kept: Mapping[int, int]
) -> tuple[int, tuple[str, ...]]:
    """Under ``--balance-leaders``: the fewest leadership changes that even the leaders of
    ``fixed`` (leaders per broker of the last group evened), given how many each ``kept``;
    or no bound and ``("every rack",)`` when the flow left them uneven."""
    if not fixed:
        return 0, ()
    if max(fixed.values()) - min(fixed.values()) > 1:
        return 0, ("every rack",)
    kept = {b: kept.get(b, 0) for b in fixed}
    q, r = divmod(sum(fixed.values()), len(fixed))
    order = sorted(kept, key=lambda b: (-kept[b], b))
    goal = {b: q + (1 if i < r else 0) for i, b in enumerate(order)}
    return sum(max(0, kept[b] - goal[b]) for b in kept), ()


def _first_rack_leaders(
    req: Request,
    c: Cluster,
    before: Mapping[Key, PartitionAssignment],
    after: dict[Key, PartitionAssignment],
    touched: list[Key],
    balance_leaders: bool,
    derived: Mapping[Key, PlacementPolicy],
    alone: Collection[Key] = frozenset(),
) -> LeaderStats:
    """`assign_leaders` with every leader in its policy's first rack: a partition whose
    old leader is no longer a sync replica of that rack must change leader; it takes
    whichever of its sync replicas there evens the rack. The others keep theirs, except
    under ``--balance-leaders`` (the fewest changes that even each lead rack)."""
    policies = req.policies

    def lead_rack(key: Key) -> str | None:
        policy = policies.get(key[0]) or derived.get(key)
        if policy is not None:
            return policy.lead_rack
        return c.rack_of.get(before[key].replicas[0]) if before[key].replicas else None

    forced: set[Key] = set()
    for key in touched:
        old_leader = before[key].replicas[0]
        if old_leader not in after[key].sync or c.rack_of.get(old_leader) != lead_rack(key):
            forced.add(key)
    by_rack: dict[str, list[Key]] = {}
    for key in sorted(_free(req, after, alone)) if balance_leaders else sorted(forced):
        rack = lead_rack(key)
        if rack is not None:
            by_rack.setdefault(rack, []).append(key)
    bound = 0
    uneven: list[str] = []
    for rack, keys in sorted(by_rack.items()):
        if not c.receivers.get(rack):
            continue
        excess = _rack_leaders(req, c, rack, keys, forced, before, after, balance_leaders)
        if excess is None:
            uneven.append(rack)
        else:
            bound += excess
    leads = map(itemgetter(0), map(REPLICAS, after.values()))
    led = map(itemgetter(0), map(REPLICAS, was(before, after)))
    changes = sum(map(ne, leads, led))  # at C speed: every partition of the cluster
    return LeaderStats(changes, len(forced), bound + len(forced), tuple(uneven))


def _free(
    req: Request, after: Mapping[Key, PartitionAssignment], alone: Collection[Key]
) -> Iterable[Key]:
    """The partitions --balance-leaders may reorder: not those the scope keeps out of the
    plan, nor those left alone though they break their rule."""
    scope = req.scope
    if not alone and scope.only is None and not scope.frozen:
        return after.keys()
    return (k for k in after if k not in alone and scope.allows(k))


def _rack_leaders(
    req: Request,
    c: Cluster,
    rack: str,
    keys: list[Key],
    forced: set[Key],
    before: Mapping[Key, PartitionAssignment],
    after: dict[Key, PartitionAssignment],
    balance_leaders: bool,
) -> int | None:
    """Choose the leaders of ``keys`` (led from ``rack``) in ``after``. Returns the changes
    beyond the forced ones that no plan avoids when the rack ends even (0 unless
    ``balance_leaders``), or None when it cannot end even."""
    weight = dict.fromkeys(c.receivers[rack], 0)
    movable = set(keys)
    lead_of = {t: p.lead_rack for t, p in req.policies.items()}
    led_here = map(eq, map(lead_of.get, map(itemgetter(0), after)), repeat(rack))
    for key, a in compress(after.items(), led_here):  # the rack's partitions, at C speed
        if key in movable or not a.replicas:
            continue
        if a.replicas[0] in weight:
            weight[a.replicas[0]] += 1
    kept = dict(weight)
    cands: list[list[int]] = []
    olds: list[int] = []
    swap: dict[tuple[Key, int], int] = {}  # (partition, observer) -> new sync it trades with
    for key in keys:
        cand = _leader_candidates(c, rack, key, key in forced, before, after[key], weight, swap)
        old = before[key].replicas[0]
        cands.append(cand)
        olds.append(old)
        if old in cand and key not in forced:
            kept[old] += 1
    picks = leader_flow(weight, cands, olds, even=balance_leaders)
    for key, pick in zip(keys, picks, strict=True):
        leader = pick if pick is not None else after[key].replicas[0]
        if leader in weight:
            weight[leader] += 1
        after[key] = _led_by(after[key], leader, swap.get((key, leader)))
    if max(weight.values()) - min(weight.values()) > 1:
        return None
    if not balance_leaders:
        return 0
    q, r = divmod(sum(weight.values()), len(weight))
    order = sorted(kept, key=lambda b: (-kept[b], b))
    goal = {b: q + (1 if i < r else 0) for i, b in enumerate(order)}
    return sum(max(0, kept[b] - goal[b]) for b in kept)


def _leader_candidates(
    c: Cluster,
    rack: str,
    key: Key,
    is_forced: bool,
    before: Mapping[Key, PartitionAssignment],
    a: PartitionAssignment,
    weight: Mapping[int, int],
    swap: dict[tuple[Key, int], int],
) -> list[int]:
    """The brokers that may lead ``a``: its sync replicas in the lead rack. When the leader
    must change, a sync replica this plan adds there may as well be the observer, and the
    observer that stays may lead instead: same brokers, same counts per rack, no data
    moved (``swap`` records the trade)."""
    cand = [b for b in a.sync if c.rack_of.get(b) == rack and b in weight]
    if is_forced:
        had = set(before[key].replicas)
        new_sync = [b for b in cand if b not in had]
        if new_sync:
            for o in a.observers:
                if c.rack_of.get(o) == rack and o in weight and o in had:
                    cand.append(o)
                    swap[(key, o)] = new_sync[-1]
    return cand


def _led_by(a: PartitionAssignment, leader: int, partner: int | None) -> PartitionAssignment:
    """``a`` with ``leader`` first; when it was an observer, ``partner`` (a sync replica
    of the same rack) takes its place among the observers."""
    if partner is not None:
        a = a.with_broker(partner, -1).with_broker(leader, partner).with_broker(-1, leader)
        sync = [leader, *(b for b in a.sync if b != leader)]
        a = PartitionAssignment(a.topic, a.partition, (*sync, *a.observers), a.observers)
    if leader != a.replicas[0]:
        rest = tuple(b for b in a.replicas if b != leader)
        a = PartitionAssignment(a.topic, a.partition, (leader, *rest), a.observers)
    return a
