"""The exact engine for one rack's subproblem, with OR-Tools CP-SAT.

Within a rack each item (a partition) must hold `need` replicas on distinct brokers. It may
keep brokers it holds now, and receive replicas on the rack's open brokers; every replica
it receives costs `cost` (1, or the partition's bytes). Replica counts (and bytes) per
broker stay within bounds, counting what other partitions already put there (`base`).
Without byte bounds this is a transportation problem, so the LP relaxation is tight and
CP-SAT proves optimality quickly.

build → solve → extract are separate functions. CP-SAT is imported inside them: importing
it costs ~0.7 s (it pulls pandas) and the CLI must start fast.

Measured on this machine (OR-Tools 9.15, 2 workers): TODO.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["optimal", "feasible", "infeasible", "unknown", "model_invalid"]


@dataclass(frozen=True)
class SolveParams:
    time_limit: float = 10.0  # seconds, finite, > 0
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
    # per item: brokers of this rack it holds now and may keep; one outside `brokers` may be
    # kept (a drained broker the policy still tolerates) but never receives
    holds: tuple[tuple[int, ...], ...]
    cost: tuple[int, ...]  # per item: cost of adding one replica
    size: tuple[int, ...] = ()  # per item: weight for byte balance (empty = not used)
    load_min: int | None = None  # per broker in `brokers`: replicas >= load_min
    load_max: int | None = None  # per broker in `brokers`: replicas <= load_max
    base: Mapping[int, int] = field(default_factory=dict)  # replicas from other partitions
    bytes_max: int | None = None  # per broker in `brokers`: bytes <= bytes_max
    base_bytes: Mapping[int, int] = field(default_factory=dict)  # bytes from other partitions
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

    def allowed(self, item: int) -> tuple[int, ...]:
        """The brokers item may choose: the open ones, then the ones it holds (sorted, unique)."""
        return tuple(sorted(set(self.brokers).union(self.holds[item])))


@dataclass(frozen=True)
class _Built:
    model: Any  # cp_model.CpModel
    x: list[dict[int, Any]]  # per item: broker -> Boolean "item has a replica there"


def _build(problem: RackProblem) -> _Built:
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    x: list[dict[int, Any]] = []
    on: dict[int, list[tuple[int, Any]]] = {b: [] for b in problem.brokers}
    moved: list[tuple[int, Any]] = []
    for i, need in enumerate(problem.need):
        held = set(problem.holds[i])
        xi = {b: model.new_bool_var(f"x{i}_{b}") for b in problem.allowed(i)}
        x.append(xi)
        model.add(sum(xi.values()) == need)
        for b, v in xi.items():
            if b in on:
                on[b].append((i, v))
            if b not in held:
                moved.append((problem.cost[i], v))
    for b, items in on.items():
        count = sum(v for _, v in items)
        lo = None if problem.load_min is None else problem.load_min - problem.base.get(b, 0)
        hi = None if problem.load_max is None else problem.load_max - problem.base.get(b, 0)
        if lo is not None:
            model.add(count >= lo)
        if hi is not None:
            model.add(count <= hi)
        if problem.bytes_max is not None:
            weight = sum(problem.size[i] * v for i, v in items)
            model.add(weight <= problem.bytes_max - problem.base_bytes.get(b, 0))
    model.minimize(sum(c * v for c, v in moved))
    start = problem.hint if problem.hint is not None else problem.holds
    for xi, picked in zip(x, start, strict=True):
        for b, v in xi.items():
            model.add_hint(v, b in picked)
    return _Built(model, x)


def _extract(built: _Built, solver: Any, status: Status, seconds: float) -> SolveResult:
    if status in ("infeasible", "model_invalid"):
        return SolveResult(status, None, None, None, seconds, None)
    raw_bound = solver.best_objective_bound
    bound = math.ceil(raw_bound - 1e-6) if math.isfinite(raw_bound) else None
    if status == "unknown":
        return SolveResult(status, None, bound, None, seconds, None)
    objective = round(solver.objective_value)
    if status == "optimal":
        bound = objective
    gap = None if bound is None else (objective - bound) / max(1, objective)
    chosen = tuple(tuple(b for b, v in xi.items() if solver.boolean_value(v)) for xi in built.x)
    return SolveResult(status, objective, bound, gap, seconds, chosen)


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


def _solver(params: SolveParams, workers: int) -> Any:
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = params.time_limit
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = params.seed
    return solver


def solve_rack(problem: RackProblem, params: SolveParams) -> SolveResult:
    """Choose `need` brokers per item, moving the least data, within the load bounds."""
    built = _build(problem)
    solver = _solver(params, params.workers)
    started = time.perf_counter()
    code = solver.solve(built.model)
    seconds = time.perf_counter() - started
    return _extract(built, solver, _status(code), seconds)


@dataclass(frozen=True)
class Requirement:
    label: str  # e.g. "topic orders needs 3 replicas in rack us-west"
    need: int  # distinct brokers it needs in the rack


@dataclass(frozen=True)
class Availability:
    label: str  # e.g. "broker 4 (us-west)"
    broker: int


def explain_infeasible(
    requirements: Sequence[Requirement],
    available: Sequence[Availability],
    params: SolveParams,
) -> list[str] | None:
    """Labels of requirements and availabilities that cannot all hold; None when they can.

    One enforcement literal per requirement and per availability, all assumed true; CP-SAT
    (one worker, as assumptions need) names a sufficient subset that is infeasible.
    """
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    req_lits = [model.new_bool_var(f"req{k}") for k in range(len(requirements))]
    av_lits = [model.new_bool_var(f"av{k}") for k in range(len(available))]
    by_broker: dict[int, list[Any]] = {}
    for a, lit in zip(available, av_lits, strict=True):
        by_broker.setdefault(a.broker, []).append(lit)
    for r, req in zip(requirements, req_lits, strict=True):
        picks = []
        for b, lits in by_broker.items():
            pick = model.new_bool_var(f"pick{b}_{r.label}")
            model.add_bool_or(lits).only_enforce_if(pick)  # picked only where available
            picks.append(pick)
        model.add(sum(picks) >= r.need).only_enforce_if(req)
    model.add_assumptions(req_lits + av_lits)
    solver = _solver(params, 1)
    status = _status(solver.solve(model))
    if status != "infeasible":
        return None
    core = set(solver.sufficient_assumptions_for_infeasibility())
    labels = [x.label for x, lit in zip(requirements, req_lits, strict=True) if lit.index in core]
    return labels + [
        x.label for x, lit in zip(available, av_lits, strict=True) if lit.index in core
    ]
