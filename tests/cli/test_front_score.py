"""`placement.api.score` from Python, on Spark: the same report as the command writes for
the same flags."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from placement import api

pytestmark = pytest.mark.spark
Cli = Callable[..., Result]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_score_on_a_snapshot_is_the_command(
    spark: Any, cli: Cli, example_snapshot: Callable[[Path], Path], tmp_path: Path
) -> None:
    snap = example_snapshot(tmp_path / "snap")
    plan = tmp_path / "drain.json"
    flags = ["--inventory", EXAMPLES / "inventory.json", "--current", snap]
    r = cli(["assign", *flags, "--drain", "4", "--out", plan])
    assert r.exit_code == 0, r.output
    out = tmp_path / "score.json"
    r = cli(["score", "--snapshot", snap, "--plan", plan, "--master", "local[1]", "--out", out])
    assert r.exit_code == 0, r.output
    stages: list[str] = []
    request = api.ScoreRequest(snap, [plan], master="local[1]", progress=stages.append)
    result = api.score(request)
    assert result.report_json == out.read_text()
    assert stages, "each stage is named as it starts"
    # `simulate --snapshot` runs the same call (placement.score.front.simulate) as
    # api.simulate: tests/simulate/test_simulate_cli.py and test_unknown_brokers.py cover it
