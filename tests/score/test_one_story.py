"""One cluster, one plan, the same figures in every command (docs/definitions.md,
movement): the sending broker of a move is the partition's recorded leader (the first
replica where none is recorded), and a cross-rack byte is one whose receiving broker sits
in another rack than that sender. `assign`'s rack-to-rack figures, the batches and
`score` (Spark, and the numpy reference) count them from the same fixture."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from placement.io.reassignment import render_reassignment
from placement.io.snapshot import read_snapshot, write_snapshot
from placement.model.assignment import PartitionAssignment
from placement.plan.batches import split
from placement.plan.summary import cross_rack_bytes, rack_to_rack

Pa = PartitionAssignment
BENCH = Path(__file__).resolve().parents[2] / "bench"

RACKS: dict[int, str | None] = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
# (replicas, recorded leader (None: not recorded), size, the plan's replicas)
CLUSTER = {
    ("pay", 0): ((1, 3), 1, 1_000, (1, 3, 4)),  # 4 (b) copies from 1 (a): crosses
    ("pay", 1): ((3, 5), 5, 2_000, (3, 5, 4)),  # led by 5 (c), listed first 3 (b): crosses
    ("pay", 2): ((1, 2), None, 4_000, (1, 2, 6)),  # no leader: 1 (a) sends to 6 (c)
    ("pay", 3): ((3, 6), 6, 8_000, (3, 6, 5)),  # led by 6 (c), 5 (c) receives: stays
    ("pay", 4): ((2, 4), 2, 16_000, (2, 4)),  # unchanged
}
CROSSING = 1_000 + 2_000 + 4_000
SENDERS = {1: 5_000, 5: 2_000, 6: 8_000}


def current() -> dict[tuple[str, int], Pa]:
    return {k: Pa(*k, reps) for k, (reps, _, _, _) in CLUSTER.items()}


def plan() -> list[Pa]:
    return [Pa(*k, new) for k, (old, _, _, new) in CLUSTER.items() if new != old]


def leaders() -> dict[tuple[str, int], int | None]:
    return {k: lead for k, (_, lead, _, _) in CLUSTER.items()}


def sizes() -> dict[tuple[str, int], int]:
    return {k: size for k, (_, _, size, _) in CLUSTER.items()}


def write_cluster(root: Path) -> tuple[Path, Path]:
    """The cluster as a JSON Lines snapshot and the plan as reassignment JSON."""
    snap = root / "snap"
    snap.mkdir(parents=True)

    def lines(rows: list[dict[str, Any]]) -> str:
        return "".join(json.dumps(r) + "\n" for r in rows)

    (snap / "brokers.jsonl").write_text(
        lines([{"broker_id": b, "rack": r} for b, r in RACKS.items()])
    )
    (snap / "topics.jsonl").write_text(lines([{"topic": "pay", "placement": None}]))
    rows = []
    for (topic, p), (reps, lead, size, _) in CLUSTER.items():
        recorded = {"isr": list(reps), "leader": lead} if lead is not None else {}
        rows.append(
            {
                "topic": topic,
                "partition": p,
                "replicas": list(reps),
                "observers": [],
                "size_bytes": size,
                **recorded,
            }
        )
    (snap / "partitions.jsonl").write_text(lines(rows))
    path = root / "plan.json"
    path.write_text(render_reassignment(plan()))
    return snap, path


def test_in_process_the_recorded_leader_sends_and_decides_the_crossing() -> None:
    flows = rack_to_rack(RACKS, plan(), current(), sizes(), leaders())
    assert cross_rack_bytes(flows) == CROSSING
    assert {(f.from_rack, f.to_rack): f.bytes for f in flows} == {
        ("a", "b"): 1_000,
        ("a", "c"): 4_000,
        ("c", "b"): 2_000,
        ("c", "c"): 8_000,
    }
    # the batches name the same senders
    (batch,) = split(plan(), current(), sizes(), batch_size=10, current_leaders=leaders()).batches
    assert batch.senders == SENDERS


@pytest.mark.spark
def test_score_and_the_reference_count_the_same_cross_rack_bytes(
    spark: Any, tmp_path: Path
) -> None:
    from placement.score.run import run_score

    snap, path = write_cluster(tmp_path)
    (got,) = run_score(snap, [path], master="local[2]").plans
    assert got.bytes_to_move == 1_000 + 2_000 + 4_000 + 8_000
    assert got.cross_rack_bytes == CROSSING
    sys.path.insert(0, str(BENCH))
    try:
        import score_ref
    finally:
        sys.path.remove(str(BENCH))
    parquet = tmp_path / "parquet"  # the reference reads Parquet snapshots only
    write_snapshot(parquet, read_snapshot(snap))
    (want,) = score_ref.score(parquet, [path], 1)["plans"]
    assert want["cross_rack_bytes"] == CROSSING


# a policy the plans set: one replica per rack
ONE_PER_RACK = {
    "version": 2,
    "replicas": [{"count": 1, "constraints": {"rack": r}} for r in ("a", "b", "c")],
}
FIX = [
    Pa("pay", p, reps)
    for p, reps in enumerate([(1, 3, 5), (3, 5, 1), (1, 3, 6), (3, 6, 1), (2, 4, 6)])
]


def test_a_plan_leaving_more_violations_never_ranks_above_one_leaving_fewer() -> None:
    from placement.score.report import PlanScore, ranked

    def scored(name: str, violations: int, value: float) -> PlanScore:
        return PlanScore.model_construct(plan=name, violations_after=violations, score=value)

    # moving nothing scores high; repairing a violation costs moves and balance
    still = scored("nothing.json", 1, 95.0)
    repair = scored("repair.json", 0, 80.0)
    cheaper = scored("cheaper.json", 0, 85.0)
    assert [p.plan for p in ranked([still, repair, cheaper])] == [
        "cheaper.json",
        "repair.json",
        "nothing.json",
    ]


@pytest.mark.spark
def test_score_judges_plans_against_the_policies_they_set(
    spark: Any, cli: Any, tmp_path: Path
) -> None:
    snap, story = write_cluster(tmp_path)
    fix = tmp_path / "fix.json"
    fix.write_text(render_reassignment(FIX))
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"topics": [{"name": "pay", "placement": ONE_PER_RACK}]}))
    args = ["score", "--snapshot", snap, "--plan", story, "--plan", fix, "--master", "local[2]"]
    r = cli([*args, "--topics", topics, "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    by_name = {Path(p["plan"]).name: p for p in doc["plans"]}
    # against one replica per rack: every partition breaks it now (two replicas each)
    assert by_name["fix.json"]["violations_before"] == 5
    assert by_name["fix.json"]["violations_after"] == 0
    assert by_name["plan.json"]["violations_after"] == 5  # a,b,b / b,c,b / a,a,c / ...
    assert [Path(p["plan"]).name for p in doc["plans"]] == ["fix.json", "plan.json"]
    # the snapshot as it stands keeps its own policies: pay has none
    assert doc["baseline"]["violations"] == 0
    # without the topics file, the cluster's policies (none) judge the plans
    r = cli([*args, "--format", "json"])
    assert r.exit_code == 0, r.output
    assert all(p["violations_after"] == 0 for p in json.loads(r.stdout)["plans"])


@pytest.mark.spark
def test_score_reads_the_policies_a_plan_sets_from_its_policy_dir(
    spark: Any, cli: Any, tmp_path: Path
) -> None:
    """assign writes a policy change's plan and --policy-dir together; score judges the plan
    by the policies in that directory, as it would with the topics file."""
    snap, _ = write_cluster(tmp_path)
    wanted = tmp_path / "wanted.json"
    wanted.write_text(json.dumps({"topics": [{"name": "pay", "placement": ONE_PER_RACK}]}))
    plan, pol = tmp_path / "change.json", tmp_path / "policies"
    made = cli(
        ["assign", "--current", snap, "--topics", wanted, "--out", plan, "--policy-dir", pol]
    )
    assert made.exit_code == 0, made.output
    args = ["score", "--snapshot", snap, "--plan", plan, "--master", "local[2]", "--format", "json"]
    judged = cli([*args, "--policy-dir", pol])
    assert judged.exit_code == 0, judged.output
    scored = json.loads(judged.stdout)["plans"][0]
    assert (scored["violations_before"], scored["violations_after"]) == (5, 0)
    same = cli([*args, "--topics", wanted])
    assert json.loads(same.stdout)["plans"][0] == scored
    both = cli([*args, "--policy-dir", pol, "--topics", wanted])
    assert both.exit_code == 2 and "pass one" in both.stderr
    (pol / "topics.json").unlink()
    old = cli([*args, "--policy-dir", pol])
    assert old.exit_code == 2 and "holds no topics.json" in old.stderr


def test_score_says_its_rack_failures_take_the_recorded_isr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # score's rack failures are simulate's, from the recorded ISR: the label says so, and
    # no longer that every sync replica counts as in sync
    from mrc_plan_cli.score import render
    from placement.html.score import render_score
    from placement.score.report import ScoreReport

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "html" / "score-report.json"
    report = ScoreReport.model_validate_json(fixture.read_text())
    assert report.baseline.rack_failure
    render(report, bars=0)
    out = capsys.readouterr().out
    text = " ".join(out.split())
    assert "rack down: from the recorded ISR" in text
    assert "every sync replica in sync" not in text
    page = render_score(report, source="fixture")
    assert "Rack failures, from the recorded ISR" in page
    assert "every sync replica in sync" not in page
