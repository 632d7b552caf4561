"""Fresh layout, --rebalance and --balance-leaders: invariants, objectives against bounds."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping

import pytest
from _policies import policy
from hypothesis import given, settings
from hypothesis import strategies as st

from placement.model.assignment import PartitionAssignment as PA  # noqa: N817
from placement.model.inventory import Broker, Inventory
from placement.model.policy import PlacementPolicy
from placement.plan.checker import PlanContext, check_plan
from placement.solver.engine import Options, Solution, solve
from placement.solver.fresh import _slots
from placement.solver.level import excess, level_units
from placement.solver.repair import Request

Key = tuple[str, int]


def inventory(sizes: Mapping[str, int]) -> Inventory:
    brokers, next_id = [], 1
    for rack, n in sizes.items():
        for _ in range(n):
            brokers.append(Broker(id=next_id, rack=rack))
            next_id += 1
    return Inventory(brokers=brokers)


def rack_ids(inv: Inventory, rack: str, skip: Iterable[int] = ()) -> list[int]:
    return [b.id for b in inv.brokers if b.rack == rack and b.id not in set(skip)]


def spread(counts: Counter[int], ids: list[int]) -> int:
    return max(counts[b] for b in ids) - min(counts[b] for b in ids)


def run(req: Request, options: Options | None = None) -> tuple[Solution, dict[Key, PA]]:
    options = options or Options()
    sol = solve(req, options)
    before = {a.key: a for a in req.current}
    ctx = PlanContext(
        req.inventory,
        req.policies,
        before,
        req.drained,
        req.excluded,
        partition_counts=dict(req.fresh) if req.fresh else None,
        leaders_free=options.balance_leaders or req.first_rack,
        first_rack=req.first_rack,
    )
    assert check_plan(sol.plan, ctx) == []
    return sol, before | {a.key: a for a in sol.plan}


def added(plan: list[PA], before: Mapping[Key, PA]) -> int:
    return sum(
        len(set(a.replicas) - (set(before[a.key].replicas) if a.key in before else set()))
        for a in plan
    )


# ---- fresh ----------------------------------------------------------------------------


def test_slots_visit_every_broker_once_per_lap_and_vary_the_pairs() -> None:
    for n, k, total in [(4, 2, 40), (6, 3, 66), (5, 2, 30), (8, 4, 100)]:
        pos = _slots(total, n, k)
        for lap in range(total // n):
            assert sorted(pos[lap * n : (lap + 1) * n].tolist()) == list(range(n))
        assert pos[(total // n) * n :].tolist() == list(range(total % n))
        windows = pos[: (total // k) * k].reshape(-1, k)
        assert all(len(set(w)) == k for w in windows.tolist())
    pairs = {tuple(sorted(w)) for w in _slots(40, 4, 2).reshape(-1, 2).tolist()}
    assert len(pairs) > 2  # plain laps would give only {0,1} and {2,3}


@settings(max_examples=40, deadline=None)
@given(
    racks=st.lists(st.integers(3, 9), min_size=2, max_size=4),
    topics=st.lists(
        st.tuples(st.integers(1, 40), st.integers(2, 3), st.integers(0, 2), st.integers(0, 1)),
        min_size=1,
        max_size=6,
    ),
    seed=st.integers(0, 5),
)
def test_fresh_is_even_per_rack_per_topic_and_in_leaders(
    racks: list[int], topics: list[tuple[int, int, int, int]], seed: int
) -> None:
    names = [f"r{i}" for i in range(len(racks))]
    inv = inventory(dict(zip(names, racks, strict=True)))
    policies, counts = {}, {}
    for i, (parts, lead, follow, obs) in enumerate(topics):
        lead_rack, other = names[i % len(names)], names[(i + 1) % len(names)]
        reps = {lead_rack: min(lead, racks[i % len(names)])}
        if follow:
            reps[other] = min(follow, racks[(i + 1) % len(names)])
        observers = {names[(i + 2) % len(names)]: obs} if obs and len(names) > 2 else {}
        policies[f"t{i}"] = policy(reps, observers)
        counts[f"t{i}"] = parts
    sol, after = run(Request(inv, policies, fresh=counts), Options())
    assert len(sol.plan) == sum(counts.values())
    assert sol.lower_bound == added(sol.plan, {})
    total = Counter(b for a in after.values() for b in a.replicas)
    for rack in names:
        ids = rack_ids(inv, rack)
        assert spread(total, ids) <= 1, rack
        for t in policies:
            per_topic = Counter(b for a in after.values() if a.topic == t for b in a.replicas)
            assert spread(per_topic, ids) <= 1, (rack, t)
        leads = Counter(
            a.replicas[0]
            for a in after.values()
            if policies[a.topic].replicas[0].constraints.rack == rack
        )
        if leads:
            assert spread(leads, ids) <= 1, rack


def test_fresh_is_deterministic_and_the_seed_changes_it() -> None:
    inv = inventory({"a": 6, "b": 6})
    req = Request(inv, {"t": policy({"a": 2, "b": 1})}, fresh={"t": 50})
    one = solve(req, Options()).plan
    assert one == solve(req, Options()).plan
    from placement.solver.cpsat import SolveParams

    other = solve(req, Options(params=SolveParams(seed=7))).plan
    assert other != one and other == solve(req, Options(params=SolveParams(seed=7))).plan


def test_fresh_skips_drained_and_excluded_brokers() -> None:
    inv = inventory({"a": 5, "b": 4})
    req = Request(
        inv,
        {"t": policy({"a": 2, "b": 1})},
        fresh={"t": 40},
        drained=frozenset({1}),
        excluded=frozenset({6}),
    )
    _, after = run(req)
    load = Counter(b for a in after.values() for b in a.replicas)
    assert load[1] == 0 and load[6] == 0
    assert spread(load, [2, 3, 4, 5]) <= 1 and spread(load, [7, 8, 9]) <= 1


# ---- rebalance ------------------------------------------------------------------------


def skewed(inv: Inventory, pol: PlacementPolicy, parts: int, seed: int) -> list[PA]:
    """Valid partitions piled on the first brokers of every rack (new brokers are empty)."""
    rng = random.Random(seed)
    out = []
    for p in range(parts):
        sync: list[int] = []
        observers: list[int] = []
        for rack, (s, o) in pol.per_rack().items():
            ids = rack_ids(inv, rack)
            heavy = ids[: max(s + o, len(ids) // 2)]
            chosen = rng.sample(heavy, s + o)
            sync.extend(chosen[:s])
            observers.extend(chosen[s:])
        out.append(PA("t", p, (*sync, *observers), tuple(observers)))
    return out


def test_rebalance_evens_every_rack_at_the_lower_bound() -> None:
    inv = inventory({"a": 6, "b": 6, "c": 4})
    pol = policy({"a": 2, "b": 1}, {"c": 1})
    current = skewed(inv, pol, 300, seed=1)
    repair_only, _ = run(Request(inv, {"t": pol}, current))
    assert repair_only.plan == []  # every partition is valid: repair moves nothing
    sol, after = run(Request(inv, {"t": pol}, current), Options(rebalance=True))
    load = Counter(b for a in after.values() for b in a.replicas)
    for rack in "abc":
        assert spread(load, rack_ids(inv, rack)) <= 1
    moves = added(sol.plan, {a.key: a for a in current})
    assert sol.lower_bound > 0
    assert sol.lower_bound <= moves <= sol.lower_bound * 1.02


def test_rebalance_after_a_drain_and_with_a_dead_broker() -> None:
    inv = inventory({"a": 6, "b": 5})
    pol = policy({"a": 2, "b": 1})
    current = skewed(inv, pol, 200, seed=2)
    current[0] = PA("t", 0, (current[0].replicas[0], current[0].replicas[1], 99))  # 99: dead
    req = Request(inv, {"t": pol}, current, drained=frozenset({1}))
    sol, after = run(req, Options(rebalance=True))
    load = Counter(b for a in after.values() for b in a.replicas)
    assert load[1] == 0 and load[99] == 0
    assert spread(load, rack_ids(inv, "a", {1})) <= 1
    assert spread(load, rack_ids(inv, "b")) <= 1
    moves = added(sol.plan, {a.key: a for a in current})
    assert sol.lower_bound <= moves <= sol.lower_bound * 1.02


def test_rebalance_leaves_excluded_brokers_alone_and_gives_them_nothing() -> None:
    inv = inventory({"a": 6, "b": 3})
    pol = policy({"a": 2, "b": 1})
    current = skewed(inv, pol, 120, seed=3)
    held = Counter(b for a in current for b in a.replicas)
    _, after = run(Request(inv, {"t": pol}, current, excluded=frozenset({2})), Options(True))
    load = Counter(b for a in after.values() for b in a.replicas)
    assert load[2] <= held[2]
    assert spread(load, rack_ids(inv, "a", {2})) <= 1


def test_rebalance_of_a_balanced_cluster_moves_nothing() -> None:
    inv = inventory({"a": 4, "b": 4})
    req = Request(inv, {"t": policy({"a": 2, "b": 1})}, fresh={"t": 64})
    fresh = solve(req, Options()).plan
    sol, _ = run(Request(inv, {"t": policy({"a": 2, "b": 1})}, fresh), Options(rebalance=True))
    assert sol.plan == [] and sol.lower_bound == 0


def test_rebalance_by_bytes_brings_every_broker_under_the_cap() -> None:
    inv = inventory({"a": 5, "b": 3})
    pol = policy({"a": 2, "b": 1})
    current = skewed(inv, pol, 150, seed=4)
    rng = random.Random(4)
    sizes = {a.key: rng.randint(1, 100) * 1_000_000 for a in current}
    sol, after = run(Request(inv, {"t": pol}, current, sizes=sizes), Options(True, tolerance=0.1))
    for rack in "ab":
        ids = rack_ids(inv, rack)
        weight = Counter()
        for a in after.values():
            for b in a.replicas:
                weight[b] += sizes[a.key]
        mean = sum(weight[b] for b in ids) / len(ids)
        assert max(weight[b] for b in ids) <= mean * 1.1 + 1
    assert sol.bytes_bound is not None and sol.bytes_bound > 0
    moved = sum(
        sizes[a.key] * len(set(a.replicas) - set(c.replicas))
        for a in sol.plan
        for c in current
        if c.key == a.key
    )
    assert moved >= sol.bytes_bound


@settings(max_examples=30, deadline=None)
@given(
    racks=st.lists(st.integers(3, 7), min_size=2, max_size=3),
    parts=st.integers(5, 120),
    seed=st.integers(0, 1000),
    drain=st.booleans(),
)
def test_random_rebalances_pass_the_checker_and_stay_near_the_bound(
    racks: list[int], parts: int, seed: int, drain: bool
) -> None:
    names = [f"r{i}" for i in range(len(racks))]
    inv = inventory(dict(zip(names, racks, strict=True)))
    pol = policy({names[0]: 2, names[1]: 1}, {names[2]: 1} if len(names) > 2 else {})
    current = skewed(inv, pol, parts, seed)
    drained = frozenset({rack_ids(inv, names[0])[0]}) if drain else frozenset()
    sol, after = run(Request(inv, {"t": pol}, current, drained=drained), Options(rebalance=True))
    load = Counter(b for a in after.values() for b in a.replicas)
    for rack in names:
        assert spread(load, rack_ids(inv, rack, drained)) <= 1
    moves = added(sol.plan, {a.key: a for a in current})
    assert sol.lower_bound <= moves <= max(sol.lower_bound * 1.02, sol.lower_bound + 1)


# ---- leaders --------------------------------------------------------------------------


def test_level_units_meets_the_bound_when_direct_moves_exist() -> None:
    weight = {1: 6, 2: 0, 3: 0}
    at = [1] * 6
    cands = [[1, 2, 3]] * 6
    bound = excess(dict(weight))
    assert level_units(weight, at, cands) == bound == 4
    assert sorted(weight.values()) == [2, 2, 2]


def test_level_units_uses_chains_when_no_direct_move_exists() -> None:
    # item on 1 may go to 2 only; item on 2 may go to 3: 1 -> 2 -> 3
    weight = {1: 2, 2: 1, 3: 0}
    at = [1, 1, 2]
    cands = [[1, 2], [1, 2], [2, 3]]
    level_units(weight, at, cands)
    assert max(weight.values()) - min(weight.values()) <= 1


@pytest.mark.parametrize(("first_rack", "brokers", "changes"), [(False, 8, 21), (True, 4, 18)])
def test_balance_leaders_reorders_only_with_the_fewest_changes(
    first_rack: bool, brokers: int, changes: int
) -> None:
    """Every partition led by broker 1: --balance-leaders spreads the 24 leaders over every
    broker holding sync replicas (1-8: three each, 21 changes), or with
    --leaders-in-first-rack over the first rack's 1-4 (six each, 18 changes)."""
    inv = inventory({"a": 4, "b": 4})
    pol = policy({"a": 2, "b": 1})
    current = [PA("t", p, (1, 2 + p % 3, 5 + p % 4)) for p in range(24)]
    req = Request(inv, {"t": pol}, current, first_rack=first_rack)
    sol, after = run(req, Options(balance_leaders=True))
    assert sol.leaders is not None
    leads = Counter(a.replicas[0] for a in after.values())
    assert spread(leads, list(range(1, brokers + 1))) <= 1
    assert sol.leaders.changes == sol.leaders.bound == changes
    for a in sol.plan:
        old = next(c for c in current if c.key == a.key)
        assert set(a.replicas) == set(old.replicas) and a.observers == old.observers
    assert added(sol.plan, {a.key: a for a in current}) == 0


def test_fresh_single_replica_lead_windows_keep_leaders_even() -> None:
    # a leader with no choice (one replica in the lead rack): the run of such windows
    # itself must be even; mixed with wider windows the leveler evens out the rest
    inv = inventory({"a": 7, "b": 3})
    policies = {f"t{i}": policy({"a": 1, "b": 1}) for i in range(4)}
    policies["w"] = policy({"a": 3, "b": 1})
    counts = {"t0": 30, "t1": 1, "t2": 13, "t3": 30, "w": 20}
    _, after = run(Request(inv, policies, fresh=counts))
    leads = Counter(a.replicas[0] for a in after.values())
    assert spread(leads, rack_ids(inv, "a")) <= 1


def test_exact_engine_replaces_a_fast_plan_above_the_bound() -> None:
    from placement.solver.cpsat import SolveParams
    from placement.solver.engine import _exact_racks
    from placement.solver.rebalance import RackGoal

    inv = inventory({"a": 4})
    pol = policy({"a": 2})
    before = {("t", 0): PA("t", 0, (1, 2)), ("t", 1): PA("t", 1, (3, 4))}
    # even, but 2 replicas added where none is needed (a fast path that wandered)
    after = {("t", 0): PA("t", 0, (1, 3)), ("t", 1): PA("t", 1, (2, 4))}
    req = Request(inv, {"t": pol}, list(before.values()))
    goals = [RackGoal("a", (1, 2, 3, 4))]
    (solved,) = _exact_racks(req, goals, after, before, {"a": 0}, SolveParams(time_limit=5), {})
    assert solved.used and solved.fast_cost == 2 and solved.result.status == "optimal"
    assert solved.result.objective == 0
    assert after == before
    assert all(len(set(a.replicas)) == 2 for a in after.values())


def test_a_partition_that_gives_up_a_replica_keeps_its_leaders() -> None:
    """Two replicas in one rack where Kafka's rack-aware rule wants one: the replica that
    goes is never the leader's, even when dropping the leader's would even the rack."""
    from placement.model.scope import Scope

    inv = inventory({"a": 3, "b": 3, "c": 3})  # a: 1-3, b: 4-6, c: 7-9
    current = [PA("t", 0, (1, 2, 4)), PA("t", 1, (2, 1, 5)), PA("t", 2, (4, 5, 1))]
    current.append(PA("t", 3, (1, 4, 7)))  # broker 1 the busiest of rack a
    sol, _ = run(Request(inv, {}, current, scope=Scope(everything=True)))
    before = {a.key: a for a in current}
    assert {a.key for a in sol.plan} == {("t", 0), ("t", 1), ("t", 2)}
    for a in sol.plan:
        assert a.replicas[0] == before[a.key].replicas[0], a
    assert sol.leaders is not None and sol.leaders.changes == 0
