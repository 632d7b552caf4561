"""`score` on a snapshot whose sizes are unknown: the bytes a plan moves are not reported
as 0 but counted as unknown (`bytes_unknown_partitions`), on Spark and in the reference."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from placement.io.reassignment import render_reassignment
from placement.io.snapshot import Snapshot, write_snapshot
from placement.model.assignment import PartitionAssignment
from placement.score.run import run_score
from placement.snapshot.synth import SynthSpec, synth

pytestmark = pytest.mark.spark

BENCH = Path(__file__).parents[2] / "bench"


def test_moves_of_partitions_without_a_size_are_counted_as_unknown(
    spark: Any, tmp_path: Path
) -> None:
    base = synth(SynthSpec(6, 3, 2, 4, seed=3)).snapshot
    rows = base.partitions.to_pylist()
    for r in rows[:3]:
        r["size_bytes"] = None  # three partitions of unknown size
    snap = tmp_path / "snap"
    schema = base.partitions.schema
    write_snapshot(snap, Snapshot(base.brokers, base.topics, pa.Table.from_pylist(rows, schema)))
    ids = base.brokers.column("broker_id").to_pylist()

    def moved(r: dict[str, Any]) -> PartitionAssignment:
        spare = next(b for b in ids if b not in r["replicas"])
        return PartitionAssignment(r["topic"], r["partition"], (*r["replicas"][:-1], spare))

    plans = {"unknown": rows[1:5], "known": rows[4:6]}  # 2 then 0 of unknown size
    for name, chosen in plans.items():
        (tmp_path / f"{name}.json").write_text(render_reassignment(map(moved, chosen)))
    report = run_score(snap, [tmp_path / f"{n}.json" for n in plans], master="local[2]")
    by_name = {Path(p.plan).stem: p for p in report.plans}
    assert by_name["unknown"].bytes_unknown_partitions == 2
    assert by_name["unknown"].bytes_to_move == sum(r["size_bytes"] for r in rows[3:5])
    assert by_name["known"].bytes_unknown_partitions == 0
    assert by_name["known"].bytes_to_move == sum(r["size_bytes"] for r in rows[4:6]) > 0

    sys.path.insert(0, str(BENCH))
    try:
        import score_ref
    finally:
        sys.path.remove(str(BENCH))
    want = score_ref.score(snap, [tmp_path / f"{n}.json" for n in plans], 1)
    assert [p["bytes_unknown_partitions"] for p in want["plans"]] == [2, 0]
