"""A topic's own `min.insync.replicas` governs the checks of its policy, as Kafka takes a
topic's config over the broker's; `--min-insync-replicas` stands in only for topics that
set none (describe output, snapshots and topics files alike)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

Cli = Callable[..., Result]
POLICY = (
    '{"version":1,"replicas":[{"count":2,"constraints":{"rack":"a"}},'
    '{"count":1,"constraints":{"rack":"b"}}]}'
)
DESCRIBE = (
    "Topic: strict\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: "
    f"min.insync.replicas=4,confluent.placement.constraints={POLICY}\n"
    "\tTopic: strict\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n"
    "Topic: loose\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: "
    f"confluent.placement.constraints={POLICY}\n"
    "\tTopic: loose\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n"
)


def _codes(out: str) -> dict[str, list[str]]:
    doc = json.loads(out)
    found: dict[str, list[str]] = {}
    for f in doc["files"]:
        for d in f["diagnostics"]:
            found.setdefault(d.get("context") or "", []).append(d["code"])
    return found


def test_a_topics_own_min_isr_wins_over_the_option_in_describe_output(
    cli: Cli, tmp_path: Path
) -> None:
    describe = tmp_path / "describe.txt"
    describe.write_text(DESCRIBE)
    r = cli(["validate", describe, "--min-insync-replicas", "2", "--format", "json"])
    codes = _codes(r.stdout)
    assert "MRC501" in codes.get("topic strict", [])  # its own 4 > 3 sync replicas
    assert "MRC501" not in codes.get("topic loose", [])  # the option's 2 <= 3


def test_a_topics_file_entrys_min_isr_wins_over_the_option(cli: Cli, tmp_path: Path) -> None:
    topics = tmp_path / "topics.json"
    entries = [
        {"name": "strict", "partitions": 1, "placement": json.loads(POLICY), "min_isr": 4},
        {"name": "loose", "partitions": 1, "placement": json.loads(POLICY)},
    ]
    topics.write_text(json.dumps({"topics": entries}))
    r = cli(["validate", topics, "--min-insync-replicas", "2", "--format", "json"])
    codes = _codes(r.stdout)
    assert "MRC501" in codes.get("topic strict", [])
    assert "MRC501" not in codes.get("topic loose", [])
