"""The Spark stage and the in-process engine give the same report for the same cluster."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest
from _sim_cluster import (
    EXPECTED,
    PARTITIONS,
    RACKS,
    RECORDED,
    write_replica_status,
    write_snapshot_jsonl,
)

from placement.io.reassignment import render_reassignment
from placement.io.replicastatus import read_replica_status
from placement.io.snapshot import read_snapshot, write_snapshot
from placement.model.assignment import PartitionAssignment
from placement.score.simulate import run_simulate
from placement.simulate.failure import Outcome, TopicInfo, classify, parse_ids, simulate
from placement.snapshot.synth import SynthSpec, synth

pytestmark = pytest.mark.spark

FIELDS = ("available", "promoted", "under_min_isr", "offline", "unclean", "lost")


def test_failure_flags_match_classify(spark: Any) -> None:
    """The column expressions and the Python rules agree on every small case."""
    from pyspark.sql import functions as F  # noqa: N812

    from placement.score.metrics import failure_flags

    grid = list(itertools.product(range(4), range(3), range(1, 4), (False, True)))
    df = spark.createDataFrame(grid, "s int, o int, min_isr int, promotes boolean")
    flags = failure_flags(F.col("s"), F.col("o"))
    rows = df.select("s", "o", "min_isr", "promotes", *(v.alias(k) for k, v in flags.items()))
    for r in rows.collect():
        want = classify(r["s"], r["o"], r["min_isr"], r["promotes"])
        got = [k for k in flags if r[k]]
        assert got == ([] if want is Outcome.AVAILABLE else [want.value]), r


def _strip(report: Any) -> dict[str, Any]:
    data = json.loads(report.model_dump_json())
    data.pop("engine")
    return data


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hand_built_cluster_on_spark(spark: Any, tmp_path: Path, name: str) -> None:
    root = write_snapshot_jsonl(tmp_path / "snap")
    kind, _, arg = name.partition(":")
    report, _ = run_simulate(
        root,
        fail_rack=arg if kind == "rack" else None,
        fail_brokers=parse_ids(arg) if kind == "brokers" else None,
    )
    got = {t.topic: tuple(getattr(t, f) for f in FIELDS) for t in report.topics}
    assert got == EXPECTED[name]
    assert report.engine == "spark"


def _in_process(
    root: Path,
    entries: list[PartitionAssignment] | None,
    plan_name: str | None,
    default_min_isr: int = 2,
    assume_in_sync: bool = False,
    replica_status: Any = None,
    **failure: Any,
) -> Any:
    from placement.model.policy import PlacementPolicy
    from placement.simulate.failure import Failure, apply_plan, isr_after_plan

    snap = read_snapshot(root)
    rows = snap.partitions.to_pylist()
    parts = [
        PartitionAssignment(
            r["topic"], r["partition"], tuple(r["replicas"]), tuple(r["observers"] or ())
        )
        for r in rows
    ]
    isr = None if assume_in_sync else [None if r["isr"] is None else tuple(r["isr"]) for r in rows]
    if entries is not None:
        if isr is not None:
            isr = isr_after_plan(parts, isr, [r["leader"] for r in rows], entries)
        parts = apply_plan(parts, entries)
    infos = {
        t["topic"]: TopicInfo(
            PlacementPolicy.model_validate_json(t["placement"]) if t["placement"] else None,
            t["min_isr"],
        )
        for t in snap.topics.to_pylist()
    }
    brokers = dict(
        zip(
            snap.brokers.column("broker_id").to_pylist(),
            snap.brokers.column("rack").to_pylist(),
            strict=True,
        )
    )
    failure_ = Failure.resolve(brokers, failure.get("fail_rack"), failure.get("fail_brokers"))
    return simulate(
        parts,
        infos,
        failure_.seeing(parts, brokers),
        default_min_isr=default_min_isr,
        plan=plan_name,
        isr=isr,
        replica_status=replica_status,
    )


def test_both_paths_agree_on_a_synthetic_snapshot_with_a_plan(spark: Any, tmp_path: Path) -> None:
    result = synth(SynthSpec(24, 4, 6, 30, violations=0.05, seed=11))
    root = tmp_path / "snap"
    write_snapshot(root, result.snapshot)
    snap = read_snapshot(root)
    # a plan that moves every 4th partition's sync replicas onto other brokers at random
    rng = random.Random(3)
    ids = snap.brokers.column("broker_id").to_pylist()
    plan = []
    for i, r in enumerate(snap.partitions.to_pylist()):
        if i % 4 == 0:
            obs = tuple(r["observers"] or ())
            others = [b for b in ids if b not in obs]
            n_sync = len(r["replicas"]) - len(obs)
            sync = tuple(rng.sample(others, n_sync))
            plan.append(PartitionAssignment(r["topic"], r["partition"], sync + obs, obs))
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(render_reassignment(plan))
    rack = sorted({r for r in snap.brokers.column("rack").to_pylist() if r})[0]
    for failure in ({"fail_rack": rack}, {"fail_brokers": ids[:5]}):
        for with_plan in (False, True):
            out = tmp_path / f"unclean-{next(iter(failure))}-{with_plan}.json"
            spark_report, written = run_simulate(
                root,
                plan=plan_path if with_plan else None,
                default_min_isr=2,
                unclean_out=out,
                **failure,
            )
            local_report, unclean = _in_process(
                root,
                plan if with_plan else None,
                str(plan_path) if with_plan else None,
                **failure,
            )
            assert _strip(spark_report) == _strip(local_report)
            assert spark_report.totals.partitions == snap.partitions.num_rows
            assert written == len(unclean)
            if unclean:
                doc = json.loads(out.read_text())
                assert set(doc) == {"partitions"}  # the layout assign --election writes
                assert [(e["topic"], e["partition"]) for e in doc["partitions"]] == [
                    (u.topic, u.partition) for u in unclean
                ]
    # the test is only worth something if the failures did bite
    assert spark_report.totals.available < spark_report.totals.partitions


def test_both_paths_agree_on_the_recorded_isr(spark: Any, tmp_path: Path) -> None:
    """_sim_cluster.RECORDED: degraded partitions, an observer in the ISR, no ISR recorded,
    a leader outside its ISR, an offline one; after a plan that adds replicas (to a
    partition without a leader too), keeps one as it is and drops a promoted observer."""
    root = write_snapshot_jsonl(tmp_path / "snap", recorded=RECORDED)
    plan = [
        PartitionAssignment("umi", 0, (1, 5, 4, 7), (7,)),
        PartitionAssignment("umi", 1, (2, 3, 6, 8), (8,)),
        PartitionAssignment("lio", 0, (1, 2, 4, 7, 8), (7, 8)),
        PartitionAssignment("v1", 0, (6, 2, 3, 4, 5), (4, 5)),
        PartitionAssignment("free", 0, (4, 5)),
        PartitionAssignment("urep", 0, (4, 5, 6, 7), (7,)),
    ]
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(render_reassignment(plan))
    status = read_replica_status(str(write_replica_status(tmp_path / "status.txt")))
    runs: list[tuple[dict[str, Any], bool, bool]] = [
        ({"fail_rack": "west"}, False, False),
        ({"fail_brokers": [1, 4]}, False, False),
        ({"fail_rack": "west"}, True, False),
        ({"fail_brokers": [1, 4]}, True, False),
        ({"fail_brokers": [1, 4]}, True, True),
    ]
    for failure, with_plan, assume in runs:
        out = tmp_path / "unclean.json"
        spark_report, written = run_simulate(
            root,
            plan=plan_path if with_plan else None,
            default_min_isr=1,
            unclean_out=out,
            assume_in_sync=assume,
            replica_status=status,
            **failure,
        )
        local_report, unclean = _in_process(
            root,
            plan if with_plan else None,
            str(plan_path) if with_plan else None,
            default_min_isr=1,
            assume_in_sync=assume,
            replica_status=status,
            **failure,
        )
        assert _strip(spark_report) == _strip(local_report), (failure, with_plan, assume)
        assert written == len(unclean)
        # the election file lists them riskiest first, as the report does
        doc = json.loads(out.read_text()) if written else {"partitions": []}
        at_risk = spark_report.data_at_risk
        assert at_risk is not None
        assert [(e["topic"], e["partition"]) for e in doc["partitions"]] == [
            (r.topic, r.partition) for r in at_risk.partitions
        ]
        t = spark_report.totals
        assert t.offline + t.under_min_isr == t.offline_before + t.under_min_isr_before + t.broken
        if not assume:
            assert t.isr_unknown == 1 and (t.offline_before, t.under_min_isr_before) != (0, 0)
        if failure == {"fail_brokers": [1, 4]} and not with_plan:
            # umi-0's and v1-0's sync replicas outside the ISR are unclean candidates
            lagging = {(u.topic, u.partition): u.lagging for u in spark_report.unclean_sample}
            assert lagging == {("umi", 0): [2], ("v1", 0): [2, 3]}


def test_plan_listing_a_partition_twice_is_rejected(spark: Any, tmp_path: Path) -> None:
    from placement.errors import InputError

    root = write_snapshot_jsonl(tmp_path / "snap")
    entry = {"topic": "umi", "partition": 0, "replicas": [4, 5, 1, 7], "observers": [7]}
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [entry, entry]}))
    with pytest.raises(InputError, match="listed twice"):
        run_simulate(root, fail_rack="west", plan=plan)


def test_unknown_rack_fails_before_spark_work(tmp_path: Path) -> None:
    from placement.errors import UsageError

    root = write_snapshot_jsonl(tmp_path / "snap")
    with pytest.raises(UsageError, match="no broker is in rack"):
        run_simulate(root, fail_rack="mars")
    assert set(RACKS.values()) == {"west", "east", "central"}
    assert PARTITIONS
