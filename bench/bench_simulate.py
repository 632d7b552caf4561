"""simulate: a rack failure after a 500,000-partition plan on 5,000,000 partitions, local[2].

The same snapshot and plan as `bench_score`. Times, each as its own process and including
start-up, `mrc-plan simulate --snapshot` on Spark (peak memory of driver + JVM, sampled from
/proc) and the in-process engine on the same cluster (`--current SNAPSHOT_DIR` with the
brokers as an inventory file). Both reports, and both `--unclean-out` files, must be equal,
else the benchmark fails.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from bench_score import BROKERS, PER_TOPIC, RACKS, TOPICS, make_plan, run_sampled
from harness import cli, result, synth_snapshot, write_inventory

MEMORY_GOAL_MIB = 4 * 1024
RACK = "rack-01"


def run() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="mrc-bench-simulate-") as tmp:
        t = Path(tmp)
        snap, plan, inv = t / "snap", t / "plan.json", t / "inventory.json"
        synth_snapshot(snap, BROKERS, RACKS, TOPICS, PER_TOPIC)
        moved = make_plan(snap, plan)
        write_inventory(snap, inv)
        common = ["--plan", str(plan), "--fail-rack", RACK, "--min-insync-replicas", "2"]
        common += ["--format", "json", "--exit-zero"]
        spark_s, spark_kib = run_sampled(
            [
                "sh", "-c", '"$@" > "$0"', str(t / "spark.json"),
                cli(), "simulate", "--snapshot", str(snap), "--master", "local[2]",
                "--unclean-out", str(t / "spark-unclean.json"), *common,
            ]
        )  # fmt: skip
        local_s, local_kib = run_sampled(
            [
                "sh", "-c", '"$@" > "$0"', str(t / "local.json"),
                cli(), "simulate", "--current", str(snap), "--inventory", str(inv),
                "--unclean-out", str(t / "local-unclean.json"), *common,
            ]
        )  # fmt: skip
        spark = json.loads((t / "spark.json").read_text())
        local = json.loads((t / "local.json").read_text())
        same_files = (t / "spark-unclean.json").read_bytes() == (
            t / "local-unclean.json"
        ).read_bytes()
    spark.pop("engine")
    local.pop("engine")
    if spark != local or not same_files:
        raise RuntimeError("the Spark and in-process simulate reports or unclean files differ")
    totals = spark["totals"]
    partitions = TOPICS * PER_TOPIC
    return [
        result(
            f"simulate {RACK} down, {partitions:,} partitions after a {moved:,}-partition "
            "plan, local[2], wall",
            spark_s,
            "s",
            None,
            f"session start included; offline {totals['offline']:,} (unclean "
            f"{totals['unclean']:,}), under min ISR {totals['under_min_isr']:,}, promoted "
            f"{totals['promoted']:,}",
        ),
        result("simulate peak RSS, driver + JVM", spark_kib / 1024, "MiB", MEMORY_GOAL_MIB),
        result(
            "simulate in-process engine, same input, wall",
            local_s,
            "s",
            None,
            f"same report and unclean file as Spark; peak RSS {local_kib / 1024:,.0f} MiB",
        ),
    ]
