"""engines: `score` on Spark vs a DuckDB SQL yardstick, 1M / 5M / 10M partitions, figure for figure.

For each size, `mrc-plan snapshot synth` (300 brokers, 4 racks, 1% violations, 1,000
partitions a topic) makes a snapshot; a copy of it (the partitions hard-linked) gets a
topics table where some topics have no policy, some have no min ISR and some are missing
altogether, so the scorers' rules for those cases are compared too. `plan_mix.py` writes a
500,000-partition plan that changes partitions in every way a reassignment can. Then,
alternately, each as its own process with its start-up included:

- `mrc-plan score --master local[2] --min-insync-replicas 3` (Spark), with the peak memory of
  its whole process tree (Python driver + JVM) and the CPU time of its JIT compiler
  threads and of its Spark tasks, sampled from /proc. The snapshot's partitions were
  checked by an earlier command, so the driver finds that check recorded (as after
  `snapshot synth`, or for any later command on the same snapshot);
- the same with ``MRC_PLAN_CHECK_CACHE=0``: the driver checks every partition again, as
  on the first command to read a snapshot;
- `.venv-duckdb/bin/python bench/duckdb_ref.py --threads 2` (DuckDB, `make bench`
  installs it in a venv of its own).

Every figure of both JSON reports must agree (floats to 1e-9, the score, the plans' order
included), else the benchmark fails. MRC_PLAN_BENCH_ENGINES_SIZES (e.g. "1000000" or
"1000000,5000000") restricts the sizes for a quick run.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_score import compare, run_sampled, run_traced
from harness import ROOT, cli, result, synth_snapshot, warm_spark
from plan_mix import make_plan_mix

SIZES = (1_000_000, 5_000_000, 10_000_000)
BROKERS, RACKS, PER_TOPIC = 300, 4, 1_000
PLAN_PARTITIONS = 500_000
DEFAULT_MIN_ISR = 3  # differs from every synthetic topic's, so the topics without one show
RATIO_GOAL = {5_000_000: 3.0, 10_000_000: 2.0}  # Spark wall / DuckDB wall
MEMORY_GOAL_MIB = {10_000_000: 2048.0}  # Spark's process tree
REPEATS = {5_000_000: 3, 10_000_000: 3}  # alternated runs; the rest run once
DUCKDB = ROOT / ".venv-duckdb" / "bin" / "python"
SIZES_ENV = "MRC_PLAN_BENCH_ENGINES_SIZES"
CHECK_CACHE = "MRC_PLAN_CHECK_CACHE"


def sizes() -> list[int]:
    text = os.environ.get(SIZES_ENV, "").strip()
    if not text:
        return list(SIZES)
    return [int(s.replace("_", "")) for s in text.split(",") if s.strip()]


def altered_copy(snapshot: Path, out: Path) -> dict[str, int]:
    """Copy ``snapshot`` to ``out`` (files hard-linked) with its topics table changed: every
    10th topic loses its policy, every 10th from the 5th is missing from the table, every
    7th loses its min ISR. Written with the original schema; how many of each."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    shutil.copytree(snapshot, out, copy_function=os.link)
    path = out / "topics.parquet"
    topics = pq.read_table(path)
    path.unlink()  # a hard link: writing through it would change the original too
    rows = topics.to_pylist()
    kept = []
    counts = {"without_policy": 0, "missing": 0, "without_min_isr": 0}
    for i, row in enumerate(rows):
        if i % 10 == 5:
            counts["missing"] += 1
            continue
        if i % 10 == 0:
            row["placement"] = None
            counts["without_policy"] += 1
        if i % 7 == 3:
            row["min_isr"] = None
            counts["without_min_isr"] += 1
        kept.append(row)
    pq.write_table(pa.Table.from_pylist(kept, schema=topics.schema), path)
    return counts


def leaves(report: Any) -> int:
    """How many figures a report holds (every number, string and null of its JSON)."""
    if isinstance(report, dict):
        return sum(leaves(v) for v in report.values())
    if isinstance(report, list):
        return sum(leaves(v) for v in report)
    return 1


def differences(spark: dict[str, Any], duck: dict[str, Any]) -> list[str]:
    """`bench_score.compare`, plus what it leaves out: each plan's name and score, in order."""
    diffs = compare(spark, duck)
    for i, (a, b) in enumerate(zip(spark["plans"], duck["plans"], strict=False)):
        if a["plan"] != b["plan"]:
            diffs.append(f".plans[{i}].plan: {a['plan']} vs {b['plan']}")
        if not math.isclose(a["score"], b["score"], rel_tol=1e-9, abs_tol=1e-9):
            diffs.append(f".plans[{i}].score: {a['score']} vs {b['score']}")
    return diffs


def measure(partitions: int, tmp: Path) -> list[dict[str, Any]]:
    topics = partitions // PER_TOPIC
    synth = tmp / "synth"
    synth_snapshot(synth, BROKERS, RACKS, topics, PER_TOPIC)
    snap, plan = tmp / "snap", tmp / "plan.json"
    altered = altered_copy(synth, snap)
    kinds = make_plan_mix(snap, plan, PLAN_PARTITIONS)
    spark_cmd = [
        cli(), "score", "--snapshot", str(snap), "--plan", str(plan), "--master", "local[2]",
        "--min-insync-replicas", str(DEFAULT_MIN_ISR), "--format", "json",
        "--out", str(tmp / "spark.json"),
    ]  # fmt: skip
    duck_cmd = [
        str(DUCKDB), str(Path(__file__).with_name("duckdb_ref.py")), str(snap), str(plan),
        "--min-insync-replicas", str(DEFAULT_MIN_ISR), "--threads", "2",
        "--out", str(tmp / "duckdb.json"),
    ]  # fmt: skip
    warmed = warm_spark(spark_cmd)
    # what a command that read the snapshot before (the untimed run, for the first size)
    # recorded: its partitions passed the checks (`placement.io.snapshot.verify_partitions`)
    check = f"from placement.io.snapshot import verify_partitions as v; v({str(snap)!r})"
    env = {k: v for k, v in os.environ.items() if k != CHECK_CACHE}
    subprocess.run([sys.executable, "-c", check], check=True, cwd=ROOT, env=env)
    spark_s, cold_s, duck_s, spark_kib, duck_kib = [], [], [], [], []
    cpu: dict[str, list[float]] = {"jit": [], "tasks": [], "other": []}
    figures = 0
    for _ in range(REPEATS.get(partitions, 1)):
        for path in (tmp / "spark.json", tmp / "duckdb.json"):
            path.unlink(missing_ok=True)
        seconds, kib, threads = run_traced(spark_cmd)
        spark_s.append(seconds)
        spark_kib.append(kib)
        for group, used in threads.items():
            cpu[group].append(used)
        seconds, kib, _ = run_traced(spark_cmd, {CHECK_CACHE: "0"})
        cold_s.append(seconds)
        spark_kib.append(kib)
        seconds, kib = run_sampled(duck_cmd)
        duck_s.append(seconds)
        duck_kib.append(kib)
        spark = json.loads((tmp / "spark.json").read_text(encoding="utf-8"))
        duck = json.loads((tmp / "duckdb.json").read_text(encoding="utf-8"))
        diffs = differences(spark, duck)
        if diffs:
            raise RuntimeError(
                f"{partitions:,} partitions: Spark and DuckDB disagree on {len(diffs)} figures:\n"
                + "\n".join(diffs[:20])
            )
        figures = leaves(spark)
    runs = len(spark_s)
    how = f"median of {runs} runs, alternated" if runs > 1 else "1 run each"
    spark_wall, duck_wall = statistics.median(spark_s), statistics.median(duck_s)
    cold_wall = statistics.median(cold_s)
    moved = sum(kinds.values())
    label = f"score {partitions / 1e6:g}M partitions, {moved:,}-partition plan"
    scored = spark["plans"][0]
    setup = (
        f"topics: {altered['without_policy']:,} without policy, {altered['missing']:,} missing,"
        f" {altered['without_min_isr']:,} without min ISR"
    )
    return [
        result(
            f"{label}: Spark local[2], wall",
            spark_wall,
            "s",
            None,
            f"{how}, {warmed}; start-up included; the plan touches {moved / partitions:.0%} of the "
            f"partitions; {spark['baseline']['violations']:,} -> "
            f"{scored['violations_after']:,} violations, {scored['replicas_added']:,} "
            f"replicas added; {setup}",
        ),
        result(
            f"{label}: DuckDB 2 threads, wall",
            duck_wall,
            "s",
            None,
            f"{how}; start-up included; peak RSS {max(duck_kib) / 1024:,.0f} MiB; plan kinds: "
            + ", ".join(f"{k} {n:,}" for k, n in kinds.items()),
        ),
        result(
            f"{label}: Spark / DuckDB wall", spark_wall / duck_wall, "x", RATIO_GOAL.get(partitions)
        ),
        result(
            f"{label}: Spark, partitions checked again, wall",
            cold_wall,
            "s",
            None,
            f"{how}; {CHECK_CACHE}=0: the driver checks every partition, as on the first "
            f"command to read this snapshot; {cold_wall / duck_wall:.1f}x DuckDB",
        ),
        result(
            f"{label}: figures compared",
            figures,
            "figures",
            None,
            f"every figure of the report agrees (floats to 1e-9), in all {runs} run(s)",
        ),
        result(
            f"{label}: Spark CPU, JIT compiler threads",
            statistics.median(cpu["jit"]),
            "s",
            None,
            f"median of {runs}; Spark tasks {statistics.median(cpu['tasks']):.1f} s, the rest "
            f"(driver, JVM start, GC, shuffle) {statistics.median(cpu['other']):.1f} s of CPU",
        ),
        result(
            f"{label}: Spark peak RSS, driver + JVM",
            max(spark_kib) / 1024,
            "MiB",
            MEMORY_GOAL_MIB.get(partitions),
            "max over the runs, sampled every 0.2 s",
        ),
    ]


def run() -> list[dict[str, Any]]:
    if not DUCKDB.exists():
        raise RuntimeError(f"no {DUCKDB}: run `make bench` (it installs DuckDB there)")
    rows = []
    for partitions in sizes():
        if partitions % PER_TOPIC or partitions < PLAN_PARTITIONS:
            raise ValueError(
                f"{SIZES_ENV}: {partitions:,} is not a multiple of {PER_TOPIC:,} partitions "
                f"of at least {PLAN_PARTITIONS:,}"
            )
        print(f"  engines: {partitions:,} partitions", file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory(prefix="mrc-bench-engines-") as tmp:
            rows += measure(partitions, Path(tmp))
    return rows
