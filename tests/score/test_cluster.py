"""A real standalone cluster: `score --master spark://...` gives the local-mode report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

MRC_PLAN = str(Path(sys.executable).parent / "mrc-plan")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MRC_PLAN, *args], capture_output=True, text=True, check=False, timeout=600
    )


def test_cluster_mode_report_equals_local_mode(tmp_path: Path) -> None:
    snap, plan, state = tmp_path / "snap", tmp_path / "plan.json", tmp_path / "cluster"
    assert run("snapshot", "synth", "--brokers", "9", "--racks", "3", "--topics", "3",
               "--partitions-per-topic", "30", "--violations", "0.1", "--seed", "7",
               "--out", str(snap)).returncode == 0  # fmt: skip
    assert run("snapshot", "export", str(snap), "--out", str(plan)).returncode == 0
    local = run("score", "--snapshot", str(snap), "--plan", str(plan), "--master", "local[2]",
                "--format", "json")  # fmt: skip
    assert local.returncode == 0, local.stderr
    try:
        started = run("spark-local-cluster", "start", "--dir", str(state))
        assert started.returncode == 0, started.stderr
        master = started.stdout.strip()
        assert master.startswith("spark://127.0.0.1:")
        remote = run("score", "--snapshot", str(snap), "--plan", str(plan), "--master", master,
                     "--format", "json")  # fmt: skip
        assert remote.returncode == 0, remote.stderr
        assert remote.stdout == local.stdout
    finally:
        stopped = run("spark-local-cluster", "stop", "--dir", str(state))
        assert stopped.returncode == 0, stopped.stderr
    assert not list((state / "pids").glob("*.pid"))
