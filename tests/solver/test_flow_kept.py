"""A rack where every partition keeps what it holds (a drain, dead brokers, a repair that
only adds) is solved as per-topic counts and then partitions (`flow._solve_kept`): the
same optimum as the whole network, every partition on distinct brokers it may use."""

from __future__ import annotations

import random
from collections import Counter

import pytest

import placement.solver.flow as flow
from placement.solver.flow import Item, RackFlow, _realize, _realize_by_flow, _solve


def _instance(rng: random.Random) -> RackFlow:
    brokers = list(range(1, rng.randint(3, 14) + 1))
    topics = [f"t{i}" for i in range(rng.randint(1, 5))]
    receivers = tuple(b for b in brokers if rng.random() < 0.8) or (brokers[0],)
    base = {b: rng.randint(0, 40) for b in brokers}
    topic_base = Counter({(t, b): rng.randint(0, 6) for t in topics for b in brokers})
    items = []
    for _ in range(rng.randint(1, 60)):
        k = rng.randint(0, min(2, len(brokers)))
        held = tuple(rng.sample(brokers, k))
        room = len(set(receivers) - set(held))
        need = k + rng.randint(0 if k or not room else 1, min(3, room))
        sticky = rng.choice([None, held[0]]) if held else None
        left = sticky is None and rng.random() < 0.5
        items.append(Item(rng.choice(topics), need, held, sticky=sticky, leader_left=left))
    leaders = {b: rng.randint(0, 10) for b in brokers}
    return RackFlow(receivers, base, topic_base, items, leaders=leaders)


def _costs(fl: RackFlow, result: list[tuple[int, ...]]) -> tuple[int, int, int]:
    """Replicas added, then the sums of squares of replicas per receiver and per (topic,
    receiver): what the flow's rising unit costs minimize, in goal order."""
    load = Counter({b: fl.base[b] for b in fl.receivers})
    per_topic = Counter({k: n for k, n in fl.topic_base.items() if k[1] in fl.receivers})
    moves = 0
    for it, brokers in zip(fl.items, result, strict=True):
        for b in brokers:
            moves += b not in it.held
            if b in load:
                load[b] += 1
                per_topic[(it.topic, b)] += 1
    return moves, sum(n * n for n in load.values()), sum(n * n for n in per_topic.values())


def _valid(fl: RackFlow, result: list[tuple[int, ...]]) -> None:
    for it, brokers in zip(fl.items, result, strict=True):
        assert len(brokers) == len(set(brokers)) == it.need
        assert set(it.held) <= set(brokers)  # every partition keeps what it holds
        assert set(brokers) - set(it.held) <= set(fl.receivers)


@pytest.mark.parametrize("seed", range(60))
def test_kept_counts_are_the_whole_networks_optimum(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With unit arcs all the way (no segments past a margin above the level, whose
    price both networks round up) the optimum is the same; with the default margin the
    moves and the rack's balance are, and the topics' within the rounding."""
    fl = _instance(random.Random(seed))
    monkeypatch.setattr(flow, "ARC_LIMIT", 10**9)  # the whole network, no window of arcs
    kept, whole = fl.solve(), _solve(fl)
    _valid(fl, kept)
    _valid(fl, whole)
    assert _costs(fl, kept)[:2] == _costs(fl, whole)[:2]
    assert fl.solve() == kept  # the same bytes again
    monkeypatch.setattr(flow, "MARGIN", 10**6)
    assert _costs(fl, fl.solve()) == _costs(fl, _solve(fl))


@pytest.mark.parametrize("seed", range(200))
def test_realize_finds_a_way_whenever_one_exists(seed: int) -> None:
    """Greedy, then max-flow: each partition its count of distinct receivers outside what
    it holds, each receiver its quota, whenever the max-flow says that is possible."""
    rng = random.Random(seed)
    n_b = rng.randint(1, 8)
    need = [rng.randint(1, min(3, n_b)) for _ in range(rng.randint(1, 12))]
    held = [rng.sample(range(n_b), rng.randint(0, min(2, n_b))) for _ in need]
    quota: Counter[int] = Counter()
    for n in need:  # quotas that add up, not always realizable
        for j in rng.sample(range(n_b), n):
            quota[j] += 1
    leads = [rng.random() < 0.5 for _ in need]
    possible = _realize_by_flow(dict(quota), need, held, leads, [0] * n_b) is not None
    picks = _realize(dict(quota), need, held, leads, [0] * n_b)
    assert (picks is not None) == possible
    if picks is not None:
        for n, h, pick in zip(need, held, picks, strict=True):
            assert len(pick) == len(set(pick)) == n
            assert not set(pick) & set(h)
        assert Counter(j for pick in picks for j in pick) == quota


def test_partitions_that_change_leader_spread_over_the_rack() -> None:
    """40 partitions lose their leader, each takes one of 8 receivers: with as much room
    on each, they go 5 to a receiver (the leader choice after has an even field)."""
    receivers = tuple(range(1, 9))
    items = [Item(f"t{i % 4}", 1, (), leader_left=True) for i in range(40)]
    fl = RackFlow(receivers, dict.fromkeys(receivers, 0), Counter(), items)
    result = fl.solve()
    assert set(Counter(b for (b,) in result).values()) == {5}
