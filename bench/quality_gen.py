"""Deterministic realistic clusters for bench_quality.py: unequal racks, RF 3-6, v1/v2 policies.

Everything is seeded (random.Random(seed)); same arguments, same files. Racks r1..r6 of
unequal size, brokers numbered rack after rack; topics with heavy-tailed partition counts
(Pareto) and heavy-tailed partition sizes (lognormal per topic times lognormal per
partition). Policies are rack constraints only (sync replicas and observers per rack), as
`confluent.placement.constraints` writes them; replicas are listed sync first (the preferred
leader first), then observers.

Two layouts: `balanced` (per rack, each partition takes the next brokers of a ring, so
replicas per broker, per topic and broker, and preferred leaders are all within one of even),
and `skewed` (valid, but brokers drawn with random weights: a few nearly empty).
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Key = tuple[str, int]
# (replicas with observers at the end, observers)
State = dict[Key, tuple[tuple[int, ...], tuple[int, ...]]]


@dataclass(frozen=True)
class Policy:
    name: str
    version: int
    sync: tuple[tuple[str, int], ...]
    observers: tuple[tuple[str, int], ...] = ()

    def doc(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version": self.version,
            "replicas": [{"count": c, "constraints": {"rack": r}} for r, c in self.sync],
        }
        if self.observers:
            out["observers"] = [{"count": c, "constraints": {"rack": r}} for r, c in self.observers]
            if self.version == 2:
                out["observerPromotionPolicy"] = "under-min-isr"
        return out

    def need(self) -> tuple[Counter[str], Counter[str]]:
        s: Counter[str] = Counter()
        o: Counter[str] = Counter()
        for r, c in self.sync:
            s[r] += c
        for r, c in self.observers:
            o[r] += c
        return s, o

    @property
    def lead_rack(self) -> str:
        return self.sync[0][0]


# The mix of the full cluster: RF 3-6, v1 and v2, observers, one stretched policy.
POLICIES = [
    Policy("p-west2", 2, (("r1", 2), ("r2", 1)), (("r3", 1),)),  # RF 4
    Policy("p-three", 2, (("r1", 1), ("r2", 1), ("r3", 1))),  # RF 3, one per rack
    Policy("p-v1-wide", 1, (("r2", 2), ("r4", 2)), (("r5", 1),)),  # RF 5, v1
    Policy("p-six", 2, (("r4", 2), ("r5", 2), ("r6", 1)), (("r1", 1),)),  # RF 6
    Policy("p-local", 2, (("r3", 3),), (("r6", 2),)),  # RF 5
    Policy("p-stretch", 2, (("r5", 2), ("r1", 1)), (("r5", 1), ("r1", 1))),  # RF 5
    Policy("p-145", 2, (("r1", 1), ("r4", 1), ("r5", 1))),  # RF 3
]
WEIGHTS = [3, 3, 2, 1, 1, 1, 2]
# the policy change: one sync replica fewer in a rack that holds two
CHANGED = {
    "p-west2": Policy("p-west2-new", 2, (("r1", 1), ("r2", 1)), (("r3", 1),)),
    "p-v1-wide": Policy("p-v1-wide-new", 1, (("r2", 2), ("r4", 1)), (("r5", 1),)),
    "p-six": Policy("p-six-new", 2, (("r4", 2), ("r5", 1), ("r6", 1)), (("r1", 1),)),
}
RACK_SIZES = {"r1": 12, "r2": 10, "r3": 9, "r4": 8, "r5": 7, "r6": 5}
# kafka-utils can express one replica per rack and no observers: RF 3 over 3 unequal racks
PEER_POLICY = Policy("p-peer", 2, (("r1", 1), ("r2", 1), ("r3", 1)))
PEER_RACK_SIZES = {"r1": 10, "r2": 8, "r3": 6}


@dataclass
class Cluster:
    racks: dict[str, list[int]]  # rack -> broker ids
    topics: dict[str, int]  # topic -> partitions
    policy_of: dict[str, Policy]
    state: State
    sizes: dict[Key, int] = field(default_factory=dict)

    @property
    def rack_of(self) -> dict[int, str]:
        return {b: r for r, ids in self.racks.items() for b in ids}


def make_racks(sizes: dict[str, int], first: int = 1) -> dict[str, list[int]]:
    racks, nxt = {}, first
    for r, n in sizes.items():
        racks[r] = list(range(nxt, nxt + n))
        nxt += n
    return racks


def topic_counts(total: int, topics: int, rng: random.Random) -> list[int]:
    """Heavy-tailed partition counts (Pareto, alpha 1.1), >= 1 each, summing to about total."""
    raw = [rng.paretovariate(1.1) for _ in range(topics)]
    scale = total / sum(raw)
    counts = [max(1, min(4000, round(x * scale))) for x in raw]
    return counts


def generate(
    partitions: int,
    seed: int,
    *,
    layout: str = "balanced",
    policies: list[Policy] | None = None,
    weights: list[int] | None = None,
    rack_sizes: dict[str, int] | None = None,
    topics: int | None = None,
) -> Cluster:
    rng = random.Random(seed)
    policies = policies or POLICIES
    weights = weights or ([1] * len(policies) if policies is not POLICIES else WEIGHTS)
    racks = make_racks(rack_sizes or RACK_SIZES)
    n_topics = topics or max(10, partitions // 100)
    counts = topic_counts(partitions, n_topics, rng)
    names = [f"topic-{i:04d}" for i in range(n_topics)]
    policy_of = {t: rng.choices(policies, weights)[0] for t in names}
    # ring pointers (balanced) or broker weights (skewed), per rack
    ring = {r: rng.randrange(len(ids)) for r, ids in racks.items()}
    order = {r: rng.sample(ids, len(ids)) for r, ids in racks.items()}
    weight = {
        r: {b: (0.15 if rng.random() < 0.2 else 1 + 3 * rng.random()) for b in ids}
        for r, ids in racks.items()
    }
    lead_count: Counter[int] = Counter()
    state: State = {}
    sizes: dict[Key, int] = {}
    for t, n in zip(names, counts, strict=True):
        pol = policy_of[t]
        sync_need, obs_need = pol.need()
        topic_mu = math.log(2**30) + rng.gauss(0, 1.6)  # median 1 GiB per partition
        for p in range(n):
            per_rack: dict[str, list[int]] = {}
            for r in dict.fromkeys([*sync_need, *obs_need]):
                k = sync_need[r] + obs_need[r]
                ids = order[r]
                if layout == "balanced":
                    start = ring[r]
                    per_rack[r] = [ids[(start + i) % len(ids)] for i in range(k)]
                    ring[r] = (start + k) % len(ids)
                else:
                    chosen: list[int] = []
                    while len(chosen) < k:
                        b = rng.choices(ids, [weight[r][x] for x in ids])[0]
                        if b not in chosen:
                            chosen.append(b)
                    per_rack[r] = chosen
            sync: list[int] = []
            observers: list[int] = []
            taken: Counter[str] = Counter()
            for r, c in pol.sync:
                sync.extend(per_rack[r][taken[r] : taken[r] + c])
                taken[r] += c
            for r, c in pol.observers:
                observers.extend(per_rack[r][taken[r] : taken[r] + c])
                taken[r] += c
            lead_rack = pol.lead_rack
            candidates = [b for b in sync[: sync_need[lead_rack]]]
            if layout == "balanced":
                leader = min(candidates, key=lambda b: (lead_count[b], b))
            else:
                leader = rng.choice(candidates)
            lead_count[leader] += 1
            sync.remove(leader)
            replicas = (leader, *sync, *observers)
            state[(t, p)] = (tuple(replicas), tuple(observers))
            sizes[(t, p)] = max(1, int(math.exp(topic_mu + rng.gauss(0, 0.5))))
    return Cluster(racks, dict(zip(names, counts, strict=True)), policy_of, state, sizes)


# ---- files ---------------------------------------------------------------------------


def inventory_doc(
    racks: dict[str, list[int]], capacity: dict[int, int] | None = None
) -> dict[str, Any]:
    brokers = []
    for r, ids in racks.items():
        for b in ids:
            row: dict[str, Any] = {"id": b, "rack": r}
            row["capacity_bytes"] = (capacity or {}).get(b, 2**50)
            brokers.append(row)
    return {"brokers": sorted(brokers, key=lambda x: x["id"])}


def write_topics(
    directory: Path, cluster: Cluster, policy_of: dict[str, Policy] | None = None
) -> Path:
    """topics.json plus placement/<policy>.json files; returns the topics file."""
    policy_of = policy_of or cluster.policy_of
    (directory / "placement").mkdir(parents=True, exist_ok=True)
    for pol in set(policy_of.values()):
        path = directory / "placement" / f"{pol.name}.json"
        path.write_text(json.dumps(pol.doc(), indent=2) + "\n", encoding="utf-8")
    doc = {
        "topics": [
            {"name": t, "partitions": n, "placement": f"placement/{policy_of[t].name}.json"}
            for t, n in sorted(cluster.topics.items())
        ]
    }
    path = directory / "topics.json"
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return path


def write_json(path: Path, doc: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
    return path


def write_current(path: Path, state: State, with_observers: bool = True) -> Path:
    rows = []
    for (t, p), (replicas, observers) in sorted(state.items()):
        row: dict[str, Any] = {"topic": t, "partition": p, "replicas": list(replicas)}
        if with_observers and observers:
            row["observers"] = list(observers)
        rows.append(row)
    return write_json(path, {"version": 1, "partitions": rows})


def write_sized_snapshot(
    directory: Path,
    racks: dict[str, list[int]],
    state: State,
    sizes: dict[Key, int],
    capacity: dict[int, int] | None = None,
) -> Path:
    """A snapshot directory (Parquet) with size_bytes, through placement.io.snapshot."""
    import pyarrow as pa

    from placement.io.snapshot import Snapshot, write_snapshot

    inv = inventory_doc(racks, capacity)["brokers"]
    brokers = pa.table(
        {
            "broker_id": [b["id"] for b in inv],
            "rack": [b["rack"] for b in inv],
            "capacity_bytes": [b["capacity_bytes"] for b in inv],
        }
    )
    keys = sorted(state)
    topics = pa.table({"topic": sorted({t for t, _ in keys})})
    parts = pa.table(
        {
            "topic": [t for t, _ in keys],
            "partition": [p for _, p in keys],
            "replicas": [list(state[k][0]) for k in keys],
            "observers": [list(state[k][1]) for k in keys],
            "size_bytes": [sizes[k] for k in keys],
        }
    )
    write_snapshot(directory, Snapshot(brokers, topics, parts))
    return directory
