"""`snapshot show`: preferred leaders per broker, over the brokers holding replicas."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from placement.io.snapshot import read_snapshot
from placement.snapshot.facts import summarize

Cli = Callable[..., Result]

# brokers 1-3 lead two partitions each and 4 leads three; brokers 5 and 6 (listed in the
# inventory, e.g. just added) hold nothing yet
DESCRIBE = """\
Topic: ledger\tPartitionCount: 9\tReplicationFactor: 2\tConfigs: min.insync.replicas=1
\tTopic: ledger\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2
\tTopic: ledger\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2,3
\tTopic: ledger\tPartition: 2\tLeader: 3\tReplicas: 3,4\tIsr: 3,4
\tTopic: ledger\tPartition: 3\tLeader: 4\tReplicas: 4,1\tIsr: 4,1
\tTopic: ledger\tPartition: 4\tLeader: 1\tReplicas: 1,3\tIsr: 1,3
\tTopic: ledger\tPartition: 5\tLeader: 2\tReplicas: 2,4\tIsr: 2,4
\tTopic: ledger\tPartition: 6\tLeader: 3\tReplicas: 3,1\tIsr: 3,1
\tTopic: ledger\tPartition: 7\tLeader: 4\tReplicas: 4,2\tIsr: 4,2
\tTopic: ledger\tPartition: 8\tLeader: 4\tReplicas: 4,3\tIsr: 4,3
"""


def _snapshot(cli: Cli, tmp_path: Path, describe: str, brokers: int) -> Path:
    (tmp_path / "d.txt").write_text(describe)
    inv = {"brokers": [{"id": b, "rack": "ra" if b % 2 else "rb"} for b in range(1, brokers + 1)]}
    (tmp_path / "inv.json").write_text(json.dumps(inv))
    out = tmp_path / "snap"
    r = cli(
        [
            "snapshot",
            "from-describe",
            tmp_path / "d.txt",
            "--inventory",
            tmp_path / "inv.json",
            "--out",
            out,
        ]
    )
    assert r.exit_code == 0, r.stderr
    return out


def test_every_broker_leading_two_gives_a_minimum_of_two(cli: Cli, tmp_path: Path) -> None:
    snap = _snapshot(cli, tmp_path, DESCRIBE, brokers=6)
    assert summarize(read_snapshot(snap)).leaders_per_broker == (2, 3)
    doc = json.loads(cli(["snapshot", "show", snap, "--format", "json"]).stdout)
    assert (doc["leaders_per_broker_min"], doc["leaders_per_broker_max"]) == (2, 3)
    text = cli(["snapshot", "show", snap]).stdout
    assert "min 2, max 3" in text


def test_a_broker_holding_replicas_and_leading_none_gives_zero(cli: Cli, tmp_path: Path) -> None:
    follower_only = DESCRIBE.replace("PartitionCount: 9", "PartitionCount: 10") + (
        "\tTopic: ledger\tPartition: 9\tLeader: 1\tReplicas: 1,5\tIsr: 1,5\n"
    )
    snap = _snapshot(cli, tmp_path, follower_only, brokers=6)
    assert summarize(read_snapshot(snap)).leaders_per_broker == (0, 3)
