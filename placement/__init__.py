"""mrc-plan's library: replica placement for Confluent Multi-Region Clusters.

No printing, no exits: functions return data or raise `placement.errors` exceptions.

Each command has a front door here, a request in and a result out, as the CLI calls it:

    placement.validate(ValidateRequest(...)) -> ValidateResult   (placement/rules/front.py)
    placement.assign(AssignRequest(...)) -> AssignResult         (placement/plan/front.py)
    placement.score(ScoreRequest(...)) -> ScoreResult            (placement/score/front.py)
    placement.simulate(SimulateRequest(...)) -> SimulateResult   (placement/simulate/front.py)

The request and result types are attributes of `placement` too. Nothing loads until it is
used: `import placement` stays as cheap as it was. `placement.score` and
`placement.simulate` are also the packages of those names (`placement.score.run`, ...):
calling the package runs its front door. Type checkers do not see a package as callable;
typed code calls `placement.score.front.run` and `placement.score.front.simulate`.
"""

from __future__ import annotations

import types

TYPE_CHECKING = False  # not typing's: `import typing` would cost 10 ms of every start
if TYPE_CHECKING:
    from typing import Any

    from placement.plan.front import AssignRequest, AssignResult
    from placement.rules.front import ValidateRequest, ValidateResult
    from placement.score.front import ScoreRequest, ScoreResult
    from placement.simulate.front import SimulateRequest, SimulateResult

    __version__: str

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


class _ScorePackage(types.ModuleType):
    """`placement.score`, a package that is also `score`'s front door."""

    def __call__(self, request: ScoreRequest) -> ScoreResult:
        """`mrc-plan score`: the snapshot as it stands and after each plan, on Spark."""
        from placement.score.front import run

        return run(request)


class _SimulatePackage(types.ModuleType):
    """`placement.simulate`, a package that is also `simulate`'s front door."""

    def __call__(self, request: SimulateRequest) -> SimulateResult:
        """`mrc-plan simulate`: a failure applied to every partition, on Spark for a
        ``snapshot``, in process for ``current``."""
        from placement.score.front import simulate

        return simulate(request)


def _callable_packages() -> None:
    """Make the two packages callable. Both are empty until a module of theirs is
    imported, so importing them here costs nothing."""
    import placement.score
    import placement.simulate

    placement.score.__class__ = _ScorePackage
    placement.simulate.__class__ = _SimulatePackage


_callable_packages()


def __getattr__(name: str) -> Any:
    # importlib.metadata costs ~15 ms; only `--version` and reports need it
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("mrc-plan")
        except PackageNotFoundError:  # a source tree that was never installed
            return "0.0.0+unknown"
    if name in _TYPES:
        import importlib

        return getattr(importlib.import_module(_TYPES[name]), name)
    raise AttributeError(name)
