"""`mrc-plan assign` end to end: fresh, drain, rollback, infeasible, usage errors, determinism."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from mrc_plan_cli.main import app
from placement.io.reassignment import parse_reassignment, read_reassignment

ROOT = Path(__file__).parent.parent.parent
INV = str(ROOT / "examples" / "inventory.json")
TOPICS = str(ROOT / "examples" / "topics.json")
runner = CliRunner()


def fresh(tmp_path: Path) -> Path:
    out = tmp_path / "fresh.json"
    r = runner.invoke(app, ["assign", "--inventory", INV, "--topics", TOPICS, "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_fresh_assignment_covers_every_partition(tmp_path: Path) -> None:
    plan = read_reassignment(fresh(tmp_path))
    counts = Counter(a.topic for a in plan)
    assert counts == {
        "orders": 12,
        "clickstream": 24,
        "audit-log": 6,
        "payments": 8,
        "inventory-updates": 6,
    }


def test_drain_writes_plan_and_rollback_and_empties_the_brokers(tmp_path: Path) -> None:
    current = fresh(tmp_path)
    out, rollback = tmp_path / "plan.json", tmp_path / "rollback.json"
    r = runner.invoke(
        app,
        [
            "assign",
            "--inventory",
            INV,
            "--topics",
            TOPICS,
            "--current",
            str(current),
            "--drain",
            "4,8",
            "--out",
            str(out),
            "--rollback",
            str(rollback),
        ],
    )
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    assert "(plan is 0 above it)" in r.stderr
    plan, back = read_reassignment(out), read_reassignment(rollback)
    before = {a.key: a for a in read_reassignment(current)}
    assert [a.key for a in plan] == [a.key for a in back]
    assert all(before[a.key] == a for a in back)
    after = before | {a.key: a for a in plan}
    assert not {4, 8} & {b for a in after.values() for b in a.replicas}


def test_same_input_same_bytes(tmp_path: Path) -> None:
    current = fresh(tmp_path)
    outs = []
    for name in ("a.json", "b.json"):
        out = tmp_path / name
        runner.invoke(
            app,
            [
                "assign",
                "--inventory",
                INV,
                "--topics",
                TOPICS,
                "--current",
                str(current),
                "--drain",
                "3",
                "--out",
                str(out),
            ],
        )
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_nothing_to_do(tmp_path: Path) -> None:
    current = fresh(tmp_path)
    r = runner.invoke(
        app, ["assign", "--inventory", INV, "--topics", TOPICS, "--current", str(current)]
    )
    assert r.exit_code == 0
    assert r.stdout == ""
    assert "nothing to do" in r.stderr


def test_infeasible_drain_exits_1_and_names_the_rack(tmp_path: Path) -> None:
    current = fresh(tmp_path)
    out = tmp_path / "plan.json"
    r = runner.invoke(
        app,
        [
            "assign",
            "--inventory",
            INV,
            "--topics",
            TOPICS,
            "--current",
            str(current),
            "--drain",
            "1,2,3",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 1
    assert 'rack "us-west" needs 3 brokers' in r.stderr and "only 1 of its 4 remain" in r.stderr
    assert "Traceback" not in r.stderr
    assert not out.exists()


def test_unknown_broker_ids_are_usage_errors(tmp_path: Path) -> None:
    for args in (["--drain", "42"], ["--exclude", "1,x"]):
        r = runner.invoke(app, ["assign", "--inventory", INV, "--topics", TOPICS, *args])
        assert r.exit_code == 2, r.output
        assert "Traceback" not in r.stderr


def test_current_from_describe_with_a_dead_broker(tmp_path: Path) -> None:
    describe = tmp_path / "describe.txt"
    policy = json.dumps(
        {"version": 2, "replicas": [{"count": 2, "constraints": {"rack": "us-west"}}]}
    )
    describe.write_text(
        f"Topic: t\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: "
        f"confluent.placement.constraints={policy}\n"
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n"
        "\tTopic: t\tPartition: 1\tLeader: 3\tReplicas: 3,77\tIsr: 3\n"
    )
    topics = tmp_path / "topics.json"
    topics.write_text(
        json.dumps(
            {"topics": [{"name": "other", "partitions": 1, "placement": json.loads(policy)}]}
        )
    )
    r = runner.invoke(
        app, ["assign", "--inventory", INV, "--topics", str(topics), "--current", str(describe)]
    )
    assert r.exit_code == 0, r.output
    (a,) = parse_reassignment(r.stdout)
    assert a.key == ("t", 1) and a.replicas[0] == 3 and 77 not in a.replicas
    assert "topic other is in --topics but not in the cluster" in r.stderr
