"""Batches: every batch valid, union = plan, caps respected, leaders last, ETA arithmetic."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import Result

from placement.errors import UsageError
from placement.io.atomic import write_dir_atomic
from placement.io.reassignment import read_reassignment
from placement.io.snapshot import read_snapshot, write_snapshot
from placement.model.assignment import Key, PartitionAssignment
from placement.plan.batches import BatchPlan, render_files, split, split_checked, summary
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


def test_eta_is_the_busiest_broker_and_caps_split_batches() -> None:
    current = {("t", p): Pa("t", p, (1, 2)) for p in range(3)}
    plan = [Pa("t", 0, (1, 3)), Pa("t", 1, (1, 3)), Pa("t", 2, (4, 2))]
    sizes = {("t", 0): 100, ("t", 1): 300, ("t", 2): 50}
    bp = split(plan, current, sizes, max_moves_per_broker=2)
    # broker 2 gives up two replicas (t-0, t-1) and broker 3 receives two: one batch fits
    # them; t-2 moves 1 -> 4 and would be broker 1's first move: it fits as well
    (b,) = bp.batches
    assert b.receivers == {3: 400, 4: 50} and b.senders == {1: 450}
    # the leader-side quota: broker 1 sends 450 bytes at 10 bytes/s, more than broker 3
    # receives (400)
    assert b.eta_seconds(10) == 45.0
    bp = split(plan, current, sizes, max_moves_per_broker=1)
    assert [len(x.entries) for x in bp.batches] == [2, 1] and bp.lower_bound == 2
    doc = summary(bp, 10)
    # t-0 + t-2 (broker 1 sends 150), then t-1 (300 each way)
    assert [r["eta_seconds"] for r in doc["batches"]] == [15.0, 30.0]
    assert doc["total"]["eta_seconds"] == 45.0 and doc["total"]["bytes"] == 450


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
        busiest = max(r["bytes"] for r in row["receivers"] + row["senders"])
        assert row["eta_seconds"] == busiest / rate
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


# --batch-bytes: a cap on the bytes each batch copies


def copied(bp: BatchPlan, current: dict[tuple[str, int], Pa], sizes: dict[Key, int]) -> list[int]:
    """Each batch's bytes, counted again from its entries: size x brokers gained."""
    return [
        sum(
            sizes.get(a.key, 0)
            * (len(set(a.replicas) - set(current[a.key].replicas)) if a.key in current else 0)
            for a in b.entries
        )
        for b in bp.batches
    ]


def test_byte_cap_first_fit_decreasing_and_an_oversized_partition_alone() -> None:
    current = {("t", p): Pa("t", p, (1, 2)) for p in range(6)}
    plan = [Pa("t", p, (1, 3)) for p in range(6)]  # each gains broker 3: its size once
    sizes = {("t", p): s for p, s in enumerate([100, 60, 50, 40, 30, 500])}
    bp = split(plan, current, sizes, batch_bytes=120)
    # largest first: t-5 (500) alone; t-0 (100); t-1 + t-2 (110); t-3 + t-4 (70)
    assert [[a.partition for a in b.entries] for b in bp.batches] == [[5], [0], [1, 2], [3, 4]]
    assert [b.bytes for b in bp.batches] == copied(bp, current, sizes) == [500, 100, 110, 70]
    assert [b.oversized for b in bp.batches] == [True, False, False, False]
    # the oversized partition's batch, plus 280 bytes in batches of 120 (not 780 / 120)
    assert bp.lower_bound == 1 + 3
    doc = summary(bp, None)
    assert doc["caps"] == {"batch_size": None, "max_moves_per_broker": None, "batch_bytes": 120}
    assert doc["total"]["oversized"] == 1 and doc["total"]["bytes"] == 780
    assert [r["oversized"] for r in doc["batches"]] == [True, False, False, False]
    # the same inputs in another order: the same batches
    assert split(plan[::-1], current, sizes, batch_bytes=120) == bp


def test_a_byte_cap_with_the_other_caps_all_hold() -> None:
    current = {("t", p): Pa("t", p, (1, 2)) for p in range(6)}
    plan = [Pa("t", p, (1, 3)) for p in range(6)]
    sizes = {("t", p): 10 for p in range(6)}
    # 60 bytes fit a cap of 1,000 at once, but the partitions cap and broker 3's moves do not
    assert [len(b.entries) for b in split(plan, current, sizes, batch_bytes=1000).batches] == [6]
    bp = split(plan, current, sizes, batch_bytes=1000, batch_size=4, max_moves_per_broker=3)
    assert [len(b.entries) for b in bp.batches] == [3, 3] and bp.lower_bound == 2
    bp = split(plan, current, sizes, batch_bytes=25, batch_size=4)
    assert [b.bytes for b in bp.batches] == [20, 20, 20] and bp.lower_bound == 3


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.permutations(list(range(1, 9))),
            st.integers(1, 3),
            st.booleans(),
            st.integers(0, 300),
        ),
        min_size=1,
        max_size=40,
    ),
    st.integers(1, 400),
    st.one_of(st.none(), st.integers(1, 5)),
    st.one_of(st.none(), st.integers(1, 4)),
)
def test_the_byte_cap_holds_for_any_plan(
    rows: list[tuple[list[int], int, bool, int]],
    limit: int,
    batch_size: int | None,
    cap: int | None,
) -> None:
    current, plan, sizes = {}, [], {}
    for p, (perm, shift, keep, size) in enumerate(rows):
        old = Pa("t", p, tuple(perm[:3]))
        current[old.key] = old
        sizes[old.key] = size
        if not keep:
            plan.append(Pa("t", p, tuple(perm[shift : shift + 3])))
    bp = split(
        plan, current, sizes, batch_size=batch_size, max_moves_per_broker=cap, batch_bytes=limit
    )
    check_invariants(bp, plan, current, batch_size, cap)
    for batch, total in zip(bp.batches, copied(bp, current, sizes), strict=True):
        assert batch.bytes == total
        assert total <= limit or len(batch.entries) == 1  # over the cap: a partition alone
        assert batch.oversized == (total > limit)
    assert sum(b.bytes or 0 for b in bp.batches) == sum(copied(bp, current, sizes))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 150)), max_size=60))
def test_the_room_left_finds_the_first_batch_with_room(steps: list[tuple[int, int]]) -> None:
    """First fit through the tree of rooms finds what a scan of every batch finds."""
    from placement.plan.batches import _Room

    limit = 100
    room, left = _Room(len(steps) or 1, limit), list[int]()
    for start, need in steps:
        start = min(start, len(left))
        want = next((i for i in range(start, len(left)) if left[i] >= need), len(left))
        assert room.first(start, need, len(left)) == want
        if want == len(left):
            left.append(limit)
        left[want] -= need
        room.take(want, need)


def test_bytes_are_unknown_in_a_batch_holding_a_partition_of_unknown_size() -> None:
    """One definition with `assign`'s bytes to move: a partition that gains a replica and
    has no size makes its batch's bytes unknown (it was counted as 0)."""
    current = {("t", 0): Pa("t", 0, (1, 2)), ("t", 1): Pa("t", 1, (1, 2))}
    plan = [Pa("t", 0, (1, 3)), Pa("t", 1, (1, 4)), Pa("t", 2, (5, 6))]  # t-2 is new
    bp = split(plan, current, {("t", 0): 100}, batch_size=3)
    assert [(b.bytes, [a.partition for a in b.entries]) for b in bp.batches] == [(None, [0, 1, 2])]
    assert summary(bp, 10)["total"]["bytes"] is None
    # a new partition has no data to copy: known bytes, 0
    bp = split([plan[2]], current, {("t", 0): 100}, batch_size=1)
    assert [b.bytes for b in bp.batches] == [0]


def test_a_byte_cap_needs_every_size_it_counts() -> None:
    current = {("t", p): Pa("t", p, (1, 2)) for p in range(6)}
    plan = [Pa("t", p, (1, 3)) for p in range(6)]
    with pytest.raises(UsageError, match="no partition size is known") as e:
        split(plan, current, {}, batch_bytes=100)
    assert "--sizes" in e.value.hint
    with pytest.raises(UsageError, match=r"5 partition\(s\).*t-1, t-2, t-3 and 2 more"):
        split(plan, current, {("t", 0): 10}, batch_bytes=100)
    # a partition that only loses a replica copies nothing: its size is not needed
    shrink = [Pa("t", 0, (1, 3)), Pa("t", 1, (1,))]
    assert split(shrink, current, {("t", 0): 10}, batch_bytes=100).batches[0].bytes == 10
    with pytest.raises(UsageError, match="at least 1"):
        split(plan, current, {("t", 0): 10}, batch_bytes=0)


def test_the_independent_check_catches_a_split_over_the_byte_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from placement.plan import batches as module
    from placement.plan.batches import check_bytes
    from placement.plan.checker import PlanCheckError

    current = {("t", p): Pa("t", p, (1, 2)) for p in range(4)}
    plan = [Pa("t", p, (1, 3)) for p in range(4)]
    sizes = {("t", p): s for p, s in enumerate([50, 50, 50, 500])}
    good = split_checked(plan, current, sizes, batch_bytes=100)
    entries = [b.entries for b in good.batches]
    assert entries == [[plan[3]], plan[:2], [plan[2]]]
    assert check_bytes(current, entries, sizes, 100) == []
    assert check_bytes(current, [plan], sizes, None) == []  # no cap, nothing to check

    def problems(batches: list[list[Pa]], known: dict[Key, int] = sizes) -> str:
        return "; ".join(str(p) for p in check_bytes(current, batches, known, 100))

    assert "batch 1 copies 150 bytes, over the cap of 100" in problems([plan[:3], [plan[3]]])
    # the oversized partition alone is allowed; beside another partition it is not
    assert "batch 2 copies 550 bytes" in problems([plan[:2], plan[2:]])
    assert "batch 1: copies data of no known size" in problems([plan[:1]], {})
    # split_checked runs the check: a split that breaks the cap is a bug, nothing written
    broken = BatchPlan([replace(good.batches[1], entries=plan)])
    monkeypatch.setattr(module, "split", lambda *a, **k: broken)
    with pytest.raises(PlanCheckError, match="over the cap of 100"):
        split_checked(plan, current, sizes, batch_bytes=100)


SIZE_CASES = {
    # value: bytes (None: a usage error)
    "1": 1,
    "12345": 12345,
    "500b": 500,
    "200GiB": 200 * 2**30,
    "200gib": 200 * 2**30,
    "500GB": 500 * 10**9,
    "1.5TiB": 3 * 2**39,
    "2TB": 2 * 10**12,
    "750MB": 750 * 10**6,
    "64MiB": 64 * 2**20,
    "1.5KB": 1500,
    "3KiB": 3 * 1024,
    " 7 GiB ": 7 * 2**30,
    "0.001KB": 1,
    f"{2**63 - 1}": 2**63 - 1,
    "0": None,
    "0.5": None,  # half a byte
    "0GiB": None,
    "-5GiB": None,
    "lots": None,
    "1e9": None,
    "1.5.2GB": None,
    ".5GB": None,
    "5PB": None,
    "5GB/s": None,  # a size, not a rate
    "": None,
    f"{2**63}": None,
    "10000000000GB": None,
    "9" * 400: None,
}


@pytest.mark.parametrize("raw", list(SIZE_CASES), ids=lambda r: r[:20] or "empty")
def test_sizes_with_units(raw: str) -> None:
    from mrc_plan_cli.assign import parse_size

    want = SIZE_CASES[raw]
    if want is not None:
        assert parse_size(raw, "--batch-bytes", ("200GiB",)) == want
        return
    with pytest.raises(UsageError) as e:
        parse_size(raw, "--batch-bytes", ("200GiB", "1.5TiB"))
    assert e.value.message.startswith("--batch-bytes: ")
    if len(raw) > 40:  # quoted in part
        assert f"'{raw[:37]}...'" in e.value.message and raw[:38] not in e.value.message
    assert e.value.hint == "e.g. --batch-bytes 200GiB or --batch-bytes 1.5TiB"


def test_a_rate_takes_the_same_units_and_a_per_second() -> None:
    from mrc_plan_cli.assign import parse_size

    assert parse_size("48MiB/s", "--throttle", ("1MB",), rate=True) == 48 * 2**20
    assert parse_size("1.5TiB", "--throttle", ("1MB",), rate=True) == 3 * 2**39
    with pytest.raises(UsageError, match="bytes per second"):
        parse_size("fast", "--throttle", ("1MB",), rate=True)


def test_drain_in_batches_by_bytes_end_to_end(cli: Cli, cluster: Path, tmp_path: Path) -> None:
    args = drain(cluster, "1,11")
    r = cli([*args, "--out", tmp_path / "full.json"])
    assert r.exit_code == 0, r.output
    plan = read_reassignment(tmp_path / "full.json")
    snap = read_snapshot(cluster / "snap")
    rows = snap.partitions.to_pylist()
    current = {
        (x["topic"], x["partition"]): Pa(
            x["topic"], x["partition"], tuple(x["replicas"]), tuple(x["observers"] or ())
        )
        for x in rows
    }
    sizes = {(x["topic"], x["partition"]): x["size_bytes"] for x in rows}
    each = sorted(sizes[a.key] * len(set(a.replicas) - set(current[a.key].replicas)) for a in plan)
    limit = each[-3] - 1  # the two largest copies and the third are over it
    out = tmp_path / "by-bytes"
    r = cli([*args, "--out-dir", out, "--batch-bytes", str(limit)])  # the only cap
    assert r.exit_code == 0, r.output
    assert "note: 3 partition(s) copy more than --batch-bytes" in r.stderr
    doc = json.loads((out / "summary.json").read_text())
    assert doc["caps"]["batch_bytes"] == limit and doc["total"]["oversized"] == 3
    for row in doc["batches"]:
        entries = read_reassignment(out / row["file"])
        copies = sum(
            sizes[a.key] * len(set(a.replicas) - set(current[a.key].replicas)) for a in entries
        )
        assert copies == row["bytes"]
        assert row["oversized"] == (copies > limit)
        assert copies <= limit or len(entries) == 1
    assert [r["oversized"] for r in doc["batches"][:3]] == [True, True, True]  # largest first
    total = doc["total"]
    assert total["bytes"] == sum(each)
    assert total["batches_lower_bound"] <= total["batches"]
    assert total["batches_lower_bound"] >= 3 + -(-sum(each[:-3]) // limit)
    shown = cli(["plan", "show", out, "--format", "json"])
    assert shown.exit_code == 0, shown.output
    view = json.loads(shown.stdout)
    assert view["caps"]["batch_bytes"] == limit and view["total"]["oversized"] == 3
    assert [b["oversized"] for b in view["batches"]] == [b["oversized"] for b in doc["batches"]]
    # with the other caps too, all of them hold
    r = cli([*args, "--out-dir", out, "--batch-bytes", str(limit), *BATCHED[:4]])
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "summary.json").read_text())
    assert doc["caps"] == {"batch_size": 20, "max_moves_per_broker": 4, "batch_bytes": limit}
    for row in doc["batches"]:
        assert row["partitions"] <= 20 and row["max_moves_per_broker"] <= 4
        assert row["bytes"] <= limit or row["partitions"] == 1


EXAMPLE = Path(__file__).resolve().parents[2] / "examples"
DESCRIBE = [
    "assign",
    *("--inventory", EXAMPLE / "inventory.json", "--current", EXAMPLE / "describe.txt"),
    *("--drain", "4"),  # the policies are the cluster's
]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--batch-bytes", "200GiB"], "go together"),
        (["--out-dir", "x", "--batch-bytes", "0"], "is not 1 to"),
        (["--out-dir", "x", "--batch-bytes", "-5"], "expected bytes"),
        (["--out-dir", "x", "--batch-bytes", "lots"], "expected bytes, found 'lots'"),
        (["--out-dir", "x", "--batch-bytes", "5GB/s"], "expected bytes"),
        (["--out-dir", "x", "--batch-bytes", "9" * 400], "'" + "9" * 37 + "...'"),
        # describe output holds no sizes: refused before any planning
        (["--out-dir", "x", "--batch-bytes", "200GiB"], "no partition size is known"),
    ],
)
def test_batch_bytes_usage_errors(cli: Cli, tmp_path: Path, extra: list[str], message: str) -> None:
    extra = [str(tmp_path / e) if e == "x" else e for e in extra]
    r = cli([*DESCRIBE, *extra])
    assert r.exit_code == 2, r.output
    assert message in r.stderr and "--batch-bytes" in r.stderr
    assert "9" * 41 not in r.stderr  # a long value is quoted in part
    assert not (tmp_path / "x").exists()


def test_batch_bytes_with_sizes_of_some_partitions_only(cli: Cli, tmp_path: Path) -> None:
    """--sizes that miss a partition the plan copies: refused, naming it (counting it as 0
    could break the cap); with every size the same drain is split."""
    full = EXAMPLE / "sizes.csv"
    part = tmp_path / "part.csv"
    part.write_text("".join(x for x in full.read_text().splitlines(True) if "orders,1," not in x))
    out = tmp_path / "out"
    r = cli([*DESCRIBE, "--sizes", part, "--out-dir", out, "--batch-bytes", "60GB"])
    assert r.exit_code == 2, r.output
    assert "1 partition(s) gaining replicas have no known size (orders-1)" in r.stderr
    assert not out.exists()
    r = cli([*DESCRIBE, "--sizes", full, "--out-dir", out, "--batch-bytes", "60GB"])
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "summary.json").read_text())
    assert doc["total"]["batches"] >= 1 and doc["total"]["oversized"] == 0
    assert all(b["bytes"] <= 60 * 10**9 for b in doc["batches"])
    # every partition there copies about 50 GB: under a 40 GB cap each is a batch alone
    r = cli([*DESCRIBE, "--sizes", full, "--out-dir", out, "--batch-bytes", "40GB"])
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "summary.json").read_text())
    assert doc["total"]["oversized"] == doc["total"]["batches"] == doc["total"]["partitions"]
    assert "each is a batch alone (plan-0001.json" in r.stderr


def test_plan_show_reads_the_caps_and_older_directories_without_them(
    cli: Cli, tmp_path: Path
) -> None:
    current = {("t", p): Pa("t", p, (1, 2)) for p in range(3)}
    plan = [Pa("t", p, (1, 3)) for p in range(3)]
    bp = split(plan, current, {("t", p): 10 * p for p in range(3)}, batch_bytes=15)
    out = tmp_path / "dir"
    write_dir_atomic(out, render_files(bp, None), marker="summary.json")
    r = cli(["plan", "show", out, "--format", "json"])
    assert r.exit_code == 0, r.output
    view = json.loads(r.stdout)
    assert view["caps"]["batch_bytes"] == 15 and view["total"]["oversized"] == 1
    one = cli(["plan", "show", out / "plan-0001.json", "--format", "json"])
    assert json.loads(one.stdout)["caps"]["batch_bytes"] == 15
    doc = json.loads((out / "summary.json").read_text())
    # written before the byte cap: no caps, no oversized; they show as null
    old = {k: v for k, v in doc.items() if k != "caps"}
    old["total"] = {k: v for k, v in doc["total"].items() if k != "oversized"}
    old["batches"] = [{k: v for k, v in b.items() if k != "oversized"} for b in doc["batches"]]
    (out / "summary.json").write_text(json.dumps(old))
    view = json.loads(cli(["plan", "show", out, "--format", "json"]).stdout)
    assert view["caps"] is None and view["total"]["oversized"] is None
    assert {b["oversized"] for b in view["batches"]} == {None}
    # a hand-edited cap is an input error naming the file, never a crash
    (out / "summary.json").write_text(json.dumps(doc | {"caps": {"batch_bytes": "lots"}}))
    r = cli(["plan", "show", out, "--format", "json"])
    assert r.exit_code == 2 and "summary.json" in r.stderr and "batch_bytes" in r.stderr
