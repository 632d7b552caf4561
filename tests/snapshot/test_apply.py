"""`snapshot apply`: the state after a plan, as a snapshot that the next what-if reads."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from placement.io.reassignment import read_reassignment, render_reassignment
from placement.io.snapshot import read_snapshot
from placement.model.assignment import PartitionAssignment as PA  # noqa: N817 - short rows
from placement.plan.checker import check_form
from placement.rules.partitions import violation_mask
from placement.snapshot.apply import after

Cli = Callable[..., Result]
Row = dict[str, Any]
SUMMARY = re.compile(
    r"entries change ([\d,]+) of ([\d,]+) partitions; ([\d,]+) break their policy after "
    r"\(([\d,]+) before\)"
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, synth_snapshot: Callable[..., Path]) -> Path:
    """A synthetic snapshot with some partitions breaking their policy, and an inventory
    and topics file describing the same cluster (for assign and simulate)."""
    root = tmp_path_factory.mktemp("cluster")
    snap = read_snapshot(
        synth_snapshot(
            root / "snap", "--violations", "0.1", brokers=12, racks=3, topics=4, per_topic=10
        )
    )
    brokers = [{"id": b["broker_id"], "rack": b["rack"]} for b in snap.brokers.to_pylist()]
    (root / "inv.json").write_text(json.dumps({"brokers": brokers}))
    topics = [
        {"name": t["topic"], "partitions": 10, "placement": json.loads(t["placement"])}
        for t in snap.topics.to_pylist()
    ]
    (root / "topics.json").write_text(json.dumps({"topics": topics}))
    return root


def rows(snap_dir: Path) -> dict[tuple[str, int], Row]:
    return {(r["topic"], r["partition"]): r for r in read_snapshot(snap_dir).partitions.to_pylist()}


def moved_plan(snap_dir: Path, every: int = 3) -> list[PA]:
    """Every ``every``-th partition with its last sync replica replaced by the lowest broker
    it does not use (some plans then break their policy: apply allows that)."""
    snap = read_snapshot(snap_dir)
    brokers = sorted(snap.brokers.column("broker_id").to_pylist())
    plan = []
    for i, r in enumerate(snap.partitions.to_pylist()):
        if i % every:
            continue
        reps, obs = list(r["replicas"]), list(r["observers"] or ())
        spare = next(b for b in brokers if b not in reps)
        reps[len(reps) - len(obs) - 1] = spare
        plan.append(PA(r["topic"], r["partition"], tuple(reps), tuple(obs)))
    return plan


def apply(cli: Cli, snap: Path, plan: Path, out: Path) -> Result:
    return cli(["snapshot", "apply", snap, plan, "--out", out])


def test_the_new_snapshot_is_the_overlay(cli: Cli, cluster: Path, tmp_path: Path) -> None:
    snap = cluster / "snap"
    entries = moved_plan(snap)
    plan, out = tmp_path / "plan.json", tmp_path / "after"
    plan.write_text(render_reassignment(entries))
    r = apply(cli, snap, plan, out)
    assert r.exit_code == 0, r.output
    before, now = rows(snap), rows(out)
    assert list(now) == list(before)  # the same partitions, in the same order
    planned = {a.key: a for a in entries}
    for key, row in now.items():
        assert row["size_bytes"] == before[key]["size_bytes"]
        a = planned.get(key)
        if a is None:
            assert row == before[key]
            continue
        assert (tuple(row["replicas"]), tuple(row["observers"])) == (a.replicas, a.observers)
        sync = a.replicas[: len(a.replicas) - len(a.observers)]
        assert set(row["isr"]) <= set(sync)  # observers and removed replicas are out
        assert row["leader"] in sync
    old, new = read_snapshot(snap), read_snapshot(out)
    assert new.brokers.equals(old.brokers) and new.topics.equals(old.topics)
    found = SUMMARY.search(r.stderr)
    assert found is not None, r.stderr
    changed, total, broken, broken_before = (int(g.replace(",", "")) for g in found.groups())
    assert (changed, total) == (len(entries), len(before))
    assert broken == int(violation_mask(new).sum())
    assert broken_before == int(violation_mask(old).sum())


def test_an_unchanged_entry_changes_nothing(cli: Cli, cluster: Path, tmp_path: Path) -> None:
    snap, current, out = cluster / "snap", tmp_path / "current.json", tmp_path / "after"
    assert cli(["snapshot", "export", snap, "--out", current]).exit_code == 0
    r = apply(cli, snap, current, out)
    assert r.exit_code == 0, r.output
    assert "change 0 of" in r.stderr
    assert read_snapshot(out).partitions.equals(read_snapshot(snap).partitions)


def test_same_input_same_bytes(cli: Cli, cluster: Path, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(render_reassignment(moved_plan(cluster / "snap", every=2)))
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        assert apply(cli, cluster / "snap", plan, out).exit_code == 0

    def files(root: Path) -> dict[str, bytes]:
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}

    assert files(outs[0]) == files(outs[1])


def test_leader_and_isr_after_the_reassignment() -> None:
    before = PA("t", 0, (1, 2, 3))
    # the leader stays while it is a sync replica; the added replica caught up
    assert after(before, [1, 2, 3], 2, PA("t", 0, (2, 4, 3))) == ([2, 4, 3], 2)
    # the leader left: the first sync replica in the ISR leads; 2 was out of sync and stays out
    assert after(before, [1, 3], 1, PA("t", 0, (2, 3, 4))) == ([3, 4], 3)
    # a leader turned observer gives up leadership and the ISR
    assert after(before, [1, 2, 3], 1, PA("t", 0, (2, 3, 1), (1,))) == ([2, 3], 2)
    # an observer made a sync replica joins the ISR
    watched = PA("t", 0, (1, 2, 9), (9,))
    assert after(watched, [1, 2], 1, PA("t", 0, (1, 2, 9))) == ([1, 2, 9], 1)
    # what the snapshot did not record stays unrecorded
    assert after(before, None, None, PA("t", 0, (4, 5, 6))) == (None, None)
    assert after(before, None, 1, PA("t", 0, (4, 5, 6))) == (None, 4)
    # the leader left and only the added replica is in sync: it leads
    assert after(before, [1], 1, PA("t", 0, (2, 3, 4))) == ([4], 4)
    # only a replica that was out of sync is kept: no ISR, no leader (offline)
    assert after(PA("t", 0, (1, 2)), [1], 1, PA("t", 0, (2,))) == ([], None)
    # an offline partition stays offline: the replica it gains has nobody to copy from
    assert after(before, [], None, PA("t", 0, (3, 4))) == ([], None)
    assert after(before, [3], None, PA("t", 0, (3, 4))) == ([3], None)


def test_check_form_holds_kafka_rules_only() -> None:
    partitions = {("t", 0), ("t", 1)}
    brokers = {1, 2, 3, 4}
    # breaks any policy one might think of, but Kafka would take it
    assert (
        check_form([PA("t", 0, (4,)), PA("t", 1, (1, 2, 3, 4), (3, 4))], partitions, brokers, "x")
        == []
    )
    bad = [
        PA("t", 0, (1, 1)),
        PA("t", 0, (1, 2)),
        PA("t", 1, (1, 2), (1,)),
        PA("t", 2, (1, 9)),
    ]
    got = [(p.partition, p.message) for p in check_form(bad, partitions, brokers, "the snapshot S")]
    assert got == [
        (0, "a broker appears twice in [1, 1]"),
        (0, "listed twice in the plan"),
        (1, "observers [1] are not a proper suffix of replicas [1, 2]"),
        (2, "not a partition of the cluster"),
        (2, "brokers [9] are not in the snapshot S"),
    ]


def entry_for(cluster: Path, **change: Any) -> str:
    row = read_snapshot(cluster / "snap").partitions.to_pylist()[5]
    entry = {"topic": row["topic"], "partition": row["partition"], "replicas": row["replicas"]}
    return json.dumps({"version": 1, "partitions": [{**entry, **change}]}, indent=1)


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"partition": 999}, "partition 999 of topic"),
        ({"topic": "nope"}, "topic nope is not in the snapshot"),
        ({"replicas": [1, 77]}, "broker(s) 77 are not in the snapshot"),
    ],
)
def test_bad_plans_are_refused_naming_the_file(
    cli: Cli, cluster: Path, tmp_path: Path, change: dict[str, Any], fragment: str
) -> None:
    plan, out = tmp_path / "plan.json", tmp_path / "after"
    plan.write_text(entry_for(cluster, **change))
    r = apply(cli, cluster / "snap", plan, out)
    assert r.exit_code == 2, r.output
    assert f"{plan}:4:3:" in r.stderr  # where the entry starts
    assert fragment in r.stderr
    assert not out.exists()


def test_a_batch_directory_is_refused_with_the_way_to_apply_it(
    cli: Cli, cluster: Path, tmp_path: Path
) -> None:
    (tmp_path / "batches").mkdir()
    r = apply(cli, cluster / "snap", tmp_path / "batches", tmp_path / "after")
    assert r.exit_code == 2
    assert "plan-NNNN.json" in r.stderr
    assert not (tmp_path / "after").exists()


def test_the_input_is_never_overwritten(cli: Cli, cluster: Path, tmp_path: Path) -> None:
    snap, plan = cluster / "snap", tmp_path / "plan.json"
    plan.write_text(render_reassignment(moved_plan(snap)))
    stored = {p: p.read_bytes() for p in snap.rglob("*") if p.is_file()}
    for out in (snap, snap / "partitions", plan):
        r = apply(cli, snap, plan, out)
        assert r.exit_code == 2, r.output
    other = tmp_path / "notes"
    other.mkdir()
    (other / "mine.txt").write_text("mine")
    assert apply(cli, snap, plan, other).exit_code == 2
    assert (other / "mine.txt").read_text() == "mine"
    assert {p: p.read_bytes() for p in snap.rglob("*") if p.is_file()} == stored
    # an earlier result may be replaced: it is a snapshot mrc-plan wrote
    assert apply(cli, snap, plan, tmp_path / "after").exit_code == 0
    assert apply(cli, snap, plan, tmp_path / "after").exit_code == 0


def drain_then_apply(cli: Cli, cluster: Path, tmp_path: Path, broker: int) -> Path:
    """synth -> assign --drain -> snapshot apply: the snapshot after the drain."""
    plan, new = tmp_path / "drain.json", tmp_path / "drained"
    inputs = ["--inventory", cluster / "inv.json", "--topics", cluster / "topics.json"]
    r = cli(["assign", *inputs, "--current", cluster / "snap", "--drain", str(broker)])
    assert r.exit_code == 0, r.output
    plan.write_text(r.stdout)
    assert read_reassignment(plan)  # the drain moves something
    r = apply(cli, cluster / "snap", plan, new)
    assert r.exit_code == 0, r.output
    for row in rows(new).values():
        assert broker not in row["replicas"]
        assert broker not in (row["isr"] or []) and row["leader"] != broker
    return new


def test_chained_what_if_drain_then_lose_a_rack(cli: Cli, cluster: Path, tmp_path: Path) -> None:
    new = drain_then_apply(cli, cluster, tmp_path, broker=2)
    inventory = cluster / "inv.json"
    sim = ["simulate", "--current", new, "--inventory", inventory, "--fail-rack", "rack-02"]
    r = cli([*sim, "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    assert json.loads(r.stdout)["totals"]["partitions"] == len(rows(new))
    # the next step reads the new state: the broker is empty, nothing is left to drain
    inputs = ["--inventory", inventory, "--topics", cluster / "topics.json"]
    r = cli(["assign", *inputs, "--current", new, "--drain", "2"])
    assert r.exit_code == 0, r.output
    assert r.stdout == ""


@pytest.mark.spark
def test_chained_what_if_on_the_spark_stage(
    spark: Any, cli: Cli, cluster: Path, tmp_path: Path
) -> None:
    new = drain_then_apply(cli, cluster, tmp_path, broker=5)
    r = cli(["simulate", "--snapshot", new, "--fail-rack", "rack-01", "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    assert json.loads(r.stdout)["totals"]["partitions"] == len(rows(new))


def test_the_checker_stops_what_a_reader_bug_would_let_through(
    cluster: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import placement.snapshot.apply as applying
    from placement.io.reassignment import read_plan_file
    from placement.plan.checker import PlanCheckError

    plan = tmp_path / "plan.json"
    plan.write_text(entry_for(cluster, replicas=[1, 77]))
    monkeypatch.setattr(applying, "read_plan_for", lambda _s, path, _r: read_plan_file(path))
    with pytest.raises(PlanCheckError, match="brokers \\[77\\] are not in the snapshot"):
        applying.apply_plan_file(read_snapshot(cluster / "snap"), plan)
