"""The one place where failures become exit codes (docs/exit-codes.md)."""

from __future__ import annotations

import functools
import os
import signal
import sys
import traceback
from collections.abc import Callable, Collection
from typing import ParamSpec, TypeVar

import typer

from placement.diagnostics.escape import escape
from placement.errors import (
    InputError,
    MrcPlanError,
    NoSolutionError,
    UsageError,
    debug,
    missing_extra,
)

from .outputs import notes_mark, print_unread_notes

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


def report_failure(exc: MrcPlanError) -> None:
    """One line each for the message and the hint: they quote file names and input text, so
    control characters (a newline that would start a `::error::` line in a CI log, an ESC)
    and undecodable bytes are shown as visible escapes."""
    sys.stderr.write(f"error: {escape(exc.message)}\n")
    if exc.hint:
        sys.stderr.write(f"hint: {escape(exc.hint)}\n")


def _stop_spark() -> None:
    """Ctrl-C: end the JVM this process started, if it started one (only then is the
    session module loaded), so that no process of ours outlives the command."""
    session = sys.modules.get("placement.score.session")
    if session is not None:
        session.stop_jvm()


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised wherever it lands as Python raises KeyboardInterrupt for SIGINT: a
    subclass, so that every clean-up written for Ctrl-C (the JVM's, the outputs' temporary
    files) runs for `kill` too."""


# the interrupting signals this process received, first first (see on_signal)
_RECEIVED: list[int] = []
_ANNOUNCED: list[int] = []


def on_signal(signum: int, _frame: object) -> None:
    _RECEIVED.append(signum)
    raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt


def install_signal_handlers() -> None:
    """SIGINT and SIGTERM raise where they land (KeyboardInterrupt, Terminated) and are
    remembered, so that whichever code sees them, the exit is :func:`interrupted`'s. A
    signal the parent set to be ignored (nohup, a background job) stays ignored."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, on_signal)
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, on_signal)


def received() -> int | None:
    """The first SIGINT or SIGTERM this process received, if any."""
    return _RECEIVED[0] if _RECEIVED else None


def signal_of(exc: BaseException) -> int:
    return signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT


def interrupted(signum: int, *, again: bool = True) -> int:
    """Stop Spark, say so, and return the exit code: 128 + the signal (130 for Ctrl-C, 143
    for SIGTERM); the first signal received decides. Further signals wait meanwhile (the
    JVM's stop is not cut short). ``again=False``: say nothing if it was said already (the
    console script, after a command's handle_errors)."""
    signum = received() or signum
    if again or not _ANNOUNCED:
        _ANNOUNCED.append(signum)
        previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            _stop_spark()
            sys.stderr.write("terminated\n" if signum == signal.SIGTERM else "interrupted\n")
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
    return 128 + signum


def handle_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Run a command under the exit-code table; tracebacks only with MRC_PLAN_DEBUG=1.
    However it ends, the notes about leftovers of interrupted runs that it did not print
    (it failed before reporting its outputs) are printed first."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        mark = notes_mark()
        try:
            try:
                return command(*args, **kwargs)
            finally:  # whatever the exit: what was done with leftovers of killed runs
                print_unread_notes(mark)
        except (typer.Exit, typer.Abort):
            raise
        except MrcPlanError as exc:
            raise _failed(exc) from None
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Terminated)
            raise typer.Exit(interrupted(signal_of(exc))) from None
        except OSError as exc:
            if exc.filename is None:  # not about a file the user named: a bug
                raise typer.Exit(_bug(exc)) from None
            # a file the system would not let us use (a name too long, a loop of links,
            # permissions): readers turn the usual ones into InputError, this is the rest
            name = exc.filename
            failure = UsageError(
                f"{os.fsdecode(name) if isinstance(name, str | bytes) else name}: "
                f"{exc.strerror or exc}",
                "check the path and that it can be read (or written)",
            )
            raise _failed(failure) from None
        except ModuleNotFoundError as exc:  # an optional dependency, or one of ours: a bug
            missing = _missing_extra(command, exc)
            if missing is None:
                raise typer.Exit(_bug(exc)) from None
            raise _failed(missing) from None
        except Exception as exc:
            raise typer.Exit(_bug(exc)) from None

    return wrapper


# The extra a command's numpy and pyarrow come with (by its module in cli/), when not
# `cluster`; ortools, matplotlib and pyspark name their own (placement/errors.py EXTRAS).
COMMAND_EXTRAS = {"assign": "plan", "score": "spark"}
# what a command needs the optional modules for, when its name does not say it
COMMAND_NEEDS = {"validate": "validating describe output, snapshots or reassignment JSON"}


def _missing_extra(command: Callable[..., object], exc: ModuleNotFoundError) -> MrcPlanError | None:
    """The failure naming the extra to install when ``exc`` is an optional dependency the
    base install leaves out (`pip install mrc-plan`), else None."""
    name = getattr(command, "__name__", "")
    module = getattr(command, "__module__", "").rpartition(".")[2]
    what = COMMAND_NEEDS.get(name)
    if what is None:  # the command as typed: `snapshot show`, `spark-local-cluster start`
        group, _, sub = name.rpartition("_")
        if name == module:
            words = [module]
        elif group == "cluster":
            words = ["spark-local-cluster", sub]
        else:
            words = [module, name.replace("_", "-")]
        what = f"`mrc-plan {' '.join(words)}`"
    return missing_extra(exc, what, COMMAND_EXTRAS.get(module, "cluster"))


def _failed(exc: MrcPlanError) -> typer.Exit:
    """Report a failure (with the traceback being handled, under MRC_PLAN_DEBUG) and
    return the exit that carries its code."""
    if debug():
        traceback.print_exc()
    report_failure(exc)
    return typer.Exit(exit_code_for(exc))


def _bug(exc: Exception) -> int:
    if debug():
        traceback.print_exc()
    else:
        sys.stderr.write(f"{BUG_MESSAGE}\n({type(exc).__name__}: {escape(str(exc))})\n")
    return EXIT_BUG


# What other Kafka tools call an option of ours: an unknown option named here is pointed
# to ours (when the command has it) before Click's guess by spelling, which matches
# --remove-brokers to --max-moves-per-broker. Cruise Control (remove_broker, brokerid,
# excluded_brokers_for_replica_move), Confluent's kafka-remove-brokers (--broker-id),
# Strimzi (remove-brokers, brokers), kafka-reassign-partitions and kafka-configs
# (--reassignment-json-file, min.insync.replicas).
OPTION_SYNONYMS: dict[str, tuple[str, ...]] = {
    "--drain": (
        "--remove-brokers",
        "--remove-broker",
        "--remove-broker-ids",
        "--broker-ids-to-remove",
        "--brokers-to-remove",
        "--decommission",
        "--decommission-brokers",
        "--decommission-broker",
        "--evacuate",
        "--evacuate-brokers",
        "--broker-id",
        "--brokerid",
    ),
    "--exclude": (
        "--exclude-brokers",
        "--excluded-brokers",
        "--exclude-broker-ids",
        "--excluded-brokers-for-replica-move",
    ),
    "--plan": ("--reassignment-json-file", "--reassignment", "--proposal"),
    "--min-insync-replicas": ("--default-min-isr", "--min-isr", "--min-insync"),
    "--fail-rack": ("--failed-rack", "--kill-rack", "--down-rack", "--rack-down"),
    "--fail-brokers": ("--failed-brokers", "--kill-brokers", "--down-brokers", "--brokers-down"),
}

# Options that ask for a connection to a cluster, on a command that reads files only
CONNECTING = ("--bootstrap-server", "--bootstrap-servers", "--zookeeper", "--command-config")


def synonym_of(option: str, known: Collection[str]) -> str | None:
    """The option of ours among ``known`` that other Kafka tools call ``option``, if any."""
    folded = option.casefold().replace("_", "-")
    for ours, names in OPTION_SYNONYMS.items():
        if ours in known and folded in names:
            return ours
    return None


def suggest_option(exc: BaseException) -> None:
    """Give Click's "No such option" error (``exc``, any other exception is left as it
    is) our suggestion: the option other Kafka tools name so (`OPTION_SYNONYMS`), or a
    note on which commands read a live cluster; else Click's own guess by spelling."""
    option = getattr(exc, "option_name", None)
    if not isinstance(option, str) or not hasattr(exc, "possibilities"):
        return
    ctx = getattr(exc, "ctx", None)
    params = getattr(getattr(ctx, "command", None), "params", None) or []
    known = {o for p in params for o in (*p.opts, *getattr(p, "secondary_opts", ()))}
    ours = synonym_of(option, known)
    message = getattr(exc, "message", None)
    if ours is not None:
        setattr(exc, "possibilities", [ours])  # noqa: B010 - Click's, not typed here
        return
    if not isinstance(message, str):
        return
    other = synonym_of(option, OPTION_SYNONYMS)
    if other is not None:  # another command's option (`simulate --remove-brokers`)
        note = f"other Kafka tools' name for {other}, which this command does not take"
    elif option.casefold() in CONNECTING:
        note = (
            "this command reads files; a live cluster is read through its brokers by "
            "`snapshot from-cluster --bootstrap-server`, and by --bootstrap-server on "
            "assign, simulate and validate"
        )
    else:
        return
    setattr(exc, "possibilities", [])  # noqa: B010
    setattr(exc, "message", f"{message}: {note}")  # noqa: B010
