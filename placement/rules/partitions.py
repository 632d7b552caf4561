"""The checks of the MRC9xx rules, vectorised over a snapshot's partitions: policy
violations (docs/definitions.md, policy violations) and the state of each partition's ISR.

numpy over the tables' columns, never a Python loop per partition: a snapshot may hold
millions. `snapshot show`, `snapshot apply` (placement/snapshot/facts.py) and the audit of
`validate` (placement/rules/audit.py) all count with these functions; `explain_violation`
spells the same definition out for the few partitions a report lists, and
tests/_violation_cases.py holds both to one table of cases.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from placement.io.snapshot import Snapshot, list_arrays, snapshot_policies
from placement.model.policy import PlacementPolicy

KAFKA_MIN_ISR = 1  # min.insync.replicas when neither the topic nor the caller sets it


def lookup_ids(keys: np.ndarray, found: np.ndarray, wanted: np.ndarray, missing: int) -> np.ndarray:
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


def topic_rows(topics: pa.ChunkedArray, by_topic: Mapping[str, int], missing: int) -> np.ndarray:
    """Per row of a topic column, ``by_topic`` of its topic (``missing`` for the others):
    one dictionary lookup per distinct topic, not per row."""
    col = topics.combine_chunks().dictionary_encode()
    lookup = np.array(
        [by_topic.get(t, missing) for t in col.dictionary.to_pylist()], dtype=np.int64
    )
    idx = col.indices.to_numpy(zero_copy_only=False)
    return lookup[idx] if len(idx) else np.empty(0, np.int64)


def topic_policies(
    snap: Snapshot, policies: Mapping[str, PlacementPolicy] | None = None
) -> tuple[np.ndarray, list[PlacementPolicy]]:
    """Per partition row, the index of its topic's policy in the returned list (-1: none).

    ``policies`` (topic -> policy) are the snapshot's own by default, where one that does
    not validate is the snapshot reader's InputError; `validate` passes those it checked,
    leaving out the invalid ones it reports."""
    if policies is None:
        policies = snapshot_policies(snap.source, snap.topics)
    distinct: list[PlacementPolicy] = []
    index: dict[int, int] = {}  # id(policy) -> its place: topics sharing a text share one
    by_topic: dict[str, int] = {}
    for name, policy in policies.items():
        by_topic[name] = index.setdefault(id(policy), len(distinct))
        if by_topic[name] == len(distinct):
            distinct.append(policy)
    return topic_rows(snap.partitions.column("topic"), by_topic, -1), distinct


def violation_mask(
    snap: Snapshot, policies: Mapping[str, PlacementPolicy] | None = None
) -> np.ndarray:
    """True for partitions that break their topic's policy; topics without one are False.
    ``policies``: as for `topic_policies`."""
    n = snap.partitions.num_rows
    row_policy, policies_used = topic_policies(snap, policies)
    ids = snap.brokers.column("broker_id").to_numpy().astype(np.int64)
    racks = snap.brokers.column("rack").to_pylist()
    rack_names = sorted({r for r in racks if r})
    rack_code = {r: i for i, r in enumerate(rack_names)}
    codes = np.array([rack_code.get(r, -1) if r else -1 for r in racks], dtype=np.int64)

    offsets, values = list_arrays(snap.partitions.column("replicas"))
    obs_offsets, _ = list_arrays(snap.partitions.column("observers"))
    lengths = np.diff(offsets)
    obs_len = np.diff(obs_offsets)
    value_rack = lookup_ids(ids, codes, values, missing=-1)
    bad = np.zeros(n, dtype=bool)
    for g, policy in enumerate(policies_used):
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


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def explain_violation(
    replicas: Sequence[int],
    observers: Sequence[int],
    policy: PlacementPolicy,
    rack_of: Mapping[int, str | None],
    where: str = "the inventory",
) -> list[str]:
    """What makes one partition break ``policy``, one phrase per difference; empty when it
    does not. The same definition as `violation_mask`, spelled out for the few partitions
    a report lists (tests/_violation_cases.py holds both to it). ``rack_of``: broker ->
    rack (None or "": no rack); ``where`` names where a broker missing from it is not."""
    problems: list[str] = []
    seen: set[int] = set()
    for b in replicas:
        if b in seen:
            problems.append(f"broker {b} is listed twice")
        seen.add(b)
    for b in dict.fromkeys(replicas):
        if b not in rack_of:
            problems.append(f"broker {b} is not in {where}")
        elif not rack_of[b]:
            problems.append(f"broker {b} has no rack")
    sync = replicas[: len(replicas) - len(observers)]
    have: dict[str, list[int]] = {}
    for role, brokers in ((0, sync), (1, observers)):
        for b in brokers:
            rack = rack_of.get(b)
            if rack:
                have.setdefault(rack, [0, 0])[role] += 1
    want = policy.per_rack()
    for rack in [*want, *sorted(r for r in have if r not in want)]:
        got, wanted = have.get(rack, [0, 0]), want.get(rack, (0, 0))
        roles = [i for i in (0, 1) if got[i] != wanted[i]]
        if roles:
            nouns = ("sync replica", "observer")
            holds = " and ".join(_plural(got[i], nouns[i]) for i in roles)
            wants = " and ".join(str(wanted[i]) for i in roles)
            problems.append(f'rack "{rack}": {holds}, the policy wants {wants}')
    return problems


@dataclass(frozen=True)
class Violation:
    """One partition breaking its topic's policy, and why (`explain_violation`)."""

    row: int  # in the partitions table, from 0
    topic: str
    partition: int
    replicas: list[int]
    observers: list[int]
    problems: list[str]


def rack_map(brokers: pa.Table) -> dict[int, str | None]:
    """broker id -> rack, from a brokers table."""
    ids = brokers.column("broker_id").to_pylist()
    return dict(zip(ids, brokers.column("rack").to_pylist(), strict=True))


def explain_rows(
    snap: Snapshot,
    rows: Sequence[int] | np.ndarray,
    policies: Mapping[str, PlacementPolicy],
    where: str = "the inventory",
) -> list[Violation]:
    """`explain_violation` for the partition ``rows`` (of topics in ``policies``)."""
    if not len(rows):
        return []
    columns = ("topic", "partition", "replicas", "observers")
    taken = snap.partitions.select(columns).take(pa.array(rows, pa.int64())).to_pylist()
    rack_of = rack_map(snap.brokers)
    out = []
    for row, p in zip(rows, taken, strict=True):
        replicas, observers = p["replicas"], p["observers"] or []
        problems = explain_violation(replicas, observers, policies[p["topic"]], rack_of, where)
        out.append(Violation(int(row), p["topic"], p["partition"], replicas, observers, problems))
    return out


@dataclass(frozen=True)
class IsrState:
    """Per partition row, what its recorded leader and ISR say now (the rules MRC902 to
    MRC904). A row whose `isr` is null records no state: it is in none of the three."""

    offline: np.ndarray  # an ISR recorded, no leader
    under_min_isr: np.ndarray  # a leader, fewer in the ISR than min.insync.replicas
    under_replicated: np.ndarray  # neither, but a sync replica is out of the ISR
    min_isr: np.ndarray  # the min.insync.replicas each row is held to


def isr_state(snap: Snapshot, default_min_isr: int | None = None) -> IsrState:
    """The ISR state of every partition. A row's min.insync.replicas is its topic's
    `min_isr`, else ``default_min_isr``, else Kafka's default of 1."""
    parts = snap.partitions
    n = parts.num_rows
    isr_col = parts.column("isr")
    known = np.asarray(pc.is_valid(isr_col).to_numpy(zero_copy_only=False), dtype=bool)
    led = np.asarray(pc.is_valid(parts.column("leader")).to_numpy(zero_copy_only=False), bool)
    by_topic = {
        t: int(m)
        for t, m in zip(
            snap.topics.column("topic").to_pylist(),
            snap.topics.column("min_isr").to_pylist(),
            strict=True,
        )
        if m is not None
    }
    min_isr = topic_rows(parts.column("topic"), by_topic, default_min_isr or KAFKA_MIN_ISR)
    isr_off, isr_val = list_arrays(isr_col)
    under_min = known & led & (np.diff(isr_off) < min_isr)
    # which sync replicas are in their row's ISR: (row, broker) keys, searched sorted
    r_off, r_val = list_arrays(parts.column("replicas"))
    o_off, _ = list_arrays(parts.column("observers"))
    r_len = np.diff(r_off)
    row_of = np.repeat(np.arange(n, dtype=np.int64), r_len)
    nth = np.arange(r_val.size, dtype=np.int64) - r_off[row_of]
    sync = nth < (r_len - np.diff(o_off))[row_of]
    isr_keys = np.repeat(np.arange(n, dtype=np.int64), np.diff(isr_off)) * 2**31 + isr_val
    isr_keys.sort()
    keys = row_of[sync] * 2**31 + r_val[sync]
    if isr_keys.size:
        pos = np.minimum(np.searchsorted(isr_keys, keys), isr_keys.size - 1)
        in_isr = isr_keys[pos] == keys
    else:
        in_isr = np.zeros(keys.size, dtype=bool)
    lagging = np.bincount(row_of[sync][~in_isr], minlength=n)[:n] > 0
    return IsrState(
        offline=known & ~led,
        under_min_isr=under_min,
        under_replicated=known & led & ~under_min & lagging,
        min_isr=min_isr,
    )
