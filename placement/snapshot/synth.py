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


@dataclass(frozen=True)
class _Racks:
    """The synthetic racks: brokers 1..n in near-equal racks, in id order."""

    names: list[str]
    sizes: np.ndarray  # brokers per rack
    broker_ids: np.ndarray
    rack_of: np.ndarray  # each broker's rack, as an index into ``names``

    def members(self) -> dict[str, np.ndarray]:
        return {name: self.broker_ids[self.rack_of == i] for i, name in enumerate(self.names)}


def _layout(spec: SynthSpec) -> _Racks:
    """The racks the policies name come first, then generated names up to ``spec.racks``."""
    named = list(dict.fromkeys(r for p in spec.policies for r in p.per_rack()))
    if len(named) > spec.racks:
        raise ValueError(f"the policies name {len(named)} racks but --racks is {spec.racks}")
    racks = named + [r for r in rack_names(spec.racks) if r not in named][: spec.racks - len(named)]
    sizes = np.full(spec.racks, spec.brokers // spec.racks)
    sizes[: spec.brokers % spec.racks] += 1
    broker_ids = np.arange(1, spec.brokers + 1, dtype=np.int32)
    return _Racks(racks, sizes, broker_ids, np.repeat(np.arange(spec.racks), sizes))


def _check_fits(policies: list[PlacementPolicy], racks: _Racks) -> None:
    """Every rack a policy names exists and has a broker for each of its replicas."""
    members = racks.members()
    for p in policies:
        for rack, (s, o) in p.per_rack().items():
            if rack not in members:
                raise ValueError(f"policy names rack {rack!r}; synthetic racks are {racks.names}")
            if s + o > len(members[rack]):
                raise ValueError(
                    f"rack {rack!r} has {len(members[rack])} brokers, policy needs {s + o}"
                )


@dataclass(frozen=True)
class _Rows:
    """Per partition row: its policy (an index), replication factor and observer count;
    its replicas are ``values[offsets[i]:offsets[i + 1]]`` of one flat array."""

    policy: np.ndarray
    rf: np.ndarray
    observers: np.ndarray
    offsets: np.ndarray

    @classmethod
    def of(cls, policies: list[PlacementPolicy], topic_policy: np.ndarray, ppt: int) -> _Rows:
        row_policy = np.repeat(topic_policy, ppt)
        rf = np.array([p.sync_count + p.observer_count for p in policies], dtype=np.int64)
        n_obs = np.array([p.observer_count for p in policies], dtype=np.int64)
        row_rf = rf[row_policy]
        offsets = np.zeros(row_policy.size + 1, dtype=np.int64)
        np.cumsum(row_rf, out=offsets[1:])
        if offsets[-1] >= 2**31:  # list offsets are int32
            raise ValueError("more than 2^31 replicas: split the cluster")
        return cls(row_policy, row_rf, n_obs[row_policy], offsets)


def _place(
    policies: list[PlacementPolicy], rows: _Rows, racks: _Racks, rng: np.random.Generator
) -> np.ndarray:
    """Every row's replicas, as its policy wants them: per rack, consecutive brokers from
    a random start; sync replicas first, observers last."""
    members = racks.members()
    values = np.empty(int(rows.offsets[-1]), dtype=np.int32)
    for g, policy in enumerate(policies):
        chosen = np.flatnonzero(rows.policy == g)
        if not chosen.size:
            continue
        sync_cols: list[np.ndarray] = []
        obs_cols: list[np.ndarray] = []
        for rack, (s, o) in policy.per_rack().items():
            ids = members[rack]
            start = rng.integers(0, len(ids), size=chosen.size)
            picks = ids[(start[:, None] + np.arange(s + o)) % len(ids)]
            sync_cols.extend(picks[:, j] for j in range(s))
            obs_cols.extend(picks[:, s + j] for j in range(o))
        matrix = np.stack(sync_cols + obs_cols, axis=1)
        pos = rows.offsets[chosen][:, None] + np.arange(matrix.shape[1])
        values[pos] = matrix
    return values


def _break(
    values: np.ndarray, rows: _Rows, racks: _Racks, fraction: float, rng: np.random.Generator
) -> int:
    """Move the first sync replica of about ``fraction`` of the rows to a broker of another
    rack, skipping the moves that would list a broker twice; returns the rows moved."""
    n_racks = len(racks.names)
    chosen = np.flatnonzero(rng.random(rows.policy.size) < fraction)
    first = rows.offsets[chosen]
    old_rack = racks.rack_of[values[first] - 1]
    new_rack = (old_rack + rng.integers(1, n_racks, size=chosen.size)) % n_racks
    rack_start = np.concatenate([[0], np.cumsum(racks.sizes)[:-1]])
    cand = racks.broker_ids[rack_start[new_rack] + rng.integers(0, racks.sizes[new_rack])]
    clash = np.zeros(chosen.size, dtype=bool)
    for j in range(1, int(rows.rf.max(initial=0))):
        ok = j < rows.rf[chosen]
        idx = np.where(ok, first + j, first)
        clash |= ok & (values[idx] == cand)
    keep = ~clash
    values[first[keep]] = cand[keep]
    return int(keep.sum())


def _sizes(rng: np.random.Generator, n_topics: int, ppt: int) -> np.ndarray:
    """Per topic a log-normal scale (median 64 MiB, heavy tail), per partition jitter."""
    topic_scale = rng.lognormal(mean=np.log(2**26), sigma=1.6, size=n_topics)
    jitter = rng.lognormal(0.0, 0.4, size=n_topics * ppt)
    return (np.repeat(topic_scale, ppt) * jitter).astype(np.int64)


def _sublists(values: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> pa.ListArray:
    """Row i's list: ``counts[i]`` values from ``values[starts[i]]`` on."""
    offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    pos = np.repeat(starts, counts) + (
        np.arange(int(offsets[-1])) - np.repeat(offsets[:-1], counts)
    )
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(values[pos]))


def _partitions(
    names: np.ndarray, ppt: int, rows: _Rows, values: np.ndarray, size_bytes: np.ndarray
) -> pa.Table:
    """The partitions table: ISR = the sync replicas, leader = the first replica."""
    n_topics = names.size
    topic_col = pa.DictionaryArray.from_arrays(
        pa.array(np.repeat(np.arange(n_topics, dtype=np.int32), ppt)), pa.array(names)
    ).cast(pa.string())
    offsets = rows.offsets
    return pa.table(
        {
            "topic": topic_col,
            "partition": pa.array(np.tile(np.arange(ppt, dtype=np.int32), n_topics)),
            "replicas": pa.ListArray.from_arrays(
                pa.array(offsets.astype(np.int32)), pa.array(values)
            ),
            "observers": _sublists(values, offsets[1:] - rows.observers, rows.observers),
            "isr": _sublists(values, offsets[:-1], rows.rf - rows.observers),
            "leader": pa.array(values[offsets[:-1]]),
            "size_bytes": pa.array(size_bytes),
        }
    )


def _brokers(racks: _Racks) -> pa.Table:
    n = racks.broker_ids.size
    return pa.table(
        {
            "broker_id": pa.array(racks.broker_ids),
            "rack": pa.array([racks.names[i] for i in racks.rack_of]),
            "capacity_bytes": pa.array(np.full(n, 8 * 2**40, dtype=np.int64)),
        }
    )


def _topics(
    names: np.ndarray, policies: list[PlacementPolicy], topic_policy: np.ndarray
) -> pa.Table:
    """The topics table: each topic's policy as JSON; min ISR 2 with 3 sync replicas or more."""
    policy_text = [policy_json(p) for p in policies]
    sync = np.array([p.sync_count for p in policies], dtype=np.int64)[topic_policy]
    return pa.table(
        {
            "topic": pa.array(names.tolist(), pa.string()),
            "placement": pa.array([policy_text[g] for g in topic_policy], pa.string()),
            "min_isr": pa.array(np.where(sync >= 3, 2, 1).astype(np.int32)),
        }
    )


def synth(spec: SynthSpec) -> SynthResult:
    """The cluster ``spec`` describes; the same spec (seed included) gives the same tables."""
    check_spec(spec)
    if spec.brokers < spec.racks or spec.racks < 1:
        raise ValueError("need at least one broker per rack")
    rng = np.random.default_rng(spec.seed)
    racks = _layout(spec)
    policies = list(spec.policies) or default_policies(racks.names, int(racks.sizes.min()))
    _check_fits(policies, racks)
    n_topics, ppt = spec.topics, spec.partitions_per_topic
    # the draws below come in a fixed order: a seed's files must not change
    topic_policy = rng.integers(0, len(policies), size=n_topics)
    rows = _Rows.of(policies, topic_policy, ppt)
    values = _place(policies, rows, racks, rng)
    broken = 0
    if spec.violations > 0 and spec.racks > 1:
        broken = _break(values, rows, racks, spec.violations, rng)
    size_bytes = _sizes(rng, n_topics, ppt)
    names = np.array(
        [f"{PREFIXES[i % len(PREFIXES)]}-{i:06d}" for i in range(n_topics)], dtype=object
    )
    partitions = _partitions(names, ppt, rows, values, size_bytes)
    snapshot = Snapshot(_brokers(racks), _topics(names, policies, topic_policy), partitions)
    return SynthResult(snapshot, broken)
