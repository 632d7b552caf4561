"""Shared helpers for benchmark modules: run a command, time it, read its peak memory.

A benchmark module exposes ``run() -> list[dict]``; each dict is one figure:

    {"name": "validate 3,000 files (median of 3)", "value": 1.23, "unit": "s",
     "goal": 3.0, "detail": "best 1.20 s"}

``goal`` is an upper bound (omit it, or use None, for a figure reported without a goal);
``detail`` is optional free text. `bench/run.py` adds the PASS/FAIL verdict.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def cli() -> str:
    """The `mrc-plan` script next to the running interpreter (the project venv), else on PATH."""
    beside = Path(sys.executable).parent / "mrc-plan"
    if beside.exists():
        return str(beside)
    found = shutil.which("mrc-plan")
    if found is None:
        raise SystemExit("mrc-plan is not installed: run `make bench` (it installs first)")
    return found


def clean_env() -> dict[str, str]:
    """The environment minus what changes the CLI's output (GitHub annotations, colour)."""
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "FORCE_COLOR")}
    env["NO_COLOR"] = "1"
    return env


_WARMED: list[str] = []


def warm_spark(cmd: list[str]) -> str:
    """Run a Spark command once, untimed, the first time a benchmark asks: its JVM writes
    the class-data archive that later JVMs map (`placement.score.session`), as a user's
    first Spark run does once per installation. The note for the figures' detail."""
    if not _WARMED:
        subprocess.run(cmd, check=True, env=clean_env(), capture_output=True, cwd=ROOT)
        _WARMED.append(" ".join(cmd[:2]))
    return "after one untimed run (it writes the JVM's class-data archive, once per install)"


@dataclass(frozen=True)
class Run:
    seconds: float
    returncode: int
    max_rss_kib: int
    stdout: bytes
    stderr: bytes


def run_once(cmd: list[str], *, cwd: Path | None = None) -> Run:
    """Run ``cmd`` once: wall time, exit code, peak RSS of that child alone, its output.

    The peak RSS is the child's own ``ru_maxrss`` from wait4(2): the same counter
    ``getrusage(RUSAGE_CHILDREN)`` reports, but for this child only, so a heavier command
    run earlier by another benchmark cannot inflate it.
    """
    # files, not pipes: a child blocked on a full pipe would be timed waiting for us
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=clean_env(), stdin=subprocess.DEVNULL, stdout=out, stderr=err
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped: tell Popen
        out.seek(0)
        err.seek(0)
        return Run(seconds, proc.returncode, usage.ru_maxrss, out.read(), err.read())


@dataclass(frozen=True)
class Timing:
    runs: list[Run]

    @property
    def best(self) -> float:
        return min(r.seconds for r in self.runs)

    @property
    def median(self) -> float:
        return statistics.median(r.seconds for r in self.runs)

    @property
    def max_rss_kib(self) -> int:
        return max(r.max_rss_kib for r in self.runs)


def time_command(
    cmd: list[str], repeat: int, *, expect: int = 0, cwd: Path | None = None
) -> Timing:
    """Run ``cmd`` ``repeat`` times; stop with the output if an exit code is not ``expect``."""
    runs = []
    for _ in range(repeat):
        r = run_once(cmd, cwd=cwd)
        if r.returncode != expect:
            text = (r.stdout + r.stderr).decode(errors="replace")[-2000:]
            raise RuntimeError(f"{' '.join(cmd)} exited {r.returncode}, expected {expect}:\n{text}")
        runs.append(r)
    return Timing(runs)


def result(
    name: str, value: float, unit: str, goal: float | None = None, detail: str = ""
) -> dict[str, Any]:
    return {"name": name, "value": value, "unit": unit, "goal": goal, "detail": detail}


def synth_snapshot(out: Path, brokers: int, racks: int, topics: int, per_topic: int) -> None:
    """`mrc-plan snapshot synth` into ``out``: 1 % of partitions breaking their policy,
    seed 1 (the benchmarks' common cluster)."""
    subprocess.run(
        [
            cli(), "snapshot", "synth", "--brokers", str(brokers), "--racks", str(racks),
            "--topics", str(topics), "--partitions-per-topic", str(per_topic),
            "--violations", "0.01", "--seed", "1", "--out", str(out),
        ],
        check=True, env=clean_env(), stdout=subprocess.DEVNULL,
    )  # fmt: skip


def write_inventory(snapshot: Path, out: Path) -> None:
    """The inventory of a snapshot's brokers table (id and rack), as JSON at ``out``."""
    import json

    import pyarrow.parquet as pq

    rows = pq.read_table(snapshot / "brokers.parquet").to_pylist()
    brokers = [{"id": r["broker_id"], "rack": r["rack"]} for r in rows]
    out.write_text(json.dumps({"brokers": brokers}))
