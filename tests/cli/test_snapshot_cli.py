"""`mrc-plan snapshot synth|show|from-describe` end to end."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

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
