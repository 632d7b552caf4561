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
