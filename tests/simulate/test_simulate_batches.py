"""`simulate --plan DIR`: the failure at each step of an `assign --out-dir` directory, held
to the same failure after the batches up to that step applied as one plan file."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from placement.io.inventory import load_inventory
from placement.io.reassignment import read_plan_file, render_reassignment
from placement.model.assignment import Key, PartitionAssignment
from placement.simulate.failure import SimulateReport, simulate_files

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
SCHEMA = REPO / "schemas" / "simulate-report.schema.json"
Cli = Callable[..., Result]


@pytest.fixture(scope="module")
def cluster(cli: Cli, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The examples' cluster laid out afresh, a drain of brokers 4 and 8 in batches of two,
    a rebalance onto the expanded inventory (batches, then a leaders step), and a drain of
    the describe output (a recorded ISR)."""
    root = tmp_path_factory.mktemp("batches")
    inv, topics = EXAMPLES / "inventory.json", EXAMPLES / "topics.json"
    current = root / "current.json"
    runs = [
        ["--inventory", inv, "--topics", topics, "--out", current],
        ["--inventory", inv, "--topics", topics, "--current", current, "--drain", "4,8",
         "--out-dir", root / "drain", "--batch-size", "2"],
        ["--inventory", EXAMPLES / "inventory-expanded.json", "--topics", topics, "--current",
         current, "--rebalance", "--balance-leaders", "--out-dir", root / "rebalance",
         "--batch-size", "4"],
        ["--inventory", inv, "--current", EXAMPLES / "describe.txt", "--drain", "4,8",
         "--out-dir", root / "described", "--batch-size", "1"],
    ]  # fmt: skip
    for args in runs:
        r = cli(["assign", *args])
        assert r.exit_code == 0, r.output
    return {
        "current": current,
        "drain": root / "drain",
        "rebalance": root / "rebalance",
        "described": root / "described",
    }


def _simulate(cli: Cli, cluster: dict[str, Path], *more: str | Path) -> Result:
    return cli(["simulate", "--current", cluster["current"], "--inventory",
                EXAMPLES / "inventory.json", "--topics", EXAMPLES / "topics.json",
                "--plan", cluster["drain"], *more])  # fmt: skip


def _schema_check(doc: dict[str, Any]) -> None:
    import jsonschema

    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))


def _files(directory: Path) -> list[str]:
    """The steps' files, from summary.json: the batches, then the leaders step."""
    doc = json.loads((directory / "summary.json").read_text())
    leaders = [doc["leaders"]["file"]] if doc["leaders"] else []
    return [b["file"] for b in doc["batches"]] + leaders


def _worst_first(step: dict[str, Any]) -> tuple[int, ...]:
    t, risk = step["totals"], step["data_at_risk"]
    offsets = risk["offsets"] if risk else 0
    return (-t["offline"], -t["under_min_isr"], -offsets, -t["promoted"], step["order"])


def test_one_step_per_batch_worst_first(cli: Cli, cluster: dict[str, Path]) -> None:
    r = _simulate(cli, cluster, "--fail-rack", "us-west", "--format", "json")
    assert r.exit_code == 1, r.output  # clickstream's sync replicas are all in us-west
    doc = json.loads(r.stdout)
    _schema_check(doc)
    files = _files(cluster["drain"])
    assert len(files) > 2 and not (cluster["drain"] / "leaders.json").exists()
    steps = doc["batches"]
    by_order = sorted(steps, key=lambda s: s["order"])
    assert [s["step"] for s in by_order] == ["before", *files]
    assert [s["order"] for s in by_order] == list(range(len(files) + 1))
    assert steps == sorted(steps, key=_worst_first)
    assert [s["worst"] for s in steps] == list(range(1, len(steps) + 1))
    # the rest of the report is the state after the last step
    assert by_order[-1]["totals"] == doc["totals"]
    assert doc["plan"] == str(cluster["drain"])


@pytest.mark.parametrize(
    ("plan", "current", "inventory", "failure"),
    [
        ("drain", "current", "inventory.json", {"fail_rack": "us-west"}),
        # steps that differ: the drain moves replicas onto brokers 2 and 3, one batch at a time
        ("drain", "current", "inventory.json", {"fail_brokers": [2, 3]}),
        ("rebalance", "current", "inventory-expanded.json", {"fail_rack": "us-west"}),
        # a recorded ISR, and the estimates of the data at risk at each step
        ("described", "describe", "inventory.json", {"fail_rack": "us-west"}),
    ],
)
def test_each_step_is_the_batches_up_to_it_applied(
    cluster: dict[str, Path],
    tmp_path: Path,
    plan: str,
    current: str,
    inventory: str,
    failure: dict[str, Any],
) -> None:
    """Step k is what one plan file holding batches 1..k gives (the plan reader, and the
    single-plan path of `simulate`); "before" is the cluster with no plan."""
    from placement.io.replicastatus import read_replica_status

    now = EXAMPLES / "describe.txt" if current == "describe" else cluster["current"]
    loaded = load_inventory(EXAMPLES / inventory)
    described = current == "describe"
    options: dict[str, Any] = {
        "topics": None if described else EXAMPLES / "topics.json",
        "default_min_isr": 2,
        "replica_status": (
            read_replica_status(str(EXAMPLES / "replica-status.json")) if described else None
        ),
        **failure,
    }
    directory = cluster[plan]
    report, _ = simulate_files(now, loaded, plan=directory, **options)
    assert report.batches is not None
    steps = sorted(report.batches, key=lambda s: s.order)
    files = _files(directory)
    assert [s.step for s in steps] == ["before", *files]
    if plan == "rebalance":
        assert steps[-1].step == "leaders.json" and steps[-1].reassigned > 0
    if failure.get("fail_brokers"):
        assert len({s.totals for s in steps}) > 2, "steps that differ"
    applied: dict[Key, PartitionAssignment] = {}
    for k, step in enumerate(steps):
        expect = _reference(now, loaded, options, directory, files[:k], applied, tmp_path)
        assert step.totals == expect.totals, step.step
        risk = expect.data_at_risk
        assert step.data_at_risk == (risk.totals if risk is not None else None), step.step
    assert steps[-1].totals == report.totals


def _reference(
    now: Path,
    loaded: Any,
    options: dict[str, Any],
    directory: Path,
    files: list[str],
    applied: dict[Key, PartitionAssignment],
    tmp_path: Path,
) -> SimulateReport:
    """The failure after ``files`` (the first k steps), as one reassignment file."""
    if not files:
        report, _ = simulate_files(now, loaded, **options)
        return report
    for a in read_plan_file(directory / files[-1]).entries:  # a later step overrides
        applied[a.key] = a
    merged = tmp_path / f"first-{len(files)}.json"
    merged.write_text(render_reassignment(applied.values()))
    report, _ = simulate_files(now, loaded, plan=merged, **options)
    return report


def test_the_text_report_gives_the_window(cli: Cli, cluster: dict[str, Path]) -> None:
    r = _simulate(cli, cluster, "--fail-brokers", "2,3", "--min-insync-replicas", "2")
    assert r.exit_code == 0, r.output
    last = _files(cluster["drain"])[-1]
    out = r.stdout
    assert f"at each step of {cluster['drain']}" in out
    assert "steps, worst first" in out
    assert "before any batch: 0 offline, 0 under min ISR" in out
    assert f"after the last step ({last}): 0 offline" in out
    assert "a batch in flight keeps its old in-sync replicas" in out
    # the steps' table comes before the state after the last step
    assert out.index("steps, worst first") < out.index(f"\nafter the last step ({last}):")


def test_the_page_has_a_table_of_the_steps(
    cli: Cli, cluster: dict[str, Path], tmp_path: Path
) -> None:
    page = tmp_path / "steps.html"
    r = _simulate(cli, cluster, "--fail-rack", "us-west", "--format", "json", "--report", page)
    assert r.exit_code == 1, r.output
    dom = _dom()
    html, doc = page.read_text(), json.loads(r.stdout)
    found = dom.figures(html)
    assert dom.mismatches(doc, found) == []
    assert "Steps of the plan" in html
    shown = [t for k, _, t in found if k.startswith("/batches/") and k.endswith("/step")]
    assert shown == [doc["batches"][0]["step"]] + [s["step"] for s in doc["batches"]]


def _dom() -> Any:
    """tests/html/_dom.py: the page's figures read back, and held to the JSON report."""
    spec = importlib.util.spec_from_file_location("_dom", REPO / "tests" / "html" / "_dom.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_spark_refuses_a_batch_directory(
    cli: Cli, cluster: dict[str, Path], tmp_path: Path
) -> None:
    r = cli(["simulate", "--snapshot", tmp_path, "--plan", cluster["drain"],
             "--fail-rack", "us-west"])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "--plan DIR" in r.stderr and f"--current {tmp_path}" in r.stderr


def test_a_directory_without_a_summary_is_refused(cli: Cli, cluster: dict[str, Path]) -> None:
    r = cli(["simulate", "--current", cluster["current"], "--inventory",
             EXAMPLES / "inventory.json", "--plan", EXAMPLES / "placement",
             "--fail-rack", "us-west"])  # fmt: skip
    assert r.exit_code == 2, r.output
    assert "no summary.json here" in r.stderr


def test_a_summary_naming_a_file_outside_its_directory_is_refused(
    cli: Cli, cluster: dict[str, Path], tmp_path: Path
) -> None:
    directory = tmp_path / "dir"
    directory.mkdir()
    doc = json.loads((cluster["drain"] / "summary.json").read_text())
    doc["batches"][0]["file"] = "../current.json"
    (directory / "summary.json").write_text(json.dumps(doc))
    (tmp_path / "current.json").write_bytes(cluster["current"].read_bytes())
    r = _simulate(cli, {**cluster, "drain": directory}, "--fail-rack", "us-west")
    assert r.exit_code == 2, r.output
    assert '"../current.json" is not the name of a file in it' in r.stderr
