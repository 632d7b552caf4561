"""Repair/drain/exclude: every plan passes the independent checker and moves = lower bound."""

from __future__ import annotations

from collections import Counter

from _policies import policy
from hypothesis import given, settings
from hypothesis import strategies as st

from placement.model.assignment import PartitionAssignment as PA  # noqa: N817
from placement.model.inventory import Broker, Inventory
from placement.model.policy import PlacementPolicy
from placement.plan.checker import PlanContext, check_plan
from placement.snapshot.synth import SynthSpec, synth
from placement.solver.engine import Options, solve
from placement.solver.repair import Request, lower_bound

INV = Inventory(
    brokers=[
        *(Broker(id=i, rack="us-west") for i in range(1, 6)),
        *(Broker(id=i, rack="us-east") for i in range(6, 11)),
        *(Broker(id=i, rack="eu-central") for i in range(11, 14)),
    ]
)
ORDERS = policy({"us-west": 2, "us-east": 1}, {"eu-central": 1})


def moves(plan: list[PA], current: list[PA]) -> int:
    before = {a.key: set(a.replicas) for a in current}
    return sum(len(set(a.replicas) - before.get(a.key, set())) for a in plan)


def check(req: Request) -> list[PA]:
    plan = solve(req, Options()).plan
    ctx = PlanContext(
        req.inventory,
        req.policies,
        {a.key: a for a in req.current},
        req.drained,
        req.excluded,
        partition_counts=dict(req.fresh) if req.fresh else None,
    )
    assert check_plan(plan, ctx) == []
    assert moves(plan, list(req.current)) == sum(lower_bound(req).values())
    return plan


def test_valid_cluster_needs_no_plan() -> None:
    current = [PA("orders", 0, (1, 2, 6, 11), (11,)), PA("orders", 1, (3, 4, 7, 12), (12,))]
    assert check(Request(INV, {"orders": ORDERS}, current)) == []


def test_drain_moves_exactly_the_drained_replicas_and_evens_load() -> None:
    current = [
        PA("orders", p, (1 + p % 5, 1 + (p + 1) % 5, 6 + p % 5, 11 + p % 3), (11 + p % 3,))
        for p in range(40)
    ]
    req = Request(INV, {"orders": ORDERS}, current, drained=frozenset({1}))
    plan = check(req)
    assert moves(plan, current) == 16  # broker 1 held 16 replicas
    after = {a.key: a for a in current} | {a.key: a for a in plan}
    load = Counter(b for a in after.values() for b in a.replicas)
    assert load[1] == 0
    west = [load[b] for b in range(2, 6)]
    assert max(west) - min(west) <= 1


def test_dead_broker_is_replaced() -> None:
    current = [PA("orders", 0, (1, 99, 6, 11), (11,))]
    plan = check(Request(INV, {"orders": ORDERS}, current))
    assert len(plan) == 1 and 99 not in plan[0].replicas and plan[0].replicas[0] == 1


def test_role_swap_moves_no_data() -> None:
    # policy change: one us-west sync becomes an observer, eu-central observer is dropped,
    # and us-east gains a sync... all on brokers the partition already has
    old = PA("orders", 0, (1, 2, 3, 6), (6,))
    new_policy = policy({"us-west": 2, "us-east": 1}, {"us-west": 1})
    plan = check(Request(INV, {"orders": new_policy}, [old]))
    assert moves(plan, [old]) == 0
    (a,) = plan
    assert set(a.replicas) == {1, 2, 3, 6} and len(a.observers) == 1
    assert a.replicas[0] == 1  # the leader stays


def test_excluded_brokers_keep_replicas_but_get_none() -> None:
    current = [PA("orders", p, (1, 2, 99, 11), (11,)) for p in range(6)]
    plan = check(Request(INV, {"orders": ORDERS}, current, excluded=frozenset({1, 6, 7})))
    for a in plan:
        assert 1 in a.replicas  # kept
        assert not {6, 7} & set(a.replicas)


def test_fresh_topic_is_balanced_per_rack() -> None:
    req = Request(INV, {"orders": ORDERS}, fresh={"orders": 30})
    plan = check(req)
    assert len(plan) == 30
    load = Counter(b for a in plan for b in a.replicas)
    for rack_ids in (range(1, 6), range(6, 11), range(11, 14)):
        counts = [load[b] for b in rack_ids]
        assert max(counts) - min(counts) <= 1
    leaders = Counter(a.replicas[0] for a in plan)
    assert max(leaders[b] for b in range(1, 6)) - min(leaders[b] for b in range(1, 6)) <= 1


def test_bytes_drive_placement_when_sizes_are_known() -> None:
    current = [PA("orders", p, (1, 2, 6, 11), (11,)) for p in range(4)]
    sizes = {("orders", 0): 1000, ("orders", 1): 10, ("orders", 2): 10, ("orders", 3): 10}
    plan = check(Request(INV, {"orders": ORDERS}, current, drained=frozenset({1}), sizes=sizes))
    added = {a.partition: set(a.replicas) - {2, 6, 11} for a in plan}
    # the 1000-byte partition gets a broker of its own; the small ones share the others
    assert added[0].isdisjoint(added[1] | added[2] | added[3])


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    racks=st.integers(2, 3),
    per_rack=st.integers(4, 6),
    drain=st.integers(0, 2),
    violations=st.sampled_from([0.0, 0.2]),
)
def test_random_clusters_always_pass_the_checker(
    seed: int, racks: int, per_rack: int, drain: int, violations: float
) -> None:
    result = synth(SynthSpec(racks * per_rack, racks, 4, 8, violations=violations, seed=seed))
    snap = result.snapshot
    inv = Inventory(
        brokers=[
            Broker(id=i, rack=r)
            for i, r in zip(
                snap.brokers.column("broker_id").to_pylist(),
                snap.brokers.column("rack").to_pylist(),
                strict=True,
            )
        ]
    )
    policies = {
        t: PlacementPolicy.model_validate_json(p)
        for t, p in zip(
            snap.topics.column("topic").to_pylist(),
            snap.topics.column("placement").to_pylist(),
            strict=True,
        )
    }
    current = [
        PA(r["topic"], r["partition"], tuple(r["replicas"]), tuple(r["observers"]))
        for r in snap.partitions.to_pylist()
    ]
    # drain the last brokers of the first rack, as far as every policy still fits
    first_rack = [b.id for b in inv.brokers if b.rack == inv.brokers[0].rack]
    need = max(
        (
            s + o
            for p in policies.values()
            for r, (s, o) in p.per_rack().items()
            if r == inv.brokers[0].rack
        ),
        default=0,  # no policy puts a replica in the first rack
    )
    drained = frozenset(first_rack[: max(0, min(drain, len(first_rack) - need))])
    check(Request(inv, policies, current, drained=drained))


def test_a_policy_change_spreads_its_drops_and_keeps_the_leaders() -> None:
    """Two sync replicas in us-west become one on 200 partitions of a balanced rack: which
    replica goes is free, so the drops spread over the rack (they used to pile on the
    brokers heaviest at the start: spread 1 -> 80 here), and the leader is never the one
    dropped when a follower in the same rack can go instead."""
    current = [
        PA("orders", p, (1 + p % 5, 1 + (p + 1) % 5, 6 + p % 5, 11 + p % 3), (11 + p % 3,))
        for p in range(200)
    ]
    smaller = policy({"us-west": 1, "us-east": 1}, {"eu-central": 1})
    plan = check(Request(INV, {"orders": smaller}, current))
    assert len(plan) == 200
    after = {a.key: a for a in current} | {a.key: a for a in plan}
    load = Counter(b for a in after.values() for b in a.replicas)
    west = [load[b] for b in range(1, 6)]
    assert max(west) - min(west) <= 1, west
    before = {a.key: a.replicas[0] for a in current}
    assert all(a.replicas[0] == before[a.key] for a in plan)
