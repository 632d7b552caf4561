"""snapshot synth: 10,000,000 partitions on 1,000 brokers (goal <= 60 s, <= 8 GiB)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from harness import cli, result, time_command

BROKERS, RACKS, TOPICS, PER_TOPIC = 1_000, 5, 10_000, 1_000
GOAL_S = 60.0
GOAL_MIB = 8 * 1024


def run() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="mrc-bench-synth-") as tmp:
        out = Path(tmp) / "snap"
        cmd = [
            cli(),
            "snapshot",
            "synth",
            "--brokers",
            str(BROKERS),
            "--racks",
            str(RACKS),
            "--topics",
            str(TOPICS),
            "--partitions-per-topic",
            str(PER_TOPIC),
            "--violations",
            "0.01",
            "--seed",
            "1",
            "--out",
            str(out),
        ]
        timing = time_command(cmd, 1)
        size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    partitions = TOPICS * PER_TOPIC
    return [
        result(
            f"synth {partitions:,} partitions on {BROKERS:,} brokers, wall",
            timing.best,
            "s",
            GOAL_S,
            f"{partitions / timing.best:,.0f} partitions/s; {size / 2**20:,.0f} MiB of Parquet",
        ),
        result("synth peak RSS", timing.max_rss_kib / 1024, "MiB", GOAL_MIB),
    ]
