"""`kafka-replica-status` output in its three forms (--verbose, the default columns, --json
as the tool nests it, and flat replica objects), Kafka's rules on its values, and every
problem named by line and column."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from placement.errors import InputError
from placement.io.replicastatus import (
    ReplicaStatus,
    parse_replica_status,
    read_replica_status,
    sniff,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "replica-status"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "replica-status.json"

BLOCK = """Topic: orders
Partition: 0
Replica: 1
IsLeader: true
IsObserver: false
IsIsrEligible: true
IsInIsr: true
IsCaughtUp: true
LastCaughtUpLagMs: 0
LastFetchLagMs: 0
LogStartOffset: 0
LogEndOffset: 10000
"""


def _replica(**values: object) -> dict[str, object]:
    base: dict[str, object] = {
        "Replica": 1,
        "IsLeader": True,
        "IsObserver": False,
        "IsIsrEligible": True,
        "IsInIsr": True,
        "IsCaughtUp": True,
        "LastCaughtUpLagMs": 0,
        "LastFetchLagMs": 0,
        "LogStartOffset": 0,
        "LogEndOffset": 10000,
    }
    return base | values


def _nested(*replicas: dict[str, object], topic: str = "orders") -> str:
    doc = [{"Topic": topic, "Partitions": [{"Partition": 0, "Replicas": list(replicas)}]}]
    return json.dumps(doc, indent=2)


def test_every_form_of_the_example_cluster_reads_the_same() -> None:
    forms = {
        "json": read_replica_status(str(EXAMPLE)),
        "verbose": read_replica_status(str(FIXTURES / "cluster-verbose.txt")),
        "compact": read_replica_status(str(FIXTURES / "cluster-compact.txt")),
        "flat json": read_replica_status(str(FIXTURES / "cluster-flat.json")),
    }
    assert [f.form for f in forms.values()] == ["json", "verbose", "compact", "json"]
    first = forms["json"].partitions
    for name, read in forms.items():
        assert read.partitions == first, name
    # examples/describe.txt's partitions with a leader (orders-2 has none: absent)
    assert sorted(first) == [
        ("legacy-events", 0),
        ("legacy-events", 1),
        ("orders", 0),
        ("orders", 1),
    ]
    assert forms["json"].replicas == 14
    observer = first[("orders", 1)][10]
    assert observer == ReplicaStatus(
        10, False, True, False, False, False, 1870, 412, 960000, 983102
    )
    leaders = [b for b, s in first[("orders", 1)].items() if s.is_leader]
    assert leaders == [2]


def test_the_seed_shape_reads_in_both_forms() -> None:
    verbose = read_replica_status(str(FIXTURES / "seed-verbose.txt"))
    nested = read_replica_status(str(FIXTURES / "seed.json"))
    assert verbose.partitions == nested.partitions
    replicas = verbose.partitions[("testing-observers", 0)]
    assert sorted(replicas) == [1, 2, 3, 4, 5]
    assert [b for b, s in replicas.items() if s.is_observer] == [4, 5]


def test_sniffing() -> None:
    assert sniff("\n  [\n") == "json"
    assert sniff(BLOCK) == "verbose"
    assert sniff("Topic Partition Replica IsLeader\n") == "compact"
    assert sniff("Querying\n") is None


def test_lower_case_keys_as_the_documentation_spells_them() -> None:
    lower = {k[0].lower() + k[1:]: v for k, v in _replica().items()}
    read = parse_replica_status(_nested(lower))
    assert read.partitions[("orders", 0)][1].log_end_offset == 10000


def test_unknown_offsets_and_lags_are_kept_as_negative() -> None:
    """-1: the leader has no fetch from the replica; a lag below -1: the tool subtracted
    from 0 (no leader). Both read as unknown downstream."""
    text = _nested(
        _replica(),
        _replica(
            Replica=2,
            IsLeader=False,
            LastCaughtUpLagMs=-1,
            LastFetchLagMs=-1693000000000,
            LogStartOffset=-1,
            LogEndOffset=-1,
        ),
    )
    s = parse_replica_status(text).partitions[("orders", 0)][2]
    assert (s.last_caught_up_lag_ms, s.log_end_offset) == (-1, -1)
    assert s.last_fetch_lag_ms == -1693000000000


def _error(text: str) -> InputError:
    with pytest.raises(InputError) as info:
        parse_replica_status(text, "rs")
    return info.value


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (BLOCK.replace("Topic: orders", "Topic: ord ers"), (1, 8), "holds ' '"),
        (BLOCK.replace("IsLeader: true", "IsLeader: yes"), (4, 11), "true or false"),
        (BLOCK.replace("Partition: 0", "Partition: -1"), (2, 12), "out of range"),
        (BLOCK.replace("Replica: 1", "Replica: 2147483648"), (3, 10), "out of range"),
        (BLOCK.replace("LogEndOffset: 10000", "LogEndOffset: -2"), (12, 15), "out of range"),
        (BLOCK.replace("LogEndOffset: 10000", "LogEndOffset: 1e4"), (12, 15), "not an integer"),
        (BLOCK.replace("IsCaughtUp: true\n", ""), (12, 1), "lacks IsCaughtUp"),
        (BLOCK + "Replica: 2\n", (13, 1), "appears twice"),
        (BLOCK.replace("IsInIsr", "InIsr"), (7, 1), "unknown field 'InIsr'"),
        (BLOCK + "\n" + BLOCK, (16, 10), "replica 1 is listed twice"),
        (
            BLOCK + "\n" + BLOCK.replace("Replica: 1", "Replica: 2"),
            (17, 11),
            "a second leader (broker 2)",
        ),
        ("./bin/kafka-replica-status.sh --verbose\n" + BLOCK, (1, 1), "not kafka-replica"),
        ("Topic-Partition-Replica: orders-0-1\nMode: LEADER\n", (1, 1), "unexpected field"),
    ],
)
def test_text_problems_are_named_by_line_and_column(
    text: str, where: tuple[int, int], message: str
) -> None:
    e = _error(text)
    assert (e.line, e.column) == where, e.message
    assert message in e.message


def test_compact_problems() -> None:
    compact = (FIXTURES / "cluster-compact.txt").read_text().splitlines(keepends=True)
    bad = [*compact[:2], compact[2].replace(" 6 ", " x ", 1), *compact[3:]]
    e = _error("".join(bad))
    assert (e.line, e.column) == (
        3,
        25,
    ) and "Replica (broker id): 'x' is not an integer" in e.message
    e = _error("".join([*compact[:2], compact[2].replace("55210", "55210 9")]))
    assert e.line == 3 and "expected 12 columns, found 13" in e.message
    e = _error("Topic Partition Replica Mode IsCaughtUp IsInSync\n")
    assert "older kafka-replica-status" in e.hint


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (_nested(_replica(LogEndOffset=-2)), (18, 29), "LogEndOffset must be an integer"),
        (_nested(_replica(IsLeader="true")), (10, 25), "IsLeader must be true or false"),
        (_nested(_replica(), topic=".."), (3, 14), "'..' is not a legal topic name"),
        (_nested(_replica(Mode="LEADER")), (19, 13), "unknown key 'Mode'"),
        (_nested(_replica(isLeader=False)), (19, 13), "IsLeader appears twice"),
        (_nested(_replica(), _replica()), (21, 24), "replica 1 is listed twice"),
        (_nested(_replica(), _replica(Replica=2)), (22, 25), "a second leader"),
        ('{"replicas": []}', (1, 1), "a JSON object; kafka-replica-status --json prints an array"),
        ('[{"Topic": "a", "Partitions": []},]', (1, 34), "trailing comma"),
        ('[{"Topic": "a", "Topic": "b"}]', (1, 17), 'duplicate key "Topic"'),
        ("[1]", (1, 2), "expected an object"),
    ],
)
def test_json_problems_are_named_by_line_and_column(
    text: str, where: tuple[int, int], message: str
) -> None:
    e = _error(text)
    assert (e.line, e.column) == where, e.message
    assert message in e.message.lower() or message in e.message


def test_flat_replica_objects_need_topic_and_partition() -> None:
    flat = json.loads((FIXTURES / "cluster-flat.json").read_text())
    del flat[3]["partition"]
    e = _error(json.dumps(flat, indent=2))
    assert "lacks Partition" in e.message and (e.line, e.column) == (44, 3)


def test_empty_outputs() -> None:
    assert "empty" in _error(" \n").message
    assert parse_replica_status("[]").partitions == {}  # what the tool prints for no replica


def test_oversized_output_is_refused_before_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MRC_PLAN_MAX_REPLICA_STATUS_BYTES", "1000")
    with pytest.raises(InputError) as info:
        read_replica_status(str(EXAMPLE))
    assert "too large" in info.value.message
    assert "MRC_PLAN_MAX_REPLICA_STATUS_BYTES" in info.value.hint


def test_a_lone_surrogate_is_an_input_error_not_a_crash() -> None:
    """Found by the fuzzer: the standard library decodes "\\ud800", the positioned parser
    refuses it, and its error escaped as a JsonSyntaxError (exit 101)."""
    flat = json.loads((FIXTURES / "cluster-flat.json").read_text())
    flat[0]["topic"] = "PLACEHOLDER"
    text = json.dumps(flat, indent=2).replace("PLACEHOLDER", "\\ud800")
    e = _error(text)
    assert e.line is not None and e.line > 1
    assert "surrogate" in e.message
