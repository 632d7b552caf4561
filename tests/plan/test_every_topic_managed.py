"""`assign` on random clusters that mix topic policies, a cluster default and topics with no
policy at all (Kafka's rack-aware rule), leaders spread over every rack, under random
drains, dead brokers and one-topic policy changes. Whatever the case: drained and dead
brokers end empty, every partition the plan touches follows its rule, the replicas added
equal a bound computed here by brute force, a leader changes only when it must, and no
partition outside what was asked changes."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Mapping

from _policies import policy
from hypothesis import example, given, settings
from hypothesis import strategies as st

from placement.io.current import CurrentState
from placement.io.inventory import LoadedInventory
from placement.model.assignment import PartitionAssignment as PA  # noqa: N817
from placement.model.inventory import Broker, Inventory
from placement.model.policy import PlacementPolicy
from placement.model.rackaware import spread_ok
from placement.plan.assign import Ask, assign
from placement.plan.inputs import DefaultPolicies
from placement.plan.topics import TopicSpec
from placement.solver.engine import Options

Key = tuple[str, int]


def _rack_aware(
    rng: random.Random, n: int, members: Mapping[str, list[int]], cursor: Counter[str]
) -> list[int]:
    """One partition of ``n`` replicas spread as Kafka's rack-aware assignment spreads it,
    starting from a random rack, its leader a random one of them (leaders everywhere)."""
    racks = sorted(members)
    start = rng.randrange(len(racks))
    out: list[int] = []
    i = 0
    while len(out) < n:
        rack = racks[(start + i) % len(racks)]
        ids = members[rack]
        free = [b for b in ids if b not in out]
        if free:
            b = free[cursor[rack] % len(free)]
            cursor[rack] += 1
            out.append(b)
        i += 1
    rng.shuffle(out)
    return out


def _with_policy(
    rng: random.Random,
    pol: PlacementPolicy,
    members: Mapping[str, list[int]],
    cursor: Counter[str],
) -> PA:
    sync: list[int] = []
    obs: list[int] = []
    for rack, (s, o) in pol.per_rack().items():
        ids = members[rack]
        got = [ids[(cursor[rack] + j) % len(ids)] for j in range(s + o)]
        cursor[rack] += s + o
        sync += got[:s]
        obs += got[s:]
    rng.shuffle(sync)  # leaders in every rack the policy puts sync replicas in
    return PA("", 0, (*sync, *obs), tuple(obs))


def build(seed: int, scenario: str) -> dict[str, object]:
    rng = random.Random(seed)
    names = ["r0", "r1", "r2"]
    members = {r: [10 * (i + 1) + j for j in range(rng.randint(3, 6))] for i, r in enumerate(names)}
    # a topic without its own policy takes the cluster default when there is one (as a
    # topic config falls back to the broker's), else Kafka's rack-aware rule
    default = None
    if rng.random() < 0.5:
        default = policy({"r0": 2, "r1": 1}, {"r2": 1} if rng.random() < 0.5 else {})
    policies: dict[str, PlacementPolicy] = {}
    kinds: dict[str, str] = {}
    current: list[PA] = []
    cursor: Counter[str] = Counter()
    for t in range(rng.randint(2, 6)):
        name = f"t{t}"
        kind = rng.choice(["policy", "default" if default is not None else "none"])
        kinds[name] = kind
        if kind == "policy":
            policies[name] = policy(
                {r: rng.randint(1, 2) for r in rng.sample(names, rng.randint(1, 3))}
            )
        for p in range(rng.randint(4, 30)):
            if kind == "none":
                reps = _rack_aware(rng, rng.randint(2, 4), members, cursor)
                current.append(PA(name, p, tuple(reps)))
            else:
                pol = policies.get(name, default)
                assert pol is not None
                a = _with_policy(rng, pol, members, cursor)
                current.append(PA(name, p, a.replicas, a.observers))
    # a few partitions that break their rule before any plan: not asked, so left alone
    broken: set[Key] = set()
    for i, a in enumerate(list(current)):
        if kinds[a.topic] == "none" and len(a.replicas) == 3 and rng.random() < 0.1:
            rack = rng.choice(names)
            two = rng.sample(members[rack], 2)
            other = next(b for b in members[names[(names.index(rack) + 1) % 3]])
            current[i] = PA(a.topic, a.partition, (two[0], two[1], other))
            broken.add(a.key)
    brokers = [Broker(id=b, rack=r) for r, ids in members.items() for b in ids]
    drained: list[int] = []
    dead: set[int] = set()
    topics: list[TopicSpec] = []
    pool = [b for ids in members.values() for b in ids if len(members[_rack(b)]) > 4]
    if scenario == "drain":
        drained = rng.sample(pool, min(len(pool), rng.randint(1, 2)))
    elif scenario == "dead":
        dead = set(rng.sample(pool, min(len(pool), rng.randint(1, 2))))
        brokers = [b for b in brokers if b.id not in dead]
    elif scenario == "policy":
        name = rng.choice(sorted(kinds))
        new = policy({"r1": 2, "r2": 1}) if rng.random() < 0.5 else policy({"r0": 1, "r2": 1})
        topics = [TopicSpec(name, None, new)]  # type: ignore[arg-type]
    return {
        "inventory": Inventory(brokers=brokers),
        "current": current,
        "policies": policies,
        "default": default,
        "kinds": kinds,
        "drained": drained,
        "dead": dead,
        "topics": topics,
        "broken": broken,
    }


def _rack(b: int) -> str:
    return f"r{b // 10 - 1}"


def _rule_bound(reps: tuple[int, ...], sizes: Mapping[str, int], rack_of: Mapping[int, str]) -> int:
    """The fewest replicas a partition of a topic with no policy must gain: over every
    spread of its replica count that follows the rule, the most current replicas (on
    brokers that stay) it can keep."""
    kept = Counter(rack_of[b] for b in reps if b in rack_of)
    racks = sorted(sizes)
    best = 0
    for counts in itertools.product(range(len(reps) + 1), repeat=len(racks)):
        target = dict(zip(racks, counts, strict=True))
        if spread_ok(target, sizes, len(reps)):
            best = max(best, sum(min(kept[r], target[r]) for r in racks))
    return len(reps) - best


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 2**20),
    scenario=st.sampled_from(["drain", "dead", "policy"]),
    balance_leaders=st.booleans(),
)
# a topics file restating a topic's policy asks about that topic only: no repair elsewhere
@example(seed=653, scenario="policy", balance_leaders=False)
def test_every_topic_is_managed_and_nothing_else_changes(
    seed: int, scenario: str, balance_leaders: bool
) -> None:
    case = build(seed, scenario)
    inv: Inventory = case["inventory"]  # type: ignore[assignment]
    current: list[PA] = case["current"]  # type: ignore[assignment]
    drained: list[int] = case["drained"]  # type: ignore[assignment]
    dead: set[int] = case["dead"]  # type: ignore[assignment]
    topics: list[TopicSpec] = case["topics"]  # type: ignore[assignment]
    kinds: dict[str, str] = case["kinds"]  # type: ignore[assignment]
    state = CurrentState(current, dict(case["policies"]))  # type: ignore[call-overload]
    defaults = DefaultPolicies(case["default"])  # type: ignore[arg-type]
    out = assign(
        LoadedInventory(inv, "inventory.json"),
        topics,
        state,
        drain=drained,
        options=Options(balance_leaders=balance_leaders),
        policies_known=True,
        ask=Ask(defaults=defaults),
    )
    before = {a.key: a for a in current}
    after = before | {a.key: a for a in out.plan}
    gone = set(drained) | dead
    # drained and dead brokers end empty
    assert not any(gone & set(a.replicas) for a in after.values())
    assert out.left_on_drained == 0
    rack_of = {b.id: b.rack for b in inv.brokers if b.rack and b.id not in set(drained)}
    sizes = Counter(rack_of.values())
    changed_topic = {t.name for t in topics}
    rule = {t: case["policies"].get(t, case["default"]) for t in kinds}  # type: ignore[attr-defined]
    rule |= {t.name: t.policy for t in topics}
    # a run that asks for nothing (no drain, no dead broker, no policy change, no
    # --balance-leaders) repairs every partition that breaks its rule (scope "everything")
    everything = not (drained or dead or topics or balance_leaders)
    broken: set[Key] = case["broken"]  # type: ignore[assignment]
    bound = 0
    for a in out.plan:
        old = before[a.key]
        # nothing outside the scope: a replica on a drained or dead broker, or a topic the
        # topics file sets (or a leader reorder under --balance-leaders)
        displaced = bool(gone & set(old.replicas))
        reordered = set(a.replicas) == set(old.replicas) and set(a.observers) == set(old.observers)
        repaired = everything and a.key in broken
        assert displaced or repaired or a.topic in changed_topic or (balance_leaders and reordered)
        # a leader changes only when it must (or to even leaders when asked)
        if not balance_leaders and old.replicas[0] in a.sync:
            assert a.replicas[0] == old.replicas[0], (old, a)
        # every partition touched follows its rule
        if kinds[a.topic] == "none" and a.topic not in changed_topic:
            counts = Counter(rack_of[b] for b in a.replicas)
            assert spread_ok(counts, sizes, len(a.replicas)), (old, a)
            assert len(set(a.replicas)) == len(a.replicas)
            if displaced or repaired:
                bound += _rule_bound(old.replicas, sizes, rack_of)
        else:
            want = rule[a.topic].per_rack()
            got: dict[str, list[int]] = {}
            for b in a.sync:
                got.setdefault(rack_of[b], [0, 0])[0] += 1
            for b in a.observers:
                got.setdefault(rack_of[b], [0, 0])[1] += 1
            assert {r: tuple(c) for r, c in got.items()} == want, (old, a, want)
            kept = Counter(rack_of[b] for b in old.replicas if b in rack_of)
            bound += sum(max(0, s + o - kept[r]) for r, (s, o) in want.items())
    # broken partitions outside what was asked keep exactly what they had; a run that
    # asked for nothing repairs them
    planned = {a.key for a in out.plan}
    for key in broken:
        if everything:
            assert key in planned
        elif not gone & set(before[key].replicas) and key[0] not in changed_topic:
            assert after[key] == before[key]
    # the replicas added are the fewest any plan adds for what was asked
    added = sum(len(set(a.replicas) - set(before[a.key].replicas)) for a in out.plan)
    assert added == bound == out.lower_bound, (added, bound, out.lower_bound)
    # leadership changes: exactly the forced ones unless leaders are evened
    forced = sum(1 for a in out.plan if before[a.key].replicas[0] not in a.sync)
    changes = sum(1 for a in out.plan if before[a.key].replicas[0] != a.replicas[0])
    if not balance_leaders:
        assert changes == forced
    assert out.summary().leadership_forced + out.summary().leadership_chosen == changes
