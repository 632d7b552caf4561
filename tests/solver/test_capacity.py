"""Disk capacity as a hard goal: the infeasibility proof and the enforcement step.

Invariants and bounds, not one exact assignment: after enforce_capacity no broker is above
its cap (or CapacityError names those that stay over), every partition keeps its per-rack
counts, roles and distinct brokers, and the bytes moved lie between the bytes above the
caps and that plus one replica per over-cap broker.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import pytest
from _policies import policy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrc_plan_cli.errors import EXIT_FINDINGS, exit_code_for
from placement.errors import UsageError
from placement.model.assignment import PartitionAssignment as PA  # noqa: N817
from placement.model.inventory import Broker, Inventory
from placement.model.policy import PlacementPolicy
from placement.plan.checker import PlanContext, check_plan
from placement.solver.capacity import (
    CapacityError,
    bytes_held,
    check_capacity,
    disk_caps,
    enforce_capacity,
)
from placement.solver.feasibility import InfeasibleError

Key = tuple[str, int]
GIB = 2**30
RACKS = ("us-east", "us-west", "eu-central")


POLICIES = {
    "orders": policy({"us-east": 2, "us-west": 1}, {"eu-central": 1}),
    "clicks": policy({"us-west": 1, "us-east": 1, "eu-central": 1}),
    "audit": policy({"eu-central": 2}, {"us-east": 1}),
}


def make_inventory(
    per_rack: tuple[int, ...], capacity: Mapping[int, int] | None = None
) -> Inventory:
    brokers, next_id = [], 1
    for rack, n in zip(RACKS, per_rack, strict=True):
        for _ in range(n):
            cap = capacity.get(next_id) if capacity else None
            brokers.append(Broker(id=next_id, rack=rack, capacity_bytes=cap))
            next_id += 1
    return Inventory(brokers=brokers)


def members(inv: Inventory, skip: frozenset[int] = frozenset()) -> dict[str, tuple[int, ...]]:
    out: dict[str, list[int]] = {}
    for b in inv.brokers:
        if b.rack is not None and b.id not in skip:
            out.setdefault(b.rack, []).append(b.id)
    return {r: tuple(sorted(ids)) for r, ids in out.items()}


def place(
    rng: random.Random,
    topic: str,
    p: int,
    pol: PlacementPolicy,
    pool: Mapping[str, tuple[int, ...]],
) -> PA:
    """A valid assignment of one partition on the brokers of ``pool``."""
    per_rack = pol.per_rack()
    chosen = {r: rng.sample(pool[r], s + o) for r, (s, o) in per_rack.items()}
    sync: list[int] = []
    for c in pol.replicas:  # the lead rack's constraint comes first
        sync += chosen[c.constraints.rack][: c.count]
        del chosen[c.constraints.rack][: c.count]
    observers = [b for r in per_rack for b in chosen[r]]
    return PA(topic, p, tuple(sync + observers), tuple(observers))


def heavy_tail(rng: random.Random) -> int | None:
    """Partition sizes from a few MiB to hundreds of GiB; one in ten unknown."""
    if rng.random() < 0.1:
        return None
    return int(min(rng.paretovariate(1.1), 2000.0) * 64 * 2**20)


def cluster(
    seed: int, per_rack: tuple[int, ...] = (5, 4, 6), partitions: int = 300
) -> tuple[Inventory, dict[Key, PA], dict[Key, int]]:
    rng = random.Random(seed)
    inv = make_inventory(per_rack)
    pool = members(inv)
    current: dict[Key, PA] = {}
    sizes: dict[Key, int] = {}
    topics = sorted(POLICIES)
    for i in range(partitions):
        topic = topics[i % len(topics)]
        a = place(rng, topic, i // len(topics), POLICIES[topic], pool)
        current[a.key] = a
        size = heavy_tail(rng)
        if size is not None:
            sizes[a.key] = size
    return inv, current, sizes


def rack_counts(a: PA, rack_of: Mapping[int, str | None]) -> Counter[tuple[str | None, bool]]:
    observers = set(a.observers)
    return Counter((rack_of[b], b in observers) for b in a.replicas)


def loads(after: Mapping[Key, PA], sizes: Mapping[Key, int]) -> dict[int, int]:
    return bytes_held(after.values(), sizes)


def excess(load: Mapping[int, int], caps: Mapping[int, int]) -> dict[int, int]:
    return {b: load.get(b, 0) - c for b, c in caps.items() if load.get(b, 0) > c}


def assert_invariants(
    after: Mapping[Key, PA],
    planned: Mapping[Key, PA],
    rack_of: Mapping[int, str | None],
    receivers: Mapping[str, tuple[int, ...]],
) -> None:
    """Against the plan enforce_capacity was given: counts per rack and role, distinct
    brokers, observers a suffix, the preferred leader's rack, new brokers only receivers."""
    assert after.keys() == planned.keys()
    for key, a in after.items():
        ref = planned[key]
        assert len(set(a.replicas)) == len(a.replicas), a
        assert len(a.observers) == len(ref.observers)
        assert a.replicas[len(a.replicas) - len(a.observers) :] == a.observers
        assert rack_counts(a, rack_of) == rack_counts(ref, rack_of)
        assert rack_of[a.replicas[0]] == rack_of[ref.replicas[0]]
        for b in set(a.replicas) - set(ref.replicas):
            rack = rack_of[b]
            assert rack is not None and b in receivers[rack]


def naive_drain(
    current: Mapping[Key, PA], rack_of: Mapping[int, str | None], drained: int, target: int
) -> dict[Key, PA]:
    """A plan that ignores disks: every replica of ``drained`` goes to ``target`` (same rack)
    when it can, else to the lowest other broker of the rack not holding the partition."""
    after = dict(current)
    rack = sorted(b for b in rack_of if rack_of[b] == rack_of[target] and b != drained)
    for key, a in current.items():
        if drained not in a.replicas:
            continue
        to = target if target not in a.replicas else min(set(rack) - set(a.replicas))
        after[key] = PA(
            a.topic,
            a.partition,
            tuple(to if b == drained else b for b in a.replicas),
            tuple(to if b == drained else b for b in a.observers),
        )
    return after


def caps_for(
    inv: Inventory, after: Mapping[Key, PA], sizes: Mapping[Key, int], fill: float
) -> dict[int, int]:
    """Caps so that each rack's usable brokers would be ``fill`` full on average."""
    load = loads(after, sizes)
    out = {}
    for ids in members(inv).values():
        used = [b for b in ids if load.get(b, 0)]
        total = sum(load.get(b, 0) for b in ids)
        for b in used:
            out[b] = int(total / len(used) / fill)
    return out


# --- disk_caps and the exception ---------------------------------------------------------


def test_disk_caps_take_the_usable_fraction_of_declared_capacity() -> None:
    inv = make_inventory((2, 1, 1), {1: 1000 * GIB, 2: 3})
    assert disk_caps(inv, 0.85) == {1: int(1000 * GIB * 0.85), 2: 2}
    assert disk_caps(inv, 1.0)[1] == 1000 * GIB
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(UsageError):
            disk_caps(inv, bad)


def test_capacity_error_is_an_infeasible_request_exit_1() -> None:
    err = CapacityError("disk capacity: x", ["us-east"], {1: (5, 4)}, 1)
    assert isinstance(err, InfeasibleError)
    assert exit_code_for(err) == EXIT_FINDINGS == 1
    assert "--max-disk-usage" in err.hint and err.shortfalls == []


# --- check_capacity: the proof -----------------------------------------------------------


def test_a_roomy_cluster_passes_the_proof() -> None:
    inv, current, sizes = cluster(1)
    caps = caps_for(inv, current, sizes, 0.7)
    check_capacity(inv, POLICIES, current.values(), sizes, caps)
    # brokers without capacity_bytes are unlimited
    check_capacity(inv, POLICIES, current.values(), sizes, {})


def test_a_rack_too_small_for_its_bytes_is_proven_infeasible() -> None:
    inv, current, sizes = cluster(2)
    caps = caps_for(inv, current, sizes, 0.9)
    check_capacity(inv, POLICIES, current.values(), sizes, caps)
    west = members(inv)["us-west"]
    # draining one of the four us-west brokers leaves 3 x cap for 4/0.9 x cap of bytes
    with pytest.raises(CapacityError) as err:
        check_capacity(inv, POLICIES, current.values(), sizes, caps, drained=[west[0]])
    e = err.value
    need = sum(
        sizes.get(a.key, 0) * sum(POLICIES[a.topic].per_rack().get("us-west", (0, 0)))
        for a in current.values()
    )
    room = sum(caps[b] for b in west[1:])
    assert e.racks == ("us-west",)
    assert e.missing == need - room > 0
    assert 'rack "us-west"' in e.message and f"{e.missing:,} bytes" in e.message
    assert f"{e.missing / GIB:,.2f} GiB" in e.message
    assert all(str(b) in e.message for b in west) and f"{west[0]} drained" in e.message
    assert set(e.brokers) == set(west) and "--max-disk-usage" in e.hint


def test_excluded_brokers_count_only_what_they_hold() -> None:
    inv, current, sizes = cluster(3)
    caps = caps_for(inv, current, sizes, 0.9)
    west = members(inv)["us-west"]
    # a huge cap on an excluded broker does not help: it takes no new replica
    caps[west[0]] = 10**15
    with pytest.raises(CapacityError):
        check_capacity(
            inv, POLICIES, current.values(), sizes, caps, drained=[west[1]], excluded=[west[0]]
        )
    check_capacity(inv, POLICIES, current.values(), sizes, caps, drained=[west[1]])


def test_an_unlimited_broker_still_holds_one_replica_per_partition() -> None:
    inv = make_inventory((2, 1, 1), {1: 10})
    pol = {"t": policy({"us-east": 2})}
    current = [PA("t", 0, (1, 2)), PA("t", 1, (2, 1))]
    sizes = {("t", 0): 100, ("t", 1): 100}
    # broker 2 has no capacity_bytes but can hold each partition once: 200 + 10 < 400
    with pytest.raises(CapacityError) as err:
        check_capacity(inv, pol, current, sizes, {1: 10})
    assert err.value.missing == 400 - 210 and "2 holds" in err.value.message


def test_partitions_without_a_policy_stay_and_take_room() -> None:
    inv = make_inventory((2, 1, 1))
    pol = {"t": policy({"us-east": 1})}
    current = [PA("t", 0, (1,)), PA("other", 0, (1, 2))]
    sizes = {("t", 0): 100, ("other", 0): 60}
    check_capacity(inv, pol, current, sizes, {1: 150, 2: 150})
    with pytest.raises(CapacityError):
        check_capacity(inv, pol, current, sizes, {1: 150, 2: 150}, drained=[2])
    check_capacity(inv, pol, current, sizes, {1: 160, 2: 150}, drained=[2])


# --- enforce_capacity ---------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_drain_that_piles_on_one_broker_is_spread_within_the_rack(seed: int) -> None:
    inv, current, sizes = cluster(seed)
    rack_of = {b.id: b.rack for b in inv.brokers}
    east = members(inv)["us-east"]
    drained, target = east[0], east[1]
    planned = naive_drain(current, rack_of, drained, target)
    receivers = members(inv, frozenset({drained}))
    caps = caps_for(inv, planned, sizes, 0.85)
    start = loads(planned, sizes)
    assert target in excess(start, caps)  # the plan as given fills the disk
    after = dict(planned)
    moved = enforce_capacity(after, current, rack_of, caps, sizes, receivers)
    end = loads(after, sizes)
    assert excess(end, caps) == {}
    assert_invariants(after, planned, rack_of, receivers)
    over = excess(start, caps)
    biggest = {b: max(sizes.get(k, 0) for k, a in planned.items() if b in a.replicas) for b in over}
    assert sum(over.values()) <= moved < sum(over.values()) + sum(biggest.values())
    # the replicas the drain added to the target move first (moving them again adds no
    # transfer): replicas it held before move only for what those did not cover
    off = [
        k for k, a in after.items() if target in planned[k].replicas and target not in a.replicas
    ]
    added = sum(sizes.get(k, 0) for k in off if target not in current[k].replicas)
    kept = [sizes.get(k, 0) for k in off if target in current[k].replicas]
    assert sum(kept) < max(0, over[target] - added) + max(kept, default=1)
    # and the result passes the independent checker's disk check
    ctx = PlanContext(inv, POLICIES, current, frozenset({drained}), disk_caps=caps, sizes=sizes)
    plan = [a for k, a in sorted(after.items()) if a != current[k]]
    assert check_plan(plan, ctx) == []


def test_one_byte_over_moves_the_smallest_follower_and_keeps_the_leader() -> None:
    inv, current, sizes = cluster(5)
    rack_of = {b.id: b.rack for b in inv.brokers}
    load = loads(current, sizes)
    caps = {b: 2 * max(load.values()) for b in load}
    heavy = max(members(inv)["us-east"], key=lambda b: (load[b], b))
    caps[heavy] = load[heavy] - 1  # one byte too many, nothing added by a plan
    after = dict(current)
    moved = enforce_capacity(after, current, rack_of, caps, sizes, members(inv))
    changed = [k for k in after if after[k] != current[k]]
    assert len(changed) == 1 and moved == sizes[changed[0]]
    a, b = after[changed[0]], current[changed[0]]
    assert a.replicas[0] == b.replicas[0] != heavy  # a follower or an observer moved
    assert moved == min(
        sizes[k] for k, x in current.items() if heavy in x.replicas[1:] and sizes.get(k, 0)
    )
    assert excess(loads(after, sizes), caps) == {}


def test_nothing_to_do_moves_nothing() -> None:
    inv, current, sizes = cluster(6)
    rack_of = {b.id: b.rack for b in inv.brokers}
    caps = caps_for(inv, current, sizes, 0.5)
    caps = {b: max(c, loads(current, sizes).get(b, 0)) for b, c in caps.items()}
    after = dict(current)
    assert enforce_capacity(after, current, rack_of, caps, sizes, members(inv)) == 0
    assert after == current


def test_a_full_rack_raises_naming_the_brokers_and_the_bytes_over() -> None:
    inv, current, sizes = cluster(7)
    rack_of = {b.id: b.rack for b in inv.brokers}
    load = loads(current, sizes)
    west = members(inv)["us-west"]
    caps = {b: load[b] * 9 // 10 for b in west}
    after = dict(current)
    with pytest.raises(CapacityError) as err:
        enforce_capacity(after, current, rack_of, caps, sizes, members(inv))
    e = err.value
    end = loads(after, sizes)
    assert e.brokers == {b: (end[b], caps[b]) for b in west if end[b] > caps[b]}
    assert e.racks == ("us-west",) and e.missing == sum(end[b] - caps[b] for b in e.brokers)
    # every replica stays in the rack, so the rack's own bytes above its caps remain
    assert e.missing >= sum(load[b] for b in west) - sum(caps.values())
    assert all(f"{b} holds" in e.message for b in e.brokers)
    assert f"{e.missing:,} bytes" in e.message and 'rack "us-west"' in e.message
    assert exit_code_for(e) == 1
    assert_invariants(after, current, rack_of, members(inv))


def test_same_inputs_same_result() -> None:
    inv, current, sizes = cluster(8)
    rack_of = {b.id: b.rack for b in inv.brokers}
    east = members(inv)["us-east"]
    planned = naive_drain(current, rack_of, east[0], east[1])
    receivers = members(inv, frozenset({east[0]}))
    caps = caps_for(inv, planned, sizes, 0.85)
    runs = []
    for _ in range(2):
        after = dict(planned)
        runs.append((enforce_capacity(after, current, rack_of, caps, sizes, receivers), after))
    assert runs[0] == runs[1]


def test_fixed_bytes_count_toward_the_cap() -> None:
    rack_of: dict[int, str | None] = {1: "r", 2: "r"}
    current = {("t", 0): PA("t", 0, (1,)), ("t", 1): PA("t", 1, (1,))}
    sizes = {("t", 0): 40, ("t", 1): 50}
    after = dict(current)
    moved = enforce_capacity(after, current, rack_of, {1: 100}, sizes, {"r": (1, 2)}, fixed={1: 30})
    assert moved == 40 and after[("t", 0)].replicas == (2,)  # smallest that is enough


# --- properties ---------------------------------------------------------------------------

SMALL = {
    "a": policy({"us-east": 2, "us-west": 1}, {"eu-central": 1}),
    "b": policy({"us-west": 1, "eu-central": 1}),
    "c": policy({"eu-central": 1}, {"us-east": 1}),
}


@dataclass(frozen=True)
class Scenario:
    inv: Inventory
    rack_of: dict[int, str | None]
    drained: frozenset[int]
    receivers: dict[str, tuple[int, ...]]
    current: dict[Key, PA]
    planned: dict[Key, PA]  # a valid plan that ignores disks
    sizes: dict[Key, int]
    caps: dict[int, int]


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    per_rack = tuple(draw(st.integers(2, 5)) for _ in RACKS)
    inv = make_inventory(per_rack)
    rng = random.Random(draw(st.integers(0, 2**32)))
    pool = members(inv)
    # at most one drained broker per rack, in racks with more than the 2 a policy needs
    drained = frozenset(ids[0] for ids in pool.values() if len(ids) > 2 and draw(st.booleans()))
    receivers = members(inv, drained)
    current: dict[Key, PA] = {}
    planned: dict[Key, PA] = {}
    sizes: dict[Key, int] = {}
    for i in range(draw(st.integers(1, 60))):
        topic = "abc"[i % 3]
        before = place(rng, topic, i, SMALL[topic], pool)
        current[before.key] = before
        planned[before.key] = place(rng, topic, i, SMALL[topic], receivers)
        size = draw(st.one_of(st.just(0), st.integers(1, 10**6), st.integers(10**6, 10**9)))
        if size:
            sizes[before.key] = size
    load = loads(planned, sizes)
    caps = {}
    for b in sorted(load.keys() | {x.id for x in inv.brokers}):
        fill = draw(st.one_of(st.none(), st.floats(0.3, 1.5)))
        if fill is not None:
            caps[b] = int(load.get(b, 0) / fill)
    rack_of = {b.id: b.rack for b in inv.brokers}
    return Scenario(inv, rack_of, drained, receivers, current, planned, sizes, caps)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
@pytest.mark.slow  # the fast tier leaves it to make test
def test_enforce_meets_every_cap_or_says_who_stays_over(case: Scenario) -> None:
    start = excess(loads(case.planned, case.sizes), case.caps)
    after = dict(case.planned)
    try:
        check_capacity(
            case.inv, SMALL, case.current.values(), case.sizes, case.caps, drained=case.drained
        )
        proven = False
    except CapacityError:
        proven = True
    failure: CapacityError | None = None
    moved = 0
    try:
        moved = enforce_capacity(
            after, case.current, case.rack_of, case.caps, case.sizes, case.receivers
        )
    except CapacityError as err:
        failure = err
    over = excess(loads(after, case.sizes), case.caps)
    if failure is not None:
        assert failure.brokers == {b: (case.caps[b] + e, case.caps[b]) for b, e in over.items()}
        assert failure.missing == sum(over.values()) > 0
    else:
        assert not proven, "the proof said no plan fits, yet every broker is within its cap"
        assert over == {}
        assert moved >= sum(start.values())
        if not start:
            assert moved == 0 and after == case.planned
    assert_invariants(after, case.planned, case.rack_of, case.receivers)
