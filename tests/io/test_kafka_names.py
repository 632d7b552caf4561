"""Kafka's own rules on names, ids and numbers, in every reader, with the position.

Each case used to be an exit-101 crash (OverflowError, ValueError, ValidationError,
csv.Error, UnicodeEncodeError) or a silent acceptance.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from placement.errors import InputError
from placement.io.convert import read_sizes
from placement.io.describe import parse_describe
from placement.io.inventory import load_inventory
from placement.model.kafka import parse_ascii_int, topic_name_error
from placement.plan.topics import read_topics

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INV = EXAMPLES / "inventory.json"
HEAD = "Topic: t\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n"

Cli = Callable[..., Result]


def _partition(replicas: str = "1,2,3", partition: str = "0", leader: str = "1") -> str:
    return f"\tTopic: t\tPartition: {partition}\tLeader: {leader}\tReplicas: {replicas}\tIsr: 1\n"


# -- the shared validators ---------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["", ".", "..", "a" * 250, "a/b", "a b", "orders\n::error::pwn", "zürich", "a:b"]
)
def test_illegal_topic_names(name: str) -> None:
    assert topic_name_error(name) is not None


@pytest.mark.parametrize("name", ["a", "orders", "a" * 249, "_confluent-metrics", "x.y_z-1", "..."])
def test_legal_topic_names(name: str) -> None:
    assert topic_name_error(name) is None


@pytest.mark.parametrize("text", ["²", "٣", "1_000", "+1", "0x10", "2147483648", "-1", "1.0", ""])
def test_ascii_int32_only(text: str) -> None:
    assert parse_ascii_int(text) is None


# -- describe ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        (HEAD + _partition(partition="²"), "Partition: '²' is not an integer", 2, 22),
        (HEAD + _partition(partition="\u0661"), "Partition: '\u0661' is not an integer", 2, 22),
        (HEAD + _partition(partition=str(2**63)), "out of range", 2, 22),
        (HEAD + _partition(partition=str(2**31)), "out of range", 2, 22),
        (HEAD + _partition(leader="²"), "Leader: '²' is not an integer", 2, 32),
        (HEAD.replace("PartitionCount: 1", "PartitionCount: ²"), "PartitionCount", 1, 26),
        (HEAD + _partition(replicas="1,2,²"), "broker id", 2, 44),
        (HEAD + _partition(replicas=f"1,2,{2**31}"), "out of range", 2, 44),
        (HEAD + _partition(replicas=f"1,2,{2**63}"), "out of range", 2, 44),
        (HEAD + _partition(replicas=""), "Replicas is empty", 2, 45),
        (HEAD + _partition(replicas="1,2,1"), "broker 1 is listed twice", 2, 44),
        (HEAD + HEAD, "topic t is described twice (first on line 1)", 2, 8),
        (
            HEAD + _partition(replicas="1,2"),
            "has 2 replicas but topic t has ReplicationFactor 3",
            2,
            1,
        ),
        (HEAD.replace("Topic: t", "Topic: a/b"), "Kafka allows only", 1, 8),
        (HEAD.replace("Topic: t", "Topic: .."), "not a legal topic name", 1, 8),
    ],
)
def test_describe_refuses_with_line_and_column(
    text: str, message: str, line: int, column: int
) -> None:
    with pytest.raises(InputError) as err:
        parse_describe(text, "d.txt")
    assert message in err.value.message
    assert (err.value.path, err.value.line, err.value.column) == ("d.txt", line, column)


def test_replication_factor_mismatch_is_refused_unless_a_reassignment_is_running() -> None:
    """During a reassignment the replica list is longer than ReplicationFactor: accepted."""
    moving = (
        "\tTopic: t\tPartition: 1\tLeader: -1\tReplicas: 1,2,3,4\tIsr: 1\t"
        "AddingReplicas: 4\tRemovingReplicas: 3\n"
    )
    d = parse_describe(HEAD + _partition(leader="none") + moving, "d.txt")
    assert [p.leader for p in d.partitions] == [None, None]
    with pytest.raises(InputError, match="has 4 replicas") as err:
        parse_describe(HEAD + moving.replace("\tAddingReplicas: 4\tRemovingReplicas: 3", ""), "d")
    assert err.value.line == 2


@pytest.mark.parametrize(
    "partition_line",
    [_partition(replicas=""), _partition(leader="²"), _partition(partition=str(2**63))],
)
def test_from_describe_refuses_and_writes_no_snapshot(
    cli: Cli, tmp_path: Path, partition_line: str
) -> None:
    describe = tmp_path / "describe.txt"
    describe.write_text(HEAD + partition_line)
    out = tmp_path / "snap"
    result = cli(["snapshot", "from-describe", describe, "--inventory", INV, "--out", out])
    assert result.exit_code == 2, result.output
    assert f"error: {describe}:2:" in result.stderr
    assert not out.exists()


# -- topics file ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", [".", "..", "a" * 250, "orders/eu", "orders eu", "zürich"])
def test_topics_file_refuses_illegal_names_at_the_name(tmp_path: Path, name: str) -> None:
    path = tmp_path / "topics.json"
    doc = {"topics": [{"name": name, "partitions": 1, "placement": {"version": 2}}]}
    path.write_text(json.dumps(doc, indent=2))
    with pytest.raises(InputError) as err:
        read_topics(path)
    assert err.value.line == 4  # the "name" member
    assert "topic name" in err.value.message


# -- sizes CSV -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row", "message", "column"),
    [
        (f"orders,0,{2**63}", "size_bytes", 10),
        ("orders,0,1_000", "size_bytes", 10),
        ("orders,²,5", "partition", 8),
        (f"orders,{2**31},5", "partition", 8),
        ("or/ders,0,5", "Kafka allows only", 1),
    ],
)
def test_sizes_csv_refuses_with_position(
    tmp_path: Path, row: str, message: str, column: int
) -> None:
    path = tmp_path / "sizes.csv"
    path.write_text(f"topic,partition,size_bytes\n{row}\n")
    with pytest.raises(InputError) as err:
        read_sizes(path)
    assert message in err.value.message
    assert (err.value.line, err.value.column) == (2, column)


def test_sizes_csv_refuses_a_partition_listed_twice(tmp_path: Path) -> None:
    path = tmp_path / "sizes.csv"
    path.write_text("topic,partition,size_bytes\norders,0,5\norders,0,7\n")
    with pytest.raises(InputError, match="listed twice") as err:
        read_sizes(path)
    assert err.value.line == 3


def test_size_overflow_is_exit_2_via_the_cli(cli: Cli, tmp_path: Path) -> None:
    sizes = tmp_path / "sizes.csv"
    sizes.write_text(f"topic,partition,size_bytes\norders,0,{2**64}\n")
    out = tmp_path / "snap"
    result = cli(
        [
            "snapshot",
            "from-describe",
            EXAMPLES / "describe.txt",
            "--inventory",
            INV,
            "--sizes",
            sizes,
            "--out",
            out,
        ]
    )
    assert result.exit_code == 2, result.output
    assert f"error: {sizes}:2:10:" in result.stderr
    assert not out.exists()


# -- inventories ---------------------------------------------------------------------------


def test_inventory_csv_with_a_bare_carriage_return(cli: Cli, tmp_path: Path) -> None:
    inv = tmp_path / "inv.csv"
    inv.write_bytes(b"id,rack\n1,us-west\r2,us-east\n")
    result = cli(["validate", "--inventory", inv, EXAMPLES / "placement"])
    assert result.exit_code == 2, result.output
    assert f"error: {inv}:2:10: a carriage return" in result.stderr


@pytest.mark.parametrize(
    ("content", "message", "line"),
    [
        ("broker.id=1\nbroker.rack=\\ud800\n", "lone UTF-16 surrogate", 2),
        (f"broker.id={2**40}\nbroker.rack=a\n", "must be an integer", 1),
        ("broker.id=\u0661\nbroker.rack=a\n", "must be an integer", 1),
    ],
)
def test_inventory_properties_refused_with_position(
    tmp_path: Path, content: str, message: str, line: int
) -> None:
    (tmp_path / "server.properties").write_text(content)
    with pytest.raises(InputError, match=message) as err:
        load_inventory(tmp_path)
    assert err.value.line == line


def test_inventory_capacity_beyond_int64_is_exit_2(cli: Cli, tmp_path: Path) -> None:
    inv = tmp_path / "inv.json"
    inv.write_text(json.dumps({"brokers": [{"id": 1, "rack": "a", "capacity_bytes": 2**64}]}))
    out = tmp_path / "snap"
    result = cli(
        ["snapshot", "from-describe", EXAMPLES / "describe.txt", "--inventory", inv, "--out", out]
    )
    assert result.exit_code == 2, result.output
    assert f"error: {inv}:1:" in result.stderr
