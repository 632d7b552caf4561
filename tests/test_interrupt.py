"""Ctrl-C during `score` or `simulate`: exit 130, no traceback, no process of ours left behind,
whether Spark's JVM is starting or running.

Each case runs the real command in a session of its own (as a shell runs a foreground job)
with a marker in its environment, sends SIGINT to its process group (as a terminal does)
at a given point, then looks in /proc for any process still carrying the marker.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

MRC_PLAN = str(Path(sys.executable).parent / "mrc-plan")
MARK = "MRC_PLAN_TEST_INTERRUPT"

# Starts the command (argv[1:]) with SIGINT and SIGTERM at their defaults, as a terminal's
# foreground job has them, whatever this suite inherited: started in the background by a
# non-interactive shell (`make test &`) it has SIGINT ignored, an ignored signal stays
# ignored across fork and exec, and mrc-plan rightly leaves it so. The command is exec'd:
# same process, same pid. (Not preexec_fn: unsafe with the threads a Spark test leaves.)
WITH_DEFAULT_SIGNALS = [
    sys.executable,
    "-c",
    "import os, signal, sys\n"
    "for s in (signal.SIGINT, signal.SIGTERM):\n"
    "    signal.signal(s, signal.SIG_DFL)\n"
    "os.execv(sys.argv[1], sys.argv[1:])",
]


def marked(mark: str) -> list[int]:
    """Our processes (not zombies) whose environment carries ``MARK=mark``."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdecimal():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def is_java(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/exe").resolve().name == "java"
    except OSError:
        return False


def listening(pid: int) -> int:
    """How many listening TCP sockets ``pid`` has."""
    try:
        sockets = {
            os.readlink(fd)[8:-1]
            for fd in Path(f"/proc/{pid}/fd").iterdir()
            if os.readlink(fd).startswith("socket:[")
        }
        tables = [Path(f"/proc/{pid}/net/{t}").read_text() for t in ("tcp", "tcp6")]
    except OSError:
        return 0
    return sum(
        fields[3] == "0A" and fields[9] in sockets
        for table in tables
        for fields in (line.split() for line in table.splitlines()[1:])
    )


def starting(children: list[int]) -> bool:
    """Spark is being launched: spark-submit (bash, then the JVM) exists."""
    return bool(children)


def running(children: list[int]) -> bool:
    """The SparkContext is up: besides its Py4J gateway the JVM listens for the driver's RPC
    (from here on the command is inside calls into the JVM)."""
    return any(is_java(pid) and listening(pid) >= 2 for pid in children)


@pytest.fixture(scope="module")
def snapshot(
    tmp_path_factory: pytest.TempPathFactory, process: Callable[..., Any]
) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("interrupt")
    snap, plan = root / "snap", root / "plan.json"
    for args in (
        ["snapshot", "synth", "--brokers", "9", "--racks", "3", "--topics", "3",
         "--partitions-per-topic", "30", "--violations", "0.2", "--seed", "3", "--out", str(snap)],
        ["snapshot", "export", str(snap), "--out", str(plan)],
    ):  # fmt: skip
        done = process([MRC_PLAN, *args])
        assert done.returncode == 0, done.stderr
    return snap, plan


def interrupt(
    args: list[str],
    when: Callable[[list[int]], bool],
    tmp_path: Path,
    sig: signal.Signals = signal.SIGINT,
) -> tuple[int, str, list[int]]:
    """Run mrc-plan ARGS, send ``sig`` once ``when(its descendants)`` holds (SIGINT to its
    process group, as Ctrl-C does; anything else to the process, as `kill` does); the exit
    code, stderr, and the marked processes still alive a little after it exited."""
    mark = uuid.uuid4().hex
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        proc = subprocess.Popen(
            [*WITH_DEFAULT_SIGNALS, MRC_PLAN, *args],
            stdout=stdout,
            stderr=stderr,
            env={**os.environ, MARK: mark},
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 300
        while proc.poll() is None and not when([p for p in marked(mark) if p != proc.pid]):
            assert time.monotonic() < deadline, "the point to interrupt at never came"
            time.sleep(0.05)
        assert proc.poll() is None, f"the command ended before the signal:\n{err.read_text()}"
        if sig == signal.SIGINT:
            os.killpg(proc.pid, sig)  # what Ctrl-C in a terminal does
        else:
            os.kill(proc.pid, sig)
        code = proc.wait(timeout=300)
        left = marked(mark)
        for _ in range(100):  # the group may take a moment to be reaped
            if not left:
                break
            time.sleep(0.1)
            left = marked(mark)
        return code, err.read_text(), left
    finally:
        for pid in marked(mark):  # whatever happened, leave nothing running
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def check(code: int, stderr: str, left: list[int]) -> None:
    assert code == 130, stderr
    assert "Traceback" not in stderr, stderr
    assert "interrupted" in stderr
    assert not left, f"left behind: {[Path(f'/proc/{p}/cmdline').read_bytes()[:80] for p in left]}"


def test_ctrl_c_while_spark_starts(snapshot: tuple[Path, Path], tmp_path: Path) -> None:
    snap, plan = snapshot
    args = ["score", "--snapshot", str(snap), "--plan", str(plan), "--master", "local[1]"]
    check(*interrupt(args, starting, tmp_path))


def test_ctrl_c_while_score_runs(snapshot: tuple[Path, Path], tmp_path: Path) -> None:
    snap, plan = snapshot
    args = ["score", "--snapshot", str(snap), "--master", "local[1]"]
    args += ["--plan", str(plan)] * 8  # work enough to still be running when the JVM is up
    check(*interrupt(args, running, tmp_path))


def test_ctrl_c_while_simulate_runs(snapshot: tuple[Path, Path], tmp_path: Path) -> None:
    snap, plan = snapshot
    args = ["simulate", "--snapshot", str(snap), "--plan", str(plan), "--fail-rack", "rack-01",
            "--master", "local[1]"]  # fmt: skip
    check(*interrupt(args, running, tmp_path))


def test_sigterm_while_score_runs(snapshot: tuple[Path, Path], tmp_path: Path) -> None:
    """`kill` (SIGTERM) to mrc-plan alone, not its group: it stops its JVM itself and exits
    143 (128 + 15), as Ctrl-C exits 130."""
    snap, plan = snapshot
    args = ["score", "--snapshot", str(snap), "--master", "local[1]"]
    args += ["--plan", str(plan)] * 8
    code, stderr, left = interrupt(args, running, tmp_path, signal.SIGTERM)
    assert code == 143, stderr
    assert "Traceback" not in stderr, stderr
    assert "terminated" in stderr
    assert not left, f"left behind: {[Path(f'/proc/{p}/cmdline').read_bytes()[:80] for p in left]}"


def test_an_ignored_signal_stays_ignored_while_the_jvm_is_recorded() -> None:
    """nohup or a background job: SIGINT and SIGTERM are ignored; holding them while the JVM
    starts must not turn one into an interrupt (it was a KeyboardInterrupt)."""
    from placement.score.session import _sigint_deferred

    before = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with _sigint_deferred():
            signal.raise_signal(signal.SIGINT)
            signal.raise_signal(signal.SIGTERM)
        assert all(signal.getsignal(s) is signal.SIG_IGN for s in before)
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def test_stop_jvm_ends_the_group_and_forgets_the_session(monkeypatch: pytest.MonkeyPatch) -> None:
    """A `sleep` stands in for the JVM (no Spark starts): its process group ends, and pyspark
    keeps no session of it, so that a later build_session starts a new JVM instead of
    returning the dead one."""
    pytest.importorskip("pyspark")
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    from placement.score import session

    child = subprocess.Popen(["sleep", "60"], start_new_session=True)
    monkeypatch.setattr(session, "_JVMS", [child])
    for name in ("_gateway", "_jvm", "_active_spark_context"):
        monkeypatch.setattr(SparkContext, name, object())
    for name in ("_instantiatedSession", "_activeSession"):
        monkeypatch.setattr(SparkSession, name, object())
    session.stop_jvm(grace=10)
    assert child.returncode is not None and not session._JVMS
    assert SparkContext._gateway is None and SparkSession._instantiatedSession is None
    assert SparkSession._activeSession is None
