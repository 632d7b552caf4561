"""`assign` names the current leader as the sending broker of a move, as Kafka's new
followers fetch from it: in the rack-to-rack figures and in the batches' summary.json."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

Cli = Callable[..., Result]

# broker 2 leads, broker 1 is the first (preferred) replica: the move's bytes leave rack b
DESCRIBE = (
    "Topic: pay\tPartitionCount: 1\tReplicationFactor: 3\tConfigs:\n"
    "\tTopic: pay\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 1,2,3\n"
)
RACKS = {1: "a", 2: "b", 3: "c", 4: "c", 5: "a", 6: "b"}


def _inputs(tmp_path: Path) -> list[str | Path]:
    describe = tmp_path / "describe.txt"
    describe.write_text(DESCRIBE)
    inventory = tmp_path / "inventory.json"
    brokers = [{"id": b, "rack": r} for b, r in RACKS.items()]
    inventory.write_text(json.dumps({"brokers": brokers}))
    sizes = tmp_path / "sizes.csv"
    sizes.write_text("topic,partition,size_bytes\npay,0,1000\n")
    return ["--current", describe, "--inventory", inventory, "--sizes", sizes, "--drain", "3"]


def test_rack_to_rack_starts_at_the_leaders_rack(cli: Cli, tmp_path: Path) -> None:
    r = cli(["assign", *_inputs(tmp_path), "--out", tmp_path / "p.json", "--format", "json"])
    assert r.exit_code == 0, r.output
    flows = json.loads(r.stdout)["rack_to_rack"]
    assert flows == [{"from_rack": "b", "to_rack": "c", "replicas": 1, "bytes": 1000}]


def test_the_batches_send_from_the_leader(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "batches"
    caps = ["--out-dir", out, "--batch-size", "1", "--throttle", "10MB"]
    r = cli(["assign", *_inputs(tmp_path), *caps, "--format", "json"])
    assert r.exit_code == 0, r.output
    (batch,) = json.loads((out / "summary.json").read_text())["batches"]
    assert batch["senders"] == [{"broker": 2, "bytes": 1000}]
