"""Choose and run the engines for one `assign` request; nothing here reads or writes files.

- fresh topics: the ring layout (`fresh`), balanced by construction;
- an existing cluster: the goal-ordered core (`core`): repair, drain, exclude, dead
  brokers, ``--rebalance`` by replica counts and ``--balance-leaders``, one min-cost flow
  per rack. When a rack ends above its bound or uneven and is small enough, CP-SAT
  (`cpsat`) solves it exactly, warm-started from the flow, and its plan is kept if better;
- ``--rebalance`` with sizes: the bytes leveling (`rebalance`) after the core.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import compress
from operator import is_not

from placement.errors import NoSolutionError
from placement.model.assignment import Key, PartitionAssignment
from placement.model.policy import PlacementPolicy
from placement.solver.capacity import enforce_capacity
from placement.solver.core import plan_core, rules
from placement.solver.cpsat import RackProblem, SolveParams, SolveResult, solve_rack
from placement.solver.fresh import plan_fresh
from placement.solver.leaders import LeaderStats, choose_leaders
from placement.solver.rebalance import RackGoal, rebalance
from placement.solver.repair import Request, lower_bound
from placement.solver.tallies import was

# CP-SAT takes a rack only up to this many partition x broker booleans: measured here, a
# model this size with a balanced hint solves in seconds; beyond it the fast path stands
EXACT_LIMIT = 60_000


@dataclass(frozen=True)
class Options:
    rebalance: bool = False
    balance_leaders: bool = False
    tolerance: float = 0.1  # bytes per broker may exceed the rack's mean by this fraction
    max_disk_usage: float = 0.85  # of capacity_bytes, a hard limit when sizes are known
    # one worker: CP-SAT with more may return another of several equal optima, and the
    # same inputs and seed must give the same bytes (measured: no slower on this model)
    params: SolveParams = field(default_factory=lambda: SolveParams(workers=1))


@dataclass(frozen=True)
class RackSolve:
    rack: str
    result: SolveResult
    fast_cost: int  # replicas the fast path added in the rack
    used: bool  # CP-SAT's plan replaced the fast one


@dataclass(frozen=True)
class Solution:
    plan: list[PartitionAssignment]
    lower_bound: int  # on replicas added
    bytes_bound: int | None  # rebalance by bytes: bytes that must leave over-cap brokers
    engine: str
    exact: list[RackSolve]
    leaders: LeaderStats | None  # None for fresh topics
    capacity_moved: int | None = None  # bytes relocated to keep brokers under their disk cap
    # the replicas per rack chosen for partitions of topics without a policy (`core`)
    derived: dict[Key, PlacementPolicy] = field(default_factory=dict)
    left_alone: dict[str, int] = field(default_factory=dict)  # out of scope and broken


def _members(req: Request) -> dict[str, list[int]]:
    members: dict[str, list[int]] = {}
    for node in req.inventory.brokers:
        if node.rack is not None:
            members.setdefault(node.rack, []).append(node.id)
    return members


def _load_and_adds(
    after: Mapping[Key, PartitionAssignment], before: Mapping[Key, PartitionAssignment]
) -> tuple[Counter[int], Counter[int]]:
    """Replicas per broker after the plan, and how many of them the plan adds."""
    load: Counter[int] = Counter()
    adds: Counter[int] = Counter()
    for key, a in after.items():
        load.update(a.replicas)
        old = before[key].replicas
        if a.replicas != old:
            adds.update(b for b in a.replicas if b not in old)
    return load, adds


def _rack_problem(
    goal: RackGoal,
    req: Request,
    after: Mapping[Key, PartitionAssignment],
    before: Mapping[Key, PartitionAssignment],
    rule_of: Callable[[PartitionAssignment], PlacementPolicy],
) -> tuple[RackProblem, list[Key]]:
    """The rack's part of the rebalance, every partition with replicas there included."""
    rack_of = req.inventory.rack_of
    eligible = set(goal.brokers)
    keys: list[Key] = []
    need: list[int] = []
    holds: list[tuple[int, ...]] = []
    hint: list[tuple[int, ...]] = []
    total = 0
    for key in sorted(after):
        if not req.scope.allows(key):
            continue
        count = sum(rule_of(after[key]).per_rack().get(goal.rack, (0, 0)))
        if count == 0:
            continue
        keys.append(key)
        need.append(count)
        holds.append(
            tuple(
                b
                for b in before[key].replicas
                if rack_of.get(b) == goal.rack and b not in req.drained
            )
        )
        now = tuple(b for b in after[key].replicas if rack_of.get(b) == goal.rack)
        hint.append(now)
        total += sum(1 for b in now if b in eligible)
    q, r = divmod(total, len(goal.brokers))
    problem = RackProblem(
        brokers=goal.brokers,
        need=tuple(need),
        holds=tuple(holds),
        cost=(1,) * len(keys),
        load_min=q,
        load_max=q + (1 if r else 0),
        hint=tuple(hint),
    )
    return problem, keys


def _apply(
    rack: str,
    rack_of: Mapping[int, str | None],
    after: dict[Key, PartitionAssignment],
    keys: list[Key],
    chosen: tuple[tuple[int, ...], ...],
) -> None:
    """Swap each partition's brokers in ``rack`` for the chosen ones, roles kept by position."""
    for key, pick in zip(keys, chosen, strict=True):
        a = after[key]
        now = [b for b in a.replicas if rack_of.get(b) == rack]
        gone = [b for b in now if b not in pick]
        new = [b for b in pick if b not in now]
        if not gone:
            continue
        swap = dict(zip(gone, new, strict=True))
        after[key] = PartitionAssignment(
            a.topic,
            a.partition,
            tuple(swap.get(b, b) for b in a.replicas),
            tuple(swap.get(b, b) for b in a.observers),
        )


def solve(req: Request, options: Options) -> Solution:
    """The plan for ``req``: every partition that changes (all of them for fresh topics)."""
    members = _members(req)
    unusable = req.drained | req.excluded
    goals = [
        RackGoal(rack, tuple(sorted(b for b in ids if b not in unusable)))
        for rack, ids in sorted(members.items())
    ]
    if req.fresh:
        plan = plan_fresh(req.policies, req.fresh, members, unusable, options.params.seed)
        engine = "fresh (round-robin rings per rack, leaders leveled)"
        return Solution(plan, sum(lower_bound(req).values()), None, engine, [], None)

    before = req.before
    by_counts = options.rebalance and not req.sizes
    core = plan_core(req, rebalance=by_counts, balance_leaders=options.balance_leaders)
    after = core.after
    leaders = core.leaders
    bounds = dict(core.repair_bound)
    engine = (
        "goal-ordered core (min-cost flow per rack: moves, then rack, topic and leader balance)"
    )
    exact: list[RackSolve] = []
    bytes_bound = None
    if by_counts:
        for rack, bound in core.balance_bound.items():
            bounds[rack] = max(bounds.get(rack, 0), bound)
        engine += " + rebalance"
        exact = _exact_racks(req, goals, after, before, bounds, options.params, core.derived)
        if any(r.used for r in exact):
            engine += " + CP-SAT per rack"
            # CP-SAT swapped brokers by position: choose the leaders of its result again
            leaders = choose_leaders(
                req,
                before,
                after,
                balance_leaders=options.balance_leaders,
                derived=core.derived,
                alone=core.alone,
            )
    elif options.rebalance:
        with _allowed(req, after) as mine:
            rack_bound = rebalance(mine, before, goals, req.sizes, options.tolerance)
        bytes_bound = sum(rack_bound.values())
        engine += f" + rebalance by bytes (cap: rack mean + {options.tolerance:.0%})"
    capacity_moved = None
    if req.caps and req.sizes:
        rack_of = req.inventory.rack_of
        receivers = {g.rack: g.brokers for g in goals}
        fixed = dict(req.fixed_bytes)
        with _allowed(req, after, fixed) as mine:
            capacity_moved = enforce_capacity(
                mine, before, rack_of, req.caps, req.sizes, receivers, fixed=fixed
            )
        if capacity_moved:
            engine += " + disk capacity"
    # a partition left alone is the very object it was: skipped at C speed
    replaced = compress(after.items(), map(is_not, after.values(), was(before, after)))
    changed = [
        (key, a)
        for key, a in replaced
        if a.replicas != before[key].replicas or a.observers != before[key].observers
    ]
    plan = [a for _key, a in sorted(changed)]  # keys are distinct: sorted by key
    return Solution(
        plan,
        sum(bounds.values()),
        bytes_bound,
        engine,
        exact,
        leaders,
        capacity_moved,
        core.derived,
        core.left_alone,
    )


@contextmanager
def _allowed(
    req: Request, after: dict[Key, PartitionAssignment], fixed: dict[int, int] | None = None
) -> Iterator[dict[Key, PartitionAssignment]]:
    """``after``, or when the scope keeps partitions out of the plan (--only-topics,
    offline partitions) the partitions it allows, written back when done; the bytes of
    the others count in ``fixed``."""
    scope = req.scope
    if scope.only is None and not scope.frozen:
        yield after
        return
    mine = {k: a for k, a in after.items() if scope.allows(k)}
    if fixed is not None:
        for key, a in after.items():
            size = req.sizes.get(key, 0)
            if size and key not in mine:
                for b in a.replicas:
                    fixed[b] = fixed.get(b, 0) + size
    yield mine
    after.update(mine)


def _exact_racks(
    req: Request,
    goals: list[RackGoal],
    after: dict[Key, PartitionAssignment],
    before: Mapping[Key, PartitionAssignment],
    bounds: Mapping[str, int],
    params: SolveParams,
    derived: Mapping[Key, PlacementPolicy],
) -> list[RackSolve]:
    """CP-SAT on every rack the fast path left above its bound or uneven, if small enough."""
    rack_of = req.inventory.rack_of
    load, adds = _load_and_adds(after, before)
    rule_of = rules(req, derived)
    out = []
    for goal in goals:
        if not goal.brokers:
            continue
        fast = sum(adds[b] for b in goal.brokers)  # nothing may be added elsewhere
        counts = [load[b] for b in goal.brokers]
        uneven = max(counts) - min(counts) > 1
        if fast <= bounds.get(goal.rack, 0) and not uneven:
            continue  # proven optimal already
        problem, keys = _rack_problem(goal, req, after, before, rule_of)
        if len(keys) * len(goal.brokers) > EXACT_LIMIT:
            if uneven:
                raise NoSolutionError(
                    f'rack "{goal.rack}": no plan with at most one replica of difference '
                    f"between its brokers was found, and the rack is too large for the exact "
                    f"engine ({len(keys)} partitions x {len(goal.brokers)} brokers)",
                    "run without --rebalance, or rebalance fewer brokers at a time",
                )
            continue
        result = solve_rack(problem, params)
        better = result.chosen is not None and (
            uneven or (result.objective is not None and result.objective < fast)
        )
        if better and result.chosen is not None:
            _apply(goal.rack, rack_of, after, keys, result.chosen)
        elif uneven:
            raise NoSolutionError(
                f'rack "{goal.rack}": no plan with at most one replica of difference between '
                f"its brokers was found within {params.time_limit:g} s (CP-SAT: "
                f"{result.status})",
                "raise --time-limit, or run without --rebalance",
            )
        out.append(RackSolve(goal.rack, result, fast, better))
    return out
