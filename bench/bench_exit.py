"""Clean exits: 1,000 runs of `snapshot show --format json` and `snapshot export`.

The runs go over four snapshots; the figure is the number that exit non-zero (goal 0).

A pyarrow pool thread that holds the last reference to a Python object (a file object,
or a buffer over Python bytes) must take the GIL to let it go; when that happens while the
interpreter exits, the thread is ended inside C++ and the process aborts after complete
output (`terminate called without an active exception`, exit 134). The readers therefore
hand pyarrow only memory it allocated (`placement.io.snapshot.arrow_owned`). Heavy
(minutes): run it by name,
`.venv/bin/python bench/run.py exit`; MRC_BENCH_EXIT_RUNS sets the number of runs.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from harness import ROOT, Run, cli, result, run_once, synth_snapshot

RUNS = int(os.environ.get("MRC_BENCH_EXIT_RUNS", "1000"))
WORKERS = 2  # two commands at a time: as a CI runner's parallel jobs do


def _snapshots(tmp: Path) -> list[Path]:
    """Three synthetic snapshots of different sizes and one from the describe example."""
    snaps = []
    for name, sizes in (
        ("small", (6, 3, 20, 10)),
        ("medium", (12, 3, 200, 50)),
        ("wide", (40, 4, 1_000, 12)),
    ):
        synth_snapshot(tmp / name, *sizes)
        snaps.append(tmp / name)
    described = tmp / "described"
    run = run_once(
        [
            cli(), "snapshot", "from-describe", str(ROOT / "examples" / "describe.txt"),
            "--inventory", str(ROOT / "examples" / "inventory.json"), "--out", str(described),
        ]
    )  # fmt: skip
    if run.returncode != 0:
        raise RuntimeError(f"snapshot from-describe exited {run.returncode}")
    snaps.append(described)
    return snaps


def run() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="mrc-bench-exit-") as tmp:
        snaps = _snapshots(Path(tmp))
        commands = []
        for i in range(RUNS):
            snap = str(snaps[(i // 2) % len(snaps)])
            if i % 2:
                commands.append([cli(), "snapshot", "export", snap])
            else:
                commands.append([cli(), "snapshot", "show", "--format", "json", snap])
        started = time.perf_counter()
        with ThreadPoolExecutor(WORKERS) as pool:
            runs: list[Run] = list(pool.map(run_once, commands))
        seconds = time.perf_counter() - started
    failed = [(cmd, r) for cmd, r in zip(commands, runs, strict=True) if r.returncode != 0]
    codes = Counter(r.returncode for _, r in failed)
    detail = f"{RUNS:,} runs ({len(snaps)} snapshots, show and export) in {seconds:,.0f} s"
    if failed:
        cmd, first = failed[0]
        tail = first.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        codes_text = ", ".join(f"{n} x exit {c}" for c, n in sorted(codes.items()))
        detail += f"; {codes_text}; first: {' '.join(cmd[1:3])}: {tail[0][:120]}"
    return [result("snapshot show/export runs exiting non-zero", len(failed), "runs", 0, detail)]
