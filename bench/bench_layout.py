"""layout: Spark's scan of a synthetic snapshot's partitions, task by task (local[2]).

For 1M, 5M and 10M partitions (MRC_PLAN_BENCH_LAYOUT_SIZES="1M,5M" restricts them):
`mrc-plan snapshot synth`, then `mrc-plan score --master local[2]` with Spark's event log
on (a spark-defaults.conf in SPARK_CONF_DIR: no code path of mrc-plan changes). The scan
stage is the first stage that reads a file (FileScanRDD): without a plan, the partitions.
Reported per size: its tasks, and the longest task's duration over the median's (goal
<= 1.5: no core waits long on another), with the rows each task read.

The median is `statistics.median_low`: with two tasks, the shorter one. The midpoint
of two would let one task run three times as long as the other and still pass.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import clean_env, cli, result

SIZES = (1_000_000, 5_000_000, 10_000_000)
SIZES_ENV = "MRC_PLAN_BENCH_LAYOUT_SIZES"
BROKERS, RACKS, PER_TOPIC = 300, 3, 1_000
MASTER = "local[2]"
RATIO_GOAL = 1.5


def sizes(default: tuple[int, ...] = SIZES, env: str = SIZES_ENV) -> list[int]:
    """The sizes to run: ``env`` as a comma-separated list (`1M`, `500k`, `2000000`)."""
    text = os.environ.get(env, "").strip()
    if not text:
        return list(default)
    scale = {"": 1, "k": 1_000, "m": 1_000_000}
    out = []
    for token in re.split(r"[,\s]+", text):
        found = re.fullmatch(r"(\d+)([kKmM]?)", token)
        if found is None:
            raise SystemExit(f"{env}: {token!r} is not a size such as 1M, 500k or 2000000")
        out.append(int(found[1]) * scale[found[2].lower()])
    return out


def synth(out: Path, partitions: int, *, seed: int = 1) -> float:
    """A snapshot of ``partitions`` partitions (1,000 per topic) in ``out``; the wall."""
    cmd = [cli(), "snapshot", "synth", "--brokers", str(BROKERS), "--racks", str(RACKS),
           "--topics", str(max(1, partitions // PER_TOPIC)),
           "--partitions-per-topic", str(min(partitions, PER_TOPIC)),
           "--seed", str(seed), "--out", str(out)]  # fmt: skip
    started = time.perf_counter()
    subprocess.run(cmd, env=clean_env(), check=True, capture_output=True)
    return time.perf_counter() - started


def event_log_env(conf_dir: Path, log_dir: Path) -> dict[str, str]:
    """An environment whose Spark writes its event log into ``log_dir``: one plain JSON
    Lines file per application (not rolled, not compressed)."""
    conf_dir.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    (conf_dir / "spark-defaults.conf").write_text(
        "spark.eventLog.enabled true\n"
        f"spark.eventLog.dir {log_dir.absolute().as_uri()}\n"
        "spark.eventLog.compress false\n"
        "spark.eventLog.rolling.enabled false\n",
        encoding="utf-8",
    )
    return {**clean_env(), "SPARK_CONF_DIR": str(conf_dir)}


def score(snapshot: Path, master: str, env: dict[str, str]) -> tuple[float, bytes]:
    """`mrc-plan score --format json` on ``snapshot``: the wall and the report."""
    cmd = [cli(), "score", "--snapshot", str(snapshot), "--master", master, "--format", "json"]
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        text = done.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n{text}")
    return seconds, done.stdout


@dataclass(frozen=True)
class Task:
    seconds: float
    cpu: float  # the executor's CPU time: less swayed by other load on the machine
    rows: int  # records read, from its input metrics
    executor: str  # "driver" in local mode


def events(log_dir: Path) -> list[dict[str, Any]]:
    """Every event of the one application logged in ``log_dir``."""
    files = [p for p in sorted(log_dir.rglob("*")) if p.is_file() and not p.name.startswith(".")]
    logs = [p for p in files if not p.name.startswith("appstatus")]
    if len(logs) != 1:
        raise RuntimeError(f"{log_dir}: expected one event log, found {[p.name for p in logs]}")
    lines = logs[0].read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def scan_tasks(log_dir: Path) -> list[Task]:
    """The successful tasks of the first stage that read files (FileScanRDD)."""
    logged = events(log_dir)
    scans = sorted(
        e["Stage Info"]["Stage ID"]
        for e in logged
        if e["Event"] == "SparkListenerStageCompleted"
        and any(r["Name"] == "FileScanRDD" for r in e["Stage Info"]["RDD Info"])
    )
    if not scans:
        raise RuntimeError(f"{log_dir}: no stage read a file")
    tasks = []
    for e in logged:
        if e["Event"] != "SparkListenerTaskEnd" or e["Stage ID"] != scans[0]:
            continue
        if e["Task End Reason"]["Reason"] != "Success":
            continue
        info = e["Task Info"]
        metrics = e.get("Task Metrics", {})
        rows = metrics.get("Input Metrics", {}).get("Records Read", 0)
        cpu = metrics.get("Executor CPU Time", 0) / 1e9
        seconds = (info["Finish Time"] - info["Launch Time"]) / 1000
        tasks.append(Task(seconds, cpu, int(rows), str(info["Executor ID"])))
    return tasks


def spread(tasks: list[Task]) -> float:
    """The longest task over the median one (`median_low`, see the module docstring)."""
    low = statistics.median_low(t.seconds for t in tasks)
    return max(t.seconds for t in tasks) / max(low, 1e-3)


def describe(tasks: list[Task]) -> str:
    secs = ", ".join(f"{t.seconds:.1f}" for t in tasks)
    cpu = ", ".join(f"{t.cpu:.1f}" for t in tasks)
    rows = ", ".join(f"{t.rows:,}" for t in tasks)
    return f"{len(tasks)} tasks; s: {secs}; CPU s: {cpu}; rows: {rows}"


def layout(snapshot: Path) -> str:
    """The partitions table's files and row groups."""
    import pyarrow.parquet as pq

    files = sorted((snapshot / "partitions").glob("*.parquet"))
    groups = [pq.ParquetFile(f).metadata.num_row_groups for f in files]
    return f"{len(files)} file(s), {sum(groups)} row groups"


def run() -> list[dict[str, Any]]:
    rows = []
    for n in sizes():
        with tempfile.TemporaryDirectory(prefix="mrc-bench-layout-") as tmp:
            snap, logs = Path(tmp) / "snap", Path(tmp) / "events"
            written = synth(snap, n)
            wall, _ = score(snap, MASTER, event_log_env(Path(tmp) / "conf", logs))
            tasks = scan_tasks(logs)
            rows.append(
                result(
                    f"layout {n:,} partitions, {MASTER}: scan's longest task / median",
                    spread(tasks),
                    "x",
                    RATIO_GOAL,
                    f"{describe(tasks)}; {layout(snap)}; synth {written:.1f} s, score {wall:.1f} s",
                )
            )
    return rows
