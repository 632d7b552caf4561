"""Seeded clusters as `kafka-topics --describe` text (Confluent's format) plus an inventory.

For bench_quality.py's describe scenarios: what a real cluster hands mrc-plan, rather than
a topics file. Everything is seeded (random.Random(seed)); same arguments, same files.

- `plain`: an Apache cluster without placement policies: 3 racks of 6/6/5 brokers, RF 3
  (some RF 2 and RF 4 topics) placed as Kafka's rack-aware assignment places them
  (AdminUtils.assignReplicasToBrokers: the rack-alternated broker list, a random start and
  replica shift per topic; kafka-topics --create and kafka-reassign-partitions --generate
  use it), so preferred leaders fall on every rack, and `__consumer_offsets` (50 partitions,
  RF 3). A few partitions were moved by hand and hold two replicas in one rack
  (`broken`): they break the rack-aware rule and are what `--repair` is for.
- `mixed`: a Confluent cluster of 4 racks (6/6/5/4): a third of the topics carry a v2
  topic policy with observers in `Configs:`, a third were placed by the cluster's default
  policy (`DEFAULT_POLICY`, RF 3 over three racks; nothing in `Configs:`), a third have no
  policy and were placed by Kafka's rack-aware assignment over the 4 racks.
  `__consumer_offsets` follows the default. Preferred leaders are spread over every rack
  that holds sync replicas. Without a default every topic lacking a topic policy falls to
  the rack-aware rule, which the default's placements (one replica in each of three of
  four racks) meet; with the default, the rack-aware topics would break it, so a run with
  `--default-policy` is given the describe output without them (`write_describe(topics=)`).

Replicas are listed sync first (the preferred leader first), then observers. `Isr` holds
the sync replicas of live brokers, `Leader` its first member; `dead` brokers show in
`Offline` and nowhere in `Isr`, as after a broker failure.
"""

from __future__ import annotations

import base64
import functools
import json
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import quality_gen as gen

Policy = gen.Policy
State = gen.State
Key = gen.Key

OFFSETS = "__consumer_offsets"
PLAIN_RACKS = {"rack-a": 6, "rack-b": 6, "rack-c": 5}
MIXED_RACKS = {"dc1-a": 6, "dc1-b": 6, "dc2-a": 5, "dc2-b": 4}
RF_WEIGHTS = {3: 8, 2: 1, 4: 1}  # plain cluster: replication factors of its topics
TOPIC_POLICIES = [
    Policy("p-orders", 2, (("dc1-a", 1), ("dc1-b", 1), ("dc2-a", 1)), (("dc2-b", 1),)),
    Policy("p-ledger", 2, (("dc1-a", 2), ("dc1-b", 1)), (("dc2-a", 1), ("dc2-b", 1))),
    Policy("p-wide", 2, (("dc1-a", 2), ("dc2-a", 2)), (("dc1-b", 1),)),
]
DEFAULT_POLICY = Policy("default", 2, (("dc1-a", 1), ("dc1-b", 1), ("dc2-a", 1)))
# the one-topic policy changes: plain gains a policy (RF 3 -> 4: one more replica in rack-a,
# rack-c's becomes an observer); in mixed a p-orders topic gives up its dc2-a sync replica
PLAIN_NEW_POLICY = Policy("new-plain", 2, (("rack-a", 2), ("rack-b", 1)), (("rack-c", 1),))
MIXED_NEW_POLICY = Policy("new-orders", 2, (("dc1-a", 2), ("dc1-b", 1)), (("dc2-b", 1),))


@dataclass
class DescribeCluster:
    racks: dict[str, list[int]]  # rack -> broker ids
    topics: dict[str, int]  # topic -> partitions
    policy_of: dict[str, Policy]  # topic-level policies (in Configs)
    placed_by: dict[str, str]  # topic -> "policy", "default" or "rack-aware"
    state: State
    broken: set[Key] = field(default_factory=set)  # hand-moved, breaking their rule

    @property
    def rack_of(self) -> dict[int, str]:
        return {b: r for r, ids in self.racks.items() for b in ids}


# ---- Kafka's rack-aware assignment ----------------------------------------------------------


def rack_alternated(rack_of: dict[int, str]) -> list[int]:
    """Kafka's getRackAlternatedBrokerList: racks in name order, each rack's brokers in id
    order, one broker of each rack in turn."""
    racks = sorted(set(rack_of.values()))
    queues = {r: sorted(b for b, x in rack_of.items() if x == r) for r in racks}
    out: list[int] = []
    i = 0
    while len(out) < len(rack_of):
        q = queues[racks[i]]
        if q:
            out.append(q.pop(0))
        i = (i + 1) % len(racks)
    return out


def kafka_rack_aware(
    partitions: int, rf: int, rack_of: dict[int, str], rng: random.Random
) -> list[tuple[int, ...]]:
    """Kafka's assignReplicasToBrokersRackAware, with a random start index and replica
    shift as kafka-topics draws them: a rack gets a second replica only once every rack has
    one, and the first replicas (preferred leaders) walk the rack-alternated list."""
    arranged = rack_alternated(rack_of)
    n, n_racks = len(arranged), len(set(rack_of.values()))
    start, shift = rng.randrange(n), rng.randrange(n)
    out = []
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        replicas = [arranged[first]]
        racks = {rack_of[arranged[first]]}
        k = 0
        while len(replicas) < rf:
            b = arranged[(first + 1 + (shift * n_racks + k) % (n - 1)) % n]
            k += 1
            if (rack_of[b] not in racks or len(racks) == n_racks) and b not in replicas:
                replicas.append(b)
                racks.add(rack_of[b])
        out.append(tuple(replicas))
    return out


# ---- policy placement ---------------------------------------------------------------------


class PolicyPlacer:
    """Places partitions by a policy: each rack's brokers taken in turn from a ring (so
    replicas per broker stay within one of even), the preferred leader the sync replica
    that leads the fewest partitions so far, in whichever rack it is."""

    def __init__(self, racks: dict[str, list[int]], rng: random.Random, leads: Counter[int]):
        self.order = {r: rng.sample(ids, len(ids)) for r, ids in racks.items()}
        self.ring = {r: rng.randrange(len(ids)) for r, ids in racks.items()}
        self.leads = leads

    def place(self, pol: Policy) -> tuple[tuple[int, ...], tuple[int, ...]]:
        sync_need, obs_need = pol.need()
        per_rack: dict[str, list[int]] = {}
        for r in dict.fromkeys([*sync_need, *obs_need]):
            ids, start = self.order[r], self.ring[r]
            k = sync_need[r] + obs_need[r]
            per_rack[r] = [ids[(start + i) % len(ids)] for i in range(k)]
            self.ring[r] = (start + k) % len(ids)
        sync: list[int] = []
        observers: list[int] = []
        for r, c in pol.sync:
            sync += per_rack[r][:c]
            del per_rack[r][:c]
        for r, c in pol.observers:
            observers += per_rack[r][:c]
            del per_rack[r][:c]
        leader = min(sync, key=lambda b: (self.leads[b], b))
        sync.remove(leader)
        return (leader, *sync, *observers), tuple(observers)


# ---- clusters -----------------------------------------------------------------------------


def _topic_sizes(partitions: int, rng: random.Random) -> list[int]:
    """Partition counts of the topics beside __consumer_offsets: heavy-tailed, >= 1 each."""
    rest = max(1, partitions - 50)
    return gen.topic_counts(rest, max(6, rest // 25), rng)


def plain(partitions: int, seed: int) -> DescribeCluster:
    rng = random.Random(seed)
    racks = gen.make_racks(PLAIN_RACKS)
    rack_of = {b: r for r, ids in racks.items() for b in ids}
    counts = _topic_sizes(partitions, rng)
    topics = {OFFSETS: 50} | {f"topic-{i:03d}": n for i, n in enumerate(counts)}
    state: State = {}
    for t, n in topics.items():
        rf = 3 if t == OFFSETS else rng.choices(list(RF_WEIGHTS), list(RF_WEIGHTS.values()))[0]
        for p, reps in enumerate(kafka_rack_aware(n, rf, rack_of, rng)):
            state[(t, p)] = (reps, ())
    # hand-moved partitions: one replica moved into a rack that already holds one
    rf3 = sorted(k for k, (reps, _) in state.items() if len(reps) == 3 and k[0] != OFFSETS)
    broken = set(rng.sample(rf3, max(3, len(rf3) // 100)))
    for k in sorted(broken):
        reps = list(state[k][0])
        home = rack_of[reps[0]]
        reps[-1] = rng.choice([b for b in racks[home] if b not in reps])
        state[k] = (tuple(reps), ())
    placed = dict.fromkeys(topics, "rack-aware")
    return DescribeCluster(racks, topics, {}, placed, state, broken)


def mixed(partitions: int, seed: int) -> DescribeCluster:
    rng = random.Random(seed)
    racks = gen.make_racks(MIXED_RACKS)
    rack_of = {b: r for r, ids in racks.items() for b in ids}
    counts = _topic_sizes(partitions, rng)
    topics = {OFFSETS: 50} | {f"topic-{i:03d}": n for i, n in enumerate(counts)}
    kinds = ("policy", "default", "rack-aware")
    placed = {t: ("default" if t == OFFSETS else kinds[i % 3]) for i, t in enumerate(topics)}
    policy_of = {
        t: TOPIC_POLICIES[i % len(TOPIC_POLICIES)]
        for i, t in enumerate(t for t in topics if placed[t] == "policy")
    }
    leads: Counter[int] = Counter()
    placer = PolicyPlacer(racks, rng, leads)
    state: State = {}
    for t, n in topics.items():
        if placed[t] == "rack-aware":
            for p, reps in enumerate(kafka_rack_aware(n, 3, rack_of, rng)):
                state[(t, p)] = (reps, ())
                leads[reps[0]] += 1
            continue
        pol = policy_of.get(t, DEFAULT_POLICY)
        for p in range(n):
            state[(t, p)] = placer.place(pol)
            leads[state[(t, p)][0][0]] += 1
    return DescribeCluster(racks, topics, policy_of, placed, state)


# ---- files --------------------------------------------------------------------------------


def _ids(ids: tuple[int, ...] | list[int]) -> str:
    return ",".join(map(str, ids))


def _topic_id(rng: random.Random) -> str:
    return base64.urlsafe_b64encode(rng.randbytes(16)).decode().rstrip("=")


def _configs(topic: str, rf: int, pol: Policy | None) -> str:
    if topic == OFFSETS:
        return "compression.type=producer,cleanup.policy=compact,segment.bytes=104857600"
    sync = rf - sum(c for _, c in pol.observers) if pol else rf
    out = f"min.insync.replicas={min(2, max(1, sync - 1))},cleanup.policy=delete"
    if pol is not None:
        doc = json.dumps(pol.doc(), separators=(",", ":"))
        out += f",confluent.placement.constraints={doc}"
    return out + ",retention.ms=604800000"


def describe_text(
    cluster: DescribeCluster, topics: list[str] | None = None, dead: tuple[int, ...] = ()
) -> str:
    """The describe output of ``topics`` (default: all), with ``dead`` brokers down."""
    rng = random.Random(len(cluster.state))  # topic ids: same cluster, same ids
    ids = {t: _topic_id(rng) for t in cluster.topics}
    down = set(dead)
    lines = []
    for t in topics if topics is not None else list(cluster.topics):
        n = cluster.topics[t]
        rf = len(cluster.state[(t, 0)][0])
        conf = _configs(t, rf, cluster.policy_of.get(t))
        lines.append(
            f"Topic: {t}\tTopicId: {ids[t]}\tPartitionCount: {n}\t"
            f"ReplicationFactor: {rf}\tConfigs: {conf}"
        )
        for p in range(n):
            reps, obs = cluster.state[(t, p)]
            sync = reps[: len(reps) - len(obs)]
            isr = [b for b in sync if b not in down]
            offline = [b for b in reps if b in down]
            leader = str(isr[0]) if isr else "none"
            lines.append(
                f"\tTopic: {t}\tPartition: {p}\tLeader: {leader}\tReplicas: {_ids(reps)}\t"
                f"Isr: {_ids(isr)}\tOffline: {_ids(offline)}\tObservers: {_ids(obs)}\t"
                "Elr: \tLastKnownElr: "
            )
    return "\n".join(lines) + "\n"


def write_describe(
    path: Path,
    cluster: DescribeCluster,
    topics: list[str] | None = None,
    dead: tuple[int, ...] = (),
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(describe_text(cluster, topics, dead), encoding="utf-8")
    return path


def write_policy(path: Path, pol: Policy) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(pol.doc(), indent=2) + "\n", encoding="utf-8")
    return path


def write_change(directory: Path, topic: str, pol: Policy, partitions: int | None = None) -> Path:
    """A topics file holding one topic's new policy (a file beside it); ``partitions`` is
    written only when given (mrc-plan's reader may still require the key)."""
    write_policy(directory / "placement" / f"{pol.name}.json", pol)
    entry: dict[str, object] = {"name": topic, "placement": f"placement/{pol.name}.json"}
    if partitions is not None:
        entry["partitions"] = partitions
    return gen.write_json(directory / "topics.json", {"topics": [entry]})


# ---- a million partitions, as a snapshot ---------------------------------------------------

PERF_RACKS = {"r1": 250, "r2": 250, "r3": 250, "r4": 250}
PERF_POLICIES = [
    Policy("perf-orders", 2, (("r1", 1), ("r2", 1), ("r3", 1)), (("r4", 1),)),
    Policy("perf-ledger", 2, (("r1", 2), ("r2", 1)), (("r3", 1),)),
    Policy("perf-east", 2, (("r2", 1), ("r3", 1), ("r4", 1))),
]
PERF_DEFAULT = Policy("perf-default", 2, (("r1", 1), ("r2", 1), ("r3", 1)))


@dataclass
class FlatCluster:
    """A cluster too large for a dict per partition: replicas as one flat array. Topics in
    thirds (i % 3): placed by a topic policy, by the default policy (nothing in the
    topics table), or by Kafka's rack-aware assignment (RF 3)."""

    racks: dict[str, list[int]]
    topics: list[str]
    per_topic: int
    placed_by: dict[str, str]
    policy_of: dict[str, Policy]  # topic-level policies (the topics table's placement)
    values: Any  # numpy int32: every partition's replicas, sync first, observers last
    offsets: Any  # numpy int64, one more than partitions: where each partition's run starts
    observers: Any  # numpy int8: the observers at the end of each run

    def key(self, row: int) -> Key:
        return self.topics[row // self.per_topic], row % self.per_topic

    def row(self, key: Key) -> int:
        return self.topic_index[key[0]] * self.per_topic + key[1]

    @functools.cached_property
    def topic_index(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.topics)}

    def entry(self, row: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        reps = tuple(int(b) for b in self.values[self.offsets[row] : self.offsets[row + 1]])
        n_obs = int(self.observers[row])
        return reps, reps[len(reps) - n_obs :] if n_obs else ()

    def rows_on(self, brokers: tuple[int, ...]) -> Any:
        """The rows (partitions) with a replica on one of these brokers."""
        import numpy as np

        hit = np.isin(self.values, brokers)
        starts = self.offsets[:-1]
        return np.flatnonzero(np.add.reduceat(hit.astype(np.int32), starts) > 0)

    def state(self, rows: Any) -> State:
        return {self.key(int(r)): self.entry(int(r)) for r in rows}


def _rack_aware_block(
    partitions: int, rf: int, arranged: Any, rack_idx: Any, n_racks: int, rng: random.Random
) -> Any:
    """kafka_rack_aware for one topic, vectorized over its partitions (rf <= racks)."""
    import numpy as np

    n = len(arranged)
    start, shift = rng.randrange(n), rng.randrange(n)
    p = np.arange(partitions)
    shifts = shift + np.where(p > 0, p // n, 0)
    first = (p + start) % n
    out = np.empty((partitions, rf), dtype=np.int32)
    out[:, 0] = arranged[first]
    used = np.left_shift(1, rack_idx[first])
    count = np.ones(partitions, dtype=np.int64)
    k = 0
    while (count < rf).any():
        idx = (first + 1 + (shifts * n_racks + k) % (n - 1)) % n
        rack = rack_idx[idx]
        take = (count < rf) & ((np.right_shift(used, rack) & 1) == 0)
        rows = np.flatnonzero(take)
        out[rows, count[rows]] = arranged[idx[rows]]
        used[rows] |= np.left_shift(1, rack[rows])
        count[rows] += 1
        k += 1
    return out


def _policy_block(
    partitions: int, pol: Policy, racks: dict[str, Any], ring: dict[str, int], lead: int
) -> tuple[Any, int]:
    """Partitions of one topic placed by a policy: each rack's brokers from a ring, the
    preferred leader rotating over every sync replica. Returns the rows and the observers."""
    import numpy as np

    sync_need, obs_need = pol.need()
    p = np.arange(partitions)
    cols: dict[str, list[Any]] = {}
    for r in dict.fromkeys([*sync_need, *obs_need]):
        k, ids = sync_need[r] + obs_need[r], racks[r]
        cols[r] = [ids[(ring[r] + p * k + i) % len(ids)] for i in range(k)]
        ring[r] = (ring[r] + partitions * k) % len(ids)
    sync: list[Any] = []
    obs: list[Any] = []
    for r, c in pol.sync:
        sync += cols[r][:c]
        del cols[r][:c]
    for r, c in pol.observers:
        obs += cols[r][:c]
        del cols[r][:c]
    block = np.stack([*sync, *obs], axis=1).astype(np.int32)
    at = (p + lead) % len(sync)  # the preferred leader's column
    leader = block[p, at]
    block[p, at] = block[:, 0]
    block[:, 0] = leader
    return block, len(obs)


def flat_cluster(topics: int, per_topic: int, seed: int) -> FlatCluster:
    import numpy as np

    rng = random.Random(seed)
    racks = gen.make_racks(PERF_RACKS)
    rack_of = {b: r for r, ids in racks.items() for b in ids}
    names = sorted(racks)
    arranged = np.array(rack_alternated(rack_of), dtype=np.int32)
    rack_idx = np.array([names.index(rack_of[int(b)]) for b in arranged], dtype=np.int64)
    by_rack = {r: np.array(rng.sample(ids, len(ids)), dtype=np.int32) for r, ids in racks.items()}
    ring = {r: rng.randrange(len(ids)) for r, ids in racks.items()}
    kinds = ("policy", "default", "rack-aware")
    topic_names = [f"topic-{i:04d}" for i in range(topics)]
    placed = {t: kinds[i % 3] for i, t in enumerate(topic_names)}
    policy_of = {
        t: PERF_POLICIES[i % len(PERF_POLICIES)]
        for i, t in enumerate(t for t in topic_names if placed[t] == "policy")
    }
    blocks, widths, n_obs = [], [], []
    for t in topic_names:
        if placed[t] == "rack-aware":
            block = _rack_aware_block(per_topic, 3, arranged, rack_idx, len(names), rng)
            obs = 0
        else:
            pol = policy_of.get(t, PERF_DEFAULT)
            block, obs = _policy_block(per_topic, pol, by_rack, ring, rng.randrange(per_topic))
        blocks.append(block.ravel())
        widths.append(block.shape[1])
        n_obs.append(obs)
    offsets = np.zeros(topics * per_topic + 1, dtype=np.int64)
    np.cumsum(np.repeat(widths, per_topic), out=offsets[1:])
    values = np.concatenate(blocks)
    observers = np.repeat(np.array(n_obs, dtype=np.int8), per_topic)
    return FlatCluster(racks, topic_names, per_topic, placed, policy_of, values, offsets, observers)


def write_flat_snapshot(directory: Path, cluster: FlatCluster) -> Path:
    """The cluster as a snapshot directory (placement.io.snapshot's writer): the topics
    table's `placement` holds each topic policy, null for the other topics."""
    import numpy as np
    import pyarrow as pa

    from placement.io.snapshot import Snapshot, write_snapshot

    ids = sorted(b for members in cluster.racks.values() for b in members)
    rack_of = {b: r for r, members in cluster.racks.items() for b in members}
    brokers = pa.table({"broker_id": pa.array(ids, pa.int32()), "rack": [rack_of[b] for b in ids]})
    placement = [
        json.dumps(cluster.policy_of[t].doc()) if t in cluster.policy_of else None
        for t in cluster.topics
    ]
    topics = pa.table({"topic": cluster.topics, "placement": pa.array(placement, pa.string())})
    n = len(cluster.offsets) - 1
    # observers: the last n_obs entries of each run
    n_obs = cluster.observers.astype(np.int64)
    obs_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(n_obs, out=obs_offsets[1:])
    ends = cluster.offsets[1:]
    starts = np.repeat(ends - n_obs, n_obs)
    within = np.arange(int(obs_offsets[-1])) - np.repeat(obs_offsets[:-1], n_obs)
    obs_values = cluster.values[starts + within]
    parts = pa.table(
        {
            "topic": pa.DictionaryArray.from_arrays(
                pa.array(np.repeat(np.arange(len(cluster.topics)), cluster.per_topic)),
                pa.array(cluster.topics),
            ).cast(pa.string()),
            "partition": pa.array(
                np.tile(np.arange(cluster.per_topic), len(cluster.topics)), pa.int32()
            ),
            "replicas": pa.ListArray.from_arrays(
                pa.array(cluster.offsets, pa.int32()), pa.array(cluster.values, pa.int32())
            ),
            "observers": pa.ListArray.from_arrays(
                pa.array(obs_offsets, pa.int32()), pa.array(obs_values, pa.int32())
            ),
        }
    )
    write_snapshot(directory, Snapshot(brokers, topics, parts))
    return directory
