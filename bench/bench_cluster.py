"""cluster: score 10M partitions on local[2] and on a local cluster of 1, then 2 one-core workers.

For each size (10,000,000 partitions; MRC_PLAN_BENCH_CLUSTER_SIZES="1M" restricts them):
`mrc-plan snapshot synth`, then `mrc-plan score --format json` on `local[2]`, on a cluster
of one one-core worker, of two, and of one two-core worker (each started by
`placement.score.localcluster` in a state directory of its own, stopped after its run;
the start is not timed). The reports must be byte-identical, else the benchmark fails.
Goal: two workers take no longer than one. The event log of each run gives the scan
stage's tasks per executor.

On one machine each executor is a JVM that starts and compiles Spark's generated code on
its own: two one-core workers spend that CPU twice (at 5M partitions on 2 cores, 47 s of
executor CPU, 17 s of it the JIT compilers, against 28 s for one worker), so they need
spare cores to beat one. One worker with both cores is local[2]'s shape: one JVM. The
executors map the driver's class-data archive (written by one untimed local[2] run first),
so each loads Spark's classes from the archive, not from the jars.

Not in the default set: it takes several minutes (three Spark runs and two clusters).
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from bench_layout import Task, event_log_env, scan_tasks, score, sizes, spread, synth
from harness import ROOT, cli, result, warm_spark

SIZES = (10_000_000,)
SIZES_ENV = "MRC_PLAN_BENCH_CLUSTER_SIZES"
# (name, workers, cores of each)
CLUSTERS = (("1 one-core worker", 1, 1), ("2 one-core workers", 2, 1), ("1 two-core worker", 1, 2))


def per_executor(tasks: list[Task]) -> str:
    """How many scan tasks each executor ran, and their rows."""
    count, rows = Counter(t.executor for t in tasks), Counter[str]()
    for t in tasks:
        rows[t.executor] += t.rows
    return ", ".join(f"executor {e}: {count[e]} ({rows[e]:,} rows)" for e in sorted(count))


def run_on(snap: Path, master: str, tmp: Path, extra: dict[str, str]) -> tuple[float, bytes, str]:
    """Score ``snap`` on ``master``: the wall, the report and what the scan stage did."""
    logs = tmp / "events"
    env = {**event_log_env(tmp / "conf", logs), **extra}
    wall, report = score(snap, master, env)
    tasks = scan_tasks(logs)
    scan = f"scan: {len(tasks)} tasks ({per_executor(tasks)}), longest/median {spread(tasks):.2f}"
    return wall, report, scan


def on_cluster(snap: Path, workers: int, cores: int, tmp: Path) -> tuple[float, bytes, str]:
    """Score ``snap`` on a fresh local cluster of ``workers`` workers of ``cores`` cores."""
    sys.path.insert(0, str(ROOT))
    from placement.score.localcluster import start, stop

    state = tmp / "state"
    cluster = start(state, cores=cores, workers=workers)
    try:
        secret = {"MRC_PLAN_SPARK_SECRET_FILE": str(cluster.secret_file)}
        return run_on(snap, cluster.master_url, tmp, secret)
    finally:
        stop(state)


def run() -> list[dict[str, Any]]:
    rows = []
    for n in sizes(SIZES, SIZES_ENV):
        with tempfile.TemporaryDirectory(prefix="mrc-bench-cluster-") as tmp:
            root = Path(tmp)
            snap = root / "snap"
            synth(snap, n)
            # the class-data archive the driver and (on this machine) the executors map
            warm_spark([cli(), "score", "--snapshot", str(snap), "--master", "local[2]"])
            runs = {"local[2]": run_on(snap, "local[2]", root / "local", {})}
            for name, workers, cores in CLUSTERS:
                runs[name] = on_cluster(snap, workers, cores, root / f"{workers}x{cores}")
        reports = {report for _, report, _ in runs.values()}
        if len(reports) != 1:
            raise RuntimeError(f"{n:,} partitions: the reports of {', '.join(runs)} differ")
        for name, (wall, _, scan) in runs.items():
            rows.append(result(f"cluster {n:,} partitions, score on {name}", wall, "s", None, scan))
        one, two = runs["1 one-core worker"][0], runs["2 one-core workers"][0]
        rows.append(
            result(
                f"cluster {n:,} partitions: 2 workers' wall / 1 worker's",
                two / one,
                "x",
                1.0,
                f"the {len(runs)} reports are byte-identical",
            )
        )
    return rows
