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
from placement.snapshot.synth import SynthSpec, synth

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


def test_reference_agrees_with_topics_without_policy_and_brokers_without_rack(
    spark: Any, bench: Any, tmp_path: Path
) -> None:
    """The one rack-failure definition: every partition counts (the default min ISR when
    the topic sets none, or is not listed at all), and a broker of unknown rack (listed
    without one, or not listed) goes down with whichever rack fails."""
    import pyarrow as pa

    from placement.io.snapshot import Snapshot

    bench_score, score_ref = bench
    base = synth(SynthSpec(36, 3, 12, 60, violations=0.05, seed=11)).snapshot
    first = tmp_path / "first"
    write_snapshot(first, base)
    plans = [tmp_path / "a.json", tmp_path / "b.json"]
    bench_score.make_plan(first, plans[0], seed=1, every=3)
    bench_score.make_plan(first, plans[1], seed=2, every=1)

    brokers = base.brokers.to_pylist()
    for b in brokers[::7]:
        b["rack"] = None
    topics = base.topics.to_pylist()
    for i, t in enumerate(topics):
        if i % 3 == 0:
            t["placement"] = None
        t["min_isr"] = None if i % 2 else 2
    parts = base.partitions.to_pylist()
    row = {k: None for k in base.partitions.column_names}
    extra = [  # a topic the topics table lacks; a broker the brokers table lacks
        {**row, "topic": "unlisted", "partition": p, "replicas": [brokers[p]["broker_id"], 999]}
        for p in range(4)
    ]
    snap = tmp_path / "snap"
    write_snapshot(
        snap,
        Snapshot(
            pa.Table.from_pylist(brokers, schema=base.brokers.schema),
            pa.Table.from_pylist(topics, schema=base.topics.schema),
            pa.Table.from_pylist(parts + extra, schema=base.partitions.schema),
        ),
    )

    got = run_score(snap, plans, master="local[2]", default_min_isr=2).model_dump()
    want = score_ref.score(snap, plans, 2)
    got["plans"].sort(key=lambda p: p["plan"])
    assert bench_score.compare(got, want) == []
    # the cases this test is about are there, and count
    failure = want["baseline"]["rack_failure"]
    assert sum(f["offline"] + f["under_min_isr"] + f["promoted"] for f in failure.values()) > 0


def test_reference_agrees_when_the_rack_counts_take_several_longs(
    spark: Any, bench: Any, tmp_path: Path
) -> None:
    """21 racks and a plan entry of 40 brokers: 6 bits a rack, 10 racks a long, so the counts
    take 3 longs (`Packing`); a rack holding a third of an entry's brokers spills nowhere."""
    import json

    from placement.score.metrics import Packing, RackCodes

    bench_score, score_ref = bench
    base = synth(SynthSpec(84, 21, 10, 8, violations=0.1, seed=5)).snapshot
    snap = tmp_path / "snap"
    write_snapshot(snap, base)
    brokers = base.brokers.to_pylist()
    rack_of = {b["broker_id"]: b["rack"] for b in brokers}
    packing = Packing.for_lists(RackCodes.build(rack_of, ()), 40)
    assert (packing.bits, packing.words) == (6, 3)
    ids = sorted(rack_of)
    # 40 brokers from 4 racks only (10 each, then observers from the same racks), and
    # 40 brokers spread over every rack
    by_rack = sorted(ids, key=lambda b: (rack_of[b], b))
    parts = base.partitions.to_pylist()
    entries = [
        {
            "topic": parts[0]["topic"],
            "partition": parts[0]["partition"],
            "replicas": by_rack[:40],
            "observers": by_rack[30:40],
        },
        {
            "topic": parts[1]["topic"],
            "partition": parts[1]["partition"],
            "replicas": ids[::2][:40],
            "observers": [],
        },
    ]
    plans = [tmp_path / "a-wide.json", tmp_path / "b-mixed.json"]  # the order the report sorts
    plans[0].write_text(json.dumps({"version": 1, "partitions": entries}))
    bench_score.make_plan(snap, plans[1], seed=3, every=2)

    got = run_score(snap, plans, master="local[2]", default_min_isr=2).model_dump()
    want = score_ref.score(snap, plans, 2)
    got["plans"].sort(key=lambda p: p["plan"])
    assert bench_score.compare(got, want) == []
    assert want["baseline"]["violations"] > 0
    assert len(want["baseline"]["rack_failure"]) == 21


@pytest.mark.parametrize("first_id", [1001, 1 << 17])
def test_reference_agrees_with_broker_ids_far_from_zero(
    spark: Any, bench: Any, tmp_path: Path, first_id: int
) -> None:
    """Rack codes are looked up in an array by broker id below 65,536 and in a map beyond
    (`RackCodes.code`): Kafka's ids often start at 1001; both lookups give the reference's
    figures, a broker the brokers table lacks included."""
    import pyarrow as pa

    from placement.io.snapshot import Snapshot

    bench_score, score_ref = bench
    base = synth(SynthSpec(24, 3, 8, 30, violations=0.05, seed=7)).snapshot
    ids = sorted(base.brokers.column("broker_id").to_pylist())
    new = {b: first_id + 3 * i for i, b in enumerate(ids)}

    def moved(lists: list[int] | None) -> list[int] | None:
        return None if lists is None else [new[b] for b in lists]

    brokers = [{**b, "broker_id": new[b["broker_id"]]} for b in base.brokers.to_pylist()]
    parts = [
        {
            **p,
            **{k: moved(p[k]) for k in ("replicas", "observers", "isr")},
            "leader": None if p["leader"] is None else new[p["leader"]],
        }
        for p in base.partitions.to_pylist()
    ]

    def snapshot(rows: list[dict[str, Any]]) -> Snapshot:
        return Snapshot(
            pa.Table.from_pylist(brokers, schema=base.brokers.schema),
            base.topics,
            pa.Table.from_pylist(rows, schema=base.partitions.schema),
        )

    write_snapshot(tmp_path / "known", snapshot(parts))
    plans = [tmp_path / "a.json"]
    assert bench_score.make_plan(tmp_path / "known", plans[0], seed=4, every=2) > 0
    for row in parts[::50]:  # a broker the brokers table lacks, as a second sync replica
        row["replicas"] = [*row["replicas"][:1], first_id - 1, *row["replicas"][1:]]
    snap = tmp_path / "snap"
    write_snapshot(snap, snapshot(parts))

    got = run_score(snap, plans, master="local[2]", default_min_isr=2).model_dump()
    want = score_ref.score(snap, plans, 2)
    assert bench_score.compare(got, want) == []
    assert got["baseline"]["violations"] > 0
    assert {b["broker"] for b in got["baseline"]["brokers"]} == set(new.values())


def test_reference_agrees_on_lagging_promoted_and_unrecorded_isrs(
    spark: Any, bench: Any, tmp_path: Path
) -> None:
    """Both take the ISR the snapshot records (an observer listed there counts, a null one
    is the sync replicas, a short one on a promoting policy promotes nobody more), and
    after a plan the ISR `snapshot apply` leaves (a partition without a leader gains no
    in-sync replica): synth records full ISRs, so some are made short, reordered, empty,
    unrecorded, or list an observer."""
    import pyarrow as pa

    from placement.io.snapshot import Snapshot

    bench_score, score_ref = bench
    base = synth(SynthSpec(36, 3, 12, 60, violations=0.05, seed=11)).snapshot
    parts = base.partitions.to_pylist()
    assert any(p["observers"] for p in parts)
    for i, p in enumerate(parts):
        isr, observers = p["isr"], p["observers"] or []
        if i % 5 == 0:
            p["isr"] = isr[:1]  # the others lag
        elif i % 5 == 1:
            p["isr"] = None
        elif i % 5 == 2 and observers:
            p["isr"] = [*isr[1:], observers[0]]  # a sync replica lags, an observer promoted
        elif i % 5 == 3:
            p["isr"] = isr[::-1]
        if i % 7 == 3:
            p["leader"] = None
        if i % 31 == 4:
            p["isr"], p["leader"] = [], None
    snap, full = tmp_path / "snap", tmp_path / "full"
    write_snapshot(
        snap,
        Snapshot(
            base.brokers, base.topics, pa.Table.from_pylist(parts, schema=base.partitions.schema)
        ),
    )
    write_snapshot(full, base)
    plans = [tmp_path / "a.json", tmp_path / "b.json"]
    bench_score.make_plan(snap, plans[0], seed=1, every=3)
    bench_score.make_plan(snap, plans[1], seed=2, every=1)

    got = run_score(snap, plans, master="local[2]", default_min_isr=2).model_dump()
    want = score_ref.score(snap, plans, 2)
    got["plans"].sort(key=lambda p: p["plan"])
    assert bench_score.compare(got, want) == []
    # the recorded ISRs count: the same cluster with full ISRs fails otherwise
    whole = score_ref.score(full, plans, 2)
    assert want["baseline"]["rack_failure"] != whole["baseline"]["rack_failure"]
    assert want["plans"][1]["rack_failure"] != whole["plans"][1]["rack_failure"]
