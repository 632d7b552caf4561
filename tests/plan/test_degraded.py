"""The cluster's state before a plan (docs/definitions.md, degraded before a plan): counts
that overlap, observers never counted, min ISR from the topic's configs, the roll-up by
broker and by topic."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from placement.io.current import CurrentState, read_current
from placement.model.assignment import PartitionAssignment
from placement.plan.degraded import OFFLINE_KEYS_SHOWN, degraded_report, offline_keys

REPO = Path(__file__).resolve().parent.parent.parent
# orders (min.insync.replicas=2, one observer): 0 lacks broker 2, 1 lacks 2 and 6 (ISR of
# one), 2 has no leader, 3 and 4 healthy (4's ISR out of order); payments (no min ISR): 0
# lacks broker 2, 1 healthy
DESCRIBE = REPO / "tests" / "fixtures" / "degraded" / "describe.txt"


def test_describe_counts_by_category_topic_and_broker() -> None:
    d = degraded_report(read_current(DESCRIBE))
    assert d.recorded and d.any
    assert (d.under_replicated, d.under_min_isr, d.offline) == (3, 1, 1)
    assert d.min_insync_replicas == 1
    assert [(t.topic, t.under_replicated, t.under_min_isr, t.offline) for t in d.topics] == [
        ("orders", 2, 1, 1),
        ("payments", 1, 0, 0),
    ]
    # broker 2 first (3 ISRs, 1 offline); then ties by id; observer 11 hosts orders-2 too
    assert [(b.broker, b.missing_from_isr, b.offline_hosted) for b in d.brokers] == [
        (2, 3, 1),
        (4, 0, 1),
        (6, 1, 0),
        (7, 0, 1),
        (11, 0, 1),
    ]
    assert [(p.topic, p.partition) for p in d.offline_partitions] == [("orders", 2)]
    assert offline_keys(read_current(DESCRIBE)) == {("orders", 2)}


def test_a_topic_without_min_isr_takes_the_default() -> None:
    # payments-0 has 2 in its ISR: under a default of 3, not of 1 (payments-1 has 3);
    # orders keeps its own 2
    d = degraded_report(read_current(DESCRIBE), default_min_isr=3)
    assert d.min_insync_replicas == 3
    assert {t.topic: t.under_min_isr for t in d.topics} == {"orders": 1, "payments": 1}


def state(
    assignments: list[PartitionAssignment],
    isr: list[tuple[int, ...] | None],
    leaders: list[int | None],
    min_isr: dict[str, int] | None = None,
) -> CurrentState:
    return CurrentState(assignments, min_isr=min_isr or {}, isr=isr, leaders=leaders)


def test_observers_are_never_counted() -> None:
    a = PartitionAssignment("t", 0, (1, 2, 3, 9), (9,))
    # the observer out of the ISR: healthy
    assert not degraded_report(state([a], [(1, 2, 3)], [1])).any
    # a promoted observer does not stand in for a missing sync replica, but it does count
    # towards min ISR
    d = degraded_report(state([a], [(1, 3, 9)], [1], {"t": 3}))
    assert (d.under_replicated, d.under_min_isr) == (1, 0)
    assert [(b.broker, b.missing_from_isr) for b in d.brokers] == [(2, 1)]


def test_counts_overlap_and_an_unrecorded_isr_counts_nowhere() -> None:
    parts = [PartitionAssignment("t", p, (1, 2, 3)) for p in range(3)]
    d = degraded_report(state(parts, [(1,), None, (1, 2, 3)], [1, None, 1], {"t": 2}))
    # t-0: under-replicated and under min ISR; t-1 has no ISR recorded: neither offline
    # nor anything else
    assert (d.under_replicated, d.under_min_isr, d.offline) == (1, 1, 0)
    assert d.topics[0].under_replicated + d.topics[0].under_min_isr == 2


def test_reassignment_json_records_nothing() -> None:
    parts = [PartitionAssignment("t", 0, (1, 2, 3))]
    d = degraded_report(CurrentState(parts))
    assert not d.recorded and not d.any and d.topics == [] and d.brokers == []
    assert offline_keys(CurrentState(parts)) == set()
    # a snapshot whose isr column is all null records nothing either
    assert not degraded_report(state(parts, [None], [None])).recorded


def test_offline_partitions_are_listed_up_to_the_cap() -> None:
    n = OFFLINE_KEYS_SHOWN + 5
    parts = [PartitionAssignment("t", p, (1, 2)) for p in range(n)]
    d = degraded_report(state(parts, [()] * n, [None] * n))
    assert d.offline == n and len(d.offline_partitions) == OFFLINE_KEYS_SHOWN
    assert d.offline_partitions[0].partition == 0
    assert [(b.broker, b.offline_hosted) for b in d.brokers] == [(1, n), (2, n)]


def test_a_snapshot_reads_as_its_describe_output_and_as_validate_counts(
    tmp_path: Path, example_snapshot: Callable[[Path], Path]
) -> None:
    """examples/describe.txt as text and as a snapshot give the same report; offline and
    under-min-ISR agree with validate's states (MRC902, MRC903), and under-replicated holds
    MRC904's partitions and those under min ISR that lack a sync replica."""
    np = pytest.importorskip("numpy")
    from placement.io.snapshot import read_snapshot
    from placement.rules.partitions import isr_state

    snap = example_snapshot(tmp_path / "snap")
    d = degraded_report(read_current(snap))
    assert d == degraded_report(read_current(REPO / "examples" / "describe.txt"))
    s = isr_state(read_snapshot(snap))
    assert d.offline == int(np.sum(s.offline)) == 1
    assert d.under_min_isr == int(np.sum(s.under_min_isr))
    assert d.under_replicated >= int(np.sum(s.under_replicated)) == 1
