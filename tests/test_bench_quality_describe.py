"""The describe scenarios of bench/bench_quality.py measure what they claim: the bound, the
rack spread, the scope and the leader figures on a 6-partition cluster worked out by hand,
and bench/describe_gen.py writes describe output mrc-plan reads, placed as Kafka would."""

from __future__ import annotations

import random
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from placement.io.describe import parse_describe

BENCH = Path(__file__).resolve().parent.parent / "bench"

# racks a, b, c of two brokers each; broker 1 (rack a) is drained
RACKS = {"a": [1, 2], "b": [3, 4], "c": [5, 6]}


@pytest.fixture(scope="module")
def bench() -> Iterator[tuple[Any, Any]]:
    sys.path.insert(0, str(BENCH))
    import bench_quality
    import describe_gen

    yield bench_quality, describe_gen
    sys.path.remove(str(BENCH))


def _case(q: Any, before: dict[Any, Any], args: list[str], tmp: Path) -> Any:
    policy = q.gen.Policy("p", 2, (("a", 1), ("b", 1)), (("c", 1),))
    return q.DescribeCase(
        "hand-made",
        before=before,
        rule_of={"t": None, "p": policy},
        all_racks=RACKS,
        inventory=tmp / "inventory.json",
        current=tmp / "describe.txt",
        args=args,
        drained=(1,),
    )


# (topic, partition): (replicas, observers) before -> after, what each one checks
BEFORE = {
    ("t", 0): ((1, 3, 5), ()),  # drained leader: replaced in rack a, a forced leader change
    ("t", 1): ((3, 1, 6), ()),  # drained follower: replaced in rack b, spread 0 -> 2
    ("t", 2): ((3, 5), ()),  # RF 2, out of scope, untouched
    ("t", 3): ((4, 6), ()),  # out of scope, yet changed (to a valid 4, 2)
    ("t", 4): ((5, 6, 3), ()),  # broken before (two in c), out of scope, left alone
    ("p", 0): ((1, 3, 5), (5,)),  # policy topic on the drained broker, forgotten by the plan
}
PLAN = {
    ("t", 0): ((2, 3, 5), ()),
    ("t", 1): ((3, 4, 6), ()),
    ("t", 3): ((4, 2), ()),
}


def test_the_hand_made_case(bench: tuple[Any, Any], tmp_path: Path) -> None:
    q, _ = bench
    f = q.describe_figures(_case(q, BEFORE, ["--drain", "1"], tmp_path), PLAN)
    assert f.left == 1  # p-0 still on broker 1
    assert f.added == 3  # t-0, t-1 and the out-of-scope t-3
    assert f.bound == 3  # one each for t-0, t-1 and p-0 (rack a lacks its sync replica)
    assert (f.rack_aware, f.grew, f.worst_spread) == (5, 1, (2, 2))
    assert (f.violations, f.left_alone) == (2, 1)  # t-1 (b twice) and p-0; t-4 left alone
    assert (f.changes, f.forced, f.unavoidable) == (1, 1, 2)  # p-0's leader must go too
    assert f.outside == 1  # t-3
    assert f.lost == 0


def test_scope_options(bench: tuple[Any, Any], tmp_path: Path) -> None:
    q, _ = bench
    reorder = {**PLAN, ("t", 2): ((5, 3), ())}
    # a leader-only reorder is in scope with --balance-leaders, a move is not
    f = q.describe_figures(
        _case(q, BEFORE, ["--drain", "1", "--balance-leaders"], tmp_path), reorder
    )
    assert (f.outside, f.changes) == (1, 2)
    # --repair takes in t-4, which needs one replica in rack a
    f = q.describe_figures(_case(q, BEFORE, ["--drain", "1", "--repair"], tmp_path), PLAN)
    assert (f.bound, f.left_alone, f.violations) == (4, 0, 3)
    # --only-topics: the policy topic alone is measured; every t change is outside
    f = q.describe_figures(_case(q, BEFORE, ["--drain", "1", "--only-topics", "p"], tmp_path), PLAN)
    assert (f.left, f.bound, f.outside, f.rack_aware) == (1, 1, 3, 0)


def test_rule_helpers(bench: tuple[Any, Any]) -> None:
    q, _ = bench
    assert set(q.rack_aware_targets(2, (2, 2, 2))) == {(1, 1, 0), (1, 0, 1), (0, 1, 1)}
    assert set(q.rack_aware_targets(4, (2, 2, 2))) == {(2, 1, 1), (1, 2, 1), (1, 1, 2)}
    assert q.rack_aware_targets(3, (1, 1, 0)) == ()  # three replicas cannot fit
    live = q.Brokers({b: r for r, ids in RACKS.items() for b in ids if b != 1}, ("a", "b", "c"))
    assert q.added_bound((1, 2, 3), None, live, 3) == 1  # keeps 2 (a) and 3 (b)
    assert q.added_bound((1, 2, 3, 5), None, live, 4) == 1  # keeps 2, 3 and 5
    assert q.added_bound((3, 4, 5), None, live, 3) == 1  # b twice: one of them goes to a
    assert q.rack_spread((3, 4, 5), live) == 2
    assert q.breaks((2, 3, 5), (), None, live, 3) is False
    assert q.breaks((2, 3, 5), (), None, live, 2) is True  # one replica too many


def test_leader_change_bound(bench: tuple[Any, Any]) -> None:
    q, _ = bench
    # broker 4 can only lead B, so B's leader moves and 2 takes A: two changes where the
    # simple count (one above the share on 1, one missing on 4) says one
    after = {
        ("A", 0): ((1, 2), ()),
        ("B", 0): ((2, 4), ()),
        ("C", 0): ((1, 3), ()),
        ("D", 0): ((3, 1), ()),
    }
    assert q.leader_change_bound(after, after, set()) == (2, True)
    # broker 3 holds one partition's sync replica, its share is two: not reachable
    after = {("A", i): ((1, 2), ()) for i in range(5)} | {("B", 0): ((3, 1), ())}
    assert q.leader_change_bound(after, after, set())[1] is False
    # the old leader gone: that change is forced and counted
    before = {("A", 0): ((1, 2), ()), ("A", 1): ((2, 1), ())}
    after = {("A", 0): ((2, 3), ()), ("A", 1): ((2, 1), ())}
    assert q.leader_change_bound(before, after, {1}) == (1, True)


def test_kafka_rack_aware_placement(bench: tuple[Any, Any]) -> None:
    q, dgen = bench
    rack_of = {b: r for r, ids in dgen.gen.make_racks(dgen.PLAIN_RACKS).items() for b in ids}
    brokers = q.Brokers(rack_of, tuple(sorted(dgen.PLAIN_RACKS)))
    rng = random.Random(3)
    for rf in (2, 3, 4):
        placed = dgen.kafka_rack_aware(40, rf, rack_of, rng)
        assert not any(q.breaks(reps, (), None, brokers, rf) for reps in placed)
        assert {rack_of[reps[0]] for reps in placed} == set(dgen.PLAIN_RACKS)


def test_describe_output_reads_back(bench: tuple[Any, Any]) -> None:
    _, dgen = bench
    cluster = dgen.mixed(300, 2)
    dead = (cluster.racks["dc1-b"][0],)
    got = parse_describe(dgen.describe_text(cluster, dead=dead))
    assert set(got.topics) == set(cluster.topics)
    for p in got.partitions:
        reps, obs = cluster.state[(p.topic, p.partition)]
        assert (p.replicas, p.observers) == (reps, obs)
        assert dead[0] not in p.isr and (dead[0] in p.offline) == (dead[0] in reps)
    placed = Counter(cluster.placed_by.values())
    with_policy = {t for t, x in got.topics.items() if x.placement is not None}
    assert with_policy == set(cluster.policy_of) and len(with_policy) == placed["policy"]
