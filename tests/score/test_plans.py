"""Scoring a plan written by `assign`: movement and the state after, checked independently."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from placement.io.reassignment import read_reassignment, render_reassignment
from placement.io.snapshot import read_snapshot, write_snapshot
from placement.model.assignment import PartitionAssignment
from placement.score.run import run_score
from placement.snapshot.synth import SynthSpec, synth

pytestmark = pytest.mark.spark


def test_plan_movement_and_after_state(spark: Any, tmp_path: Path) -> None:
    result = synth(SynthSpec(25, 5, 5, 40, violations=0.0, seed=5))
    root = tmp_path / "snap"
    write_snapshot(root, result.snapshot)
    snap = read_snapshot(root)
    racks = {b["broker_id"]: b["rack"] for b in snap.brokers.to_pylist()}
    rows = snap.partitions.to_pylist()
    sizes = {(r["topic"], r["partition"]): r["size_bytes"] for r in rows}
    old = {
        (r["topic"], r["partition"]): PartitionAssignment(
            r["topic"], r["partition"], tuple(r["replicas"]), tuple(r["observers"] or ())
        )
        for r in rows
    }
    # a hand-made plan: swap the first replica of every 3rd partition for a broker of a
    # rack it does not use (cross-rack), and only reorder every 7th (no data)
    plan = []
    for i, (_, a) in enumerate(sorted(old.items())):
        if i % 3 == 0:
            held = {racks[b] for b in a.replicas}
            other = min(b for b in racks if racks[b] not in held)  # a rack it does not use
            reps = (other, *a.replicas[1:])
            plan.append(PartitionAssignment(a.topic, a.partition, reps, a.observers))
        elif i % 7 == 0 and len(a.sync) > 1:
            reps = (a.sync[1], a.sync[0], *a.sync[2:], *a.observers)
            plan.append(PartitionAssignment(a.topic, a.partition, reps, a.observers))
    path = tmp_path / "plan.json"
    path.write_text(render_reassignment(plan))
    assert len(read_reassignment(path)) == len(plan)

    # the same plan as one multi-line document in another layout (read through Arrow, not
    # line by line): scored the same
    pretty = tmp_path / "plan-pretty.json"
    pretty.write_text(json.dumps(json.loads(path.read_text()), indent=2))
    report = run_score(root, [path, pretty], master="local[2]")
    by_name = {Path(p.plan).name: p for p in report.plans}
    got = by_name["plan.json"]
    assert by_name["plan-pretty.json"].model_dump(exclude={"plan"}) == got.model_dump(
        exclude={"plan"}
    )
    # the state before the plans is the snapshot as it stands, scored alone
    alone = run_score(root, master="local[2]")
    assert (report.snapshot, report.baseline) == (alone.snapshot, alone.baseline)
    assert got.violations_before == alone.baseline.violations
    added = {a.key: set(a.replicas) - set(old[a.key].replicas) for a in plan}
    assert got.partitions_changed == len(plan)
    assert got.replicas_added == sum(len(v) for v in added.values())
    assert got.replicas_removed == got.replicas_added
    assert got.bytes_to_move == sum(sizes[k] * len(v) for k, v in added.items())
    # cross-rack: in another rack than the sending broker's (the leader, else the first)
    led = {(r["topic"], r["partition"]): r["leader"] for r in rows}
    sending = {k: led[k] if led[k] is not None else old[k].replicas[0] for k in added}
    cross = sum(
        sizes[k] * sum(1 for b in v if racks[b] != racks[sending[k]]) for k, v in added.items()
    )
    assert got.cross_rack_bytes == cross > 0
    after = dict(old) | {a.key: a for a in plan}
    load = Counter(b for a in after.values() for b in a.replicas)
    assert {b.broker: b.replicas for b in got.brokers} == {b: load[b] for b in racks}
    assert got.balance.replicas.max == max(load[b] for b in racks)
    assert got.balance.replicas.min == min(load[b] for b in racks)
    assert got.violations_after > 0  # the swapped replicas now sit in the wrong rack
