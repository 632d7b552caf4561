"""Ctrl-C and SIGTERM before any command runs (while the CLI's modules load, while Click
builds the command and parses the arguments): one line on stderr, exit 130 for SIGINT and
143 for SIGTERM, no traceback. The signal is simulated where it would land, in a process of
its own (the handlers are the process's). The JVM cases are in tests/test_interrupt.py."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

MRC_PLAN = str(Path(sys.executable).parent / "mrc-plan")

# SIGINT and SIGTERM as a terminal's foreground job has them, whatever this suite
# inherited: started in the background by a non-interactive shell (`make test &`) it has
# SIGINT ignored, the child inherits that, and mrc-plan rightly leaves an ignored signal
# ignored, so the signal sent below would be lost
PRELUDE = """
import builtins, os, runpy, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
sys.argv = ["mrc-plan", "rules", "MRC102"]
"""

RUN = f"runpy.run_path({MRC_PLAN!r}, run_name='__main__')"


Done = subprocess.CompletedProcess[str]
Process = Callable[..., Done]


def script(code: str) -> list[str]:
    """A Python process that runs ``code``, then the console script."""
    return [sys.executable, "-c", PRELUDE + code + "\n" + RUN]


def check(done: Done, code: int, word: str) -> None:
    assert done.returncode == code, done.stderr
    assert done.stderr.strip() == word, done.stderr  # one line, no traceback
    assert done.stdout == ""  # the command itself never ran


def test_ctrl_c_while_the_cli_loads(process: Process) -> None:
    done = process(
        script(
            """
real = builtins.__import__
def imp(name, *args, **kwargs):
    if name == "typer":
        raise KeyboardInterrupt
    return real(name, *args, **kwargs)
builtins.__import__ = imp
"""
        )
    )
    check(done, 130, "interrupted")


@pytest.mark.parametrize(
    ("signum", "code", "word"), [("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated")]
)
@pytest.mark.parametrize("where", ["typer.main.get_command", "typer.core.TyperGroup.parse_args"])
def test_a_signal_while_click_parses(
    process: Process, where: str, signum: str, code: int, word: str
) -> None:
    module, _, name = where.rpartition(".")
    done = process(
        script(
            f"""
import typer.main, typer.core
def boom(*args, **kwargs):
    os.kill(os.getpid(), signal.{signum})
    raise AssertionError("the signal did not interrupt")
setattr({module}, {name!r}, boom)
"""
        )
    )
    check(done, code, word)


def test_in_process_each_interrupt_is_said_and_the_handlers_stay(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """handle_errors used in-process (tests, the fuzzer): every interrupt is reported with
    its code, and the process's signal handlers are as they were (a later Ctrl-C works)."""
    import signal

    import typer

    import mrc_plan_cli.errors
    from mrc_plan_cli.errors import Terminated, handle_errors

    stops: list[None] = []  # not the real one: it would end the test session's JVM
    monkeypatch.setattr(mrc_plan_cli.errors, "_stop_spark", lambda: stops.append(None))
    raised: list[BaseException] = []

    @handle_errors
    def command() -> None:
        raise raised[-1]

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    for exc, code in ((KeyboardInterrupt(), 130), (Terminated(), 143), (KeyboardInterrupt(), 130)):
        raised.append(exc)
        with pytest.raises(typer.Exit) as exit_:
            command()
        assert exit_.value.exit_code == code
        assert capsys.readouterr().err == ("terminated\n" if code == 143 else "interrupted\n")
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
    assert len(stops) == 3  # Spark stopped each time
