"""The library's front doors: each command of mrc-plan as one call, a request in and a
result out, exactly as the CLI makes it.

    from placement import api

    result = api.assign(api.AssignRequest(inventory, topics, current=describe))
    result.plan_json()  # what `assign --out` writes

| call | request -> result | front module |
|---|---|---|
| `validate` | `ValidateRequest` -> `ValidateResult` | `placement/rules/front.py` |
| `assign` | `AssignRequest` -> `AssignResult` | `placement/plan/front.py` |
| `score` | `ScoreRequest` -> `ScoreResult` | `placement/score/front.py` |
| `simulate` | `SimulateRequest` -> `SimulateResult` | `placement/score/front.py` |

`simulate` runs on Spark for a snapshot and in process otherwise; its in-process part and its
types are in `placement/simulate/front.py` (the Spark part must live in `placement/score/`,
the only package that may import pyspark).

A request holds what the flags mean, already parsed; a result holds what the command prints
and writes, each file's body built when asked. Failures are `placement.errors` exceptions,
as everywhere in the library.

Importing this module loads no front: each is imported when called (and a type when it is
first named), so that `import placement.api` costs what `import placement` costs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from placement.plan.front import AssignRequest, AssignResult
    from placement.rules.front import ValidateRequest, ValidateResult
    from placement.score.front import ScoreRequest, ScoreResult
    from placement.simulate.front import SimulateRequest, SimulateResult

__all__ = [
    "AssignRequest",
    "AssignResult",
    "ScoreRequest",
    "ScoreResult",
    "SimulateRequest",
    "SimulateResult",
    "ValidateRequest",
    "ValidateResult",
    "assign",
    "score",
    "simulate",
    "validate",
]

# each type by name: the module of its front door
_TYPES = {
    "ValidateRequest": "placement.rules.front",
    "ValidateResult": "placement.rules.front",
    "AssignRequest": "placement.plan.front",
    "AssignResult": "placement.plan.front",
    "ScoreRequest": "placement.score.front",
    "ScoreResult": "placement.score.front",
    "SimulateRequest": "placement.simulate.front",
    "SimulateResult": "placement.simulate.front",
}


def validate(request: ValidateRequest) -> ValidateResult:
    """`mrc-plan validate`: every finding of the files and clusters asked for."""
    from placement.rules.front import run

    return run(request)


def assign(request: AssignRequest) -> AssignResult:
    """`mrc-plan assign`: the plan, checked, and everything drawn from it."""
    from placement.plan.front import run

    return run(request)


def score(request: ScoreRequest) -> ScoreResult:
    """`mrc-plan score`: the snapshot as it stands and after each plan, on Spark."""
    from placement.score.front import run

    return run(request)


def simulate(request: SimulateRequest) -> SimulateResult:
    """`mrc-plan simulate`: a failure applied to every partition, on Spark for a
    ``snapshot``, in process for ``current``."""
    from placement.score.front import simulate as run

    return run(request)


def __getattr__(name: str) -> Any:
    if name in _TYPES:
        import importlib

        return getattr(importlib.import_module(_TYPES[name]), name)
    raise AttributeError(name)
