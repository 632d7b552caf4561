"""The goal-ordered core on random small clusters: hard goals, move bounds, leadership and
balance, for drains, policy changes and dead brokers, with and without ``--rebalance`` and
``--balance-leaders``. Each scenario also has a fixed-seed regression case."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace

import pytest
from _policies import policy
from hypothesis import given, settings
from hypothesis import strategies as st

from placement.model.assignment import PartitionAssignment as PA  # noqa: N817
from placement.model.inventory import Broker, Inventory
from placement.model.policy import PlacementPolicy
from placement.plan.checker import PlanContext, check_plan
from placement.solver.core import plan_core
from placement.solver.engine import Options, Solution, solve
from placement.solver.repair import Request, lower_bound

Key = tuple[str, int]
SCENARIOS = ("drain", "policy", "dead", "none")


@dataclass(frozen=True)
class Case:
    req: Request
    members: dict[str, list[int]]  # rack -> brokers, the dead ones included
    scenario: str


def _round_robin(
    policies: Mapping[str, PlacementPolicy],
    partitions: Mapping[str, int],
    members: Mapping[str, list[int]],
) -> list[PA]:
    """Each rack hands out its brokers from one cursor over every topic: replicas per broker
    of a rack differ by at most one, and every partition meets its policy."""
    cursor = dict.fromkeys(members, 0)
    current = []
    for topic, pol in policies.items():
        for p in range(partitions[topic]):
            sync: list[int] = []
            obs: list[int] = []
            for rack, (s, o) in pol.per_rack().items():
                ids = members[rack]
                got = [ids[(cursor[rack] + j) % len(ids)] for j in range(s + o)]
                cursor[rack] += s + o
                sync += got[:s]
                obs += got[s:]
            current.append(PA(topic, p, (*sync, *obs), tuple(obs)))
    return current


def _need(policies: Mapping[str, PlacementPolicy]) -> Counter[str]:
    """Brokers each rack must keep usable for every policy to fit."""
    need: Counter[str] = Counter()
    for pol in policies.values():
        for rack, (s, o) in pol.per_rack().items():
            need[rack] = max(need[rack], s + o)
    return need


def _removable(
    rng: random.Random, members: Mapping[str, list[int]], need: Counter[str], count: int
) -> frozenset[int]:
    """Up to ``count`` brokers whose loss leaves every rack enough brokers."""
    left = {rack: len(ids) for rack, ids in members.items()}
    pool = [b for ids in members.values() for b in ids]
    rack_of = {b: rack for rack, ids in members.items() for b in ids}
    rng.shuffle(pool)
    out: set[int] = set()
    for b in pool:
        if len(out) == count:
            break
        if left[rack_of[b]] > need[rack_of[b]]:
            left[rack_of[b]] -= 1
            out.add(b)
    return frozenset(out)


def build(seed: int, racks: int, scenario: str) -> Case:
    rng = random.Random(seed)
    names = [f"r{i}" for i in range(racks)]
    members = {
        r: [10 * i + j for j in range(1, rng.randint(3, 7) + 1)] for i, r in enumerate(names)
    }
    policies: dict[str, PlacementPolicy] = {}
    partitions: dict[str, int] = {}
    for t in range(rng.randint(1, 4)):
        chosen = rng.sample(names, rng.randint(1, racks))
        sync = {r: rng.randint(1, 2) for r in chosen}
        observers: dict[str, int] = {}
        if rng.random() < 0.4:
            r = rng.choice(names)
            if sync.get(r, 0) + 1 <= len(members[r]) - 1:
                observers[r] = 1
        policies[f"t{t}"] = policy(sync, observers)
        partitions[f"t{t}"] = rng.randint(10, 80)
    current = _round_robin(policies, partitions, members)
    brokers = [Broker(id=b, rack=r) for r, ids in members.items() for b in ids]
    drained: frozenset[int] = frozenset()
    if scenario == "drain":
        drained = _removable(rng, members, _need(policies), rng.randint(1, 2))
    elif scenario == "dead":
        dead = _removable(rng, members, _need(policies), rng.randint(1, 2))
        brokers = [b for b in brokers if b.id not in dead]
    elif scenario == "policy":
        policies = _lowered(rng, policies)
    req = Request(Inventory(brokers=brokers), policies, current, drained=drained)
    return Case(req, members, scenario)


def _lowered(
    rng: random.Random, policies: dict[str, PlacementPolicy]
) -> dict[str, PlacementPolicy]:
    """One topic's count lowered in one rack: a sync count of 2 to 1, an observer dropped,
    or a follower rack (not the lead rack) dropped from the policy."""
    options: list[tuple[str, str, str]] = []
    for topic, pol in policies.items():
        lead = pol.replicas[0].constraints.rack
        for c in pol.replicas:
            if c.count > 1 or c.constraints.rack != lead:
                options.append((topic, "sync", c.constraints.rack))
        options += [(topic, "obs", c.constraints.rack) for c in pol.observers]
    if not options:
        return policies
    topic, kind, rack = rng.choice(options)
    pol = policies[topic]
    sync = {c.constraints.rack: c.count for c in pol.replicas}
    obs = {c.constraints.rack: c.count for c in pol.observers}
    lowered = sync if kind == "sync" else obs
    lowered[rack] -= 1
    if lowered[rack] == 0:
        del lowered[rack]
    return {**policies, topic: policy(sync, obs)}


def added(plan: list[PA], current: Mapping[Key, PA]) -> int:
    return sum(len(set(a.replicas) - set(current[a.key].replicas)) for a in plan)


def _spread(load: Counter[int], brokers: list[int]) -> int:
    counts = [load[b] for b in brokers]
    return max(counts) - min(counts) if counts else 0


def verify(
    case: Case,
    rebalance: bool,
    balance_leaders: bool,
    *,
    drain_balance: bool = False,
    leader_stats: bool = False,
    first_rack: bool = False,
) -> Solution:
    """Every invariant the core promises, for one request; the two that fail today (see
    the xfail tests below) only when asked. ``first_rack``: --leaders-in-first-rack (else
    a leader stays while it remains a sync replica, in any rack)."""
    req = replace(case.req, first_rack=first_rack)
    options = Options(rebalance=rebalance, balance_leaders=balance_leaders)
    sol = solve(req, options)
    before = {a.key: a for a in req.current}
    after = before | {a.key: a for a in sol.plan}
    rack_of = {b.id: b.rack for b in req.inventory.brokers}

    # 1. hard goals, for the plan and for the whole cluster after it (dead brokers too)
    free = balance_leaders or first_rack
    ctx = PlanContext(
        req.inventory,
        req.policies,
        before,
        req.drained,
        req.excluded,
        leaders_free=free,
        first_rack=first_rack,
    )
    assert check_plan(sol.plan, ctx) == []
    assert check_plan(list(after.values()), ctx) == []

    # 2./3. replicas added against the bound
    moved = added(sol.plan, before)
    assert moved >= sol.lower_bound
    live = {
        rack: [b for b in ids if b in rack_of and b not in req.drained | req.excluded]
        for rack, ids in case.members.items()
    }
    load = Counter(b for a in after.values() for b in a.replicas)
    if not rebalance:
        assert moved == sum(lower_bound(req).values())
    else:
        bound = _strongest_bound(req, sol)
        assert bound >= sol.lower_bound
        assert moved <= 1.02 * bound + 2, (moved, sol.lower_bound, bound)
        for rack, ids in live.items():
            assert _spread(load, ids) <= 1, (rack, {b: load[b] for b in ids})

    # 4. leadership
    changed = 0
    forced = 0
    for key, a in after.items():
        old = before[key].replicas[0]
        lead_rack = req.policies[key[0]].replicas[0].constraints.rack
        stays = old in a.sync and (not first_rack or rack_of.get(old) == lead_rack)
        changed += a.replicas[0] != old
        forced += not stays
        if not balance_leaders and stays:
            assert a.replicas[0] == old, (key, before[key], a)
    assert sol.leaders is not None
    if leader_stats:
        assert sol.leaders.changes == changed
    if balance_leaders and leader_stats:
        # the bound is a true lower bound; the changes are the exact optimum of the leader
        # flow for the replicas placed, which the bound (forced + excess) may not reach
        assert changed >= sol.leaders.bound, (changed, sol.leaders.bound)
        # the racks the core reports even are even in the final plan
        leads = Counter(a.replicas[0] for a in after.values())
        if first_rack:
            lead_racks = {p.replicas[0].constraints.rack for p in req.policies.values()}
            for rack in lead_racks - set(sol.leaders.uneven):
                assert _spread(leads, live[rack]) <= 1, (rack, {b: leads[b] for b in live[rack]})
        elif not sol.leaders.uneven:  # even over every broker holding a sync replica
            holders = sorted({b for a in after.values() for b in a.sync})
            assert _spread(leads, holders) <= 1, {b: leads[b] for b in holders}

    if balance_leaders:
        assert sol.leaders.bound >= forced

    # 5. lowering counts never needs a new replica
    if case.scenario == "policy" and not rebalance:
        assert moved == 0

    # 6. determinism
    again = solve(req, options)
    assert again.plan == sol.plan

    # 7. a drain from an even rack leaves it as even, or as even as its layout allows
    if case.scenario == "drain" and drain_balance:
        load_before = Counter(b for a in before.values() for b in a.replicas)
        for rack, ids in live.items():
            forced = _forced_spread(req, rack, ids, before)
            assert _spread(load, ids) <= max(1, _spread(load_before, ids), forced), (
                rack,
                forced,
                {b: (load_before[b], load[b]) for b in ids},
            )
    # no replica the plan adds could move to a broker of its rack two lighter: that move
    # costs nothing and evens the rack (goal 3)
    if drain_balance:
        _no_free_evening(req, before, after, live)
    return sol


def _strongest_bound(req: Request, sol: Solution) -> int:
    """Per rack, the best of the policy bound, the core's evening bound and CP-SAT's proven
    bound: ``solution.lower_bound`` ignores that a replica cannot go where its partition
    already is, so it can be far below the optimum CP-SAT proves."""
    core = plan_core(req, rebalance=True, balance_leaders=False)
    racks = lower_bound(req)
    per_rack = {r: max(racks.get(r, 0), core.balance_bound.get(r, 0)) for r in racks}
    for r in core.balance_bound:
        per_rack.setdefault(r, core.balance_bound[r])
    for ex in sol.exact:
        if ex.result.bound is not None:
            per_rack[ex.rack] = max(per_rack.get(ex.rack, 0), ex.result.bound)
    return sum(per_rack.values())


def _forced_spread(req: Request, rack: str, live: list[int], before: Mapping[Key, PA]) -> int:
    """A drain only: the spread no plan avoids when some brokers hold every partition that
    loses a replica in ``rack`` (round-robin windows that align), so they receive nothing
    while the others share the whole drained load."""
    rack_of = {b.id: b.rack for b in req.inventory.brokers}
    moving = [a for a in before.values() if any(b in req.drained for b in a.replicas)]
    moving = [a for a in moving if any(rack_of.get(b) == rack for b in a.replicas)]
    drained = sum(1 for a in moving for b in a.replicas if b in req.drained and rack_of[b] == rack)
    if not drained:
        return 0
    base = Counter(b for a in before.values() for b in a.replicas)
    stuck = [b for b in live if all(b in a.replicas for a in moving)]
    takers = [b for b in live if b not in stuck]
    if not stuck or not takers:
        return 0
    top = -(-(sum(base[b] for b in takers) + drained) // len(takers))
    return top - min(base[b] for b in stuck)


def _no_free_evening(
    req: Request, before: Mapping[Key, PA], after: Mapping[Key, PA], live: Mapping[str, list[int]]
) -> None:
    rack_of = {b.id: b.rack for b in req.inventory.brokers}
    load = Counter(b for a in after.values() for b in a.replicas)
    for key, a in after.items():
        for b in set(a.replicas) - set(before[key].replicas):
            rack = rack_of[b]
            assert rack is not None
            lighter = [x for x in live[rack] if x not in a.replicas and load[x] <= load[b] - 2]
            assert not lighter, (key, b, load[b], {x: load[x] for x in lighter})


FLAGS = [(False, False), (True, False), (False, True), (True, True)]
CASES = {
    "seed": st.integers(0, 2**20),
    "racks": st.integers(2, 4),
    "scenario": st.sampled_from(SCENARIOS),
    "flags": st.sampled_from(FLAGS),
}
# the test's estimate of the spread a layout forces misses some forced cases (a partition
# whose other replicas in the rack sit on a broker excludes that broker; seed 362881, 2
# racks: 38 of 44 moving partitions also sit on broker 13, which can take only 6)
FLAT_TAIL = (
    "test: _forced_spread underestimates what a layout forces when the moving partitions "
    "exclude a broker only in part"
)


@settings(max_examples=50, deadline=None)
@given(**CASES)
def test_random_clusters_meet_every_goal(
    seed: int, racks: int, scenario: str, flags: tuple[bool, bool]
) -> None:
    verify(build(seed, racks, scenario), *flags)


@pytest.mark.xfail(reason=FLAT_TAIL, strict=False)
@settings(max_examples=40, deadline=None)
@given(**CASES)
def test_random_drains_stay_as_even_as_their_layout_allows(
    seed: int, racks: int, scenario: str, flags: tuple[bool, bool]
) -> None:
    verify(build(seed, racks, scenario), *flags, drain_balance=True)


@settings(max_examples=40, deadline=None)
@given(**CASES)
@pytest.mark.slow  # the fast tier leaves it to make test
def test_random_leader_changes_meet_the_reported_bound(
    seed: int, racks: int, scenario: str, flags: tuple[bool, bool]
) -> None:
    verify(build(seed, racks, scenario), *flags, leader_stats=True)


@settings(max_examples=30, deadline=None)
@given(**CASES)
def test_random_clusters_with_leaders_in_first_rack(
    seed: int, racks: int, scenario: str, flags: tuple[bool, bool]
) -> None:
    verify(build(seed, racks, scenario), *flags, leader_stats=True, first_rack=True)


@pytest.mark.parametrize("first_rack", [False, True])
@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("flags", FLAGS)
def test_fixed_seed_regression(scenario: str, flags: tuple[bool, bool], first_rack: bool) -> None:
    verify(build(20240611, 3, scenario), *flags, first_rack=first_rack)


def test_drain_spreads_over_every_broker_that_may_take() -> None:
    """Every partition of broker 4 also sits on 5 and 6: its 37 replicas must go to 1-3,
    and they should split 12/12/13, not 10/10/17."""
    pol = policy({"a": 3})
    inv = Inventory(brokers=[Broker(id=i, rack="a") for i in range(1, 7)])
    current = [PA("t", p, (1, 2, 3) if p % 2 else (4, 5, 6)) for p in range(74)]
    sol = solve(Request(inv, {"t": pol}, current, drained=frozenset({4})), Options())
    after = {a.key: a for a in current} | {a.key: a for a in sol.plan}
    load = Counter(b for a in after.values() for b in a.replicas)
    assert _spread(load, [1, 2, 3]) <= 1, load


def test_leader_changes_meet_their_bound_after_dead_brokers() -> None:
    """Broker 22 dies: 10 forced changes even rack r2, but 24 (an observer of the
    partitions that lose their leader) can only gain leaders by unforced changes: 13."""
    verify(build(20240611, 3, "dead"), True, True, leader_stats=True)


def test_leader_stats_count_the_exact_engines_changes() -> None:
    verify(build(1, 2, "drain"), True, False, leader_stats=True)


def test_pruned_arcs_still_meet_every_hard_goal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ARC_LIMIT each partition keeps a window of its topic's lightest brokers: the
    plan still meets every policy with the fewest moves, and racks stay within one. (The
    whole network: a drain's racks otherwise take the short way, `_solve_kept`.)"""
    import placement.solver.flow as flow

    monkeypatch.setattr(flow, "ARC_LIMIT", 40)
    monkeypatch.setattr(flow, "_solve_kept", lambda _flow: None)
    for scenario in ("drain", "dead"):
        case = build(7, 3, scenario)
        sol = verify(case, False, False)
        assert sol.plan
        sol = verify(case, True, False)


def test_a_kept_observer_may_lead_when_the_new_replica_observes() -> None:
    """Broker 1 leads 8 partitions whose observer in the lead rack is broker 2; 3 and 4
    lead 6 others each. Draining 1, the new replica of each must go to 3 or 4 (2 holds
    the observer): without trading roles, 3 and 4 would end at 10 leaders and 2 at 0.
    The observer may lead instead while the new replica observes: same brokers per rack,
    no extra move, and the rack's leaders end within one of each other."""
    pol = policy({"a": 1, "b": 1}, {"a": 1})
    inv = Inventory(
        brokers=[Broker(id=i, rack="a") for i in range(1, 5)]
        + [Broker(id=i, rack="b") for i in (5, 6)]
    )
    current = [PA("t", p, (1, 5 + p % 2, 2), (2,)) for p in range(8)]
    current += [
        PA("t", 8 + p, (3 + p % 2, 5 + p % 2, 2 if p % 3 else 1), (2 if p % 3 else 1,))
        for p in range(12)
    ]
    req = Request(inv, {"t": pol}, current, drained=frozenset({1}))
    sol = solve(req, Options())
    before = {a.key: a for a in current}
    after = before | {a.key: a for a in sol.plan}
    ctx = PlanContext(inv, {"t": pol}, before, frozenset({1}))
    assert check_plan(sol.plan, ctx) == []
    assert sum(len(set(a.replicas) - set(before[a.key].replicas)) for a in sol.plan) == sum(
        lower_bound(req).values()
    )
    leads = Counter(a.replicas[0] for a in after.values())
    assert max(leads[b] for b in (2, 3, 4)) - min(leads[b] for b in (2, 3, 4)) <= 1, leads
