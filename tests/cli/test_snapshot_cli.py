"""`mrc-plan snapshot synth|show|from-describe|export` end to end."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from placement.io.snapshot import read_snapshot

ROOT = Path(__file__).parent.parent.parent
INV = ROOT / "examples" / "inventory.json"
Cli = Callable[..., Result]
Args = Callable[..., list[str | Path]]


def test_synth_then_show(cli: Cli, synth_args: Args, tmp_path: Path) -> None:
    out = tmp_path / "snap"
    sizes = {"brokers": 30, "racks": 3, "topics": 12, "per_topic": 10}
    r = cli(synth_args(out, "--violations", "0.1", "--seed", "9", **sizes))
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    assert "120 partitions" in r.stderr
    broken = int(r.stderr.split("(")[1].split()[0])
    show = cli(["snapshot", "show", out])
    assert show.exit_code == 0, show.output
    assert "120" in show.stdout and "rack-01" in show.stdout
    (line,) = [ln for ln in show.stdout.splitlines() if "breaking their policy" in ln]
    assert line.split()[-1] == f"{broken:,}"


def test_synth_with_policy_file(cli: Cli, synth_args: Args, tmp_path: Path) -> None:
    out = tmp_path / "snap"
    policy = ROOT / "examples" / "placement" / "orders.json"
    r = cli(synth_args(out, "--policy", policy, brokers=22, racks=3, topics=4, per_topic=6))
    assert r.exit_code == 0, r.output
    racks = set(read_snapshot(out).brokers.column("rack").to_pylist())
    assert racks == {"us-west", "us-east", "eu-central"}


def test_synth_refuses_a_policy_with_errors(cli: Cli, synth_args: Args, tmp_path: Path) -> None:
    out = tmp_path / "snap"
    policy = ROOT / "examples" / "broken" / "pasted-from-docs.json"
    r = cli(synth_args(out, "--policy", policy, brokers=9, racks=3, topics=1, per_topic=1))
    assert r.exit_code == 2
    assert "pasted-from-docs.json:4:5" in r.stderr  # and no traceback
    assert not out.exists()


def test_synth_infeasible_size_is_a_usage_error(cli: Cli, synth_args: Args, tmp_path: Path) -> None:
    r = cli(synth_args(tmp_path / "s", brokers=2, racks=3, topics=1, per_topic=1))
    assert r.exit_code == 2
    assert "broker per rack" in r.stderr


def test_from_describe(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "snap"
    describe = ROOT / "tests" / "fixtures" / "describe" / "cluster.txt"
    r = cli(["snapshot", "from-describe", describe, "--inventory", INV, "--out", out])
    assert r.exit_code == 0, r.output
    snap = read_snapshot(out)
    assert snap.partitions.num_rows == 5
    assert snap.topics.column("min_isr").to_pylist() == [None, 2]


def test_from_describe_bad_input_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "d.txt"
    bad.write_text("Topic: t\tPartition: 0\tLeader: 1\tReplicas: 1,x\tIsr: 1\n")
    out = tmp_path / "snap"
    r = cli(["snapshot", "from-describe", bad, "--inventory", INV, "--out", out])
    assert r.exit_code == 2
    assert f"{bad}:1:" in r.stderr  # and no traceback
    assert not out.exists()


def test_export_round_trips_through_the_reassignment_reader(
    cli: Cli, synth_snapshot: Callable[..., Path], tmp_path: Path
) -> None:
    from placement.io.reassignment import read_reassignment

    snap_dir = synth_snapshot(tmp_path / "snap", brokers=12, racks=3, topics=3, per_topic=4)
    out = tmp_path / "current.json"
    r = cli(["snapshot", "export", snap_dir, "--out", out])
    assert r.exit_code == 0, r.output
    rows = read_reassignment(out)
    parts = read_snapshot(snap_dir).partitions.to_pylist()
    got = [(a.topic, a.partition, list(a.replicas), list(a.observers)) for a in rows]
    assert got == sorted((p["topic"], p["partition"], p["replicas"], p["observers"]) for p in parts)
    none = cli(["snapshot", "export", snap_dir, "--topic", "nope"])
    assert none.exit_code == 2


def test_show_lists_the_violations_capped(
    cli: Cli, synth_snapshot: Callable[..., Path], tmp_path: Path
) -> None:
    snap = synth_snapshot(
        tmp_path / "snap", "--violations", "0.5", "--seed", "5", brokers=12, topics=10, per_topic=20
    )
    summary = cli(["snapshot", "show", snap, "--format", "json"])
    assert summary.exit_code == 0, summary.output
    broken = json.loads(summary.stdout)["violations"]
    assert broken > 3
    r = cli(["snapshot", "show", snap, "--violations", "--limit", "3"])
    assert r.exit_code == 0, r.output
    assert "what breaks the policy" in r.stdout
    assert f"… and {broken - 3:,} more (--limit N lists more)" in r.stdout
    listed = cli(["snapshot", "show", snap, "--violations", "--limit", "3", "--format", "json"])
    report = json.loads(listed.stdout)
    assert len(report["violations_listed"]) == 3
    assert report["violations_not_listed"] == broken - 3
    for v in report["violations_listed"]:
        assert v["problems"]
        assert v["replicas"][len(v["replicas"]) - len(v["observers"]) :] == v["observers"]


def test_show_json_matches_its_schema(
    cli: Cli, example_snapshot: Callable[[Path], Path], tmp_path: Path
) -> None:
    """examples/describe.txt: orders-1 holds 3 sync replicas in us-west, orders-2 is offline
    and legacy-events-1 under-replicated."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "schemas" / "snapshot-summary.schema.json").read_text())
    snap = example_snapshot(tmp_path / "snap")
    plain = json.loads(cli(["snapshot", "show", snap, "--format", "json"]).stdout)
    jsonschema.validate(plain, schema)
    assert plain["violations_listed"] is None
    assert (plain["violations"], plain["offline"], plain["under_min_isr"]) == (1, 1, 0)
    assert plain["under_replicated"] == 1
    assert sum(r["brokers"] for r in plain["racks"]) == plain["brokers"] == 11
    full = json.loads(cli(["snapshot", "show", snap, "--violations", "--format", "json"]).stdout)
    jsonschema.validate(full, schema)
    (v,) = full["violations_listed"]
    assert (v["topic"], v["partition"], v["replicas"], v["observers"]) == (
        "orders",
        1,
        [2, 3, 4, 10],
        [10],
    )
    assert v["problems"] == [
        'rack "us-west": 3 sync replicas, the policy wants 2',
        'rack "us-east": 0 sync replicas, the policy wants 1',
    ]
    assert full["violations_not_listed"] == 0
    rows = {ln.rsplit(maxsplit=1)[0].strip(): ln.split()[-1] for ln in _lines(snap, cli)}
    assert rows["partitions breaking their policy"] == "1"
    assert rows["partitions offline"] == "1"
    assert rows["partitions under min ISR"] == "0"
    assert rows["partitions under-replicated"] == "1"


def _lines(snap: Path, cli: Cli) -> list[str]:
    return [ln for ln in cli(["snapshot", "show", snap]).stdout.splitlines() if "partitions " in ln]


def test_show_violations_when_there_are_none(
    cli: Cli, synth_snapshot: Callable[..., Path], tmp_path: Path
) -> None:
    snap = synth_snapshot(tmp_path / "snap")
    r = cli(["snapshot", "show", snap, "--violations"])
    assert r.exit_code == 0, r.output
    assert "no partition breaks its policy" in r.stdout
    bad = cli(["snapshot", "show", snap, "--violations", "--limit", "0"])
    assert bad.exit_code == 2
