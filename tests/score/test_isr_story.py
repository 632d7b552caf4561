"""One cluster with lagging replicas, one plan: `score`'s rack failures are `simulate`'s
(docs/definitions.md, rack-failure outcomes). Both take the ISR the snapshot records (a
null one: the sync replicas), and after a plan the ISR `snapshot apply` leaves; so for
every rack, before and after the plan, the partitions left offline, under min ISR and
promoted are the same figures in both commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from placement.io.reassignment import render_reassignment
from placement.io.snapshot import read_snapshot, write_snapshot
from placement.model.assignment import PartitionAssignment

pytestmark = pytest.mark.spark

BENCH = Path(__file__).resolve().parents[2] / "bench"

Pa = PartitionAssignment

# broker 7 is listed without a rack: it goes down with whichever rack fails
RACKS: dict[int, str | None] = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c", 7: None}
# sync replicas in racks a and b, an observer in c, promoted when the ISR falls short
PROMOTING = {
    "version": 2,
    "replicas": [{"count": 1, "constraints": {"rack": r}} for r in ("a", "b")],
    "observers": [{"count": 1, "constraints": {"rack": "c"}}],
    "observerPromotionPolicy": "under-min-isr",
}
TOPICS = [("logs", None, 2), ("orders", PROMOTING, 2), ("audit", None, None)]
# (topic, partition): (replicas, observers, recorded ISR (None: not recorded), leader)
CLUSTER: dict[tuple[str, int], tuple[list[int], list[int], list[int] | None, int | None]] = {
    ("logs", 0): ([1, 3, 5], [], [1], 1),  # 3 and 5 lag: one rack down leaves 0 or 1
    ("logs", 1): ([3, 5, 1], [], [3, 5], 3),
    ("logs", 2): ([1, 3, 5], [], None, None),  # no ISR recorded: the sync replicas
    ("logs", 3): ([2, 4, 6], [], [], None),  # no leader, an empty ISR: offline already
    ("logs", 4): ([2, 4], [], [4, 2], 4),  # the ISR in another order than the replicas
    ("logs", 5): ([1, 7, 3], [], [7, 3], 7),  # 7 has no rack
    ("orders", 0): ([1, 3, 5], [5], [1, 3], 1),
    ("orders", 1): ([1, 3, 5], [5], [1, 5], 1),  # 3 lags, observer 5 promoted
    ("orders", 2): ([2, 4, 6], [6], [2], 2),  # short, and no observer promoted: stale
    ("orders", 3): ([2, 3, 6], [6], None, None),  # no ISR recorded: promotion applies
    ("orders", 4): ([1, 4, 5], [5], [4, 1], 4),
    ("orders", 5): ([2, 4, 6], [6], [2, 4], 2),
    ("audit", 0): ([5, 6, 1], [], [5], 5),  # the topic sets no min ISR: the default
}
# the plan's replicas and observers for some of them
PLAN: dict[tuple[str, int], tuple[list[int], list[int]]] = {
    ("logs", 0): ([1, 3, 6], []),  # 6 added, in the ISR; 3 still lags
    ("logs", 2): ([1, 4, 5], []),  # the ISR stays unrecorded
    ("logs", 3): ([2, 4, 5], []),  # no leader: 5 joins no ISR
    ("orders", 0): ([1, 3, 5], [5]),  # as it is: changes nothing
    ("orders", 1): ([1, 4, 5], [5]),  # 4 added (in), the promoted observer drops out
    ("orders", 2): ([2, 4, 5], [5]),  # 4 still lags
    ("orders", 4): ([1, 4, 6], [6]),  # only the observer moves
    ("audit", 0): ([5, 2, 1], []),
}
MIN_ISR = 2  # the cluster's, for the topic that sets none


def write_cluster(root: Path) -> tuple[Path, Path]:
    """The cluster as a JSON Lines snapshot and the plan as reassignment JSON."""
    snap = root / "snap"
    snap.mkdir(parents=True)

    def lines(rows: list[dict[str, Any]]) -> str:
        return "".join(json.dumps(r) + "\n" for r in rows)

    (snap / "brokers.jsonl").write_text(
        lines([{"broker_id": b, "rack": r} for b, r in RACKS.items()])
    )
    (snap / "topics.jsonl").write_text(
        lines(
            [
                {"topic": t, "placement": None if p is None else json.dumps(p), "min_isr": m}
                for t, p, m in TOPICS
            ]
        )
    )
    rows = [
        {
            "topic": t,
            "partition": p,
            "replicas": reps,
            "observers": obs,
            "isr": isr,
            "leader": leader,
            "size_bytes": 1_000,
        }
        for (t, p), (reps, obs, isr, leader) in CLUSTER.items()
    ]
    (snap / "partitions.jsonl").write_text(lines(rows))
    plan = root / "plan.json"
    entries = [Pa(t, p, tuple(r), tuple(o)) for (t, p), (r, o) in PLAN.items()]
    plan.write_text(render_reassignment(entries))
    return snap, plan


OUTCOMES = ("offline", "under_min_isr", "promoted")


def simulated(cli: Any, snap: Path, rack: str, *plan: str | Path) -> dict[str, int]:
    args = ["simulate", "--snapshot", snap, "--fail-rack", rack, "--format", "json"]
    extra = ["--plan", *plan] if plan else []
    r = cli([*args, *extra, "--min-insync-replicas", str(MIN_ISR), "--master", "local[2]"])
    assert r.exit_code in (0, 1), r.output
    totals = json.loads(r.stdout)["totals"]
    return {k: totals[k] for k in OUTCOMES}


def test_score_counts_each_rack_failure_as_simulate_does(
    spark: Any, cli: Any, tmp_path: Path
) -> None:
    snap, plan = write_cluster(tmp_path)
    args = ["score", "--snapshot", snap, "--plan", plan, "--format", "json"]
    r = cli([*args, "--min-insync-replicas", str(MIN_ISR), "--master", "local[2]"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    (after,) = doc["plans"]
    for rack in ("a", "b", "c"):
        assert doc["baseline"]["rack_failure"][rack] == simulated(cli, snap, rack), rack
        assert after["rack_failure"][rack] == simulated(cli, snap, rack, plan), rack
    # the lagging replicas count: rack a down leaves logs 0 with no replica in its ISR
    # (score took every sync replica as in it before: 0 offline)
    assert doc["baseline"]["rack_failure"]["a"]["offline"] >= 2
    assert sum(f["promoted"] for f in doc["baseline"]["rack_failure"].values()) > 0
    # the numpy reference counts them so too
    sys.path.insert(0, str(BENCH))
    try:
        import score_ref
    finally:
        sys.path.remove(str(BENCH))
    parquet = tmp_path / "parquet"  # the reference reads Parquet snapshots only
    write_snapshot(parquet, read_snapshot(snap))
    want = score_ref.score(parquet, [plan], MIN_ISR)
    assert want["baseline"]["rack_failure"] == doc["baseline"]["rack_failure"]
    assert want["plans"][0]["rack_failure"] == after["rack_failure"]


def test_a_stale_short_isr_promotes_nobody_and_a_null_one_does(
    spark: Any, cli: Any, tmp_path: Path
) -> None:
    """orders 2 (ISR [2], short of 2, observer 6 left out) stays under min ISR when rack b
    fails; orders 3 (no ISR recorded) promotes its observer when rack b takes 3."""
    snap, _ = write_cluster(tmp_path)
    only = {k: v for k, v in CLUSTER.items() if k in {("orders", 2), ("orders", 3)}}
    rows = [
        {"topic": t, "partition": p, "replicas": r, "observers": o, "isr": i, "leader": ld}
        for (t, p), (r, o, i, ld) in only.items()
    ]
    (snap / "partitions.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    r = cli(["score", "--snapshot", snap, "--format", "json", "--master", "local[2]"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["baseline"]["rack_failure"]["b"] == {
        "offline": 0,
        "under_min_isr": 1,
        "promoted": 1,
    }
