"""Reassignment JSON: Kafka's rejections with positions, and deterministic output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from placement.errors import InputError
from placement.io.reassignment import parse_reassignment, read_reassignment, render_reassignment
from placement.model.assignment import PartitionAssignment

KAFKA_OUTPUT = """\
Current partition replica assignment

{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2,3,9],"log_dirs":["any","any","any","any"]},{"topic":"orders","partition":1,"replicas":[2,3,1,10],"log_dirs":["any","any","any","any"]}]}

Save this to use as the --reassignment-json-file option during rollback
Proposed partition reassignment configuration

{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[4,2,3,9],"log_dirs":["any","any","any","any"]}]}
"""


def test_reads_the_current_block_of_kafka_reassign_partitions_output() -> None:
    got = parse_reassignment(KAFKA_OUTPUT)
    assert [(a.topic, a.partition, a.replicas) for a in got] == [
        ("orders", 0, (1, 2, 3, 9)),
        ("orders", 1, (2, 3, 1, 10)),
    ]


def test_observers_are_a_suffix_and_sync_is_the_rest() -> None:
    doc = {
        "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2, 3, 4], "observers": [4]}]
    }
    (a,) = parse_reassignment(json.dumps(doc))
    assert a.sync == (1, 2, 3) and a.observers == (4,) and a.leader == 1


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        ('{"version":1,"partitions":[]}', "empty", 1, 27),
        (
            '{"version":2,"partitions":[{"topic":"t","partition":0,"replicas":[1]}]}',
            "version",
            1,
            12,
        ),
        ('{"partitions":[\n{"topic":"t","partition":0,"replicas":[]}]}', "empty replica", 2, 39),
        ('{"partitions":[\n{"topic":"t","partition":0,"replicas":[1,2,1]}]}', "twice", 2, 39),
        (
            '{"partitions":[\n{"topic":"t","partition":0,"replicas":[1]},\n'
            '{"topic":"t","partition":0,"replicas":[2]}]}',
            "listed twice",
            3,
            1,
        ),
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[1,"2"]}]}',
            "not a broker id",
            1,
            57,
        ),
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}',
            "log_dirs",
            1,
            71,
        ),
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[1,2,3],"observers":[2]}]}',
            "not the last",
            1,
            74,
        ),
        (
            '{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"leader":1}]}',
            "unknown key",
            1,
            60,
        ),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1,2]},]}', "trailing comma", 1, 60),
        ('{"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}', "end of file", 1, 60),
    ],
)
def test_kafka_rejections_are_positioned(text: str, message: str, line: int, column: int) -> None:
    with pytest.raises(InputError) as err:
        parse_reassignment(text, "plan.json")
    assert message in err.value.message
    assert (err.value.line, err.value.column) == (line, column)
    assert err.value.message.startswith(f"plan.json:{line}:{column}:")


def test_error_in_kafka_output_block_points_into_the_whole_file(tmp_path: Path) -> None:
    bad = KAFKA_OUTPUT.replace('"replicas":[2,3,1,10]', '"replicas":[2,3,2,10]')
    path = tmp_path / "current.txt"
    path.write_text(bad)
    with pytest.raises(InputError) as err:
        read_reassignment(path)
    assert err.value.line == 3
    line = bad.splitlines()[2]
    assert line[err.value.column - 1 :].startswith("[2,3,2,10]")


def test_render_is_sorted_deterministic_and_kafka_shaped() -> None:
    rows = [
        PartitionAssignment("b", 1, (3, 1, 2, 4), (4,)),
        PartitionAssignment("a", 10, (1,)),
        PartitionAssignment("a", 2, (2, 1)),
    ]
    text = render_reassignment(rows)
    assert text == render_reassignment(list(reversed(rows)))
    doc = json.loads(text)
    assert doc["version"] == 1
    assert [(p["topic"], p["partition"]) for p in doc["partitions"]] == [
        ("a", 2),
        ("a", 10),
        ("b", 1),
    ]
    for p in doc["partitions"]:
        assert p["log_dirs"] == ["any"] * len(p["replicas"])
        assert p["replicas"][len(p["replicas"]) - len(p["observers"]) :] == p["observers"]


def test_render_refuses_an_empty_plan() -> None:
    with pytest.raises(ValueError, match="empty"):
        render_reassignment([])


@st.composite
def assignments(draw: st.DrawFn) -> list[PartitionAssignment]:
    keys = draw(
        st.sets(
            st.tuples(st.sampled_from(["orders", "payments", "a.b-c_d"]), st.integers(0, 500)),
            min_size=1,
            max_size=20,
        )
    )
    out = []
    for topic, partition in sorted(keys):
        brokers = draw(st.lists(st.integers(0, 2000), min_size=1, max_size=6, unique=True))
        n_obs = draw(st.integers(0, len(brokers) - 1))
        out.append(
            PartitionAssignment(
                topic, partition, tuple(brokers), tuple(brokers[len(brokers) - n_obs :])
            )
        )
    return out


@given(assignments())
def test_round_trip(rows: list[PartitionAssignment]) -> None:
    assert parse_reassignment(render_reassignment(rows)) == sorted(rows)


def test_one_election_layout_for_assign_and_simulate(tmp_path: Path) -> None:
    """`assign --election` (rendered whole) and `simulate --unclean-out` (streamed from
    Spark) write the same bytes for the same partitions: Kafka's documented layout."""
    from placement.io.reassignment import render_election, write_election_stream

    keys = [("orders", 2), ("clicks", 0), ("orders", 10), ("zürich", 1)]
    rendered = render_election(keys)
    streamed = tmp_path / "unclean.json"
    assert write_election_stream(streamed, iter(sorted(keys))) == 4
    assert streamed.read_bytes() == rendered.encode("utf-8")
    doc = json.loads(rendered)
    assert doc == {"partitions": [{"topic": t, "partition": p} for t, p in sorted(keys)]}
    assert rendered.count("\n") == len(keys) + 2  # one partition a line
    assert write_election_stream(tmp_path / "none.json", iter([])) == 0
    assert not (tmp_path / "none.json").exists()


def test_a_missing_current_assignment_is_not_called_the_plan(tmp_path: Path) -> None:
    """`--current` names the cluster's assignment: an error about it must not send the
    user looking for a plan file."""
    from placement.io.current import read_current

    with pytest.raises(InputError) as err:
        read_current(tmp_path / "current.json")
    assert "current assignment" in err.value.message and "plan" not in err.value.message


def test_old_execute_output_reads_the_current_assignment(tmp_path: Path) -> None:
    """Kafka 0.9-era `--execute` printed the current assignment, the rollback hint, and the
    new assignment as a second JSON document: the first is the one read, as for the newer
    output that stops after the hint."""
    from placement.io.reassignment import read_plan_file

    current = '{"version":1,"partitions":[{"topic":"pay","partition":0,"replicas":[7,8]}]}'
    proposed = '{"version":1,"partitions":[{"topic":"pay","partition":0,"replicas":[9,10]}]}'
    path = tmp_path / "execute.txt"
    path.write_text(
        "Current partition replica assignment\n\n"
        f"{current}\n\n"
        "Save this to use as the --reassignment-json-file option during rollback\n"
        "Successfully started reassignment of partitions\n"
        f"{proposed}\n"
    )
    plan = read_plan_file(path)
    assert [e.replicas for e in plan.entries] == [(7, 8)]


def test_a_leader_election_file_is_named_as_such(tmp_path: Path) -> None:
    """kafka-leader-election's input lists partitions without replicas: the refusal says
    what the file is instead of only which key is missing."""
    from placement.io.reassignment import read_plan_file

    path = tmp_path / "election.json"
    path.write_text('{"partitions": [{"topic": "pay", "partition": 0}]}')
    with pytest.raises(InputError) as err:
        read_plan_file(path)
    assert "kafka-leader-election" in err.value.message


def test_a_topics_to_move_file_is_named_as_such(tmp_path: Path) -> None:
    from placement.io.reassignment import read_plan_file

    path = tmp_path / "topics-to-move.json"
    path.write_text('{"topics": [{"topic": "pay"}], "version": 1}')
    with pytest.raises(InputError) as err:
        read_plan_file(path)
    assert "--topics-to-move-json-file" in err.value.message
