"""Cruise Control's contract for the goals of `placement.solver.goals`: a soft goal is
pursued only among the plans best for every goal above it, so switching a soft goal on
leaves every higher goal's measure exactly as it was; and the hard goals hold after every
plan. Invariants on random small clusters (drains, dead brokers, lowered policies), never
one exact assignment."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from _policies import policy

from placement.model.assignment import PartitionAssignment as PA  # noqa: N817
from placement.model.inventory import Broker, Inventory
from placement.model.policy import PlacementPolicy
from placement.solver.engine import Options, Solution, solve
from placement.solver.goals import GOALS, Goal, Measured, Stats, by_id
from placement.solver.repair import Request, lower_bound

SEEDS = range(12)
SCENARIOS = ("drain", "dead", "policy")
# each soft goal that a request can switch on or off, and how: (request, options) with it
SWITCHES = {
    "bytes": "sizes",  # without sizes nothing evens the bytes
    "leaders": "balance_leaders",  # --balance-leaders evens the leaders of every partition
}


def _case(seed: int, scenario: str) -> Request:
    """Three racks of 3 to 6 brokers, a few topics placed round-robin (every partition
    meets its policy and every rack is even), then the scenario: two brokers drained, two
    dead, or one topic's policy asking one replica fewer in one rack."""
    rng = random.Random(seed)
    racks = {f"r{i}": [10 * i + j for j in range(1, rng.randint(3, 6) + 1)] for i in range(3)}
    policies: dict[str, PlacementPolicy] = {}
    current: list[PA] = []
    cursor = dict.fromkeys(racks, 0)
    for t in range(rng.randint(2, 4)):
        chosen = rng.sample(sorted(racks), rng.randint(1, 3))
        counts = {r: rng.randint(1, 2) for r in chosen}
        policies[f"t{t}"] = policy(counts)
        for p in range(rng.randint(8, 40)):
            reps: list[int] = []
            for r, n in counts.items():
                ids = racks[r]
                reps += [ids[(cursor[r] + j) % len(ids)] for j in range(n)]
                cursor[r] += n
            current.append(PA(f"t{t}", p, tuple(reps), ()))
    brokers = [Broker(id=b, rack=r) for r, ids in racks.items() for b in ids]
    # the last broker of each rack may go: every rack keeps at least 2, as any policy needs
    spare = [ids[-1] for ids in racks.values() if len(ids) > 2]
    drained: frozenset[int] = frozenset()
    if scenario == "drain":
        drained = frozenset(rng.sample(spare, min(2, len(spare))))
    elif scenario == "dead":
        dead = set(rng.sample(spare, min(2, len(spare))))
        brokers = [b for b in brokers if b.id not in dead]
    else:
        topic = rng.choice(sorted(policies))
        counts = {c.constraints.rack: c.count for c in policies[topic].replicas}
        rack = max(counts, key=lambda r: (counts[r], r))
        if counts[rack] > 1 or len(counts) > 1:
            counts[rack] -= 1
            policies[topic] = policy({r: n for r, n in counts.items() if n})
    sizes = {a.key: rng.randint(1, 1000) * 1_000_000 for a in current}
    req = Request(Inventory(brokers=brokers), policies, current, drained=drained)
    return replace(req, sizes=sizes)


def _stats(req: Request, sol: Solution) -> dict[str, Stats]:
    m = Measured.of_plan(
        req.inventory,
        req.policies,
        req.before,
        sol.plan,
        drained=req.drained,
        excluded=req.excluded,
        sizes=req.sizes,
        caps=req.caps,
    )
    return {g.id: g.measure(m) for g in GOALS}


def _solve(req: Request, goal: str, on: bool) -> tuple[Request, Solution]:
    """The plan with the soft goal ``goal`` switched on or off."""
    options = Options()
    if SWITCHES[goal] == "sizes":
        run = req if on else replace(req, sizes={})
    else:
        run = req
        options = Options(balance_leaders=on)
    # measured with the sizes either way: the bytes are a figure of both plans
    return replace(run, sizes=req.sizes), solve(run, options)


def _above(goal: str) -> list[Goal]:
    ids = [g.id for g in GOALS]
    return list(GOALS[: ids.index(goal)])


def test_every_switch_names_a_soft_goal() -> None:
    assert all(not by_id(goal).hard for goal in SWITCHES)


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("goal", sorted(SWITCHES))
def test_a_soft_goal_leaves_every_higher_goal_as_it_was(goal: str, scenario: str) -> None:
    for seed in SEEDS:
        req = _case(seed, scenario)
        with_req, with_goal = _solve(req, goal, True)
        without_req, without = _solve(req, goal, False)
        on, off = _stats(with_req, with_goal), _stats(without_req, without)
        for higher in _above(goal):
            assert on[higher.id] == off[higher.id], (seed, higher.id, on, off)


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("balance_leaders", [False, True])
def test_the_hard_goals_hold_and_the_moves_meet_their_bound(
    scenario: str, balance_leaders: bool
) -> None:
    """Rules and brokers: nothing broken among the partitions the plan changes, nothing
    left on a drained or dead broker; fewest moves: exactly the bound (the core meets it)."""
    for seed in SEEDS:
        req = _case(seed, scenario)
        sol = solve(req, Options(balance_leaders=balance_leaders))
        stats = _stats(req, sol)
        for goal in GOALS:
            if goal.hard and stats[goal.id].after is not None:
                assert stats[goal.id].after == 0, (seed, goal.id, stats)
        assert stats["moves"].after == sum(lower_bound(req).values()) == sol.lower_bound


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_balance_never_ends_worse_than_the_flow_can_help(scenario: str) -> None:
    """Where the docs promise it: the fewest moves come first, so a drain may leave a rack
    uneven; but a rebalance by counts ends every rack within one replica per broker
    without breaking a hard goal."""
    for seed in SEEDS[:6]:
        req = replace(_case(seed, scenario), sizes={})
        sol = solve(req, Options(rebalance=True))
        stats = _stats(req, sol)
        assert stats["replicas"].after is not None and stats["replicas"].after <= 1, seed
        assert stats["rules"].after == stats["brokers"].after == 0, (seed, stats)
