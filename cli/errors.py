"""The one place where failures become exit codes (SPEC §9)."""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

from placement.errors import InputError, MrcPlanError, NoSolutionError, UsageError

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_TIMEOUT = 3
EXIT_BUG = 101


@functools.cache
def exit_codes() -> list[tuple[type[MrcPlanError], int]]:
    """The table: first match wins, subclasses before their bases. A function, so that
    `mrc-plan --help` does not import the checker and the solver (and pydantic with them)."""
    from placement.plan.checker import PlanCheckError
    from placement.solver.feasibility import InfeasibleError

    return [
        (PlanCheckError, EXIT_BUG),
        (InfeasibleError, EXIT_FINDINGS),
        (NoSolutionError, EXIT_TIMEOUT),
        (UsageError, EXIT_USAGE),
        (InputError, EXIT_USAGE),
    ]


P = ParamSpec("P")
R = TypeVar("R")

BUG_MESSAGE = (
    "internal error: this is a bug in mrc-plan. Please report it with the command "
    "you ran and the output of the same command with MRC_PLAN_DEBUG=1."
)


def exit_code_for(exc: MrcPlanError) -> int:
    for cls, code in exit_codes():
        if isinstance(exc, cls):
            return code
    return EXIT_BUG


def debug() -> bool:
    return os.environ.get("MRC_PLAN_DEBUG", "") not in ("", "0")


def report_failure(exc: MrcPlanError) -> None:
    """One line each for the message and the hint: they quote file names and input text, so
    control characters (a newline that would start a `::error::` line in a CI log, an ESC)
    and undecodable bytes are shown as visible escapes."""
    from placement.diagnostics.escape import escape

    sys.stderr.write(f"error: {escape(exc.message)}\n")
    if exc.hint:
        sys.stderr.write(f"hint: {escape(exc.hint)}\n")


def _stop_spark() -> None:
    """Ctrl-C: end the JVM this process started, if it started one (only then is the
    session module loaded), so that no process of ours outlives the command."""
    session = sys.modules.get("placement.score.session")
    if session is not None:
        session.stop_jvm()


def handle_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Run a command under the exit-code table; tracebacks only with MRC_PLAN_DEBUG=1."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except MrcPlanError as exc:
            if debug():
                traceback.print_exc()
            report_failure(exc)
            raise typer.Exit(exit_code_for(exc)) from None
        except KeyboardInterrupt:
            _stop_spark()
            sys.stderr.write("interrupted\n")
            raise typer.Exit(130) from None
        except Exception as exc:
            if debug():
                traceback.print_exc()
            else:
                from placement.diagnostics.escape import escape  # on one line, like the rest

                sys.stderr.write(f"{BUG_MESSAGE}\n({type(exc).__name__}: {escape(str(exc))})\n")
            raise typer.Exit(EXIT_BUG) from None

    return wrapper
