"""`kafka-topics --describe` output taken while a reassignment runs, and columns the
reader does not know."""

from __future__ import annotations

from pathlib import Path

import pytest

from placement.errors import InputError
from placement.io.describe import parse_describe, read_describe

REAL = Path("/work/shared/real/describe")

# TopicCommand's layout: a tab before each label, `Adding Replicas: `/`Removing Replicas: `
# with a space in the label, printed for every partition of a reassignment in progress
MOVING = (
    "Topic: payments\tTopicId: Zx3kQp0mS1u8v2w4y6a8cA\tPartitionCount: 3\t"
    "ReplicationFactor: 3\tConfigs: min.insync.replicas=2\n"
    "\tTopic: payments\tPartition: 0\tLeader: 7\tReplicas: 7,8,9\tIsr: 7,8,9\n"
    "\tTopic: payments\tPartition: 1\tLeader: 8\tReplicas: 10,8,9,7\tIsr: 8,9,7\t"
    "Adding Replicas: 10\tRemoving Replicas: 7\n"
    "\tTopic: payments\tPartition: 2\tLeader: 9\tReplicas: 11,12,9,7,8\tIsr: 9,7,8,11\t"
    "Adding Replicas: 11,12\tRemoving Replicas: 7,8\n"
)


def test_a_reassignment_in_progress_is_read_with_its_adding_and_removing_brokers() -> None:
    d = parse_describe(MOVING)
    p0, p1, p2 = d.partitions
    assert (p0.adding, p0.removing, p0.reassigning) == ((), (), False)
    assert (p1.replicas, p1.adding, p1.removing, p1.reassigning) == (
        (10, 8, 9, 7),
        (10,),
        (7,),
        True,
    )
    assert (p2.replicas, p2.isr, p2.adding, p2.removing) == (
        (11, 12, 9, 7, 8),
        (9, 7, 8, 11),
        (11, 12),
        (7, 8),
    )
    assert [(p.topic, p.partition) for p in d.reassigning] == [("payments", 1), ("payments", 2)]


def test_space_separated_columns_and_an_empty_removing_list() -> None:
    """A terminal copy turns tabs into spaces; raising the replication factor adds
    brokers and removes none (`Removing Replicas: ` is then empty)."""
    text = (
        "Topic: audit PartitionCount: 1 ReplicationFactor: 2 Configs: \n"
        "Topic: audit Partition: 0 Leader: 4 Replicas: 4,5,6 Isr: 4,5 "
        "Adding Replicas: 6 Removing Replicas:  Elr:  LastKnownElr: \n"
    )
    (p,) = parse_describe(text).partitions
    assert (p.replicas, p.isr, p.adding, p.removing) == ((4, 5, 6), (4, 5), (6,), ())
    assert p.reassigning


def test_the_spaceless_labels_are_read_too() -> None:
    text = (
        "Topic:t\tPartitionCount:1\tReplicationFactor:1\tConfigs:\n"
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 2,1\tIsr: 1\t"
        "AddingReplicas: 2\tRemovingReplicas: 1\n"
    )
    (p,) = parse_describe(text).partitions
    assert (p.replicas, p.adding, p.removing) == ((2, 1), (2,), (1,))


def test_a_replica_count_that_fits_no_side_of_the_move_is_refused() -> None:
    text = (
        "Topic: t\tPartitionCount: 1\tReplicationFactor: 2\tConfigs:\n"
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3,4\tIsr: 1,2\t"
        "Adding Replicas: 4\tRemoving Replicas: 1\n"
    )
    with pytest.raises(InputError) as e:
        parse_describe(text, "moving.txt")
    assert e.value.line == 2
    assert "4 replicas (1 being added, 1 being removed)" in str(e.value)
    assert "ReplicationFactor 2" in str(e.value)


def test_a_reassignment_that_finished_between_the_two_requests_is_not_in_progress() -> None:
    """Kafka's own test: the move is in progress while some replica is being added or
    removed; lists naming none of the replicas are stale."""
    text = (
        "Topic: t\tPartitionCount: 1\tReplicationFactor: 2\tConfigs:\n"
        "\tTopic: t\tPartition: 0\tLeader: 5\tReplicas: 5,6\tIsr: 5,6\t"
        "Adding Replicas: \tRemoving Replicas: 1\n"
    )
    (p,) = parse_describe(text).partitions
    assert (p.reassigning, p.adding, p.removing) == (False, (), ())


def test_a_bad_broker_id_in_the_adding_list_names_the_column() -> None:
    text = (
        "Topic: t\tPartitionCount: 1\tReplicationFactor: 2\tConfigs:\n"
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\t"
        "Adding Replicas: x3\tRemoving Replicas: 1\n"
    )
    with pytest.raises(InputError) as e:
        parse_describe(text, "moving.txt")
    assert str(e.value).count("Adding Replicas") == 1
    assert (e.value.line, e.value.column) == (2, text.splitlines()[1].index("x3") + 1)


def test_an_unknown_column_is_refused_by_name() -> None:
    text = (
        "Topic: t\tPartitionCount: 1\tReplicationFactor: 2\tConfigs:\n"
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\tOffline: \t"
        "LiveObservers: 3,4\n"
    )
    with pytest.raises(InputError) as e:
        parse_describe(text, "preview.txt")
    assert "unknown column 'LiveObservers'" in str(e.value)
    assert "not an integer" not in str(e.value)
    assert "Observers" in (e.value.hint or "")
    assert (e.value.line, e.value.column) == (2, text.splitlines()[1].index("LiveObservers") + 1)
    with pytest.raises(InputError) as e:
        parse_describe(text.replace("LiveObservers", "Witnesses"), "future.txt")
    assert "unknown column 'Witnesses'" in str(e.value)
    assert "Adding Replicas" in (e.value.hint or "")


def test_columns_that_say_nothing_about_placement_are_skipped() -> None:
    text = (
        "Topic: gone\tTopicId: Zx3kQp0mS1u8v2w4y6a8cA\tPartitionCount: 1\t"
        "ReplicationFactor: 2\tConfigs: retention.ms=1000\tMarkedForDeletion: true\n"
        "\tTopic: gone\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\tElr: N/A\t"
        "LastKnownElr: N/A\tMarkedForDeletion: true\n"
    )
    d = parse_describe(text)
    assert d.topics["gone"].configs["retention.ms"].value == "1000"
    (p,) = d.partitions
    assert (p.replicas, p.isr) == ((1, 2), (1, 2))


def test_a_topic_named_like_a_label_is_still_a_topic_name() -> None:
    text = (
        "Topic: Orders PartitionCount: 1 ReplicationFactor: 1 Configs: \n"
        "Topic: Orders Partition: 0 Leader: 1 Replicas: 1 Isr: 1\n"
    )
    d = parse_describe(text)
    assert [p.topic for p in d.partitions] == ["Orders"]


REAL_FILES = sorted(REAL.glob("*.txt")) if REAL.is_dir() else []
# refused, and why: Confluent Platform 5.4 preview output with its LiveObservers column
REFUSED = {
    "cex-2019-liveobservers.txt": "unknown column 'LiveObservers'",
    "cex-2019-liveobservers-west-down.txt": "unknown column 'LiveObservers'",
}


@pytest.mark.skipif(not REAL_FILES, reason="the real describe outputs are not here")
@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name)
def test_real_describe_outputs(path: Path) -> None:
    if path.name in REFUSED:
        with pytest.raises(InputError, match=REFUSED[path.name]):
            read_describe(path)
        return
    d = read_describe(path, in_flight=True)
    assert d.partitions
    # the one taken during a reassignment: every partition gains broker 3
    assert bool(d.reassigning) == path.name.startswith("l07-adding")
    assert all(p.adding == (3,) for p in d.reassigning)


def test_a_reassignment_in_progress_is_no_layout_to_plan_from(tmp_path: Path) -> None:
    """`read_describe` refuses a move in flight unless its caller says it knows what to
    do with one (`in_flight`), and says so."""
    path = tmp_path / "moving.txt"
    path.write_text(MOVING)
    with pytest.raises(InputError) as e:
        read_describe(path)
    assert "2 partitions are being reassigned (the first: payments-1)" in str(e.value)
    assert e.value.line == 3
    assert "--verify" in (e.value.hint or "")
    assert len(read_describe(path, in_flight=True).reassigning) == 2
