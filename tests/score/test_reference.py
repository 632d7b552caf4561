"""Spark's report against `bench/score_ref.py`, a pyarrow/numpy scorer that recomputes each
state in full (Spark scores a plan as a difference): every figure, every rack, every plan."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from placement.errors import InputError
from placement.io.snapshot import write_snapshot
from placement.score.run import run_score
from placement.synth import SynthSpec, synth

pytestmark = pytest.mark.spark

BENCH = Path(__file__).parents[2] / "bench"


@pytest.fixture(scope="module")
def bench() -> Any:
    sys.path.insert(0, str(BENCH))
    import bench_score
    import score_ref

    yield bench_score, score_ref
    sys.path.remove(str(BENCH))


def test_report_equals_the_reference(spark: Any, bench: Any, tmp_path: Path) -> None:
    bench_score, score_ref = bench
    snap = tmp_path / "snap"
    write_snapshot(snap, synth(SynthSpec(36, 3, 12, 60, violations=0.05, seed=11)).snapshot)
    plans = [tmp_path / "a.json", tmp_path / "b.json"]
    assert bench_score.make_plan(snap, plans[0], seed=1, every=3) == 240
    assert bench_score.make_plan(snap, plans[1], seed=2, every=1) == 720

    got = run_score(snap, plans, master="local[2]", default_min_isr=2).model_dump()
    want = score_ref.score(snap, plans, 2)
    # Spark ranks plans by score; the reference keeps the order given
    got["plans"].sort(key=lambda p: p["plan"])
    assert bench_score.compare(got, want) == []
    a, b = got["plans"]
    assert 0 < a["partitions_changed"] < b["partitions_changed"] == 720
    assert b["cross_rack_bytes"] > 0 and b["violations_after"] != b["violations_before"]


def test_a_partition_listed_twice_is_an_input_error(spark: Any, tmp_path: Path) -> None:
    snap = tmp_path / "snap"
    write_snapshot(snap, synth(SynthSpec(6, 3, 1, 3, seed=1)).snapshot)
    entry = '{"topic":"%s","partition":0,"replicas":[1,2,3],"observers":[]}'
    topic = synth(SynthSpec(6, 3, 1, 3, seed=1)).snapshot.topics.column("topic")[0].as_py()
    plan = tmp_path / "twice.json"
    plan.write_text(
        '{"version":1,"partitions":[\n' + entry % topic + ",\n" + entry % topic + "\n]}\n"
    )
    with pytest.raises(InputError, match="listed twice"):
        run_score(snap, [plan], master="local[2]")
