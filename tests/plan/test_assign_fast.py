"""The shortcuts `assign` takes at a million partitions give what the long way gives: a
rack where every partition keeps its brokers is the flow's optimum, the partitions that
meet their policy are judged as one by one, the (topic, broker) counts and the topic
spread are the plain counts and the plain spread."""

from __future__ import annotations

import random
from collections import Counter
from itertools import chain

import pytest

from placement.io.columns import Columns
from placement.model.assignment import PartitionAssignment
from placement.model.inventory import Broker, Inventory
from placement.model.policy import PlacementPolicy
from placement.plan.balance import _Racks
from placement.solver.flow import Item, RackFlow, _solve
from placement.solver.judging import Expected, meeting, meeting_columns
from placement.solver.tallies import RackState, per_topic, tally_columns, tally_kept, tally_on

RACKS = ("east", "west", "north")


def _policy(sync: dict[str, int], observers: dict[str, int]) -> PlacementPolicy:
    return PlacementPolicy.model_validate(
        {
            "version": 2,
            "replicas": [{"count": n, "constraints": {"rack": r}} for r, n in sync.items()],
            "observers": [{"count": n, "constraints": {"rack": r}} for r, n in observers.items()],
        }
    )


@pytest.mark.parametrize("seed", range(12))
def test_a_rack_whose_partitions_keep_their_brokers_is_the_flows_optimum(seed: int) -> None:
    """Uneven loads, topics piled on a broker, leaders to keep: still every partition
    keeps what it holds, as the solved network says."""
    rng = random.Random(seed)
    brokers = list(range(1, rng.randint(3, 12) + 1))
    topics = [f"t{i}" for i in range(rng.randint(1, 5))]
    base = {b: rng.randint(0, 40) for b in brokers}
    topic_base = Counter({(t, b): rng.randint(0, 6) for t in topics for b in brokers})
    items = []
    for _ in range(rng.randint(1, 60)):
        held = tuple(rng.sample(brokers, rng.randint(1, min(3, len(brokers)))))
        sticky = rng.choice([None, held[0]])
        items.append(Item(rng.choice(topics), len(held), held, sticky=sticky))
    receivers = tuple(b for b in brokers if rng.random() < 0.8) or (brokers[0],)
    flow = RackFlow(receivers, base, topic_base, items)
    assert flow.solve() == _solve(flow) == [tuple(sorted(it.held)) for it in items]


def _met(exp: Expected, a: PartitionAssignment, home: dict[int, str]) -> bool:
    """The rule partition by partition, as the core applied it before (reference)."""
    reps, observers = a.replicas, a.observers
    at = [home.get(b) for b in reps]
    if not reps or None in at or len(set(reps)) != len(reps):
        return False
    if exp.lead_check and at[0] != exp.lead_rack:  # --leaders-in-first-rack
        return False
    n_sync = len(reps) - len(observers)
    if set(reps[n_sync:]) != set(observers):
        return False
    racks = [r for r in at if r is not None]
    return (
        tuple(sorted(racks[:n_sync])) == exp.sync and tuple(sorted(racks[n_sync:])) == exp.observers
    )


@pytest.mark.parametrize("seed", range(8))
def test_partitions_meeting_their_policy_are_judged_as_one_by_one(seed: int) -> None:
    rng = random.Random(seed)
    members = {r: [10 * i + j for j in range(1, 5)] for i, r in enumerate(RACKS)}
    home = {b: r for r, ids in members.items() for b in ids if b % 10 != 4}  # x4: drained
    policies = {
        "a": _policy({"east": 2, "west": 1}, {"north": 1}),
        "b": _policy({"west": 2}, {}),
        "c": _policy({"north": 1, "east": 1}, {"west": 2}),
    }
    expected = {t: Expected.of(p) for t, p in policies.items()}
    everyone = [b for ids in members.values() for b in ids] + [99]  # 99: unknown
    parts = []
    for p in range(400):
        topic = rng.choice([*policies, "none"])
        reps = [rng.choice(everyone) for _ in range(rng.randint(1, 5))]
        if rng.random() < 0.7:
            reps = list(dict.fromkeys(reps))  # mostly no broker twice
        k = rng.randint(0, len(reps))
        obs = reps[len(reps) - k :]
        if k and rng.random() < 0.2:
            obs = obs[::-1]  # the same brokers, reordered
        if rng.random() < 0.1:
            obs = [rng.choice(everyone)]
        parts.append(PartitionAssignment(topic, p, tuple(reps), tuple(obs)))
    # and some that do meet their policy, with their brokers in every order
    for p in range(400, 500):
        e, w, n = (rng.sample(members[r][:3], 2) for r in RACKS)
        sync = rng.sample([e[0], e[1], w[0]], 3)
        lead = next(b for b in sync if b in members["east"])
        sync.remove(lead)
        parts.append(PartitionAssignment("a", p, (lead, *sync, n[0]), (n[0],)))
    parts += [PartitionAssignment("a", p, ()) for p in range(500, 503)]  # no replica at all
    exps = [expected.get(a.topic) for a in parts]
    got = meeting(parts, exps, home)
    want = [e is not None and _met(e, a, home) for e, a in zip(exps, parts, strict=True)]
    assert got == want
    assert 50 < sum(want) < len(parts)
    cols = Columns.of(parts)
    assert cols is not None
    judged = meeting_columns(cols, parts, expected, home)
    assert judged is not None and judged.tolist() == want
    # the tallies of what they keep, as arrays and one partition at a time
    keys = [a.key for a in parts]
    slow = {r: RackState(ids) for r, ids in members.items()}
    fast = {r: RackState(ids) for r, ids in members.items()}
    met = [a for a, m in zip(parts, want, strict=True) if m]
    tally_kept(slow, home, [a.key for a in met], met, True)
    tally_columns(fast, home, cols, judged, True)
    tally_on(fast, home, [k for k, m in zip(keys, want, strict=True) if m], met)
    for r in members:
        assert vars(fast[r]) == vars(slow[r])


@pytest.mark.parametrize("grouped", [True, False])
def test_per_topic_counts_are_the_plain_counts(grouped: bool) -> None:
    rng = random.Random(3)
    topics = sorted(rng.choice("abcdef") for _ in range(300))
    if not grouped:
        rng.shuffle(topics)
    reps = [tuple(rng.sample(range(20), rng.randint(1, 4))) for _ in topics]
    plain = Counter(
        chain.from_iterable(((t, b) for b in r) for t, r in zip(topics, reps, strict=True))
    )
    got = per_topic(topics, reps)
    assert got == plain and list(got) == list(plain)  # the same counts, in the same order
    assert isinstance(got, Counter) and got[("z", 1)] == 0


@pytest.mark.parametrize("seed", range(10))
def test_the_topic_spread_is_the_plain_spread(seed: int) -> None:
    """Brokers holding none of a topic, counts gone to 0, brokers not counted (drained,
    no rack): the spread over each rack's brokers, as max - min of the counts."""
    rng = random.Random(seed)
    brokers = [Broker(id=b, rack=rng.choice([*RACKS[:2], None])) for b in range(1, 13)]
    racks = _Racks(Inventory(brokers=brokers), frozenset({1, 2}))
    counts: Counter[tuple[str, int]] = Counter()
    for t in "pqrs":
        for b in rng.sample(range(1, 14), rng.randint(0, 13)):  # 13: not in the inventory
            counts[(t, b)] = rng.choice([0, 1, 2, 5])
    plain = max(
        (
            max(counts[(t, b)] for b in ids) - min(counts[(t, b)] for b in ids)
            for t in "pqrs"
            for ids in racks.ids.values()
        ),
        default=0,
    )
    assert racks.topic_spread(counts) == plain
    assert racks.topic_spread(Counter()) == 0


@pytest.mark.parametrize("seed", range(6))
def test_partitions_without_a_policy_are_judged_by_the_rule_as_one_by_one(seed: int) -> None:
    """Kafka's rack-aware rule judged on the columns agrees with the rule itself, partition
    by partition: drained brokers, a broker twice, observers, every spread."""
    from collections import Counter

    from placement.model.rackaware import spread_ok

    rng = random.Random(seed)
    members = {r: [10 * i + j for j in range(1, rng.randint(3, 6))] for i, r in enumerate(RACKS)}
    home = {b: r for r, ids in members.items() for b in ids if b % 10 != 1}  # x1: drained
    sizes = dict(Counter(home.values()))
    everyone = [b for ids in members.values() for b in ids] + [99]
    parts = []
    for p in range(600):
        reps = [rng.choice(everyone) for _ in range(rng.randint(1, 6))]
        if rng.random() < 0.8:
            reps = list(dict.fromkeys(reps))
        obs = reps[-1:] if rng.random() < 0.05 else []
        parts.append(PartitionAssignment("none", p, tuple(reps), tuple(obs)))
    for p in range(600, 700):  # and some that follow it: one replica in each rack
        reps = [rng.choice([b for b in ids if b in home]) for ids in members.values()]
        parts.append(PartitionAssignment("none", p, tuple(rng.sample(reps, len(reps)))))
    want = []
    for a in parts:
        at = [home.get(b) for b in a.replicas]
        ok = None not in at and len(set(a.replicas)) == len(a.replicas) and not a.observers
        want.append(ok and spread_ok(Counter(at), sizes, len(at)))  # type: ignore[arg-type]
    cols = Columns.of(parts)
    assert cols is not None
    judged = meeting_columns(cols, parts, {}, home, rule_racks=sizes)
    assert judged is not None and judged.tolist() == want
    assert 100 <= sum(want) < len(parts)
