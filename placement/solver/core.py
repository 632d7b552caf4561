"""The orchestrator of every `assign` mode on an existing cluster (repair, drain, exclude,
dead brokers, ``--rebalance``, ``--balance-leaders``): it runs the goals of
`placement.solver.goals` in their order, each in the module that implements it.

The goals, their order and what each contributes are declared once, in
`placement/solver/goals/` (`GOALS`); a lower goal never undoes a higher one. Here they run
as: the partitions that already meet their rule are tallied and stay out (`tallies`,
`judging`); the others, and under ``--rebalance`` what the brokers above their floor offer,
go into one min-cost flow per rack (`flow`: fewest moves, then replicas, then topics per
broker); each rack's leader trades follow (`leadtrades`), then the bytes are evened
(`bytes_balance`); roles are set (`_roles`) and the leaders chosen (`leaders`).

Every free choice (which replica a partition drops, which broker takes a forced addition,
which replicas move to new brokers, who leads after a leader leaves) is made by these goals.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import compress
from operator import not_

from placement.model.assignment import Key, PartitionAssignment
from placement.model.policy import PlacementPolicy
from placement.solver.bytes_balance import bytes_load, even_bytes
from placement.solver.cluster import Cluster
from placement.solver.flow import Item, RackFlow
from placement.solver.judging import Expected
from placement.solver.leaders import LeaderStats, assign_leaders
from placement.solver.leadtrades import LeaderTrades
from placement.solver.repair import Request
from placement.solver.tallies import (
    RackState,
    tally_meeting,
)


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


def plan_core(req: Request, *, rebalance: bool, balance_leaders: bool) -> CoreResult:
    """The state after the plan, every partition of ``req.current`` included."""
    c = Cluster(req)
    before = req.before
    policies = req.policies
    racks = {rack: RackState(ids) for rack, ids in c.members.items()}
    # where a replica may stay: its rack, or None (drained, unknown, rack-less)
    home = {b: r for b, r in c.rack_of.items() if b in c.usable and r is not None}
    first_rack = req.first_rack
    expect = {t: Expected.of(p, first_rack) for t, p in policies.items()}
    repair_bound: dict[str, int] = {}
    scope = req.scope
    allows = None if scope.only is None and not scope.frozen else scope.allows
    meets = tally_meeting(req, c, racks, home, expect, rebalance, allows)
    derived: dict[Key, PlacementPolicy] = {}
    left_alone: Counter[str] = Counter()
    alone: set[Key] = set()  # broken and outside the scope: not even reordered
    interned: dict[int, Expected] = {}
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
                        exp = interned[id(policy)] = Expected.of(policy, first_rack)
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
    leaders = assign_leaders(req, c, before, after, touched, balance_leaders, derived, alone)
    return CoreResult(
        after, repair_bound, balance_bound, leaders, derived, dict(left_alone), frozenset(alone)
    )


def _solve_racks(
    req: Request, c: Cluster, racks: Mapping[str, RackState], rebalance: bool
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
            LeaderTrades(rack, receivers, st, result, before, chosen).run()
    if req.sizes:
        load = bytes_load(before, chosen, req.sizes, c)
        for rack in sorted(racks):
            even_bytes(c.receivers.get(rack, ()), rack, before, chosen, req.sizes, load)
    return chosen, balance_bound


def _placed(
    req: Request,
    c: Cluster,
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
    c = Cluster(req)

    def rule_of(a: PartitionAssignment) -> PlacementPolicy:
        policy = req.policies.get(a.topic) or derived.get(a.key)
        return policy if policy is not None else c.current_rule(a)

    return rule_of


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
    rack), else any, leads until `assign_leaders` picks."""
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
