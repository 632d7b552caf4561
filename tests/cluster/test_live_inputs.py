"""`assign`, `simulate` and `validate` reading a live cluster (`--bootstrap-server`) give
what they give reading the snapshot `snapshot from-cluster` writes of it: byte for byte
(plans, simulate reports), and the same findings but for the name of their source.

Against the Tansu broker of tests/io/test_from_cluster.py (one broker, 111, no rack: the
inventory gives it a rack and adds two brokers the plans can use), and against a recorded
6-broker, 3-rack cluster (the injected-admin technique of
tests/io/test_from_cluster_translation.py) where a drain moves data."""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from typer.testing import Result

ck = pytest.importorskip("confluent_kafka", reason="the kafka extra is not installed")

IO_TESTS = Path(__file__).resolve().parents[1] / "io"
Cli = Callable[..., Result]
ONE = {"version": 1, "replicas": [{"count": 1, "constraints": {"rack": "dc-one"}}]}
TWO = {"version": 1, "replicas": [{"count": 1, "constraints": {"rack": "dc-two"}}]}
SPREAD = {
    "version": 1,
    "replicas": [{"count": 1, "constraints": {"rack": r}} for r in ("east", "west", "central")],
}


def _io_module(name: str) -> ModuleType:
    """A test module of tests/io, imported by path (test directories are no packages)."""
    key = f"_live_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, IO_TESTS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


broker = _io_module("test_from_cluster").broker  # the Tansu broker fixture, session-scoped
recorded = _io_module("test_from_cluster_translation")


@pytest.fixture(scope="session")
def live(broker: str) -> str:
    """The broker with three topics of one replica each: two meet their policy (or have
    none), one (stretched) breaks it. Its address."""
    from confluent_kafka.admin import AdminClient, NewTopic

    wanted = {
        "payments": (3, {"confluent.placement.constraints": json.dumps(ONE)}),
        "clicks": (2, {"min.insync.replicas": "1"}),
        "stretched": (2, {"confluent.placement.constraints": json.dumps(TWO)}),
    }
    admin = AdminClient({"bootstrap.servers": broker, "log_level": 0})
    made = admin.create_topics([NewTopic(n, p, 1, config=c) for n, (p, c) in wanted.items()])
    for future in made.values():
        future.result(timeout=20)
    import time

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # until the metadata lists every partition
        md = admin.list_topics(timeout=5)
        if all(
            n in md.topics and len(md.topics[n].partitions) == p for n, (p, _) in wanted.items()
        ):
            break
        time.sleep(0.1)
    return broker


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    path = tmp_path / "inventory.json"
    brokers = [(111, "dc-one"), (112, "dc-one"), (113, "dc-two")]
    path.write_text(json.dumps({"brokers": [{"id": i, "rack": r} for i, r in brokers]}))
    return path


def _snapshot(cli: Cli, address: str, out: Path, *extra: str | Path) -> None:
    r = cli(["snapshot", "from-cluster", "--bootstrap-server", address, "--out", out, *extra])
    assert r.exit_code == 0, r.output


def _same_plans(
    cli: Cli, address: str, tmp_path: Path, inventory: Path, *args: str | Path
) -> bytes:
    """`assign --inventory INVENTORY ARGS` of the snapshot `from-cluster --inventory
    INVENTORY` writes and of the live cluster: the same bytes (returned)."""
    snap = tmp_path / "snap"
    _snapshot(cli, address, snap, "--inventory", inventory)
    args = ("--inventory", inventory, *args)
    a = cli(["assign", "--current", snap, *args, "--out", tmp_path / "a.json"])
    b = cli(["assign", "--bootstrap-server", address, *args, "--out", tmp_path / "b.json"])
    assert a.exit_code == 0, a.output
    assert b.exit_code == 0, b.output
    plan = (tmp_path / "a.json").read_bytes()
    assert (tmp_path / "b.json").read_bytes() == plan
    return plan


def _findings(r: Result) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Every finding of a `validate --format json` report with its file left out (the
    one field where a snapshot and its cluster differ), sorted; and the counts."""
    doc = json.loads(r.stdout)
    found = [
        {k: v for k, v in d.items() if k != "file"} for f in doc["files"] for d in f["diagnostics"]
    ]
    counts = {k: doc["summary"][k] for k in ("errors", "warnings")}
    return sorted(found, key=lambda d: json.dumps(d, sort_keys=True)), counts


# -- the Tansu broker ---------------------------------------------------------------------


@pytest.mark.broker
def test_assign_drain_plans_the_same_bytes_live_as_from_the_snapshot(
    cli: Cli, live: str, inventory: Path, tmp_path: Path
) -> None:
    plan = json.loads(_same_plans(cli, live, tmp_path, inventory, "--drain", "111"))
    moved = {(p["topic"], p["partition"]): p["replicas"] for p in plan["partitions"]}
    assert moved[("payments", 0)] == [112]  # its policy: dc-one, where 112 is
    assert moved[("stretched", 0)] == [113]  # dc-two
    assert all(111 not in r for r in moved.values())


@pytest.mark.broker
def test_assign_repair_with_a_policy_change_plans_the_same_bytes(
    cli: Cli, live: str, inventory: Path, tmp_path: Path
) -> None:
    topics = tmp_path / "changes.json"  # payments moves to dc-two
    topics.write_text(json.dumps({"topics": [{"name": "payments", "placement": TWO}]}))
    plan = json.loads(_same_plans(cli, live, tmp_path, inventory, "--topics", topics, "--repair"))
    moved = {(p["topic"], p["partition"]): p["replicas"] for p in plan["partitions"]}
    assert {k: v for k, v in moved.items() if k[0] == "payments"} == {
        ("payments", i): [113] for i in range(3)
    }
    assert moved[("stretched", 1)] == [113]  # repaired: it broke its policy


@pytest.mark.broker
def test_simulate_reports_the_same_bytes_live_as_from_the_snapshot(
    cli: Cli, live: str, inventory: Path, tmp_path: Path
) -> None:
    snap = tmp_path / "snap"
    _snapshot(cli, live, snap, "--inventory", inventory)
    fail = ["--fail-brokers", "111", "--inventory", inventory, "--format", "json"]
    a = cli(["simulate", "--current", snap, *fail])
    b = cli(["simulate", "--bootstrap-server", live, *fail])
    assert a.exit_code == b.exit_code == 1, a.output + b.output  # partitions go offline
    assert b.stdout == a.stdout
    assert json.loads(b.stdout)["totals"]["offline"] >= 7


@pytest.mark.broker
def test_simulate_live_without_a_rack_is_exit_2_naming_the_broker(
    cli: Cli, live: str, tmp_path: Path
) -> None:
    r = cli(["simulate", "--bootstrap-server", live, "--fail-brokers", "111"])
    assert r.exit_code == 2  # Tansu's broker has no rack, and nothing gives it one
    assert "report no rack: 111" in r.stderr and "--inventory" in r.stderr


@pytest.mark.broker
def test_validate_finds_the_same_live_as_in_the_snapshot(
    cli: Cli, live: str, inventory: Path, tmp_path: Path
) -> None:
    snap = tmp_path / "snap"
    _snapshot(cli, live, snap, "--inventory", inventory)
    a = cli(["validate", snap, "--inventory", inventory, "--format", "json"])
    b = cli(["validate", "--bootstrap-server", live, "--inventory", inventory, "--format", "json"])
    assert a.exit_code == b.exit_code == 1, a.output + b.output
    assert _findings(b) == _findings(a)
    doc = json.loads(b.stdout)
    assert [f["path"] for f in doc["files"]] == [f"cluster {live}"]
    broken = [d for d in doc["files"][0]["diagnostics"] if d["code"] == "MRC901"]
    assert {d["message"].split(" ")[0] for d in broken} == {"stretched-0", "stretched-1"}
    assert all(d["file"] == f"cluster {live}" for d in broken)


@pytest.mark.broker
def test_assign_live_without_a_rack_is_exit_2_naming_the_broker(
    cli: Cli, live: str, tmp_path: Path
) -> None:
    r = cli(["assign", "--bootstrap-server", live, "--drain", "111", "--out", tmp_path / "p"])
    assert r.exit_code == 2, r.output
    assert f"{live}: 1 broker(s) report no rack: 111" in r.stderr
    assert not (tmp_path / "p").exists()


def test_assign_live_at_a_closed_port_is_exit_2_naming_the_address(
    cli: Cli, tmp_path: Path
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"
    args = ["--bootstrap-server", address, "--timeout", "10", "--drain", "1"]
    r = cli(["assign", *args, "--out", tmp_path / "p"])
    assert r.exit_code == 2, r.output
    assert f"error: {address}: " in r.stderr and "Connection refused" in r.stderr
    assert not (tmp_path / "p").exists()


# -- a recorded 6-broker, 3-rack cluster --------------------------------------------------


def _three_racks() -> Any:
    """Racks east (1, 2), west (3, 4), central (5, 6); orders spread one replica a rack
    (min ISR 2), metrics without a policy, two replicas; broker 6 holds replicas of both."""
    from confluent_kafka import Node

    part = recorded._partition
    racks = {1: "east", 2: "east", 3: "west", 4: "west", 5: "central", 6: "central"}
    orders = [
        part(p, [1 + p % 2, 3 + p % 2, 5 + p % 2], 1 + p % 2, [1 + p % 2, 3 + p % 2, 5 + p % 2])
        for p in range(6)
    ]
    metrics = [part(0, [6, 1], 6, [6, 1]), part(1, [2, 6], 2, [2]), part(2, [3, 4], 3, [3, 4])]
    return recorded.Recorded(
        [Node(i, f"b{i}", 9092, r) for i, r in racks.items()],
        {"orders": orders, "metrics": metrics},
        {
            "orders": {
                "confluent.placement.constraints": json.dumps(SPREAD),
                "min.insync.replicas": "2",
            },
            "metrics": {"min.insync.replicas": "2"},
        },
    )


@pytest.fixture
def three_racks(monkeypatch: pytest.MonkeyPatch) -> str:
    """The recorded cluster stands in for the client library's AdminClient."""
    from placement.io import cluster

    admin = _three_racks()
    monkeypatch.setattr(cluster, "_client", lambda config, errors: admin)
    return "kafka-1:9092"


def test_a_drain_of_a_recorded_cluster_moves_the_same_bytes_live(
    cli: Cli, three_racks: str, tmp_path: Path
) -> None:
    snap = tmp_path / "snap"
    sizes = tmp_path / "sizes.csv"  # as given to both: the bytes each move copies
    rows = [f"orders,{p},{(p + 1) * 10**9}" for p in range(6)]
    sizes.write_text(
        "\n".join(
            ["topic,partition,size_bytes", *rows, "metrics,0,5000", "metrics,1,7000", "metrics,2,1"]
        )
        + "\n"
    )
    _snapshot(cli, three_racks, snap)
    drain = ["--drain", "6", "--sizes", sizes]
    a = cli(["assign", "--current", snap, *drain, "--out", tmp_path / "a.json"])
    b = cli(["assign", "--bootstrap-server", three_racks, *drain, "--out", tmp_path / "b.json"])
    assert a.exit_code == b.exit_code == 0, a.output + b.output
    plan = (tmp_path / "a.json").read_bytes()
    assert (tmp_path / "b.json").read_bytes() == plan
    assert "bytes to move: 12,000,012,000" in b.stderr  # orders-1, -3, -5, metrics-0, -1
    moved = {(p["topic"], p["partition"]): p["replicas"] for p in json.loads(plan)["partitions"]}
    assert {k for k in moved if k[0] == "orders"} == {("orders", p) for p in (1, 3, 5)}
    assert all(5 in moved[("orders", p)] and 6 not in moved[("orders", p)] for p in (1, 3, 5))
    assert ("metrics", 0) in moved and ("metrics", 1) in moved
    assert all(6 not in r for r in moved.values())


def test_simulate_without_inventory_and_validate_of_a_recorded_cluster_match_its_snapshot(
    cli: Cli, three_racks: str, tmp_path: Path
) -> None:
    snap = tmp_path / "snap"
    _snapshot(cli, three_racks, snap)
    inventory = tmp_path / "inventory.json"  # simulate --current needs one: the same racks
    inventory.write_text(json.dumps({"brokers": _brokers(snap)}))
    fail = ["--fail-rack", "central", "--format", "json"]
    a = cli(["simulate", "--current", snap, "--inventory", inventory, *fail])
    b = cli(["simulate", "--bootstrap-server", three_racks, *fail])
    assert a.exit_code == b.exit_code, a.output + b.output
    assert b.stdout == a.stdout
    totals = json.loads(b.stdout)["totals"]
    assert totals["partitions"] == 9 and totals["available"] < 9
    a = cli(["validate", snap, "--format", "json"])
    b = cli(["validate", "--bootstrap-server", three_racks, "--format", "json"])
    assert a.exit_code == b.exit_code, a.output + b.output
    assert _findings(b) == _findings(a)
    assert _findings(b)[1]["errors"] + _findings(b)[1]["warnings"] > 0


def test_an_invalid_policy_names_the_cluster_and_how_to_see_every_finding(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from placement.io import cluster

    admin = _three_racks()
    admin.configs["orders"]["confluent.placement.constraints"] = '{"version": 1, "replicas": []}'
    monkeypatch.setattr(cluster, "_client", lambda config, errors: admin)
    address = "kafka-1:9092"
    for args in (["assign", "--drain", "6"], ["simulate", "--fail-rack", "central"]):
        r = cli([*args, "--bootstrap-server", address])
        assert r.exit_code == 2, r.output
        assert f"error: cluster {address}: topic orders: its confluent.placement" in r.stderr
        assert f"hint: run `mrc-plan validate --bootstrap-server {address}`" in r.stderr
        assert "mrc-plan-live-" not in r.stderr  # no temporary directory named
    r = cli(["validate", "--bootstrap-server", address, "--format", "json"])
    assert r.exit_code == 1, r.output
    found = json.loads(r.stdout)["files"][0]["diagnostics"]
    empty = [d for d in found if d["code"] == "MRC208"]
    assert empty and empty[0]["file"] == f"cluster {address}"
    assert empty[0]["context"] == "topic orders"


def _brokers(snap: Path) -> list[dict[str, Any]]:
    from placement.io.snapshot import read_snapshot

    return [
        {"id": b["broker_id"], "rack": b["rack"]} for b in read_snapshot(snap).brokers.to_pylist()
    ]
