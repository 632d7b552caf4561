"""A reference scorer in pyarrow + numpy: the metrics of `mrc-plan score`, computed another way.

    .venv/bin/python bench/score_ref.py SNAPSHOT [PLAN ...] [--default-min-isr N] --out REF.json

`bench_score.py` times it next to the Spark job over the same Parquet and checks that both
give the same numbers. It is a benchmark yardstick, not part of the product: whole columns
live in the driver's memory here, which is exactly what the Spark stage must not do.

Every partition becomes a row of fixed-width matrices (broker ids padded with -1), so each
SPEC §7 figure is a handful of vectorised comparisons; no Python loop over partitions.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from placement.model.policy import PlacementPolicy, PromotionPolicy

PAD = -1  # no broker in this cell
NO_RACK = -1  # a broker the inventory does not place in a rack
PAD_RACK = -2  # padding cell


def table(root: Path, name: str) -> pa.Table:
    for candidate in (root / f"{name}.parquet", root / name):
        if candidate.exists():
            return pq.read_table(candidate)
    raise SystemExit(f"{root}: no {name} table (the reference reads Parquet snapshots only)")


def padded(lists: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(rows x widest) int64 matrix of list values padded with PAD, and each row's length."""
    arr = lists.combine_chunks() if isinstance(lists, pa.ChunkedArray) else lists
    lengths = pc.fill_null(pc.list_value_length(arr), 0).to_numpy().astype(np.int64)
    width = int(lengths.max()) if len(lengths) else 0
    out = np.full((len(arr), max(width, 1)), PAD, dtype=np.int64)
    if width:
        flat = pc.list_flatten(arr).to_numpy().astype(np.int64)
        rows = np.repeat(np.arange(len(arr)), lengths)
        starts = np.cumsum(lengths) - lengths
        cols = np.arange(len(flat)) - np.repeat(starts, lengths)
        out[rows, cols] = flat
    return out, lengths


class Inventory:
    def __init__(self, brokers: pa.Table, rack_names: list[str]) -> None:
        self.ids = np.asarray(brokers.column("broker_id").to_pylist(), dtype=np.int64)
        racks = brokers.column("rack").to_pylist()
        self.code = {r: i for i, r in enumerate(rack_names)}
        self.names = rack_names
        # a search in the sorted ids, not an array indexed by id (an id may be 2^31 - 1)
        self.order = np.argsort(self.ids, kind="stable")
        self.sorted_ids = self.ids[self.order]
        self.rack = np.asarray(
            [NO_RACK if r is None else self.code[r] for r in racks], dtype=np.int64
        )
        self.inventory_racks = sorted({r for r in racks if r is not None})

    def index_of(self, ids: np.ndarray) -> np.ndarray:
        """Each id's row in the brokers table, -1 for an id it lacks (and for PAD)."""
        if not len(self.ids):
            return np.full(ids.shape, -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.sorted_ids, ids), len(self.ids) - 1)
        return np.where(self.sorted_ids[pos] == ids, self.order[pos], -1).astype(np.int64)

    def racks_of(self, ids: np.ndarray) -> np.ndarray:
        where = self.index_of(ids)
        out = np.where(where >= 0, self.rack[np.maximum(where, 0)], NO_RACK)
        return np.where(ids == PAD, PAD_RACK, out)


class Policies:
    """Per topic index: has a policy, expected sync/observers per rack code, min ISR, promotes."""

    def __init__(self, topics: pa.Table, default_min_isr: int) -> None:
        names = topics.column("topic").to_pylist()
        parsed = [
            PlacementPolicy.model_validate_json(t) if t else None
            for t in topics.column("placement").to_pylist()
        ]
        policy_racks = {r for p in parsed if p is not None for r in p.per_rack()}
        self.names = names
        self.rack_names_extra = policy_racks
        self._parsed = parsed
        self._min_isr = topics.column("min_isr").to_pylist()
        self.default_min_isr = default_min_isr

    def build(self, code: dict[str, int]) -> None:
        n, r = len(self.names), len(code)
        self.has = np.zeros(n + 1, dtype=bool)  # last row: a topic the snapshot does not list
        self.sync = np.zeros((n + 1, r), dtype=np.int64)
        self.obs = np.zeros((n + 1, r), dtype=np.int64)
        self.min_isr = np.zeros(n + 1, dtype=np.int64)
        self.promotes = np.zeros(n + 1, dtype=bool)
        self.min_isr[n] = self.default_min_isr  # a topic not listed: the default, no policy
        for i, (p, m) in enumerate(zip(self._parsed, self._min_isr, strict=True)):
            self.min_isr[i] = m or self.default_min_isr
            if p is None:
                continue
            self.has[i] = True
            for rack, (s, o) in p.per_rack().items():
                self.sync[i, code[rack]] = s
                self.obs[i, code[rack]] = o
            self.promotes[i] = p.promotion in (
                PromotionPolicy.UNDER_MIN_ISR,
                PromotionPolicy.UNDER_REPLICATED,
            )


def stats(values: np.ndarray) -> dict[str, float]:
    if len(values) == 0:
        return {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0}
    mean = float(values.mean())
    return {
        "min": int(values.min()),
        "max": int(values.max()),
        "mean": mean,
        "stddev": math.sqrt(float(((values - mean) ** 2).mean())),
    }


def state_metrics(
    reps: np.ndarray,
    n_rep: np.ndarray,
    obs: np.ndarray,
    n_obs: np.ndarray,
    isr: np.ndarray,
    recorded: np.ndarray,
    topic: np.ndarray,
    size: np.ndarray,
    inv: Inventory,
    pol: Policies,
) -> dict[str, Any]:
    """A state's figures; ``isr``: each partition's recorded ISR (PAD-padded, holes
    allowed), where ``recorded``; elsewhere its sync replicas are its ISR."""
    width = reps.shape[1]
    col = np.arange(width)
    n_sync = np.clip(n_rep - n_obs, 0, None)
    sync_cell = col[None, :] < n_sync[:, None]
    rep_rack = inv.racks_of(reps)
    sync_rack = np.where(sync_cell, rep_rack, PAD_RACK)
    obs_rack = inv.racks_of(obs)
    has = pol.has[topic]

    broken = (sync_rack == NO_RACK).any(axis=1) | (obs_rack == NO_RACK).any(axis=1)
    for i in range(width):  # a broker listed twice
        for j in range(i + 1, width):
            broken |= (reps[:, i] == reps[:, j]) & (reps[:, i] != PAD)
    s_in = np.stack([(sync_rack == r).sum(axis=1) for r in range(len(inv.code))], axis=1)
    o_in = np.stack([(obs_rack == r).sum(axis=1) for r in range(len(inv.code))], axis=1)
    broken |= (s_in != pol.sync[topic]).any(axis=1) | (o_in != pol.obs[topic]).any(axis=1)
    violations = int((has & broken).sum())

    # every partition counts, with a policy or not; a broker of unknown rack (NO_RACK)
    # may sit in the failed rack: it goes down with any of them. A replica counts as in
    # sync when the recorded ISR lists it (an observer too), else when it is a sync
    # replica; observers outside it may be promoted
    failure = {}
    # (unrecorded: the sync replicas' brokers, wherever listed: a broker listed twice)
    w_i = max(width, isr.shape[1])
    sync_ids = widen(np.where(sync_cell, reps, PAD), w_i)
    in_sync = contains(np.where(recorded[:, None], widen(isr, w_i), sync_ids), reps)
    outside = (col[None, :] >= n_sync[:, None]) & (col[None, :] < n_rep[:, None]) & ~in_sync
    m = pol.min_isr[topic]
    s0 = in_sync.sum(axis=1)
    # a recorded ISR short of min ISR shows no promotion: its observers are not caught up
    stale = recorded & pol.promotes[topic] & (s0 > 0) & (s0 < m)
    for rack in inv.inventory_racks:
        r = inv.code[rack]
        alive = (rep_rack >= 0) & (rep_rack != r)
        s = (in_sync & alive).sum(axis=1)
        o = np.where(stale, 0, (outside & alive).sum(axis=1))
        short = (s > 0) & (s < m)
        promoted = short & pol.promotes[topic] & (s + o >= m)
        failure[rack] = {
            "offline": int((s == 0).sum()),
            "under_min_isr": int((short & ~promoted).sum()),
            "promoted": int(promoted.sum()),
        }

    ids = inv.ids
    where = inv.index_of(reps)
    cell = where >= 0
    per = np.bincount(where[cell], minlength=len(ids))
    lead = where[:, 0][where[:, 0] >= 0]
    leaders = np.bincount(lead, minlength=len(ids))
    bytes_ = np.zeros(len(ids), dtype=np.int64)
    np.add.at(bytes_, where[cell], np.broadcast_to(size[:, None], where.shape)[cell])
    racks = inv.rack
    brokers = [
        {
            "broker": int(b),
            "rack": None if racks[i] < 0 else inv.names[racks[i]],
            "replicas": int(per[i]),
            "leaders": int(leaders[i]),
            "bytes": int(bytes_[i]),
        }
        for i, b in sorted(enumerate(ids), key=lambda x: x[1])
    ]
    return {
        "brokers": brokers,
        "partitions": len(reps),
        "replicas": int(n_rep.sum()),
        "violations": violations,
        "balance": {"replicas": stats(per), "leaders": stats(leaders), "bytes": stats(bytes_)},
        "rack_failure": failure,
    }


def widen(m: np.ndarray, width: int) -> np.ndarray:
    if m.shape[1] >= width:
        return m
    return np.hstack([m, np.full((len(m), width - m.shape[1]), PAD, dtype=m.dtype)])


def contains(row_sets: np.ndarray, values: np.ndarray) -> np.ndarray:
    """values[k, j] occurs in row_sets[k] (PAD never matches)."""
    hit = np.zeros(values.shape, dtype=bool)
    for c in range(row_sets.shape[1]):
        hit |= (values == row_sets[:, c : c + 1]) & (row_sets[:, c : c + 1] != PAD)
    return hit


def distinct_not_in(new: np.ndarray, old: np.ndarray) -> np.ndarray:
    """Cells of ``new`` that are the first of their value in the row and absent from ``old``."""
    first = new != PAD
    for j in range(1, new.shape[1]):
        first[:, j] &= ~(new[:, :j] == new[:, j : j + 1]).any(axis=1)
    return first & ~contains(old, new)


def read_plan(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return list(json.load(fh)["partitions"])


def score(snapshot: Path, plans: list[Path], default_min_isr: int) -> dict[str, Any]:
    brokers, topics = table(snapshot, "brokers"), table(snapshot, "topics")
    parts = table(snapshot, "partitions")
    if "isr" not in parts.column_names:
        parts = parts.append_column("isr", pa.nulls(parts.num_rows, pa.list_(pa.int32())))
    parts = parts.select(
        ["topic", "partition", "replicas", "observers", "isr", "leader", "size_bytes"]
    )
    pol = Policies(topics, default_min_isr)
    inv_racks = {r for r in brokers.column("rack").to_pylist() if r is not None}
    inv = Inventory(brokers, sorted(inv_racks | pol.rack_names_extra))
    pol.build(inv.code)

    topic = pc.index_in(parts.column("topic"), value_set=topics.column("topic"))
    topic_idx = pc.fill_null(topic, len(pol.names)).to_numpy().astype(np.int64)
    partition = parts.column("partition").to_numpy().astype(np.int64)
    size = pc.fill_null(parts.column("size_bytes"), 0).to_numpy().astype(np.int64)
    unsized = parts.column("size_bytes").is_null().to_numpy(zero_copy_only=False)
    reps, n_rep = padded(parts.column("replicas"))
    # the sending broker of a move: the recorded leader, else the first replica
    leader = parts.column("leader")
    first = reps[:, 0] if reps.shape[1] else np.full(len(leader), PAD, dtype=np.int64)
    sending = np.where(
        leader.is_null().to_numpy(zero_copy_only=False),
        first,
        pc.fill_null(leader, 0).to_numpy().astype(np.int64),
    )
    obs, n_obs = padded(parts.column("observers"))
    isr, _ = padded(parts.column("isr"))
    recorded = parts.column("isr").is_valid().to_numpy(zero_copy_only=False)
    led = leader.is_valid().to_numpy(zero_copy_only=False)
    base = state_metrics(reps, n_rep, obs, n_obs, isr, recorded, topic_idx, size, inv, pol)

    stride = int(partition.max()) + 1 if len(partition) else 1
    key = topic_idx * stride + partition
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    topic_code = {t: i for i, t in enumerate(pol.names)}

    out_plans = []
    for path in plans:
        entries = read_plan(path)
        pkey = np.asarray(
            [topic_code.get(e["topic"], -1) * stride + e["partition"] for e in entries],
            dtype=np.int64,
        )
        pos = np.clip(np.searchsorted(sorted_key, pkey), 0, len(sorted_key) - 1)
        found = sorted_key[pos] == pkey
        rows = order[pos[found]]
        kept = [e for e, f in zip(entries, found, strict=True) if f]
        p_reps, p_nrep = padded(pa.array([e["replicas"] for e in kept], pa.list_(pa.int64())))
        p_obs, p_nobs = padded(
            pa.array([e.get("observers") or [] for e in kept], pa.list_(pa.int64()))
        )
        w_r = max(reps.shape[1], p_reps.shape[1])
        w_o = max(obs.shape[1], p_obs.shape[1])
        a_reps, a_obs = widen(reps, w_r).copy(), widen(obs, w_o).copy()
        a_nrep, a_nobs = n_rep.copy(), n_obs.copy()
        a_reps[rows], a_obs[rows] = widen(p_reps, w_r), widen(p_obs, w_o)
        a_nrep[rows], a_nobs[rows] = p_nrep, p_nobs

        old_r, new_r = widen(reps, w_r)[rows], a_reps[rows]
        old_o, new_o = widen(obs, w_o)[rows], a_obs[rows]
        changed = (new_r != old_r).any(axis=1) | (new_o != old_o).any(axis=1)
        # the ISR once the plan completed (`snapshot apply`): a changed partition keeps the
        # new sync replicas its ISR lists and takes those that were no sync replicas when
        # it has a leader; observers drop out; an unrecorded ISR stays unrecorded
        cols = np.arange(w_r)[None, :]
        old_sync = np.where(cols < (n_rep - n_obs)[rows][:, None], old_r, PAD)
        new_sync = (cols < (p_nrep - p_nobs)[:, None]) & (new_r != PAD)
        joins = contains(isr[rows], new_r) | (led[rows][:, None] & ~contains(old_sync, new_r))
        w_i = max(isr.shape[1], w_r)
        a_isr = widen(isr, w_i).copy()
        redo = changed & recorded[rows]
        a_isr[rows[redo]] = widen(np.where(new_sync & joins, new_r, PAD), w_i)[redo]
        after = state_metrics(
            a_reps, a_nrep, a_obs, a_nobs, a_isr, recorded, topic_idx, size, inv, pol
        )
        added = distinct_not_in(new_r, old_r)
        removed = distinct_not_in(old_r, new_r)
        # cross-rack: an added replica in another rack than its sending broker's (two
        # unknown racks are one)
        far = added & (inv.racks_of(new_r) != inv.racks_of(sending[rows])[:, None])
        s = size[rows]
        out_plans.append(
            {
                "plan": str(path),
                "partitions_changed": int(changed.sum()),
                "replicas_added": int(added.sum()),
                "replicas_removed": int(removed.sum()),
                "bytes_to_move": int((s * added.sum(axis=1)).sum()),
                "cross_rack_bytes": int((s * far.sum(axis=1)).sum()),
                "bytes_unknown_partitions": int((unsized[rows] & added.any(axis=1)).sum()),
                "violations_before": base["violations"],
                "violations_after": after["violations"],
                "balance": after["balance"],
                "rack_failure": after["rack_failure"],
                "brokers": after["brokers"],
            }
        )
    return {
        "snapshot": {
            "brokers": brokers.num_rows,
            "topics": topics.num_rows,
            "partitions": base["partitions"],
            "replicas": base["replicas"],
            "partitions_without_size": parts.column("size_bytes").null_count,
        },
        "baseline": {k: base[k] for k in ("violations", "balance", "rack_failure", "brokers")},
        "plans": out_plans,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("snapshot", type=Path)
    ap.add_argument("plans", type=Path, nargs="*")
    ap.add_argument("--default-min-isr", type=int, default=1)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    report = score(args.snapshot, args.plans, args.default_min_isr)
    args.out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
