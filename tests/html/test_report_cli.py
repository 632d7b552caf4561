"""`--report FILE.html` on the command line: written with the other outputs (atomically,
never over an input, nothing left behind on failure), and on a real Spark run its figures
are those of the JSON report of that run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _dom import figures, mismatches
from typer.testing import Result

Cli = Callable[..., Result]


@pytest.mark.spark
def test_a_real_score_run_writes_the_json_and_the_page_alike(
    spark: Any, cli: Cli, synth_snapshot: Callable[..., Path], tmp_path: Path
) -> None:
    sizes = {"brokers": 12, "racks": 3, "topics": 4, "per_topic": 20}
    snap = synth_snapshot(tmp_path / "snap", "--violations", "0.1", "--seed", "4", **sizes)
    plan = tmp_path / "drain.json"
    r = cli(["assign", "--current", snap, "--drain", "1", "--out", plan])
    assert r.exit_code == 0, r.output
    out, page = tmp_path / "score.json", tmp_path / "score.html"
    r = cli(["score", "--snapshot", snap, "--plan", plan, "--master", "local[2]",
             "--out", out, "--report", page])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert f"wrote {page}" in r.stderr
    doc, html = json.loads(out.read_text()), page.read_text()
    found = figures(html)
    assert {"/plans/0/score", "/plans/0/bytes_to_move", "/baseline/violations"} <= {
        k for k, _, _ in found
    }
    assert mismatches(doc, found) == []


@pytest.fixture
def batches(cli: Cli, synth_snapshot: Callable[..., Path], tmp_path: Path) -> Path:
    snap = synth_snapshot(tmp_path / "snap", brokers=9, topics=3, per_topic=12)
    out = tmp_path / "batches"
    r = cli(["assign", "--current", snap, "--drain", "1", "--out-dir", out,
             "--batch-size", "4", "--throttle", "10MB"])  # fmt: skip
    assert r.exit_code == 0, r.output
    return out


def test_plan_show_writes_the_page_beside_its_usual_output(
    cli: Cli, batches: Path, tmp_path: Path
) -> None:
    page = tmp_path / "plan.html"
    r = cli(["plan", "show", batches, "--report", page])
    assert r.exit_code == 0, r.output
    assert "plan-0001.json" in r.stdout and f"wrote {page}" in r.stderr
    r = cli(["plan", "show", batches, "--format", "json"])
    assert mismatches(json.loads(r.stdout), figures(page.read_text())) == []
    one = tmp_path / "one.html"
    r = cli(["plan", "show", batches / "plan-0001.json", "--report", one])
    assert r.exit_code == 0, r.output
    assert 'data-k="/batches/*/partitions"' in one.read_text()


@pytest.mark.parametrize("target", ["summary.json", "plan-0001.json"])
def test_plan_show_never_writes_the_page_over_its_input(
    cli: Cli, batches: Path, target: str
) -> None:
    before = (batches / target).read_bytes()
    source = batches if target == "summary.json" else batches / target
    r = cli(["plan", "show", source, "--report", batches / target])
    assert r.exit_code == 2, r.output
    assert "--report" in r.stderr
    assert (batches / target).read_bytes() == before


def test_a_failed_drawing_leaves_nothing_and_keeps_the_old_page(
    batches: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from mrc_plan_cli.main import app

    page = tmp_path / "plan.html"
    page.write_text("the page of an earlier run")

    def broken(*_: object) -> str:
        raise RuntimeError("drawing failed")

    monkeypatch.setattr("placement.html.plan.render_plan", broken)
    result = CliRunner().invoke(app, ["plan", "show", str(batches), "--report", str(page)])
    assert result.exit_code != 0
    assert page.read_text() == "the page of an earlier run"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def _page_and_json(cli: Cli, target: Path, page: Path) -> tuple[str, dict[str, Any]]:
    r = cli(["plan", "show", target, "--format", "json", "--report", page])
    assert r.exit_code == 0, r.output
    html, doc = page.read_text(), json.loads(r.stdout)
    assert mismatches(doc, figures(html)) == []
    return html, doc


def test_unknown_sizes_show_as_unknown_and_the_chart_counts_replicas(
    cli: Cli, tmp_path: Path
) -> None:
    """The example cluster has no sizes: every byte figure of the plan is unknown, never
    0 B."""
    out = tmp_path / "batches"
    examples = Path(__file__).resolve().parents[2] / "examples"
    r = cli(["assign", "--inventory", examples / "inventory-expanded.json", "--rebalance",
             "--topics", examples / "topics-describe.json", "--current", examples / "describe.txt",
             "--out-dir", out, "--batch-size", "2"])  # fmt: skip
    assert r.exit_code == 0, r.output
    html, doc = _page_and_json(cli, out, tmp_path / "plan.html")
    assert doc["total"]["bytes"] is None
    assert 'data-v="null" data-k="/total/bytes" class="n">unknown<' in html
    assert "replicas added per batch" in html
    data = [text for key, _, text in figures(html) if key.endswith("/bytes")]
    assert data and set(data) == {"unknown"}


def test_a_lone_reassignment_file_gives_what_it_lists(cli: Cli, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    entries = [
        {"topic": "orders", "partition": 0, "replicas": [1, 2, 3], "log_dirs": ["any"] * 3},
        {"topic": "audit", "partition": 0, "replicas": [4, 1], "log_dirs": ["any"] * 2},
    ]
    plan.write_text(json.dumps({"version": 1, "partitions": entries}))
    html, doc = _page_and_json(cli, plan, tmp_path / "plan.html")
    assert doc["kind"] == "reassignment"
    assert 'data-k="/reassignment/replicas" class="n">5<' in html


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RACK_LOSS = ["simulate", "--current", EXAMPLES / "describe.txt", "--inventory",
             EXAMPLES / "inventory.json", "--fail-rack", "us-west"]  # fmt: skip


def test_simulate_writes_the_data_at_risk_with_the_numbers_of_its_json(
    cli: Cli, tmp_path: Path
) -> None:
    page, unclean = tmp_path / "loss.html", tmp_path / "unclean.json"
    r = cli([*RACK_LOSS, "--replica-status", EXAMPLES / "replica-status.json",
             "--unclean-out", unclean, "--report", page, "--format", "json"])  # fmt: skip
    assert r.exit_code == 1, r.output  # partitions go offline
    assert f"wrote {page}" in r.stderr and f"wrote {unclean}" in r.stderr
    doc, html = json.loads(r.stdout), page.read_text()
    found = figures(html)
    assert mismatches(doc, found) == []
    keys = {k for k, _, _ in found}
    risk = doc["data_at_risk"]
    assert risk["totals"]["offsets"] > 0
    assert {"/data_at_risk/totals/offsets", "/totals/offline", "/topics/0/offline"} <= keys
    # every partition needing an unclean election is on the page, riskiest first
    shown = [t for k, _, t in found if k.startswith("/data_at_risk/partitions/")
             and k.endswith("/partition")]  # fmt: skip
    assert shown == [str(p["partition"]) for p in risk["partitions"]]


def test_simulate_without_replica_status_has_no_risk_section(cli: Cli, tmp_path: Path) -> None:
    page = tmp_path / "loss.html"
    r = cli([*RACK_LOSS, "--report", page, "--format", "json"])
    assert r.exit_code == 1, r.output
    assert f"wrote {page}" in r.stderr
    html = page.read_text()
    assert "Data at risk" not in html and "Unclean elections" in html
    assert mismatches(json.loads(r.stdout), figures(html)) == []


def test_simulate_never_writes_the_page_over_an_input(cli: Cli, tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.json"
    inventory.write_bytes((EXAMPLES / "inventory.json").read_bytes())
    before = inventory.read_bytes()
    r = cli(["simulate", "--current", EXAMPLES / "describe.txt", "--inventory", inventory,
             "--fail-rack", "us-west", "--report", inventory])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "--report" in r.stderr
    assert inventory.read_bytes() == before


def test_a_failed_simulate_page_leaves_neither_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All or nothing: the drawing fails, so --unclean-out is not written either, and the
    page of an earlier run stays."""
    from typer.testing import CliRunner

    from mrc_plan_cli.main import app

    page, unclean = tmp_path / "loss.html", tmp_path / "unclean.json"
    page.write_text("the page of an earlier run")

    def broken(*_: object) -> str:
        raise RuntimeError("drawing failed")

    monkeypatch.setattr("placement.html.simulate.render_simulate", broken)
    args = [str(a) for a in RACK_LOSS] + ["--unclean-out", str(unclean), "--report", str(page)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code not in (0, 1)
    assert page.read_text() == "the page of an earlier run"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loss.html"]


@pytest.mark.spark
def test_simulate_on_spark_writes_the_same_page_as_in_process(
    spark: Any, cli: Cli, synth_snapshot: Callable[..., Path], tmp_path: Path
) -> None:
    """The page is drawn from the report alone: Spark and in-process reports that agree
    give pages that agree but for the engine's name."""
    snap = synth_snapshot(tmp_path / "snap", "--violations", "0.1", "--seed", "3",
                          brokers=9, racks=3, topics=3, per_topic=10)  # fmt: skip
    pages = {}
    for engine in ("spark", "in-process"):
        page = tmp_path / f"{engine}.html"
        where = (["--snapshot", snap, "--master", "local[2]"] if engine == "spark"
                 else ["--current", snap, "--inventory", _inventory(snap, tmp_path)])  # fmt: skip
        r = cli(["simulate", *where, "--fail-rack", "rack-01", "--min-insync-replicas", "2",
                 "--report", page, "--format", "json", "--exit-zero"])  # fmt: skip
        assert r.exit_code == 0, r.output
        html = page.read_text()
        assert mismatches(json.loads(r.stdout), figures(html)) == []
        pages[engine] = html.replace("engine in-process", "engine spark")
    assert pages["spark"].count("<tr") == pages["in-process"].count("<tr")
    assert figures(pages["spark"]) == figures(pages["in-process"])


def _inventory(snap: Path, tmp_path: Path) -> Path:
    import pyarrow.parquet as pq

    brokers = pq.read_table(snap / "brokers.parquet").to_pylist()
    inv = tmp_path / "inv.json"
    inv.write_text(json.dumps({"brokers": [{"id": b["broker_id"], "rack": b["rack"]}
                                           for b in brokers]}))  # fmt: skip
    return inv
