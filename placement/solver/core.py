"""The goal-ordered core of every `assign` mode on an existing cluster (repair, drain,
exclude, dead brokers, ``--rebalance``, ``--balance-leaders``).

Goals, highest first; a lower goal never undoes a higher one:

1. hard: every policy met, nothing on drained or dead brokers, nothing new on excluded
   brokers (disk capacity is enforced after, in `capacity`);
2. fewest replicas added for what the mode requires: the partitions that break their
   policy keep what their policy allows; ``--rebalance`` adds the fewest that bring every
   rack within one replica per broker;
3. balance, among plans with those moves: replicas per broker of each rack, then replicas
   of each topic per broker of a rack (both in one min-cost flow per rack, `flow`), then
   preferred leaders per broker of each lead rack (`level.level_units` over the leaders
   that are free to choose);
4. fewest leadership changes: a leader that can stay, stays; only ``--balance-leaders``
   moves leadership from a partition that keeps its leader's replica.

Every free choice (which replica a partition drops, which broker takes a forced addition,
which replicas move to new brokers, who leads after a leader leaves) is made by these goals.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from itertools import chain, compress, groupby, repeat
from operator import eq, getitem, is_, itemgetter, ne, not_, sub

import numpy as np
from ortools.graph.python import min_cost_flow

from placement.errors import NoSolutionError
from placement.io.columns import OBSERVERS, REPLICAS, Columns
from placement.model.assignment import Key, PartitionAssignment
from placement.model.policy import PlacementPolicy
from placement.model.rackaware import rack_bounds, rack_sizes, spread_ok
from placement.solver.columns import positions, sums
from placement.solver.flow import Item, RackFlow, Targets, water_level
from placement.solver.rackaware import as_policy, target_counts
from placement.solver.repair import Request

# --rebalance: a broker above its floor offers the flow this many of its partitions per
# replica above the floor, plus a few: enough choice for the topics, a bounded network
OFFER = 3
OFFER_MIN = 16


@dataclass(frozen=True)
class LeaderStats:
    changes: int  # partitions whose preferred leader differs from the current one
    forced: int  # of which the old leader could not stay (it left, or is an observer now)
    bound: int  # fewest changes any plan with these replicas needs (evened racks)
    uneven: tuple[str, ...]  # lead racks the choices left cannot even out


@dataclass(frozen=True)
class CoreResult:
    after: dict[Key, PartitionAssignment]
    repair_bound: dict[str, int]  # replicas no plan avoids adding, per rack (`lower_bound`)
    balance_bound: dict[str, int]  # --rebalance: replicas any evening plan adds, per rack
    leaders: LeaderStats
    # partitions of topics without a policy that the plan places: the replicas per rack
    # chosen for each (rack-aware rule), as a policy of sync replicas
    derived: dict[Key, PlacementPolicy]
    # partitions outside the scope that break their rule, left alone, per topic
    left_alone: dict[str, int]
    alone: frozenset[Key]  # those partitions


class _Cluster:
    """Who is where: racks, the brokers that may keep and may receive replicas."""

    def __init__(self, req: Request) -> None:
        self.inventory, self.drained = req.inventory, req.drained
        self.rack_of = req.inventory.rack_of
        self.members = req.inventory.rack_members()
        self.usable = {b for b, r in self.rack_of.items() if r is not None} - set(req.drained)
        self.receivers = {
            rack: tuple(sorted(b for b in ids if b in self.usable and b not in req.excluded))
            for rack, ids in self.members.items()
        }
        self._fits: dict[tuple[str, ...], bool] = {}

    def held(self, a: PartitionAssignment, rack: str) -> list[int]:
        return [
            b for b in dict.fromkeys(a.replicas) if self.rack_of.get(b) == rack and b in self.usable
        ]

    @cached_property
    def sizes(self) -> dict[str, int]:
        """Brokers per rack that stay in the cluster (the rack-aware rule's racks)."""
        return rack_sizes(self.inventory, self.drained)

    def follows_rule(self, reps: tuple[int, ...], at: list[str | None]) -> bool:
        """Whether a partition of a topic without a policy follows the rack-aware rule:
        every broker usable and distinct, the racks as even as they allow."""
        if not reps or None in at or len(set(reps)) != len(reps):
            return False
        racks = tuple(sorted(r for r in at if r is not None))
        fits = self._fits.get(racks)
        if fits is None:  # a cluster has few patterns of racks
            fits = self._fits[racks] = spread_ok(Counter(racks), self.sizes, len(racks))
        return fits

    def derive(self, key: Key, a: PartitionAssignment) -> PlacementPolicy:
        """The replicas per rack a partition of a topic without a policy gets when it must
        change (`solver.rackaware.target_counts`); exit 1 naming it when none fits."""
        reps = tuple(dict.fromkeys(a.replicas))
        kept: Counter[str] = Counter()
        lost: Counter[str] = Counter()
        holds: Counter[str] = Counter()
        for b in reps:
            r = self.rack_of.get(b)
            if b in self.usable and r is not None:
                kept[r] += 1
            elif r is not None:
                lost[r] += 1
            if r is not None and b in self.receiving:
                holds[r] += 1
        room = {r: len(ids) - holds[r] for r, ids in self.receivers.items()}
        counts = target_counts(len(a.replicas), kept, self.sizes, room, lost)
        if counts is None:
            raise NoSolutionError(
                f"partition {key[0]}-{key[1]} (no placement policy: Kafka's rack-aware "
                f"rule) cannot keep {len(a.replicas)} replicas: the racks that stay offer "
                f"{sum(self.sizes.values())} brokers, {sum(room.values())} of them able to "
                "take a new replica of it, as evenly spread as the rule asks",
                "drain or exclude fewer brokers, add brokers, or lower the topic's "
                "replication factor first",
            )
        return as_policy(counts, self.rack_of.get(a.replicas[0]) if a.replicas else None)

    def current_rule(self, a: PartitionAssignment) -> PlacementPolicy:
        """A valid partition of a topic without a policy, as the policy it meets now."""
        counts = Counter(r for b in dict.fromkeys(a.replicas) if (r := self.rack_of.get(b)))
        return as_policy(counts, self.rack_of.get(a.replicas[0]) if a.replicas else None)

    @cached_property
    def receiving(self) -> frozenset[int]:
        return frozenset(chain.from_iterable(self.receivers.values()))


def plan_core(req: Request, *, rebalance: bool, balance_leaders: bool) -> CoreResult:
    """The state after the plan, every partition of ``req.current`` included."""
    c = _Cluster(req)
    before = req.before
    policies = req.policies
    racks = {rack: _RackState(ids) for rack, ids in c.members.items()}
    # where a replica may stay: its rack, or None (drained, unknown, rack-less)
    home = {b: r for b, r in c.rack_of.items() if b in c.usable and r is not None}
    first_rack = req.first_rack
    expect = {t: _Expected.of(p, first_rack) for t, p in policies.items()}
    repair_bound: dict[str, int] = {}
    scope = req.scope
    allows = None if scope.only is None and not scope.frozen else scope.allows
    meets = _tally_meeting(req, c, racks, home, expect, rebalance, allows)
    derived: dict[Key, PlacementPolicy] = {}
    left_alone: Counter[str] = Counter()
    alone: set[Key] = set()  # broken and outside the scope: not even reordered
    interned: dict[int, _Expected] = {}
    for key, a in compress(before.items(), map(not_, meets)):
        reps = a.replicas
        at = [home.get(b) for b in reps]
        displaced = None in at
        exp = expect.get(key[0])
        leader = reps[0] if reps else None
        if exp is None and key[0] not in policies:  # Kafka's rack-aware rule
            if not c.follows_rule(reps, at):
                if scope.asks(key, displaced):
                    policy = derived[key] = c.derive(key, a)
                    exp = interned.get(id(policy))
                    if exp is None:
                        exp = interned[id(policy)] = _Expected.of(policy, first_rack)
                else:
                    left_alone[key[0]] += 1
                    alone.add(key)
        elif exp is not None and not scope.asks(key, displaced):
            left_alone[key[0]] += 1
            alone.add(key)
            exp = None
        if exp is None:
            on = rebalance and (allows is None or allows(key))
            for b, r in zip(reps, at, strict=True):
                if r is None:
                    continue
                st = racks[r]
                st.base[b] += 1
                st.topic_base[(key[0], b)] += 1
                if b == leader:
                    st.leaders[b] += 1
                if on:
                    st.kept[b] += 1
                    st.on[b].append(key)
            continue
        lead_rack = exp.lead_rack if first_rack else c.rack_of.get(leader)  # type: ignore[arg-type]
        groups: dict[str, list[int]] = {}
        for b, r in dict(zip(reps, at, strict=True)).items():
            if r is not None:
                groups.setdefault(r, []).append(b)
        for r, (s, o) in exp.per_rack.items():
            here = groups.get(r, [])
            if s + o > len(here):
                repair_bound[r] = repair_bound.get(r, 0) + s + o - len(here)
            st = racks[r]
            for b in here:  # any of them may be the one kept: a weaker bound, never wrong
                st.kept[b] += 1
            if first_rack:
                sticky = leader if leader in here and r == lead_rack else None
                left = r == lead_rack and sticky is None
            else:  # the leader stays where it is; gone, a sync replica of its rack leads
                sticky = leader if leader in here else None
                left = r == lead_rack and sticky is None and s > 0
            leads = left and (s, o) == (1, 0)
            item = Item(key[0], s + o, tuple(here), sticky=sticky, leads=leads, leader_left=left)
            st.add(key, item)
    chosen, balance_bound = _solve_racks(req, c, racks, rebalance)
    after, touched = _placed(req, c, chosen, derived)
    leaders = _choose_leaders(req, c, before, after, touched, balance_leaders, derived, alone)
    return CoreResult(
        after, repair_bound, balance_bound, leaders, derived, dict(left_alone), frozenset(alone)
    )


def _tally_meeting(
    req: Request,
    c: _Cluster,
    racks: Mapping[str, _RackState],
    home: Mapping[int, str],
    expect: Mapping[str, _Expected],
    rebalance: bool,
    allows: Callable[[Key], bool] | None,
) -> list[bool]:
    """Which partitions of ``req.before`` already meet their policy (in its order), each
    of them tallied into ``racks`` (`_tally_kept`, or over the columns when the reader
    made them)."""
    before = req.before
    parts = list(before.values())
    cols = req.columns
    judged = (
        None
        if cols is None
        else _meeting_columns(cols, parts, expect, home, req.first_rack, c.sizes)
    )
    if cols is None or judged is None:
        meets = _meeting(parts, list(map(expect.get, map(itemgetter(0), before))), home)
        keys = list(compress(before, meets))
        _tally_kept(racks, home, keys, list(compress(parts, meets)), rebalance, allows)
        return meets
    columns_meet: list[bool] = judged.tolist()
    _tally_columns(racks, home, cols, judged, rebalance)
    if rebalance:
        kept_keys = list(compress(before, columns_meet))
        kept_parts = list(compress(parts, columns_meet))
        if allows is not None:
            ok = list(map(allows, kept_keys))
            kept_keys, kept_parts = (
                list(compress(kept_keys, ok)),
                list(compress(kept_parts, ok)),
            )
        _tally_on(racks, home, kept_keys, kept_parts)
    return columns_meet


def _solve_racks(
    req: Request, c: _Cluster, racks: Mapping[str, _RackState], rebalance: bool
) -> tuple[dict[Key, dict[str, tuple[int, ...]]], dict[str, int]]:
    """Each rack's min-cost flow (with its targets under ``rebalance``), its leader
    trades, then the bytes evened: the brokers chosen per partition and rack, and the
    balance bound per rack."""
    before = req.before
    chosen: dict[Key, dict[str, tuple[int, ...]]] = {}
    balance_bound: dict[str, int] = {}
    for rack in sorted(racks):
        st = racks[rack]
        receivers = c.receivers.get(rack, ())
        targets = None
        if rebalance and receivers:
            targets, balance_bound[rack] = st.targets(receivers)
            st.offer(before, receivers, targets)
        flow = RackFlow(receivers, st.base, st.topic_base, st.items, targets, st.leaders)
        result = flow.solve()
        for key, brokers in zip(st.keys, result, strict=True):
            chosen.setdefault(key, {})[rack] = brokers
        if len(receivers) >= 2 and any(it.leads for it in st.items):  # else nothing to trade
            _LeaderTrades(rack, receivers, st, result, before, chosen).run()
    if req.sizes:
        load = _bytes_load(before, chosen, req.sizes, c)
        for rack in sorted(racks):
            _even_bytes(c.receivers.get(rack, ()), rack, before, chosen, req.sizes, load)
    return chosen, balance_bound


def _placed(
    req: Request,
    c: _Cluster,
    chosen: Mapping[Key, Mapping[str, tuple[int, ...]]],
    derived: dict[Key, PlacementPolicy],
) -> tuple[dict[Key, PartitionAssignment], list[Key]]:
    """The state after the plan, and the partitions it changes (by key): each chosen
    partition with its roles (`_roles`); a valid partition of a topic without a policy
    gets its current rule in ``derived``."""
    before = req.before
    after = dict(before)
    touched: list[Key] = []
    for key in sorted(chosen):
        old = before[key]
        found = req.policies.get(key[0]) or derived.get(key)
        if found is None:  # a valid partition of a topic without a policy, --rebalance
            found = derived[key] = c.current_rule(old)
        policy = found
        mine = chosen[key]
        placed = {r: mine[r] if r in mine else tuple(c.held(old, r)) for r in policy.per_rack()}
        new = _roles(old, policy, placed, c.rack_of, req.first_rack)
        if new != old:
            after[key] = new
            touched.append(key)
    return after, touched


def rules(
    req: Request, derived: Mapping[Key, PlacementPolicy]
) -> Callable[[PartitionAssignment], PlacementPolicy]:
    """The policy each partition is planned to: its topic's, the counts chosen for it, or
    for a valid partition of a topic without a policy, the counts it has."""
    c = _Cluster(req)

    def rule_of(a: PartitionAssignment) -> PlacementPolicy:
        policy = req.policies.get(a.topic) or derived.get(a.key)
        return policy if policy is not None else c.current_rule(a)

    return rule_of


class _LeaderTrades:
    """Preferred leaders, without touching what the flow evened: a partition whose old
    leader is gone and that has one replica in its lead rack is led by the broker the flow
    gave it. Such a new leader and a new follower of the rack trade brokers (the leader
    goes to a broker that leads less) while a trade narrows the rack's leader spread:
    replicas per broker stay as they were, no topic's range per broker widens past one,
    and no trade costs a move."""

    def __init__(
        self,
        rack: str,
        receivers: tuple[int, ...],
        st: _RackState,
        placed: list[tuple[int, ...]],
        before: Mapping[Key, PartitionAssignment],
        chosen: dict[Key, dict[str, tuple[int, ...]]],
    ) -> None:
        self.rack, self.chosen = rack, chosen
        self.weight = {b: st.leaders[b] for b in receivers}
        self.lead_on: dict[int, list[Key]] = {b: [] for b in receivers}
        self.other_on: dict[int, list[Key]] = {b: [] for b in receivers}
        self.holders: dict[Key, set[int]] = {}
        self.count = Counter(st.topic_base)  # (topic, broker) -> replicas after the flow
        # per topic: how many receiving brokers hold each count (its range per broker)
        self.hists: dict[str, Counter[int]] = {}
        for key, it, brokers in zip(st.keys, st.items, placed, strict=True):
            self.holders[key] = set(brokers)
            old = set(before[key].replicas)
            if it.sticky is not None and it.sticky in brokers and it.sticky in self.weight:
                self.weight[it.sticky] += 1  # a changing partition that keeps its leader
            for b in brokers:
                self.count[(key[0], b)] += 1
                if b in self.weight and b not in old:
                    if it.leads:
                        self.weight[b] += 1
                        self.lead_on[b].append(key)
                    else:
                        self.other_on[b].append(key)

    def hist(self, topic: str) -> Counter[int]:
        h = self.hists.get(topic)
        if h is None:
            h = self.hists[topic] = Counter(self.count[(topic, b)] for b in self.weight)
        return h

    def moved(self, topic: str, src: int, dst: int) -> Counter[int]:
        h = Counter(self.hist(topic))
        cs, cd = self.count[(topic, src)], self.count[(topic, dst)]
        h[cs] -= 1
        h[cd] -= 1
        h[cs - 1] += 1
        h[cd + 1] += 1
        return h

    def room(self, topic: str, src: int, dst: int) -> bool:
        """Leaders come after topics in the goal order: a topic's range per broker may not
        widen, except from 0 to 1 (which leaves no pair of brokers uneven)."""
        return _span(self.moved(topic, src, dst)) <= max(_span(self.hist(topic)), 1)

    def fits(self, x: Key, y: Key, heavy: int, light: int) -> bool:
        """x (leading, on heavy) and y (following, on light) may trade brokers."""
        if light in self.holders[x] or heavy in self.holders[y]:
            return False
        return x[0] == y[0] or (self.room(x[0], heavy, light) and self.room(y[0], light, heavy))

    def run(self) -> None:
        weight = self.weight
        stuck: set[tuple[int, int]] = set()
        for _ in range(sum(len(v) for v in self.lead_on.values())):
            order = sorted(weight, key=lambda b: (weight[b], b))
            pair = next(
                (
                    (h, lt)
                    for h in reversed(order)
                    for lt in order
                    if weight[h] - weight[lt] >= 2 and (h, lt) not in stuck
                ),
                None,
            )
            if pair is None:
                return
            heavy, light = pair
            trade = next(
                (
                    (x, y)
                    for x in self.lead_on[heavy]
                    for y in self.other_on[light]
                    if self.fits(x, y, heavy, light)
                ),
                None,
            )
            if trade is None:
                stuck.add(pair)
            else:
                self.trade(*trade, heavy, light)

    def trade(self, x: Key, y: Key, heavy: int, light: int) -> None:
        for key, src, dst in ((x, heavy, light), (y, light, heavy)):
            _swap(self.chosen, self.rack, key, src, dst)
            self.holders[key] = (self.holders[key] - {src}) | {dst}
            self.hists[key[0]] = self.moved(key[0], src, dst)
            self.count[(key[0], src)] -= 1
            self.count[(key[0], dst)] += 1
        self.lead_on[heavy].remove(x)
        self.lead_on[light].append(x)
        self.other_on[light].remove(y)
        self.other_on[heavy].append(y)
        self.weight[heavy] -= 1
        self.weight[light] += 1


def _span(h: Mapping[int, int]) -> int:
    values = [v for v, n in h.items() if n > 0]
    return max(values) - min(values)


def _bytes_load(
    before: Mapping[Key, PartitionAssignment],
    chosen: Mapping[Key, Mapping[str, tuple[int, ...]]],
    sizes: Mapping[Key, int],
    c: _Cluster,
) -> dict[int, int]:
    """Bytes per usable broker after the flow, in one pass over every partition: the
    brokers the flow chose where it placed a partition in a rack, the ones that hold it
    elsewhere."""
    load: dict[int, int] = {}
    for key, a in before.items():
        mine = chosen.get(key, {})
        size = sizes.get(key, 0)
        for b in dict.fromkeys(a.replicas):
            r = c.rack_of.get(b)
            if r is not None and b in c.usable and r not in mine:
                load[b] = load.get(b, 0) + size
        for brokers in mine.values():
            for b in brokers:
                load[b] = load.get(b, 0) + size
    return load


def _even_bytes(
    receivers: tuple[int, ...],
    rack: str,
    before: Mapping[Key, PartitionAssignment],
    chosen: dict[Key, dict[str, tuple[int, ...]]],
    sizes: Mapping[Key, int],
    loads: Mapping[int, int],
) -> None:
    """Bytes per broker, without touching the counts the flow evened: two replicas this
    plan adds in the rack trade brokers (a big one from the heaviest broker for a smaller
    one on a lighter broker) while a trade narrows the gap. Both are added anyway, so no
    trade costs a move. ``loads``: bytes per broker after the flow (trades in one rack
    change no other rack's)."""
    if len(receivers) < 2:
        return
    load = {b: loads.get(b, 0) for b in receivers}
    holders: dict[Key, set[int]] = {}
    added: dict[int, list[Key]] = {b: [] for b in receivers}
    for key, racks in chosen.items():
        mine = racks.get(rack)
        if mine is None:
            continue
        holders[key] = set(mine)
        old = set(before[key].replicas)
        for b in mine:
            if b in added and b not in old:
                added[b].append(key)
    for _ in range(sum(len(v) for v in added.values())):
        order = sorted(receivers, key=lambda b: (load[b], b))
        done = True
        for heavy in reversed(order[-8:]):
            for light in order[:8]:
                gap = load[heavy] - load[light]
                if gap < 2:
                    break
                trade = _best_trade(added[heavy], added[light], heavy, light, gap, holders, sizes)
                if trade is None:
                    continue
                x, y = trade
                _swap(chosen, rack, x, heavy, light)
                added[heavy].remove(x)
                added[light].append(x)
                holders[x] = (holders[x] - {heavy}) | {light}
                moved = sizes.get(x, 0)
                if y is not None:
                    _swap(chosen, rack, y, light, heavy)
                    added[light].remove(y)
                    added[heavy].append(y)
                    holders[y] = (holders[y] - {light}) | {heavy}
                    moved -= sizes.get(y, 0)
                load[heavy] -= moved
                load[light] += moved
                done = False
                break
            if not done:
                break
        if done:
            return


def _best_trade(
    on_heavy: list[Key],
    on_light: list[Key],
    heavy: int,
    light: int,
    gap: int,
    holders: Mapping[Key, set[int]],
    sizes: Mapping[Key, int],
) -> tuple[Key, Key | None] | None:
    """The trade of an added replica of ``heavy`` for one of ``light`` whose size
    difference comes nearest half the gap (and stays below the gap)."""
    best: tuple[int, Key, Key | None] | None = None
    smalls = sorted(on_light, key=lambda k: (sizes.get(k, 0), k))
    for x in sorted(on_heavy, key=lambda k: (-sizes.get(k, 0), k))[:64]:
        if light in holders[x]:
            continue
        for y in smalls[:64]:
            if heavy in holders[y]:
                continue
            delta = sizes.get(x, 0) - sizes.get(y, 0)
            if 0 < delta < gap:
                score = abs(gap - 2 * delta)
                if best is None or score < best[0]:
                    best = (score, x, y)
    return None if best is None else (best[1], best[2])


def _swap(
    chosen: dict[Key, dict[str, tuple[int, ...]]], rack: str, key: Key, src: int, dst: int
) -> None:
    chosen[key][rack] = tuple(sorted(dst if b == src else b for b in chosen[key][rack]))


@dataclass(frozen=True, eq=False)  # hashed by identity: `_meeting` caches on it
class _Expected:
    """A policy as a partition is checked against it: racks of sync replicas and of
    observers (sorted), the lead rack, and the counts per rack."""

    lead_rack: str
    sync: tuple[str, ...]
    observers: tuple[str, ...]
    per_rack: dict[str, tuple[int, int]]
    lead_check: bool  # --leaders-in-first-rack: the leader must sit in the lead rack

    @classmethod
    def of(cls, policy: PlacementPolicy, lead_check: bool = False) -> _Expected:
        per_rack = policy.per_rack()
        sync = tuple(sorted(r for r, (s, _) in per_rack.items() for _ in range(s)))
        obs = tuple(sorted(r for r, (_, o) in per_rack.items() for _ in range(o)))
        return cls(policy.lead_rack, sync, obs, per_rack, lead_check)

    def racks_fit(self, at: tuple[str | None, ...], n_observers: int) -> bool:
        """Whether replicas in the racks ``at`` (None: an unusable broker), the last
        ``n_observers`` of them observers, are placed as the policy asks: none unusable,
        sync and observer racks as asked (and the leader in the lead rack when asked).
        (`_meeting` adds what the brokers themselves must be.)"""
        if not at or None in at or (self.lead_check and at[0] != self.lead_rack):
            return False
        n_sync = len(at) - n_observers
        racks = [r for r in at if r is not None]  # all of them: None was ruled out above
        return (
            tuple(sorted(racks[:n_sync])) == self.sync
            and tuple(sorted(racks[n_sync:])) == self.observers
        )


def _meeting(
    parts: list[PartitionAssignment],
    expected: list[_Expected | None],
    home: Mapping[int, str],
) -> list[bool]:
    """Which partitions already meet their policy (``expected``, None: they have none):
    `_Expected.racks_fit`, no broker twice, and the observers the replicas after the sync
    ones. Most partitions of a cluster do, a million of them: the racks are judged once
    per pattern (policy, racks, observers) and the brokers a column at a time."""

    @cache
    def fits(exp: _Expected | None, at: tuple[str | None, ...], n_observers: int) -> bool:
        return exp is not None and exp.racks_fit(at, n_observers)

    reps = list(map(REPLICAS, parts))
    observers = list(map(OBSERVERS, parts))
    counts = list(map(len, observers))
    ats = map(tuple, map(map, repeat(home.get), reps))
    placed = map(fits, expected, ats, counts)
    lengths = list(map(len, reps))
    distinct = map(eq, map(len, map(set, reps)), lengths)
    tails = list(map(getitem, reps, map(slice, map(sub, lengths, counts), repeat(None))))
    as_tail = list(map(eq, tails, observers))
    for i in compress(range(len(parts)), map(not_, as_tail)):  # the same brokers, reordered
        as_tail[i] = set(tails[i]) == set(observers[i])
    return list(map(all, zip(placed, distinct, as_tail, strict=True)))


def _meeting_columns(
    cols: Columns,
    parts: list[PartitionAssignment],
    expect: Mapping[str, _Expected],
    home: Mapping[int, str],
    first_rack: bool = False,
    rule_racks: Mapping[str, int] | None = None,
) -> np.ndarray | None:
    """`_meeting` over the columns of ``parts``, at C speed: each partition's racks, sync
    and observer, counted into one 64-bit number per partition (a field of bits per rack
    and kind, and one for brokers that are away) and compared with its policy's. None when
    those fields do not fit in 64 bits or a list is longer than `_LONGEST` (then one
    partition at a time). ``rule_racks`` (brokers per rack that stay): a partition of a
    topic without a policy meets Kafka's rack-aware rule over those racks (without it,
    such a partition never meets: one partition at a time)."""
    expected = [expect.get(name) for name in cols.names]
    wanted = [e for e in expected if e is not None]
    racks = sorted(set(home.values()).union(*(e.per_rack for e in wanted)))
    code = {r: i for i, r in enumerate(racks)}
    asked = [len(e.sync) + len(e.observers) for e in wanted]
    longest = max([int(cols.sizes.max(initial=0)), *asked])
    width = longest.bit_length()  # any count of one rack and kind fits its field
    fits = (2 * len(racks) + 1) * width <= 64
    if not fits or longest > _LONGEST or (cols.observers > cols.sizes).any():
        return None
    # each replica's field: its rack's, as a sync replica or an observer, or "away"
    # (unusable): a partition meets the policy's racks when its fields count as the
    # policy's (so none away)
    home_ids = list(home)
    n_racks = len(racks)
    rack = np.array([code[home[b]] for b in home_ids] + [2 * n_racks], dtype=np.int64)
    field = rack[positions(cols.flat, home_ids)]
    k = cols.observers
    ends = np.cumsum(cols.sizes)
    tail = (
        np.repeat(ends - k, k) + np.arange(cols.observer_flat.size) - np.repeat(np.cumsum(k) - k, k)
    )
    field[tail] += np.where(field[tail] < n_racks, n_racks, 0)
    bits = np.array(
        [1 << (f * width) for f in range(2 * n_racks)] + [1 << (2 * n_racks * width)],
        dtype=np.uint64,
    )
    counted = sums(bits[field], cols.sizes)
    want = np.zeros(len(expected), dtype=np.uint64)
    lead = np.full(len(expected), -2, dtype=np.int64)  # -2: no policy, so never met
    for i, e in enumerate(expected):
        if e is not None:
            lead[i] = code.get(e.lead_rack, -2)
            fields = [code[r] for r in e.sync] + [n_racks + code[r] for r in e.observers]
            want[i] = sum(1 << (f * width) for f in fields)
    has = cols.sizes > 0
    first = np.full(len(cols), -1, dtype=np.int64)  # the leader's rack (-1: away)
    first[has] = field[cols.starts[has]]
    first = np.where(first == 2 * n_racks, -1, first % n_racks)
    t = cols.topic
    met: np.ndarray = has & (counted == want[t])
    if first_rack:
        met &= first == lead[t]
    if rule_racks is not None:
        free = np.array([e is None for e in expected], dtype=bool)
        if free.any():
            met = np.where(free[t], _follow_rule(counted, cols, racks, rule_racks, width), met)
    # no broker twice: each replica against those 1, 2, ... places before it in its list
    twice = np.zeros(cols.flat.size, dtype=bool)
    for d in range(1, longest):
        twice[d:] |= (cols.flat[d:] == cols.flat[:-d]) & (cols.place[d:] >= d)
    met &= sums(twice.astype(np.int64), cols.sizes) == 0
    # the observers: the replicas' tail (or the same brokers in another order)
    if cols.observer_flat.size:
        differs = sums((cols.flat[tail] != cols.observer_flat).astype(np.int64), k) > 0
        for i in np.flatnonzero(differs & met).tolist():
            a = parts[i]
            met[i] = set(a.replicas[len(a.replicas) - len(a.observers) :]) == set(a.observers)
    return met


_LONGEST = 64  # the longest replica list `_meeting_columns` judges


def _follow_rule(
    counted: np.ndarray,
    cols: Columns,
    racks: list[str],
    sizes: Mapping[str, int],
    width: int,
) -> np.ndarray:
    """Per partition of ``cols``, whether its fields (``counted``, as `_meeting_columns`
    packs them) follow Kafka's rack-aware rule: no broker away, no observer, and each
    rack's count between its floor and its ceiling for the partition's replica count."""
    n_racks = len(racks)
    longest = int(cols.sizes.max(initial=0))
    low = np.ones((longest + 1, n_racks), dtype=np.int64)  # low > high: never met
    high = np.zeros((longest + 1, n_racks), dtype=np.int64)
    for n in range(1, longest + 1):
        bounds = rack_bounds(n, sizes)
        if bounds is None:
            continue
        for i, rack in enumerate(racks):
            low[n, i], high[n, i] = bounds.get(rack, (0, 0))  # a rack with no broker: none
    lengths = cols.sizes
    others = counted >> np.uint64(n_racks * width)  # observer and away fields
    ok: np.ndarray = (lengths > 0) & (others == 0) & (cols.observers == 0)
    mask = np.uint64((1 << width) - 1)
    for i in range(n_racks):
        count = ((counted >> np.uint64(i * width)) & mask).astype(np.int64)
        ok &= (count >= low[lengths, i]) & (count <= high[lengths, i])
    return ok


def _tally_columns(
    racks: Mapping[str, _RackState],
    home: Mapping[int, str],
    cols: Columns,
    meets: np.ndarray,
    rebalance: bool,
) -> None:
    """`_tally_kept` over the columns (its ``rebalance`` lists aside, `_tally_on`): the
    replicas, preferred leaders and (topic, broker) pairs of the partitions that meet
    their policy, counted as arrays (all of their brokers are at home)."""
    home_ids = list(home)
    n_home = len(home_ids)
    kept = np.repeat(meets, cols.sizes)
    at = positions(cols.flat[kept], home_ids)
    firsts = cols.starts[meets & (cols.sizes > 0)]
    load = np.bincount(at, minlength=n_home).tolist()
    led = np.bincount(positions(cols.flat[firsts], home_ids), minlength=n_home).tolist()
    for b, n, m in zip(home_ids, load, led, strict=True):
        st = racks[home[b]]
        if n:
            st.base[b] += n
            if rebalance:
                st.kept[b] += n
        if m:
            st.leaders[b] += m
    cells = cols.topic[cols.row[kept]] * n_home + at
    if len(cols.names) * n_home <= _CELLS:
        counts = np.bincount(cells, minlength=len(cols.names) * n_home)
        cells = np.flatnonzero(counts)
        counts = counts[cells]
    else:
        cells, counts = np.unique(cells, return_counts=True)
    rack_of = np.array([sorted(racks).index(home[b]) for b in home_ids], dtype=np.int64)
    order = np.argsort(rack_of[cells % n_home], kind="stable")
    cells, counts = cells[order], counts[order]
    bounds = np.searchsorted(rack_of[cells % n_home], np.arange(len(racks) + 1))
    for r, rack in enumerate(sorted(racks)):
        span = slice(int(bounds[r]), int(bounds[r + 1]))
        topics = map(cols.names.__getitem__, (cells[span] // n_home).tolist())
        brokers = map(home_ids.__getitem__, (cells[span] % n_home).tolist())
        # the first count of each pair: the tallies are empty
        pairs = zip(topics, brokers, strict=True)
        dict.update(racks[rack].topic_base, zip(pairs, counts[span].tolist(), strict=True))


_CELLS = 1 << 24  # the most (topic, broker) cells `_tally_columns` counts as one array


def _tally_on(
    racks: Mapping[str, _RackState],
    home: Mapping[int, str],
    keys: list[Key],
    parts: list[PartitionAssignment],
) -> None:
    """--rebalance: which partitions each broker holds, of those that meet their policy."""
    for key, a in zip(keys, parts, strict=True):
        for b in a.replicas:
            racks[home[b]].on[b].append(key)


def _tally_kept(
    racks: Mapping[str, _RackState],
    home: Mapping[int, str],
    keys: list[Key],
    parts: list[PartitionAssignment],
    rebalance: bool,
    allows: Callable[[Key], bool] | None = None,
) -> None:
    """Count, per rack, what the partitions that meet their policy keep: replicas,
    replicas of each topic and preferred leaders per broker (and for ``rebalance``, what
    each broker could keep, and which partitions), counted at C speed: none of their
    brokers is unusable or there twice. It counts first, into empty tallies."""
    reps = list(map(REPLICAS, parts))
    load = Counter(chain.from_iterable(reps))
    for b, n in load.items():
        st = racks[home[b]]
        st.base[b] += n
        if rebalance:
            st.kept[b] += n
    for b, n in Counter(map(itemgetter(0), reps)).items():
        racks[home[b]].leaders[b] += n
    for pair, n in per_topic(list(map(itemgetter(0), keys)), reps).items():
        racks[home[pair[1]]].topic_base[pair] = n  # the first count of each pair
    if rebalance:
        for key, brokers in zip(keys, reps, strict=True):
            if allows is not None and not allows(key):
                continue
            for b in brokers:
                racks[home[b]].on[b].append(key)


def was(
    before: Mapping[Key, PartitionAssignment], after: Mapping[Key, PartitionAssignment]
) -> Iterable[PartitionAssignment]:
    """``before``'s partition for each key of ``after``, in ``after``'s order. The engines
    replace entries of a copy of ``before``, never add or move one, so the two usually
    list the same keys in the same order: then no key is looked up."""
    if len(after) == len(before) and all(map(is_, after, before)):
        return before.values()
    return map(before.__getitem__, after)


def per_topic(topics: list[str], replicas: list[tuple[int, ...]]) -> Counter[tuple[str, int]]:
    """(topic, broker) -> replicas of the topic on the broker, over partitions of
    ``topics`` holding ``replicas``. Each topic's partitions are usually listed together
    (as Kafka's tools and `assign` write them): then each topic's brokers are counted on
    their own, as plain numbers, and paired with the topic once per broker (no pair made
    per replica); otherwise every (topic, broker) pair is counted."""
    runs = 1 + sum(map(ne, topics[1:], topics[:-1]))
    if runs != len(set(topics)):
        return Counter(chain.from_iterable(map(zip, map(repeat, topics), replicas)))
    out: Counter[tuple[str, int]] = Counter()
    for topic, group in groupby(zip(topics, replicas, strict=True), key=itemgetter(0)):
        counts = Counter(chain.from_iterable(map(itemgetter(1), group)))
        pairs = zip(repeat(topic), counts, strict=False)  # repeat: as long as counts
        dict.update(out, zip(pairs, counts.values(), strict=True))  # each pair new: no sum
    return out


class _RackState:
    """One rack while the flow is built: load outside the flow, and the flow's items."""

    def __init__(self, ids: Iterable[int]) -> None:
        self.base = dict.fromkeys(ids, 0)
        self.topic_base: Counter[tuple[str, int]] = Counter()
        self.kept = dict.fromkeys(self.base, 0)  # replicas each broker could keep
        self.on: dict[int, list[Key]] = {b: [] for b in self.base}  # offerable partitions
        self.items: list[Item] = []
        self.keys: list[Key] = []
        self.leaders: Counter[int] = Counter()  # preferred leaders that stay put

    def add(self, key: Key, item: Item) -> None:
        self.items.append(item)
        self.keys.append(key)

    def targets(self, receivers: tuple[int, ...]) -> tuple[Targets, int]:
        """Floor and ceiling per receiving broker, and the replicas any plan that meets them
        must add: the ceilings go to the brokers that keep the most."""
        total = sum(self.base[b] for b in receivers) + sum(
            max(0, it.need - sum(1 for b in it.held if b not in receivers)) for it in self.items
        )
        q, r = divmod(total, len(receivers))
        order = sorted(receivers, key=lambda b: (-self.kept[b], b))
        goal = {b: q + (1 if i < r else 0) for i, b in enumerate(order)}
        bound = sum(max(0, goal[b] - self.kept[b]) for b in receivers)
        return Targets(q, q + (1 if r else 0)), bound

    def offer(
        self,
        before: Mapping[Key, PartitionAssignment],
        receivers: tuple[int, ...],
        targets: Targets,
    ) -> None:
        """--rebalance: the partitions the brokers above their floor may shed join the flow,
        with arcs to the brokers below their ceiling; the ones whose topic the broker holds
        most of come first, preferred leaders last."""
        under = tuple(b for b in receivers if self.base[b] < targets.ceiling)
        over = [b for b in receivers if self.base[b] > targets.floor]
        if not under or not over:
            return
        topic_total: Counter[str] = Counter()
        for (t, _b), n in self.topic_base.items():
            topic_total[t] += n
        share = {t: n / len(receivers) for t, n in topic_total.items()}
        offered: set[Key] = set()
        for b in over:
            want = OFFER * (self.base[b] - targets.floor) + OFFER_MIN
            # the j-th partition of a topic on the broker scores its topic's count there,
            # less j, less the topic's even share: the offer takes every topic in
            # proportion to how much of it the broker holds above its share
            seen: Counter[str] = Counter()
            scored = []
            for k in sorted(self.on[b]):
                if k in offered:
                    continue
                j = seen[k[0]]
                seen[k[0]] += 1
                over_share = self.topic_base[(k[0], b)] - j - share[k[0]]
                scored.append((before[k].replicas[0] == b, -over_share, k))
            scored.sort()
            offered.update(k for _, _, k in scored[:want])
        members = set(self.base)
        for key in sorted(offered):
            a = before[key]
            here = [b for b in dict.fromkeys(a.replicas) if b in members]
            for b in here:
                self.base[b] -= 1
                self.topic_base[(key[0], b)] -= 1
            leader = a.replicas[0]  # valid partitions: a leader here is of the lead rack
            sticky = leader if leader in here else None
            if sticky is not None:
                self.leaders[sticky] -= 1
            self.add(key, Item(key[0], len(here), tuple(here), new=under, sticky=sticky))


def _roles(
    old: PartitionAssignment,
    policy: PlacementPolicy,
    racks: Mapping[str, tuple[int, ...]],
    rack_of: Mapping[int, str | None],
    first_rack: bool = False,
) -> PartitionAssignment:
    """Sync replicas and observers from the brokers chosen per rack, old roles kept where
    they can be (a kept sync replica stays sync, a kept observer stays an observer). The
    old leader leads while it is still a sync replica (``first_rack``: a sync replica of
    the lead rack); otherwise a sync replica of its rack (``first_rack``: of the lead
    rack), else any, leads until `_choose_leaders` picks."""
    old_sync = old.sync
    old_obs = set(old.observers)
    sync: list[int] = []
    observers: list[int] = []
    for rack, (s, _o) in policy.per_rack().items():
        brokers = list(racks[rack])
        was_sync = [b for b in old_sync if b in brokers]
        new = [b for b in brokers if b not in old_sync and b not in old_obs]
        was_obs = [b for b in old.observers if b in brokers]
        order = was_sync + new + was_obs if len(was_sync) < s else was_sync + was_obs + new
        if len(was_sync) > s:  # fewer sync replicas here now: the leader stays sync
            lead = old.replicas[0]
            order = sorted(was_sync, key=lambda b: b != lead) + was_obs + new
        sync.extend(order[:s])
        observers.extend(sorted(order[s:], key=lambda b: (b not in old_obs, b)))
    lead_rack = policy.lead_rack
    leader = old.replicas[0] if old.replicas else None
    if first_rack:
        if leader not in sync or leader not in racks[lead_rack]:
            leader = next(b for b in sync if b in racks[lead_rack])
    elif leader is None or leader not in sync:
        home = rack_of.get(leader) if leader is not None else None
        leader = next((b for b in sync if rack_of.get(b) == home), sync[0])
    rest = [b for b in sync if b != leader]
    if (
        set(rest) == set(old_sync) - {leader}
        and set(observers) == old_obs
        and leader == (old.replicas[0] if old.replicas else None)
    ):
        return old  # same roles: keep the old order, nothing to do
    rest.sort(key=lambda b: (b not in old_sync, old_sync.index(b) if b in old_sync else b))
    return PartitionAssignment(
        old.topic, old.partition, (leader, *rest, *observers), tuple(observers)
    )


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
    c = _Cluster(req)
    return _choose_leaders(req, c, before, after, touched, balance_leaders, derived, alone)


def leader_flow(
    fixed: Mapping[int, int], cands: list[list[int]], olds: list[int], *, even: bool
) -> list[int | None]:
    """Who leads each partition, as a min-cost flow over the brokers that may lead.

    ``fixed`` leaders per broker stay where they are; partition i may be led by any of
    ``cands[i]`` (its sync replicas in the lead rack), and keeping ``olds[i]`` costs
    nothing while any other choice is one leadership change. ``even`` (--balance-leaders):
    every broker between floor and ceiling of the rack's mean if any choice reaches it
    (a reward per leader below the floor, a penalty above the ceiling, both above any
    number of changes), then the fewest changes: exact, the flow's optimum is integral.
    Otherwise every choice is a change anyway and rising costs per leader even them out.
    A partition without candidates gets None (it keeps its leader)."""
    brokers = sorted(fixed)
    pos = {b: i for i, b in enumerate(brokers)}
    n = len(cands)
    node_b = n
    sink = n + len(brokers)
    tails: list[int] = []
    heads: list[int] = []
    caps: list[int] = []
    costs: list[int] = []
    deg = dict.fromkeys(brokers, 0)
    supply = 0
    change = 1
    for i, (cand, old) in enumerate(zip(cands, olds, strict=True)):
        if not cand:
            continue
        supply += 1
        for b in cand:
            tails.append(i)
            heads.append(node_b + pos[b])
            caps.append(1)
            costs.append(0 if b == old else change)
            deg[b] += 1
    if supply == 0:
        return [None] * n
    total = sum(fixed.values()) + supply
    floor, rem = divmod(total, len(brokers))
    shape = _LeaderShape(
        floor,
        floor + (1 if rem else 0),
        water_level(np.array(list(fixed.values())), np.array([deg[b] for b in fixed]), supply),
        2 * (supply + 1),
    )
    for b in brokers:
        for cap, cost in shape.spans(fixed[b], deg[b], even=even):
            tails.append(node_b + pos[b])
            heads.append(sink)
            caps.append(cap)
            costs.append(cost)
    solver = min_cost_flow.SimpleMinCostFlow()
    solver.add_arcs_with_capacity_and_unit_cost(
        np.array(tails, dtype=np.int64),
        np.array(heads, dtype=np.int64),
        np.array(caps, dtype=np.int64),
        np.array(costs, dtype=np.int64),
    )
    supplies = np.zeros(sink + 1, dtype=np.int64)
    for i, cand in enumerate(cands):
        supplies[i] = 1 if cand else 0
    supplies[sink] = -supply
    solver.set_nodes_supplies(np.arange(sink + 1, dtype=np.int64), supplies)
    if solver.solve() != solver.OPTIMAL:  # cannot happen: every unit has a path
        raise AssertionError("the leader network has no solution")
    out: list[int | None] = [None] * n
    n_arcs = sum(len(c) for c in cands)
    flows = solver.flows(np.arange(n_arcs, dtype=np.int64)).tolist()
    for arc, f in enumerate(flows):
        if f:
            out[tails[arc]] = brokers[heads[arc] - node_b]
    return out


@dataclass(frozen=True)
class _LeaderShape:
    """The arcs from a broker to the sink of the leader flow."""

    floor: int
    ceiling: int
    level: int  # the water level of the forced choices
    big: int  # above any number of leadership changes

    def spans(self, fixed: int, deg: int, *, even: bool) -> list[tuple[int, int]]:
        """(capacity, unit cost): even = a reward below the floor, free up to the ceiling,
        a penalty above; otherwise rising costs per leader around the water level."""
        if deg == 0:
            return []
        if even:
            below = min(deg, max(0, self.floor - fixed))
            top = min(deg, max(below, self.ceiling - fixed))
            spans = [(below, -self.big)] if below else []
            spans += [(top - below, 0)] if top > below else []
            return spans + ([(deg - top, self.big)] if deg > top else [])
        units = min(deg, max(1, self.level - fixed + 4))
        spans = [(1, fixed + u) for u in range(1, units + 1)]
        rest = deg - units
        return spans + ([(rest, 4 * (self.level + deg + 1))] if rest > 0 else [])


def _choose_leaders(
    req: Request,
    c: _Cluster,
    before: Mapping[Key, PartitionAssignment],
    after: dict[Key, PartitionAssignment],
    touched: list[Key],
    balance_leaders: bool,
    derived: Mapping[Key, PlacementPolicy],
    alone: Collection[Key] = frozenset(),
) -> LeaderStats:
    """Goal 3 (leaders per broker) within goal 4 (fewest leadership changes).

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
    c: _Cluster,
    before: Mapping[Key, PartitionAssignment],
    after: dict[Key, PartitionAssignment],
    touched: list[Key],
    balance_leaders: bool,
    derived: Mapping[Key, PlacementPolicy],
    alone: Collection[Key] = frozenset(),
) -> LeaderStats:
    """`_choose_leaders` with every leader in its policy's first rack: a partition whose
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
    c: _Cluster,
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
    c: _Cluster,
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
