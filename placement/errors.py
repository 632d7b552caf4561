"""Failures (as opposed to findings). The CLI maps each class to an exit code in one table."""

from __future__ import annotations

import os


def debug() -> bool:
    """MRC_PLAN_DEBUG=1 (anything but empty or 0): tracebacks and the JVM's own output."""
    return os.environ.get("MRC_PLAN_DEBUG", "") not in ("", "0")


class MrcPlanError(Exception):
    """Base class: ``message`` says what went wrong, ``hint`` what to do about it."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(MrcPlanError):
    """The command line asks for something that makes no sense."""


class InputError(MrcPlanError):
    """An input file cannot be read or does not have the required shape."""

    def __init__(
        self,
        path: str,
        message: str,
        hint: str = "",
        *,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        where = path if line is None else f"{path}:{line}:{column or 1}"
        super().__init__(f"{where}: {message}", hint)
        self.path = path
        self.line = line
        self.column = column


class NoSolutionError(MrcPlanError):
    """No plan meeting every requirement was found within the time limit (exit 3)."""


# The optional dependencies, by the extra of `pip install 'mrc-plan[EXTRA]'` that brings
# them (pyproject.toml's optional-dependencies say the same): the base install validates
# policies, server.properties, inventories and topics files with none of them.
EXTRAS: dict[str, tuple[str, ...]] = {
    "cluster": ("numpy", "pyarrow"),  # describe output, snapshots, audits, plans read
    "plan": ("numpy", "pyarrow", "ortools"),  # assign: the planner
    "report": ("matplotlib",),  # the charts of the HTML reports
    "spark": ("numpy", "pyarrow", "pyspark"),  # score, simulate --spark
    "kafka": ("confluent_kafka", "numpy", "pyarrow"),  # snapshot from-cluster
}
# the extra that brings a module no matter the command (numpy and pyarrow: the command's)
_EXTRA_OF = {
    "ortools": "plan",
    "matplotlib": "report",
    "pyspark": "spark",
    "confluent_kafka": "kafka",
}
OPTIONAL_MODULES = frozenset(m for modules in EXTRAS.values() for m in modules)


class MissingExtraError(UsageError):
    """What was asked for needs an optional dependency that is not installed (exit 2)."""

    def __init__(self, extra: str, what: str, missing: tuple[str, ...]) -> None:
        names = missing[-1] if len(missing) == 1 else f"{', '.join(missing[:-1])} and {missing[-1]}"
        super().__init__(f"{what} needs {names}: pip install 'mrc-plan[{extra}]'")
        self.extra = extra
        self.missing = missing


def _installed(module: str) -> bool:
    from importlib.util import find_spec

    try:
        return find_spec(module) is not None
    except ImportError:  # a finder that refuses it (or a broken parent): not usable
        return False


def require(extra: str, what: str) -> None:
    """Raise `MissingExtraError` unless every module of ``extra`` is installed (none imported)."""
    missing = tuple(m for m in EXTRAS[extra] if not _installed(m))
    if missing:
        raise MissingExtraError(extra, what, missing)


def missing_extra(exc: ImportError, what: str, extra: str = "cluster") -> MissingExtraError | None:
    """``exc`` as the `MissingExtraError` to report when it is an optional module that is not
    installed (its extra: the module's own, or ``extra``, the command's, for numpy and
    pyarrow), else None: any other missing module (one of ours) is a bug."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    top = exc.name.partition(".")[0]
    if top not in OPTIONAL_MODULES:
        return None
    extra = _EXTRA_OF.get(top, extra)
    if top not in EXTRAS[extra]:
        extra = "cluster"
    missing = tuple(m for m in EXTRAS[extra] if m == top or not _installed(m))
    return MissingExtraError(extra, what, missing)
