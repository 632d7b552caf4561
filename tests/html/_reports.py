"""The HTML reports under test, each written next to the JSON report of the same run."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from placement.io.snapshot import write_snapshot
from placement.snapshot.synth import SynthSpec, synth

REPO = Path(__file__).resolve().parents[2]
SCORE_FIXTURE = REPO / "tests" / "fixtures" / "html" / "score-report.json"
# MRC_PLAN_CHROMIUM: another Chromium binary (the default is Debian's package)
CHROMIUM = os.environ.get("MRC_PLAN_CHROMIUM", "/usr/bin/chromium")

Cli = Callable[[list[Any]], Result]


@dataclass(frozen=True)
class Report:
    kind: str  # score, plan, simulate
    page: Path  # the HTML report
    doc: dict[str, Any]  # the JSON report of the same run

    @property
    def html(self) -> str:
        return self.page.read_text(encoding="utf-8")


def cluster(root: Path) -> Path:
    """A synthetic cluster with sizes, and an inventory and topics file for it."""
    snap = synth(SynthSpec(30, 3, 8, 40, violations=0.02, seed=5)).snapshot
    write_snapshot(root / "snap", snap)
    brokers = [{"id": b["broker_id"], "rack": b["rack"]} for b in snap.brokers.to_pylist()]
    (root / "inv.json").write_text(json.dumps({"brokers": brokers}))
    return root / "snap"


def score_report(cli: Cli, root: Path) -> Report:
    """`score --out --report`, the scoring itself replaced by the report of a real run
    (tests/fixtures/html/score-report.json: Spark takes ~20 s to start; the Spark test in
    test_report_cli.py runs the whole thing)."""
    from placement.score.report import ScoreReport

    real = ScoreReport.model_validate_json(SCORE_FIXTURE.read_text())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("placement.score.run.run_score", lambda *a, **k: real)
        r = cli(
            [
                "score",
                "--snapshot",
                root,
                "--out",
                root / "score.json",
                "--report",
                root / "score.html",
            ]
        )
    assert r.exit_code == 0, r.stdout + r.stderr
    return Report("score", root / "score.html", json.loads((root / "score.json").read_text()))


def plan_report(cli: Cli, root: Path, snap: Path) -> Report:
    """A drain in batches with a throttle, then `plan show --format json --report`."""
    out = root / "batches"
    r = cli(["assign", "--current", snap, "--inventory", root / "inv.json", "--drain", "4,8",
             "--out-dir", out, "--max-moves-per-broker", "6", "--throttle", "50MB"])  # fmt: skip
    assert r.exit_code == 0, r.stdout + r.stderr
    r = cli(["plan", "show", out, "--format", "json", "--report", root / "plan.html"])
    assert r.exit_code == 0, r.stdout + r.stderr
    return Report("plan", root / "plan.html", json.loads(r.stdout))


def simulate_report(cli: Cli, root: Path, snap: Path) -> Report:
    """A rack lost: `simulate --format json --report`, the page and the JSON of one run."""
    page = root / "simulate.html"
    r = cli(["simulate", "--current", snap, "--inventory", root / "inv.json",
             "--fail-rack", "rack-01", "--min-insync-replicas", "2", "--format", "json",
             "--report", page])  # fmt: skip
    assert r.exit_code in (0, 1), r.stdout + r.stderr
    return Report("simulate", page, json.loads(r.stdout))
