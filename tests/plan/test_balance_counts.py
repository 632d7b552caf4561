"""The balance figures' tally counted as arrays (`_counted`) is the tally counted one
replica at a time: per broker, per preferred leader and per (topic, broker)."""

from __future__ import annotations

from collections import Counter
from itertools import chain

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import placement.plan.balance as balance
from placement.model.assignment import PartitionAssignment
from placement.plan.balance import Tally
from placement.solver.core import per_topic


@st.composite
def states(draw: st.DrawFn) -> list[PartitionAssignment]:
    """Partitions of a few topics, listed together or mixed, some with no replica; broker
    ids small, or some past the array's table (then counted one by one)."""
    top = draw(st.sampled_from([5, 40, 1 << 25]))
    out = []
    for i in range(draw(st.integers(0, 30))):
        topic = draw(st.sampled_from(["a", "b", "c.d", "e"]))
        reps = draw(st.lists(st.integers(0, top), max_size=5, unique=True))
        out.append(PartitionAssignment(topic, i, tuple(reps)))
    if draw(st.booleans()):
        out.sort(key=lambda a: a.topic)
    return out


@settings(max_examples=300, deadline=None)
@given(states())
def test_the_tally_counts_as_one_replica_at_a_time(state: list[PartitionAssignment]) -> None:
    tally = Tally.of(state, {"a": "r1", "e": "r2"})
    parts = [a for a in state if a.replicas]
    reps = [a.replicas for a in parts]
    assert tally.load == Counter(chain.from_iterable(reps))
    assert tally.leaders == Counter(r[0] for r in reps)
    assert tally.per_topic == per_topic([a.topic for a in parts], reps)
    topics = {a.topic for a in parts}
    assert tally.lead_racks == {r for t, r in (("a", "r1"), ("e", "r2")) if t in topics}
    for counts in (tally.load, tally.leaders, tally.per_topic):
        assert 0 not in counts.values()


def test_too_many_cells_are_counted_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    state = [PartitionAssignment(f"t{i}", 0, (i, i + 1)) for i in range(50)]
    columns = ([a.topic for a in state], [a.topic for a in state], [a.replicas for a in state])
    assert balance._counted(*columns) is not None
    monkeypatch.setattr(balance, "_CELLS", 100)  # 50 topics x 51 brokers
    assert balance._counted(*columns) is None
    tally = Tally.of(state, {})
    assert tally.load == Counter(chain.from_iterable(a.replicas for a in state))
    assert tally.per_topic == per_topic(columns[1], columns[2])
