"""`mrc-plan score` end to end on a small synthetic snapshot, local mode."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from placement.score.report import ScoreReport

pytestmark = pytest.mark.spark
Cli = Callable[..., Result]
Synth = Callable[..., Path]


def test_score_ranks_plans_and_writes_a_valid_report(
    spark: Any, cli: Cli, synth_snapshot: Synth, tmp_path: Path
) -> None:
    import jsonschema

    sizes = {"brokers": 12, "racks": 3, "topics": 4, "per_topic": 20}
    snap = synth_snapshot(tmp_path / "snap", "--violations", "0.1", "--seed", "4", **sizes)
    plan = tmp_path / "current.json"
    r = cli(["snapshot", "export", snap, "--out", plan])
    assert r.exit_code == 0, r.output
    report_path = tmp_path / "report.json"
    json_out = ["--format", "json", "--out", report_path]
    r = cli(["score", "--snapshot", snap, "--plan", plan, "--master", "local[2]", *json_out])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report == json.loads(report_path.read_text())
    schema = json.loads(
        (Path(__file__).parents[2] / "schemas" / "score-report.schema.json").read_text()
    )
    jsonschema.validate(report, schema)
    parsed = ScoreReport.model_validate(report)
    # re-applying the current assignment changes nothing and keeps every violation
    (p,) = parsed.plans
    assert p.replicas_added == p.replicas_removed == p.bytes_to_move == 0
    assert p.violations_after == p.violations_before == parsed.baseline.violations > 0


def test_missing_plan_is_a_usage_error(cli: Cli, synth_snapshot: Synth, tmp_path: Path) -> None:
    snap = synth_snapshot(tmp_path / "snap", topics=1, per_topic=3)
    r = cli(["score", "--snapshot", snap, "--plan", tmp_path / "x"])
    assert r.exit_code == 2 and "plan file not found" in r.stderr


def test_bars_show_the_most_changed_brokers_on_one_scale() -> None:
    from mrc_plan_cli.score import bar, load_bars
    from placement.score.report import BrokerLoad

    assert bar(0, 10, 4) == "    " and bar(10, 10, 4) == "████" and bar(5, 10, 4) == "██  "
    assert bar(1, 16, 2) == "▏ "  # an eighth of a cell
    before = [BrokerLoad(broker=b, rack="r1", replicas=10, leaders=0, bytes=0) for b in (1, 2, 3)]
    after = [
        BrokerLoad(broker=1, rack="r1", replicas=10, leaders=0, bytes=0),
        BrokerLoad(broker=2, rack="r1", replicas=4, leaders=0, bytes=0),
        BrokerLoad(broker=3, rack="r1", replicas=16, leaders=0, bytes=0),
    ]
    lines = load_bars(before, after, 2, width=8)
    assert len(lines) == 2  # broker 1 did not change: left out
    assert lines[0].split()[:2] == ["r1", "2"] and lines[0].endswith("(-6)")
    assert lines[1].endswith("(+6)") and "████████" in lines[1]  # 16 is the top of the scale


def test_bytes_to_move_are_unknown_without_sizes(
    spark: Any, cli: Cli, tmp_path: Path, example_snapshot: Callable[[Path], Path]
) -> None:
    """A snapshot from describe output has no sizes: the text says unknown, never 0.0 GiB."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    snap, plan = tmp_path / "snap", tmp_path / "plan.json"
    inputs = ["--inventory", examples / "inventory.json"]
    inputs += ["--topics", examples / "topics-describe.json"]
    example_snapshot(snap)
    r = cli(["assign", *inputs, "--current", snap, "--drain", "4", "--out", plan])
    assert r.exit_code == 0, r.output
    assert plan.exists()
    r = cli(["score", "--snapshot", snap, "--plan", plan, "--master", "local[2]"])
    assert r.exit_code == 0, r.output
    moved = [line for line in r.stdout.splitlines() if "GiB to move" in line]
    assert moved and "unknown" in moved[0], r.stdout
    assert "0.0" not in moved[0]
    per_broker = [line for line in r.stdout.splitlines() if "bytes/broker" in line]
    assert per_broker and "unknown" in per_broker[0] and "GiB" not in per_broker[0], r.stdout
    r = cli(["score", "--snapshot", snap, "--format", "json"])
    assert json.loads(r.stdout)["snapshot"]["partitions_without_size"] == 5


@pytest.mark.parametrize("layout", ["assign's own", "indented"])
def test_a_plan_onto_an_unknown_broker_is_refused_at_its_entry(
    cli: Cli, synth_snapshot: Synth, tmp_path: Path, layout: str
) -> None:
    import re

    snap = synth_snapshot(tmp_path / "snap", brokers=6, racks=3, topics=2, per_topic=4)
    plan = tmp_path / "current.json"
    assert cli(["snapshot", "export", snap, "--out", plan]).exit_code == 0
    lines = plan.read_text().splitlines()
    lines[3] = re.sub(r'"replicas":\[\d+', '"replicas":[9999', lines[3])  # the third entry
    text = "\n".join(lines) + "\n"
    if layout == "indented":
        text = json.dumps(json.loads(text), indent=2)
    plan.write_text(text)
    r = cli(["score", "--snapshot", snap, "--plan", plan, "--master", "local[2]"])
    assert r.exit_code == 2, r.output
    assert "broker(s) 9999 are not in the snapshot" in r.stderr
    assert f"{plan}:{4 if layout != 'indented' else ''}" in r.stderr
