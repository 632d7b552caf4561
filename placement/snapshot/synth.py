"""A realistic synthetic cluster, generated with numpy (no per-partition Python loops).

Racks of near-equal size, topics with a mix of v1/v2 policies (observers included, some
racks shared by replicas and observers), heavy-tailed partition sizes, ISR = sync
replicas, and optionally a fraction of partitions that break their policy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from placement.io.limits import BROKERS, PARTITIONS_PER_TOPIC, PARTITIONS_TOTAL, TOPICS, check_count
from placement.io.snapshot import Snapshot
from placement.model.policy import PlacementPolicy

PREFIXES = (
    "orders",
    "payments",
    "clickstream",
    "inventory",
    "audit",
    "sessions",
    "metrics",
    "shipments",
    "fraud-scores",
    "user-events",
)


@dataclass(frozen=True)
class SynthSpec:
    brokers: int
    racks: int
    topics: int
    partitions_per_topic: int
    policies: tuple[PlacementPolicy, ...] = ()
    violations: float = 0.0
    seed: int = 0


@dataclass(frozen=True)
class SynthResult:
    snapshot: Snapshot
    violations: int  # partitions generated in breach of their policy


def rack_names(n: int) -> list[str]:
    return [f"rack-{i + 1:02d}" for i in range(n)]


def default_policies(racks: list[str], rack_size: int) -> list[PlacementPolicy]:
    """A mix operators run: stretched v2 with observers, v1 with observers, same-rack overlap."""

    def entry(count: int, rack: str) -> dict[str, object]:
        return {"count": count, "constraints": {"rack": rack}}

    out: list[PlacementPolicy] = []
    for shift in range(len(racks)):
        r = [racks[(shift + i) % len(racks)] for i in range(len(racks))]
        if len(r) == 1 or rack_size < 2:
            docs: list[dict[str, object]] = [
                {"version": 2, "replicas": [entry(min(3, rack_size), r[0])]}
            ]
        else:
            docs = [
                {
                    "version": 2,
                    "replicas": [entry(2, r[0]), entry(1, r[1])],
                    "observers": [entry(1, r[-1])],
                    "observerPromotionPolicy": "under-min-isr",
                },
                {
                    "version": 1,
                    "replicas": [entry(2, r[0]), entry(2, r[1])],
                    "observers": [entry(1, r[-1])] if len(r) > 2 else [],
                },
                {
                    "version": 2,
                    "replicas": [entry(min(3, rack_size), r[0])],
                    "observers": [entry(1, r[1])],
                    "observerPromotionPolicy": "under-replicated",
                },
            ]
            if rack_size >= 3:
                docs.append(
                    {
                        "version": 2,
                        "replicas": [entry(2, r[0]), entry(2, r[1])],
                        "observers": [entry(1, r[0]), entry(1, r[1])],
                    }
                )
        out.extend(PlacementPolicy.model_validate(d) for d in docs)
    return out


def policy_json(policy: PlacementPolicy) -> str:
    return json.dumps(
        policy.model_dump(mode="json", exclude_none=True, exclude_defaults=False),
        separators=(",", ":"),
    )


def check_spec(spec: SynthSpec) -> None:
    """Refuse sizes above the documented caps before anything is allocated (a usage error)."""
    check_count(BROKERS, spec.brokers, "--brokers")
    check_count(TOPICS, spec.topics, "--topics")
    check_count(PARTITIONS_PER_TOPIC, spec.partitions_per_topic, "--partitions-per-topic")
    check_count(
        PARTITIONS_TOTAL,
        spec.topics * spec.partitions_per_topic,
        "--topics x --partitions-per-topic",
    )


def synth(spec: SynthSpec) -> SynthResult:
    check_spec(spec)
    if spec.brokers < spec.racks or spec.racks < 1:
        raise ValueError("need at least one broker per rack")
    rng = np.random.default_rng(spec.seed)
    racks = rack_names(spec.racks)
    named = list(dict.fromkeys(r for p in spec.policies for r in p.per_rack()))
    if len(named) > spec.racks:
        raise ValueError(f"the policies name {len(named)} racks but --racks is {spec.racks}")
    racks = named + [r for r in racks if r not in named][: spec.racks - len(named)]
    sizes = np.full(spec.racks, spec.brokers // spec.racks)
    sizes[: spec.brokers % spec.racks] += 1
    broker_ids = np.arange(1, spec.brokers + 1, dtype=np.int32)
    rack_of = np.repeat(np.arange(spec.racks), sizes)
    members = {racks[i]: broker_ids[rack_of == i] for i in range(spec.racks)}

    policies = list(spec.policies) or default_policies(racks, int(sizes.min()))
    for p in policies:
        for rack, (s, o) in p.per_rack().items():
            if rack not in members:
                raise ValueError(f"policy names rack {rack!r}; synthetic racks are {racks}")
            if s + o > len(members[rack]):
                raise ValueError(
                    f"rack {rack!r} has {len(members[rack])} brokers, policy needs {s + o}"
                )
    n_topics, ppt = spec.topics, spec.partitions_per_topic
    n = n_topics * ppt
    topic_policy = rng.integers(0, len(policies), size=n_topics)
    row_policy = np.repeat(topic_policy, ppt)
    rf = np.array([p.sync_count + p.observer_count for p in policies], dtype=np.int64)
    n_obs = np.array([p.observer_count for p in policies], dtype=np.int64)
    row_rf = rf[row_policy]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(row_rf, out=offsets[1:])
    values = np.empty(int(offsets[-1]), dtype=np.int32)

    for g, policy in enumerate(policies):
        rows = np.flatnonzero(row_policy == g)
        if not rows.size:
            continue
        sync_cols: list[np.ndarray] = []
        obs_cols: list[np.ndarray] = []
        for rack, (s, o) in policy.per_rack().items():
            ids = members[rack]
            start = rng.integers(0, len(ids), size=rows.size)
            picks = ids[(start[:, None] + np.arange(s + o)) % len(ids)]
            sync_cols.extend(picks[:, j] for j in range(s))
            obs_cols.extend(picks[:, s + j] for j in range(o))
        matrix = np.stack(sync_cols + obs_cols, axis=1)
        pos = offsets[rows][:, None] + np.arange(matrix.shape[1])
        values[pos] = matrix

    broken = 0
    if spec.violations > 0 and spec.racks > 1:
        chosen = np.flatnonzero(rng.random(n) < spec.violations)
        # move the row's first sync replica to a broker of another rack, avoiding duplicates
        first = offsets[chosen]
        old = values[first]
        old_rack = rack_of[old - 1]
        new_rack = (old_rack + rng.integers(1, spec.racks, size=chosen.size)) % spec.racks
        rack_start = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        cand = broker_ids[rack_start[new_rack] + rng.integers(0, sizes[new_rack])]
        clash = np.zeros(chosen.size, dtype=bool)
        width = int(rf.max())
        for j in range(1, width):
            ok = j < row_rf[chosen]
            idx = np.where(ok, first + j, first)
            clash |= ok & (values[idx] == cand)
        keep = ~clash
        values[first[keep]] = cand[keep]
        broken = int(keep.sum())

    # sizes: per topic a log-normal scale (median 64 MiB, heavy tail), per partition jitter
    topic_scale = rng.lognormal(mean=np.log(2**26), sigma=1.6, size=n_topics)
    size_bytes = (np.repeat(topic_scale, ppt) * rng.lognormal(0.0, 0.4, size=n)).astype(np.int64)

    names = np.array(
        [f"{PREFIXES[i % len(PREFIXES)]}-{i:06d}" for i in range(n_topics)], dtype=object
    )
    topic_col = pa.DictionaryArray.from_arrays(
        pa.array(np.repeat(np.arange(n_topics, dtype=np.int32), ppt)), pa.array(names)
    ).cast(pa.string())
    partition_col = pa.array(np.tile(np.arange(ppt, dtype=np.int32), n_topics))
    if offsets[-1] >= 2**31:
        raise ValueError("more than 2^31 replicas: split the cluster")
    replicas = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(values))
    obs_count = n_obs[row_policy]
    obs_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(obs_count, out=obs_offsets[1:])
    obs_pos = np.repeat(offsets[1:] - obs_count, obs_count) + (
        np.arange(int(obs_offsets[-1])) - np.repeat(obs_offsets[:-1], obs_count)
    )
    observers = pa.ListArray.from_arrays(
        pa.array(obs_offsets.astype(np.int32)), pa.array(values[obs_pos])
    )
    sync_count = row_rf - obs_count
    isr_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sync_count, out=isr_offsets[1:])
    isr_pos = np.repeat(offsets[:-1], sync_count) + (
        np.arange(int(isr_offsets[-1])) - np.repeat(isr_offsets[:-1], sync_count)
    )
    isr = pa.ListArray.from_arrays(
        pa.array(isr_offsets.astype(np.int32)), pa.array(values[isr_pos])
    )
    leader = pa.array(values[offsets[:-1]])

    partitions = pa.table(
        {
            "topic": topic_col,
            "partition": partition_col,
            "replicas": replicas,
            "observers": observers,
            "isr": isr,
            "leader": leader,
            "size_bytes": pa.array(size_bytes),
        }
    )
    brokers = pa.table(
        {
            "broker_id": pa.array(broker_ids),
            "rack": pa.array([racks[i] for i in rack_of]),
            "capacity_bytes": pa.array(np.full(spec.brokers, 8 * 2**40, dtype=np.int64)),
        }
    )
    policy_text = [policy_json(p) for p in policies]
    topics = pa.table(
        {
            "topic": pa.array(names.tolist(), pa.string()),
            "placement": pa.array([policy_text[g] for g in topic_policy], pa.string()),
            "min_isr": pa.array(
                np.where(rf[topic_policy] - n_obs[topic_policy] >= 3, 2, 1).astype(np.int32)
            ),
        }
    )
    return SynthResult(Snapshot(brokers, topics, partitions), broken)
