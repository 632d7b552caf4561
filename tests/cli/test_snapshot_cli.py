"""`mrc-plan snapshot synth|show|from-describe` end to end."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from mrc_plan_cli.main import app
from placement.io.snapshot import read_snapshot

ROOT = Path(__file__).parent.parent.parent
runner = CliRunner()


def test_synth_then_show(tmp_path: Path) -> None:
    out = tmp_path / "snap"
    r = runner.invoke(
        app,
        [
            "snapshot",
            "synth",
            "--brokers",
            "30",
            "--racks",
            "3",
            "--topics",
            "12",
            "--partitions-per-topic",
            "10",
            "--violations",
            "0.1",
            "--seed",
            "9",
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    assert "120 partitions" in r.stderr
    broken = int(r.stderr.split("(")[1].split()[0])
    show = runner.invoke(app, ["snapshot", "show", str(out)])
    assert show.exit_code == 0, show.output
    assert "120" in show.stdout and "rack-01" in show.stdout
    (line,) = [ln for ln in show.stdout.splitlines() if "breaking their policy" in ln]
    assert line.split()[-1] == f"{broken:,}"


def test_synth_with_policy_file(tmp_path: Path) -> None:
    out = tmp_path / "snap"
    r = runner.invoke(
        app,
        [
            "snapshot",
            "synth",
            "--brokers",
            "22",
            "--racks",
            "3",
            "--topics",
            "4",
            "--partitions-per-topic",
            "6",
            "--policy",
            str(ROOT / "examples" / "placement" / "orders.json"),
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    racks = set(read_snapshot(out).brokers.column("rack").to_pylist())
    assert racks == {"us-west", "us-east", "eu-central"}


def test_synth_refuses_a_policy_with_errors(tmp_path: Path) -> None:
    out = tmp_path / "snap"
    r = runner.invoke(
        app,
        [
            "snapshot",
            "synth",
            "--brokers",
            "9",
            "--racks",
            "3",
            "--topics",
            "1",
            "--partitions-per-topic",
            "1",
            "--policy",
            str(ROOT / "examples" / "broken" / "pasted-from-docs.json"),
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 2
    assert "pasted-from-docs.json:4:5" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


def test_synth_infeasible_size_is_a_usage_error(tmp_path: Path) -> None:
    r = runner.invoke(
        app,
        [
            "snapshot",
            "synth",
            "--brokers",
            "2",
            "--racks",
            "3",
            "--topics",
            "1",
            "--partitions-per-topic",
            "1",
            "--out",
            str(tmp_path / "s"),
        ],
    )
    assert r.exit_code == 2
    assert "broker per rack" in r.stderr


def test_from_describe(tmp_path: Path) -> None:
    out = tmp_path / "snap"
    r = runner.invoke(
        app,
        [
            "snapshot",
            "from-describe",
            str(ROOT / "tests" / "fixtures" / "describe" / "cluster.txt"),
            "--inventory",
            str(ROOT / "examples" / "inventory.json"),
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    snap = read_snapshot(out)
    assert snap.partitions.num_rows == 5
    assert snap.topics.column("min_isr").to_pylist() == [None, 2]


def test_from_describe_bad_input_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "d.txt"
    bad.write_text("Topic: t\tPartition: 0\tLeader: 1\tReplicas: 1,x\tIsr: 1\n")
    out = tmp_path / "snap"
    r = runner.invoke(
        app,
        [
            "snapshot",
            "from-describe",
            str(bad),
            "--inventory",
            str(ROOT / "examples" / "inventory.json"),
            "--out",
            str(out),
        ],
    )
    assert r.exit_code == 2
    assert f"{bad}:1:" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


def test_export_round_trips_through_the_reassignment_reader(tmp_path: Path) -> None:
    from placement.io.reassignment import read_reassignment

    snap_dir = tmp_path / "snap"
    runner.invoke(
        app,
        [
            "snapshot",
            "synth",
            "--brokers",
            "12",
            "--racks",
            "3",
            "--topics",
            "3",
            "--partitions-per-topic",
            "4",
            "--out",
            str(snap_dir),
        ],
    )
    out = tmp_path / "current.json"
    r = runner.invoke(app, ["snapshot", "export", str(snap_dir), "--out", str(out)])
    assert r.exit_code == 0, r.output
    rows = read_reassignment(out)
    parts = read_snapshot(snap_dir).partitions.to_pylist()
    got = [(a.topic, a.partition, list(a.replicas), list(a.observers)) for a in rows]
    assert got == sorted((p["topic"], p["partition"], p["replicas"], p["observers"]) for p in parts)
    none = runner.invoke(app, ["snapshot", "export", str(snap_dir), "--topic", "nope"])
    assert none.exit_code == 2
