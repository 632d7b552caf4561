"""`assign` with a snapshot as its one source, policy changes (--policy-dir), and the summary
as JSON (--format json, --summary; schema assign-summary)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from placement.io.current import read_current
from placement.io.inventory import load_inventory
from placement.io.reassignment import read_reassignment
from placement.model.policy import PlacementPolicy
from placement.plan.checker import PlanContext, check_plan
from placement.plan.policies import SCRIPT
from placement.plan.topics import read_topics

REPO = Path(__file__).resolve().parent.parent.parent
EXAMPLES = REPO / "examples"
INV = EXAMPLES / "inventory.json"
FIXTURES = REPO / "tests" / "fixtures" / "assign"
DESCRIBE = FIXTURES / "describe-policies.txt"  # orders, payments (v1), legacy-events (none)
CHANGES = FIXTURES / "changes.json"  # orders as is; payments, legacy-events new; refunds new
Cli = Callable[..., Result]


@pytest.fixture
def snap(tmp_path: Path, example_snapshot: Callable[[Path], Path]) -> Path:
    """examples/describe.txt as a snapshot: orders-1 breaks its policy (three us-west)."""
    return example_snapshot(tmp_path / "snap")


def after_meets_policies(current: Path, plan: Path, policies: dict[str, PlacementPolicy]) -> None:
    """Every partition of a topic with a policy meets it once the plan has run."""
    state = {a.key: a for a in read_current(current).assignments}
    state |= {a.key: a for a in read_reassignment(plan)}
    managed = [a for a in state.values() if a.topic in policies]
    assert managed
    assert check_plan(managed, PlanContext(load_inventory(INV).inventory, policies)) == []


def test_a_snapshot_alone_repairs_what_breaks_its_policy(
    cli: Cli, snap: Path, tmp_path: Path
) -> None:
    out = tmp_path / "plan.json"
    r = cli(["assign", "--current", snap, "--out", out])
    assert r.exit_code == 0, r.output
    assert "brokers and racks from the snapshot's brokers table" in r.stderr
    # legacy-events has no policy in the snapshot: Kafka's rack-aware rule, which its
    # partitions (three replicas, all in us-east) break; nothing else asked, so repaired
    assert "1 on Kafka's rack-aware rule (no policy)" in r.stderr
    plan = read_reassignment(out)
    assert [a.key for a in plan] == [("legacy-events", 0), ("legacy-events", 1), ("orders", 1)]
    after_meets_policies(snap, out, read_current(snap).policies)
    again = tmp_path / "again.json"  # the same with the inventory the snapshot came from
    r = cli(["assign", "--current", snap, "--inventory", INV, "--out", again])
    assert r.exit_code == 0, r.output
    assert again.read_bytes() == out.read_bytes()


def test_drain_on_a_snapshot_alone(cli: Cli, snap: Path, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    r = cli(["assign", "--current", snap, "--drain", "4", "--out", out])
    assert r.exit_code == 0, r.output
    assert 4 not in {b for a in read_reassignment(out) for b in a.replicas}
    r = cli(["assign", "--current", snap, "--drain", "42"])
    assert r.exit_code == 2 and "42" in r.stderr


def test_an_inventory_that_moves_a_broker_to_another_rack_is_refused(
    cli: Cli, snap: Path, tmp_path: Path
) -> None:
    doc = json.loads(INV.read_text())
    doc["brokers"][3]["rack"] = "us-east"  # broker 4
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(doc))
    out = tmp_path / "plan.json"
    r = cli(["assign", "--current", snap, "--inventory", moved, "--out", out])
    assert r.exit_code == 2
    assert "broker(s) 4 sit in other racks than in the snapshot" in r.stderr
    assert not out.exists()


def test_an_inventory_with_new_brokers_is_used_and_noted(cli: Cli, snap: Path) -> None:
    r = cli(["assign", "--current", snap, "--inventory", EXAMPLES / "inventory-expanded.json"])
    assert r.exit_code == 0, r.output
    assert "--inventory adds broker(s) 12, 13" in r.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--current", EXAMPLES / "describe.txt"], "--inventory is needed"),
        (["--inventory", INV], "--topics is needed for a fresh layout"),
        (["--inventory", INV, "--policy-dir", "pol"], "--policy-dir compares"),
        (["--current", DESCRIBE, "--inventory", INV, "--format", "json"], "--format json"),
    ],
)
def test_usage_errors(cli: Cli, args: list[Any], message: str) -> None:
    r = cli(["assign", *args])
    assert r.exit_code == 2 and message in r.stderr, r.output


def _changes_run(cli: Cli, tmp_path: Path, *extra: Any, topics: Path = CHANGES) -> Result:
    args = ["assign", "--current", DESCRIBE, "--inventory", INV, "--topics", topics]
    return cli([*args, "--out", tmp_path / "plan.json", *extra])


def test_policy_changes_are_written_beside_the_plan(cli: Cli, tmp_path: Path) -> None:
    pol = tmp_path / "policies"
    r = _changes_run(cli, tmp_path, "--policy-dir", pol)
    assert r.exit_code == 0, r.output
    files = {p.name: p.read_text() for p in pol.iterdir()}
    assert set(files) == {
        "payments.json",
        "legacy-events.json",
        "refunds.json",
        SCRIPT,
        "topics.json",
    }
    wanted = {t.name: t.policy for t in read_topics(CHANGES)}
    # the changes read back as a topics file: the policies the plan sets, nothing else
    assert {t.name: t.policy for t in read_topics(pol / "topics.json")} == {
        t: wanted[t] for t in ("payments", "legacy-events", "refunds")
    }
    for topic in ("payments", "legacy-events", "refunds"):
        assert PlacementPolicy.model_validate_json(files[f"{topic}.json"]) == wanted[topic]
    script = files[SCRIPT]
    assert script.index("--entity-name legacy-events --alter") < script.index(
        "--entity-name payments --alter"
    )
    assert "--create --topic refunds --partitions 4" in script and "orders" not in script
    assert "policy changes: 3 topic(s): legacy-events (alter), payments (alter)" in r.stderr
    assert "before the reassignment runs" in r.stderr and f"sh {pol}/{SCRIPT}" in r.stderr
    cluster = read_current(DESCRIBE).policies
    after_meets_policies(DESCRIBE, tmp_path / "plan.json", cluster | wanted)


def test_the_same_inputs_give_the_same_bytes(cli: Cli, tmp_path: Path) -> None:
    runs = []
    for name in ("a", "b"):
        where = tmp_path / name
        where.mkdir()
        pol, summary = where / "policies", where / "summary.json"
        r = _changes_run(cli, where, "--policy-dir", pol, "--summary", summary)
        assert r.exit_code == 0, r.output
        files = sorted((p.name, p.read_bytes()) for p in pol.iterdir())
        runs.append(((where / "plan.json").read_bytes(), summary.read_bytes(), files))
    assert runs[0] == runs[1]


def test_no_change_leaves_no_stale_directory(cli: Cli, tmp_path: Path) -> None:
    pol = tmp_path / "policies"
    assert _changes_run(cli, tmp_path, "--policy-dir", pol).exit_code == 0
    assert (pol / SCRIPT).is_file()
    same = tmp_path / "same.json"  # orders as the cluster has it, nothing else
    same.write_text(json.dumps({"topics": [json.loads(CHANGES.read_text())["topics"][0]]}))
    r = _changes_run(cli, tmp_path, "--policy-dir", pol, topics=same)
    assert r.exit_code == 0, r.output
    assert not pol.exists() and "removed stale" in r.stderr
    assert "policy changes" not in r.stderr


def test_a_failed_plan_writes_no_policy_files(cli: Cli, tmp_path: Path) -> None:
    pol = tmp_path / "policies"
    r = _changes_run(cli, tmp_path, "--policy-dir", pol, "--drain", "1,2,3")
    assert r.exit_code == 1, r.output  # us-west cannot hold the policies
    assert not pol.exists() and not (tmp_path / "plan.json").exists()


def test_a_directory_of_other_files_is_not_replaced(cli: Cli, tmp_path: Path) -> None:
    pol = tmp_path / "policies"
    pol.mkdir()
    (pol / "notes.txt").write_text("mine")
    r = _changes_run(cli, tmp_path, "--policy-dir", pol)
    assert r.exit_code == 2 and "not overwriting it" in r.stderr
    assert (pol / "notes.txt").read_text() == "mine" and not (tmp_path / "plan.json").exists()


@pytest.fixture(scope="module")
def summary_schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        (REPO / "schemas" / "assign-summary.schema.json").read_text()
    )
    return loaded


def test_the_json_summary_is_the_summary_file_and_fits_its_schema(
    cli: Cli, tmp_path: Path, summary_schema: dict[str, Any]
) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    summary = tmp_path / "summary.json"
    r = _changes_run(cli, tmp_path, "--format", "json", "--summary", summary)
    assert r.exit_code == 0, r.output
    assert r.stdout == summary.read_text()
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, summary_schema)
    assert doc["cluster_policies_known"] and doc["brokers_from"] == "inventory"
    changes = {c["topic"]: c for c in doc["policy_changes"]}
    assert list(changes) == ["legacy-events", "payments", "refunds"]
    assert changes["legacy-events"]["before"] is None
    assert changes["payments"]["before"]["version"] == 1
    assert changes["refunds"]["action"] == "create" and changes["refunds"]["partitions"] == 4
    assert doc["missing_topics"] == ["refunds"]
    assert doc["partitions_changed"] == len(read_reassignment(tmp_path / "plan.json"))
    assert "partitions changed:" not in r.stderr  # the text summary is replaced, not added


def test_reassignment_json_as_current_knows_no_policies(cli: Cli, tmp_path: Path) -> None:
    current = tmp_path / "current.json"
    r = cli(["assign", "--inventory", INV, "--topics", EXAMPLES / "topics.json", "--out", current])
    assert r.exit_code == 0, r.output
    summary = tmp_path / "summary.json"
    r = cli(
        [
            "assign",
            "--inventory",
            INV,
            "--topics",
            EXAMPLES / "topics.json",
            "--current",
            current,
            "--drain",
            "4",
            "--out",
            tmp_path / "plan.json",
            "--summary",
            summary,
        ]
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(summary.read_text())
    assert doc["cluster_policies_known"] is False and doc["policy_changes"] == []
