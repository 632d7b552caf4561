"""--rebalance against Yelp kafka-utils on the same input: RF 3 over 3 racks, 3,000 partitions.

kafka-utils (PartitionCountBalancer, its default, run offline by kafka_utils_ref.py in its
own venv `.venv-kafka-utils`, which `make bench` installs) reaches the lower bound on moves
here. Goals: as many moves as kafka-utils or fewer, and at least 20x faster. Both times cover
planning only, after the inputs are loaded: kafka-utils' balancer, and our assign() (which
also runs the feasibility check and the independent plan checker).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import ROOT, result

REFERENCE_PY = ROOT / ".venv-kafka-utils" / "bin" / "python"
SIZE = {"partitions": 3000, "brokers": 30, "racks": 3, "rf": 3, "seed": 1}
REPEAT = 3


def _ours(tmp: Path) -> tuple[float, int, int]:
    """Best planning time of REPEAT runs in process, replicas added, lower bound."""
    from placement.io.current import read_current
    from placement.io.inventory import load_inventory
    from placement.plan.assign import assign
    from placement.plan.topics import read_topics
    from placement.rules.base import CheckContext
    from placement.solver.engine import Options

    loaded = load_inventory(tmp / "inventory.json")
    specs = read_topics(tmp / "topics.json", CheckContext(loaded.inventory))
    state = read_current(tmp / "current.json")
    best = float("inf")
    for _ in range(REPEAT):
        started = time.perf_counter()
        outcome = assign(loaded, specs, state, options=Options(rebalance=True))
        best = min(best, time.perf_counter() - started)
    return best, outcome.replicas_added, outcome.lower_bound


def run() -> list[dict[str, Any]]:
    if not REFERENCE_PY.exists():
        raise RuntimeError("kafka-utils is not installed: run `make bench` (it installs it)")
    with tempfile.TemporaryDirectory(prefix="mrc-bench-rebalance-") as name:
        tmp = Path(name)
        args = [f"--{k}={v}" for k, v in SIZE.items()]
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "bench" / "make_rebalance_input.py"),
                *args,
                "--outdir",
                str(tmp),
            ],
            check=True,
            capture_output=True,
        )
        theirs = []
        for i in range(REPEAT):
            out = tmp / f"ku{i}.json"
            subprocess.run(
                [
                    str(REFERENCE_PY),
                    str(ROOT / "bench" / "kafka_utils_ref.py"),
                    "--inventory",
                    str(tmp / "inventory.json"),
                    "--current",
                    str(tmp / "current.json"),
                    "--out",
                    str(out),
                ],
                check=True,
                capture_output=True,
            )
            theirs.append(json.loads(out.read_text()))
        ref_s = min(t["seconds"] for t in theirs)
        ref_moves = max(t["moves"] for t in theirs)
        ours_s, ours_moves, bound = _ours(tmp)
    label = f"{SIZE['partitions']:,} partitions, RF 3, 3 racks, {SIZE['brokers']} brokers"
    return [
        result(
            f"rebalance {label}: kafka-utils",
            ref_s,
            "s",
            None,
            f"{ref_moves:,} moves (best of {REPEAT}); lower bound {bound:,}",
        ),
        result(
            f"rebalance {label}: mrc-plan",
            ours_s,
            "s",
            None,
            f"{ours_moves:,} moves (best of {REPEAT}); {ref_s / ours_s:,.0f}x faster",
        ),
        result("rebalance: mrc-plan moves minus kafka-utils moves", ours_moves - ref_moves, "", 0),
        result(
            "rebalance: mrc-plan time in % of kafka-utils' (goal: 20x faster)",
            100 * ours_s / ref_s,
            "%",
            100 / 20,
        ),
    ]
