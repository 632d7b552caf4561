"""`kafka-topics --describe` output: the seed's lines and the tab/space variants."""

from __future__ import annotations

from pathlib import Path

import pytest

from placement.errors import InputError
from placement.io.describe import parse_describe, read_describe
from placement.model.policy import PlacementPolicy

FIXTURES = Path(__file__).parent.parent / "fixtures" / "describe"


def test_seed_lines_from_confluents_page() -> None:
    d = read_describe(FIXTURES / "seed-test-observers.txt")
    topic = d.topics["test-observers"]
    assert (topic.partition_count, topic.replication_factor) == (3, 5)
    assert topic.configs["segment.bytes"].value == "1073741824"
    policy = PlacementPolicy.model_validate_json(topic.placement.value)  # type: ignore[union-attr]
    assert policy.per_rack() == {"us-west": (3, 0), "us-east": (0, 2)}
    p1 = d.partitions[1]
    assert (p1.partition, p1.leader, p1.replicas, p1.isr, p1.offline, p1.observers) == (
        1,
        2,
        (2, 3, 1, 5, 4),
        (2, 3, 1),
        (),
        (5, 4),
    )
    assert p1.assignment().sync == (2, 3, 1)


def test_tabs_topic_ids_configs_with_commas_and_several_topics() -> None:
    d = read_describe(FIXTURES / "cluster.txt")
    assert set(d.topics) == {"orders", "legacy-events"}
    orders = d.topics["orders"]
    assert orders.min_isr == 2
    assert orders.configs["cleanup.policy"].value == "compact,delete"
    assert orders.configs["segment.bytes"].value == "1073741824"
    assert orders.placement is not None
    assert PlacementPolicy.model_validate_json(orders.placement.value).sync_count == 3
    text = (FIXTURES / "cluster.txt").read_text().splitlines()[0]
    assert text[orders.placement.column - 1 :].startswith('{"version":2')
    offline = next(p for p in d.partitions if p.topic == "orders" and p.partition == 2)
    assert offline.leader is None and offline.isr == () and offline.offline == (3, 4, 7)
    legacy = d.topics["legacy-events"]  # old format: no space after the colon
    assert (legacy.partition_count, legacy.replication_factor, legacy.placement) == (2, 3, None)
    assert [p.replicas for p in d.partitions if p.topic == "legacy-events"] == [
        (5, 6, 7),
        (6, 7, 8),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Topic: t\tPartition: x\tLeader: 1\tReplicas: 1\tIsr: 1\n", "not an integer"),
        ("Topic: t\tPartition: 0\tLeader: 1\tReplicas: 1,a\tIsr: 1\n", "broker ids"),
        (
            "Topic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1\tObservers: 1\n",
            "not the last",
        ),
        (
            "Topic: t\tPartition: 0\tLeader: 1\tReplicas: 1\n"
            "Topic: t\tPartition: 0\tLeader: 1\tReplicas: 1\n",
            "twice",
        ),
        ("nothing here\n", "no 'Topic:'"),
    ],
)
def test_bad_describe_output_names_the_line(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as err:
        parse_describe(text, "d.txt")
    assert err.value.path == "d.txt"


@pytest.mark.parametrize("brk", [b"\r", b"\x0b", b"\x1c", "\u2028".encode()])
def test_validate_positions_with_odd_line_ends(brk: bytes) -> None:
    """The describe reader ends lines where str.splitlines() does; validate's positions
    follow it (a bare CR before a topic was an IndexError, exit 101)."""
    from placement.rules.base import CheckContext
    from placement.rules.validate import validate_describe_bytes

    data = (
        brk + b"Topic:t PartitionCount:3 ReplicationFactor:5 "
        b"Configs:confluent.placement.constraints=e"
    )
    diags = validate_describe_bytes(data, "d.txt", CheckContext())
    assert [d.code for d in diags] == ["MRC101"]
    assert all(d.line >= 1 and d.column >= 1 for d in diags)


@pytest.mark.parametrize(
    ("rack", "json_rack"),
    [('us-"west', r"us-\"west"), ("us-west\\", "us-west\\\\"), ('a\\"b', r"a\\\"b")],
)
def test_a_quote_or_backslash_escaped_in_a_config_value_stays_inside_its_string(
    rack: str, json_rack: str
) -> None:
    """A JSON string's escaped quote does not end it, and an escaped backslash before the
    closing quote does not hide that quote: the value ends at its closing brace, and the
    next key is read apart."""
    import json

    from placement.io.describe import _split_configs

    policy = '{"version":2,"replicas":[{"count":1,"constraints":{"rack":"' + json_rack + '"}}]}'
    configs = _split_configs(f"confluent.placement.constraints={policy},segment.bytes=1", 1, 1)
    value = configs["confluent.placement.constraints"].value
    assert value == policy
    assert json.loads(value)["replicas"][0]["constraints"]["rack"] == rack
    assert configs["segment.bytes"].value == "1"


JUNK = "ghs_SECRET" + "A" * 100_000
P = "Topic: t\tPartition: 0\t"


@pytest.mark.parametrize(
    "text",
    [
        f"{P}Leader: 1\tReplicas: 1,{JUNK}\tIsr: 1\n",
        f"{P}Leader: 1\tReplicas: 1,1,{JUNK}\tIsr: 1\n",
        f"{P}Leader: {JUNK}\tReplicas: 1\tIsr: 1\n",
        f"Topic: t\tPartition: {JUNK}\tLeader: 1\tReplicas: 1\tIsr: 1\n",
        f"Topic: t\tPartitionCount: {JUNK}\tReplicationFactor: 1\n",
        f"Topic: {JUNK}!\tPartitionCount: 1\tReplicationFactor: 1\n",
    ],
    ids=["replica", "listed-twice", "leader", "partition", "count", "topic"],
)
def test_a_bad_value_is_quoted_16_characters_at_most(text: str) -> None:
    """Output with a `Topic:` label is read as describe output; a value at fault is
    named by a few characters at most (the file may be something else entirely)."""
    with pytest.raises(InputError) as info:
        parse_describe(text, "d.txt")
    shown = info.value.message + info.value.hint
    assert "A" * 16 not in shown
    assert len(info.value.message) < 160


def test_a_long_number_is_out_of_range() -> None:
    with pytest.raises(InputError) as info:
        parse_describe(f"{P}Leader: {'9' * 40}\tReplicas: 1\tIsr: 1\n", "d.txt")
    assert "40 digits is out of range" in info.value.message
