"""Spark's numbers for a snapshot as it stands, against values computed here independently."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from placement.io.snapshot import read_snapshot
from placement.model.policy import PlacementPolicy
from placement.score.report import RackFailure
from placement.score.run import run_score
from placement.snapshot.synth import SynthSpec, synth

pytestmark = pytest.mark.spark

POLICY = {
    "version": 2,
    "replicas": [
        {"count": 2, "constraints": {"rack": "west"}},
        {"count": 1, "constraints": {"rack": "east"}},
    ],
    "observers": [{"count": 1, "constraints": {"rack": "central"}}],
}


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def hand_snapshot(root: Path) -> None:
    root.mkdir()
    racks = {1: "west", 2: "west", 3: "west", 4: "east", 5: "east", 6: "central", 7: "central"}
    write_jsonl(root / "brokers.jsonl", [{"broker_id": b, "rack": r} for b, r in racks.items()])
    write_jsonl(
        root / "topics.jsonl",
        [
            {"topic": "orders", "placement": json.dumps(POLICY), "min_isr": 2},
            {"topic": "free", "placement": None, "min_isr": None},
        ],
    )
    parts = [
        ("orders", 0, [1, 2, 4, 6], [6], 100),  # fine
        ("orders", 1, [1, 4, 5, 6], [6], 200),  # one west short, one east extra: violates
        ("orders", 2, [2, 2, 4, 7], [7], 300),  # broker twice: violates
        ("orders", 3, [3, 1, 99, 7], [7], 400),  # 99 unknown: violates
        ("free", 0, [1, 4], [], 50),  # no policy: no violation; failures counted
    ]
    write_jsonl(
        root / "partitions.jsonl",
        [
            {"topic": t, "partition": p, "replicas": r, "observers": o, "size_bytes": s}
            for t, p, r, o, s in parts
        ],
    )


def test_hand_snapshot(spark: Any, tmp_path: Path) -> None:
    root = tmp_path / "snap"
    hand_snapshot(root)
    report = run_score(root, master="local[2]")
    assert report.snapshot.partitions == 5
    assert report.snapshot.replicas == 18
    got = report.baseline
    assert got.violations == 3
    # replicas per broker over the 7 inventory brokers (99 is not one of them)
    counts = [4, 3, 1, 4, 1, 2, 2]  # brokers 1..7
    assert [b.replicas for b in got.brokers] == counts
    assert got.balance.replicas.min == 1 and got.balance.replicas.max == 4
    assert got.balance.replicas.mean == pytest.approx(sum(counts) / 7)
    mean = sum(counts) / 7
    assert got.balance.replicas.stddev == pytest.approx(
        math.sqrt(sum((c - mean) ** 2 for c in counts) / 7)
    )
    assert got.balance.leaders.max == 3  # broker 1 leads orders-0, orders-1, free-0
    # west down: orders-0 keeps east 4 (s=1 < 2), observer 6 -> s+o = 2: promoted (v2 default)
    # orders-1 keeps 4, 5 (s=2): available; orders-2 keeps 4 (s=1) + 7: promoted;
    # orders-3 keeps only 7: 99's rack is unknown, so it may be in west and goes down with
    # it (s=0): offline; free-0 (no policy, min ISR 1) keeps 4: available
    assert got.rack_failure["west"] == RackFailure(offline=1, under_min_isr=0, promoted=2)
    # east down: orders-0 keeps 1, 2: available; orders-1 keeps 1 (s=1) + 6: promoted;
    # orders-2 keeps 2, 2 (s=2): available; orders-3 keeps 3, 1 (s=2): available
    assert got.rack_failure["east"] == RackFailure(offline=0, under_min_isr=0, promoted=1)
    assert got.rack_failure["central"] == RackFailure(offline=0, under_min_isr=0, promoted=0)


def test_synthetic_snapshot_matches_an_independent_count(spark: Any, tmp_path: Path) -> None:
    from placement.io.snapshot import write_snapshot

    result = synth(SynthSpec(30, 3, 20, 50, violations=0.05, seed=3))
    write_snapshot(tmp_path / "snap", result.snapshot)
    report = run_score(tmp_path / "snap", master="local[2]", default_min_isr=2)
    got = report.baseline
    snap = read_snapshot(tmp_path / "snap")
    assert report.snapshot.partitions == snap.partitions.num_rows
    assert got.violations == result.violations

    racks = {b["broker_id"]: b["rack"] for b in snap.brokers.to_pylist()}
    policies = {
        t: (PlacementPolicy.model_validate_json(p), m)
        for t, p, m in zip(
            snap.topics.column("topic").to_pylist(),
            snap.topics.column("placement").to_pylist(),
            snap.topics.column("min_isr").to_pylist(),
            strict=True,
        )
    }
    load: Counter[int] = Counter()
    failure = {r: Counter() for r in set(racks.values())}
    for row in snap.partitions.to_pylist():
        load.update(row["replicas"])
        policy, min_isr = policies[row["topic"]]
        n_sync = len(row["replicas"]) - len(row["observers"] or [])
        sync, obs = row["replicas"][:n_sync], row["replicas"][n_sync:]
        m = min_isr or 2
        for rack in failure:
            s = sum(1 for b in sync if racks.get(b) != rack)
            o = sum(1 for b in obs if racks.get(b) != rack)
            promotes = (
                policy.version == 2 and policy.observerPromotionPolicy != "leader-is-observer"
            )
            if s == 0:
                failure[rack]["offline"] += 1
            elif s < m and promotes and s + o >= m:
                failure[rack]["promoted"] += 1
            elif s < m:
                failure[rack]["under_min_isr"] += 1
    assert {b.broker: b.replicas for b in got.brokers} == {b: load[b] for b in racks}
    assert got.balance.replicas.max == max(load[b] for b in racks)
    assert got.balance.replicas.min == min(load[b] for b in racks)
    for rack, counts in failure.items():
        for k in ("offline", "under_min_isr", "promoted"):
            assert getattr(got.rack_failure[rack], k) == counts[k], (rack, k)
