"""Vectorized facts about a snapshot: load per broker and policy violations
(docs/definitions.md, policy violations)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from placement.io.snapshot import Snapshot, list_arrays, snapshot_policies
from placement.model.policy import PlacementPolicy
from placement.plan.balance import rack_minmax


@dataclass(frozen=True)
class ClusterSummary:
    brokers: int
    brokers_per_rack: dict[str, int]
    topics: int
    partitions: int
    replicas: int
    total_bytes: int
    replicas_per_broker: dict[str, tuple[int, int]]  # rack -> (min, max) over its brokers
    leaders_per_broker: tuple[int, int]
    topics_without_policy: int
    violations: int


def _lookup(keys: np.ndarray, found: np.ndarray, wanted: np.ndarray, missing: int) -> np.ndarray:
    """``found[i]`` for each value of ``wanted`` equal to ``keys[i]`` (``keys`` distinct),
    ``missing`` for the others: a search in the sorted keys, never an array as long as the
    largest id (a broker id may be 2^31 - 1)."""
    if not keys.size:
        return np.full(wanted.shape, missing, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    pos = np.minimum(np.searchsorted(sorted_keys, wanted), keys.size - 1)
    hit = sorted_keys[pos] == wanted
    return np.where(hit, found[order][pos], missing).astype(np.int64)


def topic_policies(snap: Snapshot) -> tuple[np.ndarray, list[PlacementPolicy]]:
    """Per partition row, the index of its topic's policy in the returned list (-1: none).
    A policy that does not validate is the snapshot reader's InputError."""
    policies: list[PlacementPolicy] = []
    index: dict[int, int] = {}  # id(policy) -> its place: topics sharing a text share one
    by_topic: dict[str, int] = {}
    for name, policy in snapshot_policies(snap.source, snap.topics).items():
        by_topic[name] = index.setdefault(id(policy), len(policies))
        if by_topic[name] == len(policies):
            policies.append(policy)
    topic_col = snap.partitions.column("topic").combine_chunks().dictionary_encode()
    dictionary = topic_col.dictionary.to_pylist()
    lookup = np.array([by_topic.get(t, -1) for t in dictionary], dtype=np.int64)
    idx = topic_col.indices.to_numpy(zero_copy_only=False)
    return (lookup[idx] if len(idx) else np.empty(0, np.int64)), policies


def violation_mask(snap: Snapshot) -> np.ndarray:
    """True for partitions that break their topic's policy; topics without one are False."""
    n = snap.partitions.num_rows
    row_policy, policies = topic_policies(snap)
    ids = snap.brokers.column("broker_id").to_numpy().astype(np.int64)
    racks = snap.brokers.column("rack").to_pylist()
    rack_names = sorted({r for r in racks if r})
    rack_code = {r: i for i, r in enumerate(rack_names)}
    codes = np.array([rack_code.get(r, -1) if r else -1 for r in racks], dtype=np.int64)

    offsets, values = list_arrays(snap.partitions.column("replicas"))
    obs_offsets, _ = list_arrays(snap.partitions.column("observers"))
    lengths = np.diff(offsets)
    obs_len = np.diff(obs_offsets)
    value_rack = _lookup(ids, codes, values, missing=-1)
    bad = np.zeros(n, dtype=bool)
    for g, policy in enumerate(policies):
        rows = np.flatnonzero(row_policy == g)
        if not rows.size:
            continue
        rf = policy.sync_count + policy.observer_count
        shape_ok = (lengths[rows] == rf) & (obs_len[rows] == policy.observer_count)
        bad[rows[~shape_ok]] = True
        rows = rows[shape_ok]
        if not rows.size:
            continue
        pos = offsets[rows][:, None] + np.arange(rf)
        brokers = values[pos]
        rk = value_rack[pos]
        ok = (rk >= 0).all(axis=1)
        srt = np.sort(brokers, axis=1)
        ok &= (srt[:, 1:] != srt[:, :-1]).all(axis=1) if rf > 1 else True
        s = policy.sync_count
        for rack, (want_sync, want_obs) in policy.per_rack().items():
            code = rack_code.get(rack, -2)
            ok &= (rk[:, :s] == code).sum(axis=1) == want_sync
            ok &= (rk[:, s:] == code).sum(axis=1) == want_obs
        bad[rows[~ok]] = True
    return bad


def summarize(snap: Snapshot) -> ClusterSummary:
    b = snap.brokers
    ids = b.column("broker_id").to_numpy().astype(np.int64)
    racks = b.column("rack").to_pylist()
    per_rack: dict[str, int] = {}
    for r in racks:
        per_rack[r or "(no rack)"] = per_rack.get(r or "(no rack)", 0) + 1
    offsets, values = list_arrays(snap.partitions.column("replicas"))
    # counts per inventory broker, by its position in ``ids`` (replicas on brokers the
    # inventory lacks fall in the extra last slot)
    where = _lookup(ids, np.arange(ids.size), values, missing=ids.size)
    load = np.bincount(where, minlength=ids.size + 1)[: ids.size]
    leaders = np.bincount(where[offsets[:-1][np.diff(offsets) > 0]], minlength=ids.size + 1)
    leaders = leaders[: ids.size]
    members: dict[str, list[int]] = {}
    for i, r in enumerate(racks):  # by position in ``ids``: an id may repeat in a snapshot
        members.setdefault(r or "(no rack)", []).append(i)
    by_rack = rack_minmax(dict(enumerate(load.tolist())), dict(sorted(members.items())))
    sizes = snap.partitions.column("size_bytes")
    lengths = pc.list_value_length(snap.partitions.column("replicas"))
    total = pc.sum(pc.multiply(pc.fill_null(sizes, 0), pc.cast(lengths, pa.int64()))).as_py()
    row_policy, _ = topic_policies(snap)
    placement = snap.topics.column("placement")
    return ClusterSummary(
        brokers=len(ids),
        brokers_per_rack=dict(sorted(per_rack.items())),
        topics=snap.topics.num_rows,
        partitions=snap.partitions.num_rows,
        replicas=int(values.size),
        total_bytes=int(total or 0),
        replicas_per_broker=by_rack,
        leaders_per_broker=(int(leaders.min(initial=0)), int(leaders.max(initial=0))),
        topics_without_policy=int(snap.topics.num_rows - pc.sum(pc.is_valid(placement)).as_py()),
        violations=int(violation_mask(snap).sum()) if row_policy.size else 0,
    )
