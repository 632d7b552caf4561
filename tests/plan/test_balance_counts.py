"""The balance figures' tally counted as arrays (`_counted`, or from a request's columns)
is the tally counted one replica at a time: per broker, per preferred leader and per
(topic, broker); the figures from either are the same."""

from __future__ import annotations

import random
from collections import Counter
from itertools import chain

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import placement.plan.balance as balance
from placement.io.columns import Columns
from placement.model.assignment import PartitionAssignment
from placement.model.inventory import Broker, Inventory
from placement.model.policy import PlacementPolicy
from placement.plan.balance import Tally, TopicTable, balance_goals
from placement.solver.tallies import per_topic


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
@pytest.mark.slow  # the fast tier leaves it to make test
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


@settings(max_examples=200, deadline=None)
@given(states())
@pytest.mark.slow  # the fast tier leaves it to make test
def test_the_tally_of_columns_is_the_tally(state: list[PartitionAssignment]) -> None:
    cols = Columns.of(state)
    assert cols is not None
    lead_of = {"a": "r1", "e": "r2"}
    tally = Tally.of_columns(cols, lead_of, ["new"], [7, 8])
    if tally is None:  # broker ids past the table's size
        return
    plain = Tally.of(state, lead_of)
    assert tally.load == plain.load and tally.leaders == plain.leaders
    assert isinstance(tally.per_topic, TopicTable)
    assert tally.per_topic.counts() == plain.per_topic
    assert tally.lead_racks == plain.lead_racks


@pytest.mark.parametrize("seed", range(20))
def test_balance_figures_from_columns_are_those_counted_one_by_one(seed: int) -> None:
    """A plan that moves replicas, creates partitions and a topic, on brokers the state
    does not use yet: the same goals, tables and broker figures either way."""
    rng = random.Random(seed)
    racks = {"r1": [1, 2, 3, 4], "r2": [5, 6, 7], "r3": [8, 9]}
    inv = Inventory(brokers=[Broker(id=b, rack=r) for r, ids in racks.items() for b in ids])
    policies = {
        t: PlacementPolicy.model_validate(
            {"version": 2, "replicas": [{"count": 1, "constraints": {"rack": r}}]}
        )
        for t, r in (("a", "r1"), ("b", "r2"), ("new", "r3"))
    }
    used = [1, 2, 3, 5, 6, 8, 12]  # 12: not in the inventory
    before = {}
    for p in range(rng.randint(1, 40)):
        topic = rng.choice(["a", "b", "c"])
        before[(topic, p)] = PartitionAssignment(
            topic, p, tuple(rng.sample(used, rng.randint(0, 3)))
        )
    plan = [
        PartitionAssignment(a.topic, a.partition, tuple(rng.sample(range(1, 10), 2)))
        for a in rng.sample(list(before.values()), len(before) // 2)
    ]
    plan += [PartitionAssignment("new", p, (rng.randint(1, 9),)) for p in range(3)]
    drained = frozenset({rng.choice([1, 5])})
    args = (inv, policies, before, plan, drained, drained | {9}, {}, {})
    cols = Columns.of(list(before.values()))
    assert balance_goals(*args) == balance_goals(*args, cols)
