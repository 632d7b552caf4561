"""Batches: every batch valid, union = plan, caps respected, leaders last, ETA arithmetic."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import Result

from placement.errors import UsageError
from placement.io.atomic import write_dir_atomic
from placement.io.reassignment import read_reassignment
from placement.io.snapshot import read_snapshot, write_snapshot
from placement.model.assignment import PartitionAssignment
from placement.plan.batches import BatchPlan, render_files, split, summary
from placement.snapshot.synth import SynthSpec, synth

Pa = PartitionAssignment

Cli = Callable[..., Result]
BATCHED = ["--max-moves-per-broker", "4", "--batch-size", "20", "--throttle", "100MB", "--out-dir"]


def moves(old: Pa | None, new: Pa) -> Counter[int]:
    before = set(old.replicas) if old else set()
    return Counter((set(new.replicas) - before) | (before - set(new.replicas)))


def check_invariants(
    bp: BatchPlan,
    plan: list[Pa],
    current: dict[tuple[str, int], Pa],
    batch_size: int | None,
    cap: int | None,
) -> None:
    seen = [a.key for b in bp.batches for a in b.entries]
    assert len(seen) == len(set(seen))  # a partition moves in one batch only
    state = dict(current)
    for b in bp.batches:
        assert b.entries and b.entries == sorted(b.entries, key=lambda a: a.key)
        assert batch_size is None or len(b.entries) <= batch_size
        per: Counter[int] = Counter()
        for a in b.entries:
            per.update(moves(current.get(a.key), a))
        assert cap is None or max(per.values()) <= cap
        assert b.rollback == [current[a.key] for a in b.entries if a.key in current]
        state.update({a.key: a for a in b.entries})
    assert bp.leaders_rollback == [state[a.key] for a in bp.leaders]
    state.update({a.key: a for a in bp.leaders})
    # applying every batch, then the leaders step, gives exactly the plan
    assert {k: v for k, v in state.items() if v != current.get(k)} == {
        a.key: a for a in plan if a != current.get(a.key)
    }
    # leadership never moves during a data batch when the old leader stays a sync replica
    for b in bp.batches:
        for a in b.entries:
            old = current.get(a.key)
            if old is not None and old.leader in a.sync:
                assert a.leader == old.leader
    assert len(bp.batches) >= bp.lower_bound


def test_leader_is_kept_first_until_the_leaders_step() -> None:
    current = {("t", 0): Pa("t", 0, (1, 2, 3)), ("t", 1): Pa("t", 1, (4, 5, 6))}
    plan = [
        Pa("t", 0, (2, 7, 3)),  # 1 leaves: leadership must move with it
        Pa("t", 1, (5, 4, 8)),  # 6 -> 8 and the preferred leader 4 -> 5
    ]
    bp = split(plan, current, {}, batch_size=10)
    (batch,) = bp.batches
    assert batch.entries == [Pa("t", 0, (2, 7, 3)), Pa("t", 1, (4, 5, 8))]
    assert bp.leaders == [Pa("t", 1, (5, 4, 8))]
    assert bp.election == [("t", 1)]
    assert batch.bytes is None and batch.eta_seconds(100) is None  # no sizes known


def test_a_new_order_alone_moves_no_data_and_waits_for_the_leaders_step() -> None:
    current = {("t", 0): Pa("t", 0, (1, 2, 3)), ("t", 1): Pa("t", 1, (1, 2, 3))}
    plan = [Pa("t", 0, (2, 1, 3)), Pa("t", 1, (1, 3, 2))]
    bp = split(plan, current, {}, max_moves_per_broker=1)
    assert bp.batches == []
    assert bp.leaders == plan and bp.leaders_rollback == [current[a.key] for a in plan]
    assert bp.election == [("t", 0)]  # t-1 keeps its leader: nothing to elect
    files = render_files(bp, None)
    assert set(files) == {"leaders.json", "rollback-leaders.json", "election.json", "summary.json"}


def test_eta_is_the_slowest_receiver_and_caps_split_batches() -> None:
    current = {("t", p): Pa("t", p, (1, 2)) for p in range(3)}
    plan = [Pa("t", 0, (1, 3)), Pa("t", 1, (1, 3)), Pa("t", 2, (4, 2))]
    sizes = {("t", 0): 100, ("t", 1): 300, ("t", 2): 50}
    bp = split(plan, current, sizes, max_moves_per_broker=2)
    # broker 2 gives up two replicas (t-0, t-1) and broker 3 receives two: one batch fits
    # them; t-2 moves 1 -> 4 and would be broker 1's first move: it fits as well
    (b,) = bp.batches
    assert b.receivers == {3: 400, 4: 50} and b.senders == {1: 450}
    assert b.eta_seconds(10) == 40.0  # broker 3 receives 400 bytes at 10 bytes/s
    bp = split(plan, current, sizes, max_moves_per_broker=1)
    assert [len(x.entries) for x in bp.batches] == [2, 1] and bp.lower_bound == 2
    doc = summary(bp, 10)
    assert [r["eta_seconds"] for r in doc["batches"]] == [10.0, 30.0]  # t-0 + t-2, then t-1
    assert doc["total"]["eta_seconds"] == 40.0 and doc["total"]["bytes"] == 450


def test_the_split_needs_a_cap() -> None:
    with pytest.raises(UsageError):
        split([], {}, {})


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.permutations(list(range(1, 9))), st.integers(1, 3), st.booleans()),
        min_size=1,
        max_size=40,
    ),
    st.one_of(st.none(), st.integers(1, 5)),
    st.one_of(st.none(), st.integers(1, 4)),
)
def test_invariants_hold_for_any_plan(
    rows: list[tuple[list[int], int, bool]], batch_size: int | None, cap: int | None
) -> None:
    if batch_size is None and cap is None:
        cap = 2
    current, plan = {}, []
    for p, (perm, shift, keep) in enumerate(rows):
        old = Pa("t", p, tuple(perm[:3]))
        current[old.key] = old
        if keep:
            continue
        new = tuple(perm[shift : shift + 3])
        plan.append(Pa("t", p, new))
    bp = split(
        plan, current, {a.key: 10 for a in plan}, batch_size=batch_size, max_moves_per_broker=cap
    )
    check_invariants(bp, plan, current, batch_size, cap)


def test_write_dir_atomic_refuses_a_foreign_directory_and_replaces_its_own(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    with pytest.raises(UsageError, match="not overwriting"):
        write_dir_atomic(target, {"summary.json": "{}"}, marker="summary.json")
    assert (target / "notes.txt").read_text() == "mine"
    other = tmp_path / "out2"
    write_dir_atomic(other, {"a": "1", "b": "2", "summary.json": "{}"}, marker="summary.json")
    write_dir_atomic(other, {"a": "3", "summary.json": "{}"}, marker="summary.json")
    assert sorted(p.name for p in other.iterdir()) == ["a", "summary.json"]  # b is gone
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp left


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cluster")
    snap = synth(SynthSpec(30, 3, 10, 40, seed=3)).snapshot
    write_snapshot(root / "snap", snap)
    brokers = snap.brokers.to_pylist()
    (root / "inv.json").write_text(
        json.dumps({"brokers": [{"id": b["broker_id"], "rack": b["rack"]} for b in brokers]})
    )
    topics = [
        {"name": t["topic"], "partitions": 40, "placement": json.loads(t["placement"])}
        for t in snap.topics.to_pylist()
    ]
    (root / "topics.json").write_text(json.dumps({"topics": topics}))
    return root


def drain(cluster: Path, brokers: str) -> list[str | Path]:
    """`assign` draining ``brokers`` from the cluster fixture's snapshot."""
    return [
        "assign",
        *("--inventory", cluster / "inv.json", "--topics", cluster / "topics.json"),
        *("--current", cluster / "snap", "--drain", brokers),
    ]


def test_drain_in_batches_end_to_end(cli: Cli, cluster: Path, tmp_path: Path) -> None:
    out = tmp_path / "drain"
    args = drain(cluster, "1,11")
    r = cli([*args, "--out", tmp_path / "full.json"])
    assert r.exit_code == 0, r.output
    r = cli([*args, *BATCHED, out])
    assert r.exit_code == 0, r.output
    assert r.stdout == ""  # with --out-dir the files are the output
    doc = json.loads((out / "summary.json").read_text())
    plan = read_reassignment(tmp_path / "full.json")
    snap = read_snapshot(cluster / "snap")
    current = {
        (row["topic"], row["partition"]): Pa(
            row["topic"], row["partition"], tuple(row["replicas"]), tuple(row["observers"] or ())
        )
        for row in snap.partitions.to_pylist()
    }
    batches = [read_reassignment(out / b["file"]) for b in doc["batches"]]  # each one valid
    leaders = read_reassignment(out / "leaders.json") if doc["leaders"] else []
    rollbacks = [read_reassignment(out / b["rollback"]) for b in doc["batches"]]
    # the files, re-read: caps, union, rollbacks
    state = dict(current)
    for entries, rollback, row in zip(batches, rollbacks, doc["batches"], strict=True):
        assert len(entries) <= 20 and row["partitions"] == len(entries)
        per: Counter[int] = Counter()
        for a in entries:
            per.update(moves(current[a.key], a))
        assert max(per.values()) == row["max_moves_per_broker"] <= 4
        assert rollback == [current[a.key] for a in entries]
        state.update({a.key: a for a in entries})
    state.update({a.key: a for a in leaders})
    assert {k: v for k, v in state.items() if v != current[k]} == {a.key: a for a in plan}
    assert not any(1 in a.replicas or 11 in a.replicas for a in state.values())
    total = doc["total"]
    assert total["batches_lower_bound"] <= total["batches"] <= total["batches_lower_bound"] + 1
    assert total["partitions"] == sum(len(e) for e in batches)
    rate = 100_000_000
    for row in doc["batches"]:
        assert row["eta_seconds"] == max(r["bytes"] for r in row["receivers"]) / rate
    assert total["eta_seconds"] == pytest.approx(sum(r["eta_seconds"] for r in doc["batches"]))

    shown = cli(["plan", "show", out])
    assert shown.exit_code == 0 and "plan-0001.json" in shown.stdout and "total" in shown.stdout
    one = cli(["plan", "show", out / "plan-0002.json"])
    assert one.exit_code == 0 and "plan-0002.json" in one.stdout and "plan-0001" not in one.stdout
    # the same command again replaces the directory with the same bytes
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    r = cli([*args, *BATCHED, out])
    assert r.exit_code == 0 and {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--out-dir", "x"], "go together"),
        (["--batch-size", "3"], "go together"),
        (["--out-dir", "x", "--batch-size", "3", "--throttle", "fast"], "--throttle"),
    ],
)
def test_batch_options_usage_errors(
    cli: Cli, cluster: Path, extra: list[str], message: str
) -> None:
    r = cli([*drain(cluster, "1"), *extra])
    assert r.exit_code == 2 and message in r.stderr


def test_plan_show_on_a_plain_reassignment_file(cli: Cli, tmp_path: Path) -> None:
    p = tmp_path / "p.json"
    p.write_text('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2]}]}')
    r = cli(["plan", "show", p])
    assert r.exit_code == 0 and "1 partitions of 1 topics" in r.stdout
    r = cli(["plan", "show", tmp_path])
    assert r.exit_code == 2 and "no summary.json" in r.stderr


def test_the_independent_check_catches_a_broken_split() -> None:
    from placement.plan.checker import check_batches

    current = {("t", p): Pa("t", p, (1, 2, 3)) for p in range(3)}
    plan = [Pa("t", 0, (1, 2, 4)), Pa("t", 1, (4, 2, 3)), Pa("t", 2, (1, 6, 3))]  # 4 twice
    bp = split(plan, current, {}, max_moves_per_broker=2)
    good = [b.entries for b in bp.batches]
    assert (
        check_batches(plan, current, good, bp.leaders, batch_size=None, max_moves_per_broker=2)
        == []
    )

    def problems(batches: list[list[Pa]], cap: int | None = 2, size: int | None = None) -> str:
        found = check_batches(
            plan, current, batches, bp.leaders, batch_size=size, max_moves_per_broker=cap
        )
        return "; ".join(str(p) for p in found)

    flat = [a for b in good for a in b]
    assert "moves again" in problems([flat, flat[:1]])
    assert "do not give the plan" in problems([flat[:-1]])
    assert "differs from the plan" in problems([[Pa("t", 0, (1, 2, 7)), *flat[1:]]])
    assert "over the cap" in problems([flat], cap=1)
    assert "holds 3 partitions" in problems([flat], cap=None, size=2)
