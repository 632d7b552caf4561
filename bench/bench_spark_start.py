"""spark_start: what `score` costs before its first Spark job, at 5,000,000 partitions.

The snapshot is the engines benchmark's case (`snapshot synth`, 300 brokers, 4 racks, 1 %
violations, 5,000 topics of 1,000 partitions) and the plan a 500,000-partition
`plan_mix` plan. A child process runs `run_score` as `mrc-plan score --master local[2]`
does, with a thread polling Spark's status tracker every 20 ms: the fixed cost is the
time from the child's start (interpreter start-up, imports, reading and checking every
input, the JVM and the session, building the query) to the first job it sees. Also
reported: the time to each stage of the run, and the whole run (median of 3, fixed cost
from the same runs). Goal: the fixed cost at most 6 s. Each figure twice, alternated: with
the snapshot's check recorded by an earlier command (the untimed run), and with
MRC_PLAN_CHECK_CACHE=0, every partition checked again.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness import ROOT, clean_env, result, synth_snapshot, warm_spark
from plan_mix import make_plan_mix

BROKERS, RACKS, TOPICS, PER_TOPIC = 300, 4, 5_000, 1_000
PLAN = 500_000
GOAL_S = 6.0
CHECK_CACHE = "MRC_PLAN_CHECK_CACHE"
RUNS = 3

# the child: times measured from the process's own start (/proc/self/stat), so the
# interpreter and its imports count
CHILD = r"""
import json, os, sys, threading, time

TICKS = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19])

def since_start():
    return time.clock_gettime(time.CLOCK_BOOTTIME) - TICKS / os.sysconf("SC_CLK_TCK")

marks = {}
def progress(stage):
    marks.setdefault(stage, since_start())

def watch():
    from pyspark import SparkContext
    while "first job" not in marks:
        sc = SparkContext._active_spark_context
        if sc is not None:
            try:
                if sc.statusTracker().getActiveJobsIds():
                    marks["first job"] = since_start()
                    return
            except Exception:
                pass
        time.sleep(0.02)

threading.Thread(target=watch, daemon=True).start()
from placement.score.run import run_score
report = run_score(sys.argv[1], sys.argv[2:], master="local[2]", progress=progress)
marks["done"] = since_start()
print(json.dumps({"marks": marks, "plans": len(report.plans)}))
"""


def run() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="mrc-bench-spark-start-") as tmp:
        t = Path(tmp)
        snap, plan = t / "snap", t / "plan.json"
        synth_snapshot(snap, BROKERS, RACKS, TOPICS, PER_TOPIC)
        make_plan_mix(snap, plan, PLAN)
        # the untimed run also records that the snapshot's partitions passed the checks
        warmed = warm_spark([sys.executable, "-c", CHILD, str(snap), str(plan)])
        runs: dict[str, list[dict[str, float]]] = {"recorded": [], "again": []}
        for _ in range(RUNS):  # alternated
            for kind, env in (("recorded", {}), ("again", {CHECK_CACHE: "0"})):
                out = subprocess.run(
                    [sys.executable, "-c", CHILD, str(snap), str(plan)],
                    check=True, env={**clean_env(), **env}, capture_output=True, text=True,
                    cwd=ROOT,
                ).stdout  # fmt: skip
                runs[kind].append(json.loads(out.strip().splitlines()[-1])["marks"])
    what = f"{TOPICS * PER_TOPIC:,} partitions, a {PLAN:,}-partition plan"
    rows = []
    for kind, label, note in (
        ("recorded", "", "the snapshot's check recorded by an earlier command"),
        ("again", ", partitions checked again", f"{CHECK_CACHE}=0: every partition checked"),
    ):
        first = statistics.median(r["first job"] for r in runs[kind])
        done = statistics.median(r["done"] for r in runs[kind])
        stages = "; ".join(f"{k} {v:.1f} s" for k, v in runs[kind][-1].items())
        rows += [
            result(
                f"score: fixed cost before the first Spark job{label} ({what})",
                first,
                "s",
                GOAL_S,
                f"median of {RUNS}, {warmed}; {note}; last run: {stages}",
            ),
            result(f"score: the same runs, whole{label}", done, "s", None, f"median of {RUNS}"),
        ]
    return rows
