"""`mrc-plan simulate` end to end: exit codes, stdout/stderr, the report and the files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _sim_cluster import write_inputs, write_replica_status, write_snapshot_jsonl
from typer.testing import Result

SCHEMAS_DIR = Path(__file__).resolve().parents[2] / "schemas"
Cli = Callable[..., Result]


def _schema_check(doc: dict[str, Any]) -> None:
    import jsonschema

    schema = json.loads((SCHEMAS_DIR / "simulate-report.schema.json").read_text())
    jsonschema.validate(doc, schema)


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    return write_inputs(tmp_path / "in")


def _args(inputs: dict[str, Path], *more: str | Path) -> list[str | Path]:
    return [
        "simulate",
        "--current",
        inputs["current"],
        "--inventory",
        inputs["inventory"],
        "--topics",
        inputs["topics"],
        *more,
    ]


def test_rack_loss_with_offline_partitions_exits_1_and_writes_the_election_file(
    cli: Cli, inputs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "unclean.json"
    r = cli(_args(inputs, "--fail-rack", "west", "--format", "json", "--unclean-out", out))
    assert r.exit_code == 1, r.stderr
    doc = json.loads(r.stdout)
    _schema_check(doc)
    assert doc["totals"] == {
        "partitions": 8,
        "available": 1,
        "promoted": 2,
        "under_min_isr": 2,
        "offline": 3,
        "unclean": 2,
        "lost": 1,
        # reassignment JSON records no ISR: nothing failed before, the failure breaks all 5
        "offline_before": 0,
        "under_min_isr_before": 0,
        "broken": 5,
        "isr_unknown": 8,
    }
    assert doc["isr"] == "recorded"
    assert doc["quorum"] == {"controllers": 5, "surviving": 3, "majority": 3, "kept": True}
    assert json.loads(out.read_text()) == {  # the layout assign --election writes
        "partitions": [{"topic": "v1", "partition": 0}, {"topic": "v1", "partition": 1}],
    }
    assert "unclean leader election" in r.stderr and "lost" in r.stderr
    assert "--election-type UNCLEAN" in r.stderr


def test_a_survivable_failure_exits_0_and_writes_no_election_file(
    cli: Cli, inputs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "unclean.json"
    r = cli(_args(inputs, "--fail-rack", "east", "--unclean-out", out))
    assert r.exit_code == 0, r.stderr
    assert not out.exists()
    assert "not written" in r.stderr
    assert 'rack "east" down: brokers 4, 5, 6' in r.stdout
    assert "KRaft quorum kept: 3 of 5" in r.stdout
    # text names the promoted topic: urep (under-replicated promotes with s=2 < 3)
    assert "urep" in r.stdout and "v2 under-replicated" in r.stdout


def test_text_report_lists_affected_topics_and_unclean_partitions(
    cli: Cli, inputs: dict[str, Path]
) -> None:
    r = cli(_args(inputs, "--fail-rack", "west", "--exit-zero"))
    assert r.exit_code == 0
    assert "v1-0: observers 4, 5" in r.stdout
    assert "westonly" in r.stdout
    assert r.stdout.index("v1") < r.stdout.index("umi")  # worst first


def test_the_plan_is_applied_first(cli: Cli, inputs: dict[str, Path], tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps(
            {
                "version": 1,
                "partitions": [
                    {"topic": "westonly", "partition": 0, "replicas": [4, 5], "observers": []}
                ],
            }
        )
    )
    before = json.loads(cli(_args(inputs, "--fail-rack", "west", "--format", "json")).stdout)
    after = json.loads(
        cli(_args(inputs, "--fail-rack", "west", "--format", "json", "--plan", plan)).stdout
    )
    assert before["totals"]["lost"] == 1 and after["totals"]["lost"] == 0
    assert after["plan"] == str(plan)


def test_same_input_same_bytes(cli: Cli, inputs: dict[str, Path]) -> None:
    a = cli(_args(inputs, "--fail-brokers", "1,4", "--format", "json"))
    b = cli(_args(inputs, "--fail-brokers", "1,4", "--format", "json"))
    assert a.stdout == b.stdout and a.exit_code == b.exit_code == 1


def test_losing_the_quorum_exits_1(cli: Cli, inputs: dict[str, Path], tmp_path: Path) -> None:
    inv = json.loads(inputs["inventory"].read_text())
    inv["controllers"] = [{"id": 9001, "rack": "east"}, {"id": 9002, "rack": "east"}]
    inv["controllers"].append({"id": 9003, "rack": "west"})
    path = tmp_path / "inv.json"
    path.write_text(json.dumps(inv))
    args = _args(inputs, "--fail-rack", "east")
    args[args.index(inputs["inventory"])] = path
    r = cli(args)
    assert r.exit_code == 1
    assert "KRaft quorum LOST: 1 of 3 controllers survive (majority 2)" in r.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-rack", "mars"], 'no broker is in rack "mars"'),
        (["--fail-brokers", "1,99"], "99 are not in the inventory"),
        (["--fail-brokers", "one"], "broker id: 'one' is not an integer"),
        (["--fail-rack", "west", "--fail-brokers", "1"], "name one failure"),
        ([], "name one failure"),
    ],
)
def test_usage_errors_exit_2(
    cli: Cli, inputs: dict[str, Path], args: list[str], message: str
) -> None:
    r = cli(_args(inputs, *args))
    assert r.exit_code == 2
    assert message in r.stderr
    assert r.stdout == ""


def test_input_choice_errors(cli: Cli, inputs: dict[str, Path], tmp_path: Path) -> None:
    r = cli(["simulate", "--fail-rack", "west"])
    assert r.exit_code == 2 and "--snapshot DIR, as --current FILE" in r.stderr
    r = cli(["simulate", "--current", inputs["current"], "--fail-rack", "west"])
    assert r.exit_code == 2 and "--current needs --inventory" in r.stderr
    snap = write_snapshot_jsonl(tmp_path / "snap")
    r = cli(["simulate", "--snapshot", snap, "--topics", inputs["topics"], "--fail-rack", "west"])
    assert r.exit_code == 2 and "--topics goes with --current" in r.stderr


def test_bad_current_file_names_the_position(cli: Cli, inputs: dict[str, Path]) -> None:
    inputs["current"].write_text('{"version":1,"partitions":[{"topic":"a",}]}')
    r = cli(_args(inputs, "--fail-rack", "west"))
    assert r.exit_code == 2
    assert f"{inputs['current']}:1:" in r.stderr


@pytest.mark.spark
def test_snapshot_runs_on_spark_and_matches_in_process(
    spark: Any, cli: Cli, inputs: dict[str, Path], tmp_path: Path
) -> None:
    snap = write_snapshot_jsonl(tmp_path / "snap")
    out = tmp_path / "unclean.json"
    status = write_replica_status(tmp_path / "status.txt")
    r = cli(
        [
            "simulate",
            "--snapshot",
            snap,
            "--inventory",
            inputs["inventory"],
            "--fail-rack",
            "west",
            "--format",
            "json",
            "--unclean-out",
            out,
            "--replica-status",
            status,
        ]
    )
    assert r.exit_code == 1, r.stderr
    on_spark = json.loads(r.stdout)
    _schema_check(on_spark)
    local_args = _args(inputs, "--fail-rack", "west", "--format", "json")
    local = json.loads(cli([*local_args, "--replica-status", status]).stdout)
    # v1-1 first: 1 offset at risk electing observer 4; v1-0 had no leader, no estimate
    assert [p["partition"] for p in on_spark["data_at_risk"]["partitions"]] == [1, 0]
    assert on_spark.pop("engine") == "spark" and local.pop("engine") == "in-process"
    assert on_spark == local
    assert json.loads(out.read_text())["partitions"] == [
        {"topic": "v1", "partition": 1},
        {"topic": "v1", "partition": 0},
    ]


def test_root_is_where_the_topics_files_placement_references_resolve(
    cli: Cli, inputs: dict[str, Path], tmp_path: Path
) -> None:
    """As for `assign`: references stay inside the topics file's directory unless --root
    names a wider one; the result with references equals the one with inline policies."""
    doc = json.loads(inputs["topics"].read_text())
    (tmp_path / "policies").mkdir()
    (tmp_path / "ci").mkdir()
    for entry in doc["topics"]:
        if isinstance(entry.get("placement"), dict):
            name = f"{entry['name']}.json"
            (tmp_path / "policies" / name).write_text(json.dumps(entry["placement"]))
            entry["placement"] = f"../policies/{name}"
    topics = tmp_path / "ci" / "topics.json"
    topics.write_text(json.dumps(doc))
    base = ["simulate", "--current", inputs["current"], "--inventory", inputs["inventory"]]
    base += ["--topics", topics, "--fail-rack", "west", "--format", "json"]

    confined = cli(base)
    assert confined.exit_code == 2, confined.stderr
    assert "leads outside" in confined.stderr and "--root" in confined.stderr

    rooted = cli([*base, "--root", tmp_path])
    inline = cli(_args(inputs, "--fail-rack", "west", "--format", "json"))
    assert rooted.exit_code == inline.exit_code == 1, rooted.stderr
    assert json.loads(rooted.stdout)["totals"] == json.loads(inline.stdout)["totals"]


def test_root_without_topics_is_a_usage_error(cli: Cli, inputs: dict[str, Path]) -> None:
    args = ["simulate", "--current", inputs["current"], "--inventory", inputs["inventory"]]
    r = cli([*args, "--fail-rack", "west", "--root", inputs["topics"].parent])
    assert r.exit_code == 2 and "--root goes with --topics" in r.stderr


@pytest.mark.parametrize("command", ["simulate", "assign"])
def test_root_must_be_an_existing_directory(
    cli: Cli, inputs: dict[str, Path], tmp_path: Path, command: str
) -> None:
    """Not "reference leads outside /nonexistent": the option itself is wrong."""
    args = ["--inventory", inputs["inventory"], "--topics", inputs["topics"]]
    if command == "simulate":
        args += ["--current", inputs["current"], "--fail-rack", "west"]
    for root in (tmp_path / "nonexistent", inputs["topics"]):
        r = cli([command, *args, "--root", root])
        assert r.exit_code == 2, r.stdout + r.stderr
        said = " ".join(r.stderr.replace("│", " ").split())  # rich's box, wrapped lines
        assert "--root" in said and ("does not exist" in said or "is a file" in said), said


def test_the_text_report_separates_what_failed_before(cli: Cli) -> None:
    """examples/describe.txt records orders-2 offline already: the report says so, and
    --assume-in-sync brings back the count without the recorded ISR."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    args = ["simulate", "--current", examples / "describe.txt"]
    args += ["--inventory", examples / "inventory.json", "--fail-rack", "us-west"]
    recorded = cli(args)
    assert recorded.exit_code == 1, recorded.stderr
    said = " ".join(recorded.stdout.split())
    assert "ISR as recorded" in said
    assert "before the failure (no broker down): 1 offline, 0 under min ISR" in said
    assert "the failure breaks 1 more" in said
    assert "orders-2: observers 11; out of sync 7" in said
    assert "failing before" in said
    assumed = cli([*args, "--assume-in-sync", "--format", "json"])
    doc = json.loads(assumed.stdout)
    _schema_check(doc)
    assert doc["isr"] == "assumed"
    assert (doc["totals"]["offline_before"], doc["totals"]["offline"]) == (0, 1)


def test_a_missing_current_is_named_as_the_current_assignment(
    cli: Cli, inputs: dict[str, Path], tmp_path: Path
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(inputs["current"].read_text())
    for missing in (tmp_path / "nope.json", inputs["current"] / "x"):
        r = cli(
            ["simulate", "--current", missing, "--inventory", inputs["inventory"],
             "--plan", plan, "--fail-rack", "west"]
        )  # fmt: skip
        assert r.exit_code == 2, r.output
        assert "cannot read the current assignment" in r.stderr
        assert "the plan" not in r.stderr
    r = cli(_args(inputs, "--plan", tmp_path / "absent.json", "--fail-rack", "west"))
    assert r.exit_code == 2 and "cannot read the plan" in r.stderr
