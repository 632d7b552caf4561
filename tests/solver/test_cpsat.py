"""CP-SAT rack engine: hand cases, invariants of every solution, brute force on tiny racks."""

from __future__ import annotations

import itertools
import subprocess
import sys
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from placement.solver.cpsat import (
    RackProblem,
    SolveParams,
    SolveResult,
    solve_rack,
)

FAST = SolveParams(time_limit=5.0)


def allowed(p: RackProblem, i: int) -> set[int]:
    return set(p.brokers) | set(p.holds[i])


def cost_of(p: RackProblem, chosen: tuple[tuple[int, ...], ...]) -> int:
    items = zip(p.cost, chosen, p.holds, strict=True)
    return sum(c * len(set(picked) - set(h)) for c, picked, h in items)


def violations(p: RackProblem, chosen: tuple[tuple[int, ...], ...]) -> list[str]:
    """Every way `chosen` breaks the problem's rules; empty when it is a valid placement."""
    found = []
    for i, picked in enumerate(chosen):
        if len(picked) != p.need[i]:
            found.append(f"item {i}: {len(picked)} brokers, needs {p.need[i]}")
        if len(set(picked)) != len(picked):
            found.append(f"item {i}: brokers not distinct {picked}")
        if not set(picked) <= allowed(p, i):
            found.append(f"item {i}: {picked} outside {sorted(allowed(p, i))}")
    load = Counter(b for picked in chosen for b in picked)
    weight: Counter[int] = Counter()
    for i, picked in enumerate(chosen):
        for b in picked:
            weight[b] += p.size[i] if p.size else 0
    for b in set(p.brokers):
        n = p.base.get(b, 0) + load[b]
        if p.load_min is not None and n < p.load_min:
            found.append(f"broker {b}: {n} replicas < {p.load_min}")
        if p.load_max is not None and n > p.load_max:
            found.append(f"broker {b}: {n} replicas > {p.load_max}")
        w = p.base_bytes.get(b, 0) + weight[b]
        if p.bytes_max is not None and w > p.bytes_max:
            found.append(f"broker {b}: {w} bytes > {p.bytes_max}")
    return found


def solved(p: RackProblem, params: SolveParams = FAST) -> SolveResult:
    """Solve and check what every result must satisfy, whatever its status."""
    r = solve_rack(p, params)
    assert r.seconds >= 0
    if r.status in ("optimal", "feasible"):
        assert r.chosen is not None and r.objective is not None and r.gap is not None
        assert violations(p, r.chosen) == []
        assert all(list(picked) == sorted(picked) for picked in r.chosen)
        assert r.objective == cost_of(p, r.chosen)
        assert r.bound is not None and r.bound <= r.objective
        assert r.gap == (r.objective - r.bound) / max(1, r.objective)
        if r.status == "optimal":
            assert r.bound == r.objective and r.gap == 0
    else:
        assert r.chosen is None and r.objective is None and r.gap is None
    return r


# --- hand cases ------------------------------------------------------------------------


def test_holds_that_meet_the_need_cost_nothing() -> None:
    p = RackProblem(brokers=(1, 2, 3), need=(2, 2, 1), holds=((1, 2), (2, 3), (3,)), cost=(1, 1, 1))
    r = solved(p)
    assert r.status == "optimal" and r.objective == 0
    assert r.chosen == ((1, 2), (2, 3), (3,))


def test_a_drained_broker_costs_exactly_the_shortfall() -> None:
    # Broker 4 was drained: it is neither open nor held any more, so each item lost a replica
    # there. Item 1 lost two (it needs 3 and holds only 1).
    p = RackProblem(
        brokers=(1, 2, 3), need=(3, 3, 2), holds=((1, 2), (3,), (1, 3)), cost=(10, 7, 5)
    )
    r = solved(p)
    assert r.status == "optimal" and r.objective == 10 * 1 + 7 * 2 + 0


def test_balance_moves_equal_the_hand_computed_bound() -> None:
    # Six items need 2 replicas each and all sit on brokers 1 and 2: 12 replicas. With at
    # most 4 per broker, broker 3 must receive 12 - 4 - 4 = 4, each one an added replica.
    p = RackProblem(
        brokers=(1, 2, 3), need=(2,) * 6, holds=((1, 2),) * 6, cost=(1,) * 6, load_max=4
    )
    r = solved(p)
    assert r.status == "optimal" and r.objective == 4
    assert Counter(b for picked in r.chosen or () for b in picked) == {1: 4, 2: 4, 3: 4}


def test_balance_moves_the_cheapest_items() -> None:
    # Broker 1 may keep one of the two; moving the 3-byte item is cheaper than the 8-byte one.
    p = RackProblem(brokers=(1, 2), need=(1, 1), holds=((1,), (1,)), cost=(8, 3), load_max=1)
    r = solved(p)
    assert r.status == "optimal" and r.objective == 3 and r.chosen == ((1,), (2,))


def test_load_counts_replicas_of_other_partitions() -> None:
    p = RackProblem(
        brokers=(1, 2), need=(1,), holds=((1,),), cost=(5,), load_max=3, base={1: 3, 2: 1}
    )
    r = solved(p)
    assert r.status == "optimal" and r.objective == 5 and r.chosen == ((2,),)


def test_byte_bound_moves_the_cheapest_item() -> None:
    # 10 + 4 bytes do not fit under 12 on broker 1: the 4-byte item moves.
    p = RackProblem(
        brokers=(1, 2),
        need=(1, 1),
        holds=((1,), (1,)),
        cost=(10, 4),
        size=(10, 4),
        bytes_max=12,
        base_bytes={2: 8},
    )
    r = solved(p)
    assert r.status == "optimal" and r.objective == 4 and r.chosen == ((1,), (2,))


def test_a_keep_only_broker_is_kept_but_never_receives() -> None:
    # Broker 9 may receive nothing, but item 0 may keep its replica there. Item 1 does not
    # hold 9: it must add its second replica on an open broker.
    p = RackProblem(brokers=(1, 2), need=(2, 2), holds=((1, 9), (2,)), cost=(1, 1), load_max=2)
    r = solved(p)
    assert r.status == "optimal" and r.objective == 1
    assert r.chosen == ((1, 9), (1, 2))


def test_keep_only_brokers_have_no_load_bound() -> None:
    p = RackProblem(brokers=(1,), need=(1, 1, 1), holds=((9,),) * 3, cost=(1,) * 3, load_max=0)
    r = solved(p)
    assert r.status == "optimal" and r.objective == 0 and r.chosen == ((9,),) * 3


def test_load_min_pulls_replicas_onto_an_empty_broker() -> None:
    p = RackProblem(brokers=(1, 2, 3), need=(1,) * 3, holds=((1,),) * 3, cost=(2, 1, 3), load_min=1)
    r = solved(p)
    assert r.status == "optimal" and r.objective == 1 + 2


# --- statuses ---------------------------------------------------------------------------


def test_too_small_load_max_is_infeasible() -> None:
    p = RackProblem(brokers=(1, 2, 3), need=(2, 2), holds=((1, 2), (1,)), cost=(1, 1), load_max=1)
    assert solved(p).status == "infeasible"


def test_a_need_beyond_the_allowed_brokers_is_infeasible() -> None:
    p = RackProblem(brokers=(1, 2), need=(3,), holds=((1,),), cost=(1,))
    assert solved(p).status == "infeasible"


def test_an_overflowing_objective_is_model_invalid() -> None:
    p = RackProblem(brokers=(1, 2, 3), need=(3, 3), holds=((), ()), cost=(2**62, 2**62))
    assert solved(p).status == "model_invalid"


def test_an_empty_rack_is_trivially_optimal() -> None:
    r = solved(RackProblem(brokers=(), need=(), holds=(), cost=()))
    assert r.status == "optimal" and r.objective == 0 and r.chosen == ()


@pytest.mark.parametrize("limit", [0.0, -1.0, float("inf"), float("nan")])
def test_time_limit_must_be_finite_and_positive(limit: float) -> None:
    with pytest.raises(ValueError, match="time_limit"):
        SolveParams(time_limit=limit)


def test_malformed_problems_are_rejected() -> None:
    with pytest.raises(ValueError, match="one entry per item"):
        RackProblem(brokers=(1,), need=(1, 1), holds=((),), cost=(1, 1))
    with pytest.raises(ValueError, match="bytes_max needs size"):
        RackProblem(brokers=(1,), need=(1,), holds=((),), cost=(1,), bytes_max=3)


# --- hints and determinism -------------------------------------------------------------


def unbalanced(brokers: int = 8, items: int = 200) -> RackProblem:
    """Every item on the first brokers; balance forces about half of the replicas to move."""
    holds = tuple((i % 3, 3 + i % 2) for i in range(items))
    total = 2 * items
    return RackProblem(
        brokers=tuple(range(brokers)),
        need=(2,) * items,
        holds=holds,
        cost=tuple(1 + i % 5 for i in range(items)),
        load_min=total // brokers,
        load_max=-(-total // brokers),
    )


def round_robin(p: RackProblem) -> tuple[tuple[int, ...], ...]:
    """A balanced placement: replica slot k of the rack goes to broker k mod |brokers|."""
    slots = itertools.cycle(p.brokers)
    return tuple(tuple(sorted(next(slots) for _ in range(k))) for k in p.need)


def test_a_feasible_hint_is_a_solution_from_the_first_instant() -> None:
    # CP-SAT checks a complete hint before it searches: a balanced one is a solution even
    # when the time runs out long before the optimum (0.01 s sufficed here).
    p = unbalanced()
    hint = round_robin(p)
    assert violations(p, hint) == []
    r = solved(replace(p, hint=hint), SolveParams(time_limit=0.1, workers=1))
    assert r.status in ("optimal", "feasible")
    assert r.objective is not None and r.objective <= cost_of(p, hint)


def test_same_input_and_seed_give_the_same_placement() -> None:
    # Many placements tie for the optimum; one worker searches sequentially, so the seed
    # decides which one comes back.
    p = unbalanced()
    params = SolveParams(time_limit=10.0, workers=1, seed=7)
    first, second = solved(p, params), solved(p, params)
    assert first.status == second.status == "optimal"
    assert first.chosen == second.chosen


def test_more_workers_agree_on_the_optimum() -> None:
    p = unbalanced()
    one = solved(p, SolveParams(time_limit=10.0, workers=1))
    two = solved(p, SolveParams(time_limit=10.0, workers=2))
    assert one.status == two.status == "optimal"
    assert one.objective == two.objective


def test_importing_the_module_does_not_import_ortools() -> None:
    code = "import sys, placement.solver.cpsat; sys.exit('ortools' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# --- properties on random racks --------------------------------------------------------


@st.composite
def racks(draw: st.DrawFn, max_brokers: int, max_items: int, max_need: int) -> RackProblem:
    n_brokers = draw(st.integers(0, max_brokers))
    brokers = tuple(range(n_brokers))
    keep_only = (100, 101)  # brokers an item may keep but no item may receive
    n_items = draw(st.integers(0, max_items))
    pool = st.sampled_from(brokers + keep_only)
    holds = tuple(tuple(sorted(draw(st.sets(pool, max_size=3)))) for _ in range(n_items))
    need = tuple(draw(st.integers(0, max_need)) for _ in range(n_items))
    cost = tuple(draw(st.integers(1, 9)) for _ in range(n_items))
    size = tuple(draw(st.integers(1, 9)) for _ in range(n_items)) if draw(st.booleans()) else ()
    base = {b: draw(st.integers(0, 2)) for b in brokers if draw(st.booleans())}
    # bounds mostly loose enough to leave a choice, sometimes too tight
    load_min = draw(st.none() | st.integers(0, 3))
    load_max = draw(st.none() | st.integers(1, 6))
    bytes_max = draw(st.none() | st.integers(5, 40)) if size else None
    return RackProblem(
        brokers, need, holds, cost, size, load_min, load_max, base, bytes_max, hint=None
    )


def brute_force(p: RackProblem) -> int | None:
    """The least cost over every placement; None when there is none."""
    options = [list(itertools.combinations(sorted(allowed(p, i)), k)) for i, k in enumerate(p.need)]
    placements = itertools.product(*options)
    return min((cost_of(p, c) for c in placements if not violations(p, c)), default=None)


@settings(max_examples=120, deadline=None)
@given(racks(max_brokers=3, max_items=4, max_need=2))
def test_tiny_racks_match_brute_force(p: RackProblem) -> None:
    r = solved(p)
    best = brute_force(p)
    if best is None:
        assert r.status == "infeasible"
    else:
        assert r.status == "optimal" and r.objective == best


def shortfall(p: RackProblem) -> int:
    """Lower bound: an item holding fewer brokers than it needs must add the rest."""
    return sum(c * max(0, k - len(set(h))) for c, k, h in zip(p.cost, p.need, p.holds, strict=True))


@settings(max_examples=80, deadline=None)
@given(racks(max_brokers=6, max_items=15, max_need=3))
def test_small_racks_respect_every_rule_and_the_shortfall_bound(p: RackProblem) -> None:
    r = solved(p)
    assert r.status in ("optimal", "infeasible")  # small racks always finish in time
    if r.objective is not None:
        assert r.objective >= shortfall(p)
        assert r.bound is not None and r.bound >= shortfall(p)
    if p.load_min is None and p.load_max is None and p.bytes_max is None:
        too_few = any(k > len(allowed(p, i)) for i, k in enumerate(p.need))
        assert (r.status == "infeasible") == too_few
