"""The exact engine for one rack's subproblem, with OR-Tools CP-SAT.

Within a rack each item (a partition) must have `need` replicas on distinct brokers. It may
keep brokers it holds now and receive replicas on the rack's open brokers; each replica it
receives costs `cost` (1, or the partition's bytes). Replicas (and bytes) per open broker
stay within bounds, counting what other partitions already put there (`base`).

Without a byte bound this is a transportation problem: its LP relaxation has integral
vertices, so an LP-driven search finds and proves the optimum almost at once, provided the
LP is the whole model. Hence presolve off, every constraint in the LP from the start and a
root LP allowed to finish (`_tune`). With CP-SAT's defaults the LP bound stalled below the
optimum (359 vs 391) and the rack below took 10-30 s or ran out of time; with presolve on,
5-18 s; with the default 2,000 root LP iterations one of the 20 runs below found nothing
in 20 s. With a byte bound the LP is no longer exact and the search has real work to do.

Measured on a 2-core machine shared with other jobs (OR-Tools 9.15), a rack of 20
brokers x 1,000 items, need 1-2 each, replica spread <= 1 (load 75..76), skewed current
placement (~400 replicas to add), unit or bytes costs, 5 seeds, build + solve: optimal
every time in 1.3-3.7 s (unit costs) and 2.3-4.9 s (bytes), with `hint=None` (so the
current placement, infeasible as a solution) or a balanced greedy hint, with 1 or 2
workers alike. Building the model takes ~0.25 s; without any hint CP-SAT proves the optimum
in 0.35 s, as a hint costs a first dive along it, but a feasible hint is a solution from the
first instant. With a byte bound 5 % above the mean as well: optimal in ~14 s with 2
workers, within 0.13 % of the bound after 20 s with 1.

Determinism: with one worker the search is sequential, so the same problem and seed give the
same result whenever the search ends by itself (optimal or infeasible); a result cut by
`time_limit` depends on how far the machine got. With more workers CP-SAT races its
subsolvers: the optimum is the same but, among tied placements, the one returned may
differ (it did not in the benchmark runs). `interleave_search` would make that
deterministic, but CP-SAT 9.15 aborts the whole process (CHECK failure `heuristics.
fixed_search != nullptr`) when it is combined with a solution hint on some infeasible
models, such as 2 items needing 2 of 3 brokers with at most 1 replica each.

build -> solve -> extract are separate functions. CP-SAT is imported inside them: importing
it costs ~0.7 s (it pulls pandas) and the CLI must start fast.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["optimal", "feasible", "infeasible", "unknown", "model_invalid"]


@dataclass(frozen=True)
class SolveParams:
    time_limit: float = 10.0  # seconds of wall time, finite, > 0
    workers: int = 2
    seed: int = 0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.time_limit) and self.time_limit > 0):
            raise ValueError(f"time_limit must be finite and > 0, not {self.time_limit!r}")
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, not {self.workers!r}")


@dataclass(frozen=True)
class SolveResult:
    status: Status
    objective: int | None  # cost of the solution found
    bound: int | None  # best proven lower bound on the objective
    gap: float | None  # (objective - bound) / max(1, objective); None without a solution
    seconds: float  # wall time of the solve
    chosen: tuple[tuple[int, ...], ...] | None  # per item, the brokers chosen (sorted)


@dataclass(frozen=True)
class RackProblem:
    brokers: tuple[int, ...]  # brokers of the rack that may receive a replica
    need: tuple[int, ...]  # per item: replicas it must have in this rack
    # per item: brokers of this rack it holds now and may keep; one outside `brokers` may
    # be kept but never receives
    holds: tuple[tuple[int, ...], ...]
    cost: tuple[int, ...]  # per item: cost of adding one replica
    size: tuple[int, ...] = ()  # per item: weight for byte balance (empty = not used)
    load_min: int | None = None  # per broker in `brokers`: replicas >= load_min
    load_max: int | None = None  # per broker in `brokers`: replicas <= load_max
    base: Mapping[int, int] = field(default_factory=dict)  # replicas of other partitions
    bytes_max: int | None = None  # per broker in `brokers`: bytes <= bytes_max
    base_bytes: Mapping[int, int] = field(default_factory=dict)  # bytes of other partitions
    hint: tuple[tuple[int, ...], ...] | None = None  # a starting solution, maybe infeasible

    def __post_init__(self) -> None:
        n = len(self.need)
        if len(self.holds) != n or len(self.cost) != n:
            raise ValueError("need, holds and cost must have one entry per item")
        if self.size and len(self.size) != n:
            raise ValueError("size must be empty or have one entry per item")
        if self.hint is not None and len(self.hint) != n:
            raise ValueError("hint must have one entry per item")
        if self.bytes_max is not None and not self.size:
            raise ValueError("bytes_max needs size")
        if any(k < 0 for k in self.need):
            raise ValueError("need must be >= 0")


@dataclass(frozen=True)
class _Built:
    model: Any  # cp_model.CpModel
    x: list[dict[int, Any]]  # per item: broker (ascending) -> "the item has a replica there"


def _build(problem: RackProblem) -> _Built:
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x: list[dict[int, Any]] = []
    on: dict[int, list[tuple[int, Any]]] = {b: [] for b in sorted(set(problem.brokers))}
    added: list[Any] = []
    for i, need in enumerate(problem.need):
        held = set(problem.holds[i])
        xi = {b: model.new_bool_var(f"x{i}_{b}") for b in sorted(held.union(on))}
        x.append(xi)
        model.add(sum(xi.values()) == need)
        for b, v in xi.items():
            if b in on:
                on[b].append((i, v))
            if b not in held:
                added.append(problem.cost[i] * v)
    for b, items in on.items():
        count = sum(v for _, v in items)
        if problem.load_min is not None:
            model.add(count >= problem.load_min - problem.base.get(b, 0))
        if problem.load_max is not None:
            model.add(count <= problem.load_max - problem.base.get(b, 0))
        if problem.bytes_max is not None:
            weight = sum(problem.size[i] * v for i, v in items)
            model.add(weight <= problem.bytes_max - problem.base_bytes.get(b, 0))
    model.minimize(sum(added))
    start = problem.hint if problem.hint is not None else problem.holds
    for xi, picked in zip(x, start, strict=True):
        for b, v in xi.items():
            model.add_hint(v, b in picked)
    return _Built(model, x)


def _solver(params: SolveParams) -> Any:
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = params.time_limit
    solver.parameters.num_workers = params.workers
    solver.parameters.random_seed = params.seed
    return solver


def _tune(solver: Any) -> None:
    """Parameters for this model; the module docstring says why and what they bought."""
    p = solver.parameters
    p.cp_model_presolve = False
    p.add_lp_constraints_lazily = False
    p.root_lp_iterations = 200_000  # the default 2,000 left one benchmark rack unsolved


def _status(code: Any) -> Status:
    from ortools.sat.python import cp_model

    statuses: dict[Any, Status] = {
        cp_model.OPTIMAL: "optimal",
        cp_model.FEASIBLE: "feasible",
        cp_model.INFEASIBLE: "infeasible",
        cp_model.UNKNOWN: "unknown",
        cp_model.MODEL_INVALID: "model_invalid",
    }
    return statuses[code]


def _extract(built: _Built, solver: Any, status: Status, seconds: float) -> SolveResult:
    if status in ("infeasible", "model_invalid"):
        return SolveResult(status, None, None, None, seconds, None)
    raw = solver.best_objective_bound
    # the objective is an integer: a fractional LP bound rounds up
    bound = math.ceil(raw - 1e-6) if math.isfinite(raw) else None
    if status == "unknown":
        return SolveResult(status, None, bound, None, seconds, None)
    objective = round(solver.objective_value)
    if status == "optimal":
        bound = objective
    gap = None if bound is None else (objective - bound) / max(1, objective)
    chosen = tuple(tuple(b for b, v in xi.items() if solver.boolean_value(v)) for xi in built.x)
    return SolveResult(status, objective, bound, gap, seconds, chosen)


def solve_rack(problem: RackProblem, params: SolveParams) -> SolveResult:
    """Choose `need` brokers per item, adding the least cost, within the load bounds."""
    built = _build(problem)
    solver = _solver(params)
    _tune(solver)
    started = time.perf_counter()
    code = solver.solve(built.model)
    seconds = time.perf_counter() - started
    return _extract(built, solver, _status(code), seconds)
