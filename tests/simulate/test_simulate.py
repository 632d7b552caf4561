"""The in-process engine on a hand-built cluster whose outcomes are worked out by hand."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from _sim_cluster import (
    EXPECTED,
    MIN_ISR,
    PARTITIONS,
    POLICIES,
    RACKS,
    RECORDED,
    write_inputs,
    write_snapshot_jsonl,
)

from placement.errors import UsageError
from placement.io.inventory import load_inventory
from placement.model.assignment import PartitionAssignment
from placement.model.inventory import Controller, Inventory
from placement.model.policy import PlacementPolicy
from placement.simulate.failure import (
    Failure,
    Outcome,
    TopicInfo,
    apply_plan,
    classify,
    parse_ids,
    quorum,
    simulate,
    simulate_files,
)

FIELDS = ("available", "promoted", "under_min_isr", "offline", "unclean", "lost")


def _infos() -> dict[str, TopicInfo]:
    return {
        t: TopicInfo(
            PlacementPolicy.model_validate(POLICIES[t]) if t in POLICIES else None, MIN_ISR[t]
        )
        for t in MIN_ISR
    }


def _failure(name: str) -> Failure:
    kind, _, arg = name.partition(":")
    if kind == "rack":
        return Failure.resolve(RACKS, arg, None)
    return Failure.resolve(RACKS, None, parse_ids(arg))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hand_built_outcomes_per_policy(name: str) -> None:
    report, unclean = simulate(PARTITIONS, _infos(), _failure(name))
    got = {t.topic: tuple(getattr(t, f) for f in FIELDS) for t in report.topics}
    assert got == EXPECTED[name]
    for t in report.topics:
        assert t.partitions == t.available + t.promoted + t.under_min_isr + t.offline
        assert t.offline == t.unclean + t.lost
    assert report.totals.partitions == len(PARTITIONS)
    assert [(u.topic, u.partition) for u in unclean] == sorted(
        (t, p) for t, p in [(u.topic, u.partition) for u in unclean]
    )
    assert len(unclean) == report.totals.unclean
    assert report.engine == "in-process"


def test_unclean_lists_the_surviving_observers() -> None:
    _, unclean = simulate(PARTITIONS, _infos(), _failure("rack:west"))
    assert [(u.topic, u.partition, u.observers) for u in unclean] == [
        ("v1", 0, [4, 5]),
        ("v1", 1, [6, 4]),
    ]


def test_policy_labels_and_min_isr_default() -> None:
    report, _ = simulate(PARTITIONS, _infos(), _failure("rack:east"), default_min_isr=1)
    labels = {t.topic: (t.policy, t.min_isr) for t in report.topics}
    assert labels == {
        "umi": ("v2 under-min-isr", 2),
        "urep": ("v2 under-replicated", 3),
        "lio": ("v2 leader-is-observer", 2),
        "v1": ("v1", 2),
        "westonly": ("v2 under-min-isr", 1),
        "free": ("none", 1),
    }


def test_default_min_isr_applies_to_topics_without_one() -> None:
    # free-0 keeps one replica when west fails: available with min ISR 1, not with 2
    one, _ = simulate(PARTITIONS, _infos(), _failure("rack:west"), default_min_isr=1)
    two, _ = simulate(PARTITIONS, _infos(), _failure("rack:west"), default_min_isr=2)
    assert next(t for t in one.topics if t.topic == "free").available == 1
    assert next(t for t in two.topics if t.topic == "free").under_min_isr == 1


@pytest.mark.parametrize(
    ("s", "o", "m", "promoting", "expected"),
    [
        (0, 0, 1, True, Outcome.OFFLINE),
        (0, 3, 1, True, Outcome.OFFLINE),  # promotion handles partial failures only
        (1, 0, 1, False, Outcome.AVAILABLE),
        (2, 0, 2, False, Outcome.AVAILABLE),
        (1, 1, 2, True, Outcome.PROMOTED),
        (1, 1, 2, False, Outcome.UNDER_MIN_ISR),
        (1, 1, 3, True, Outcome.UNDER_MIN_ISR),  # s + o < m
        (2, 5, 3, True, Outcome.PROMOTED),
    ],
)
def test_classify(s: int, o: int, m: int, promoting: bool, expected: Outcome) -> None:
    assert classify(s, o, m, promoting) is expected


def test_classify_is_total_and_monotone() -> None:
    order = [Outcome.OFFLINE, Outcome.UNDER_MIN_ISR, Outcome.PROMOTED, Outcome.AVAILABLE]
    for s, o, m, p in itertools.product(range(5), range(4), range(1, 5), (False, True)):
        got = classify(s, o, m, p)
        # one more surviving sync replica never makes things worse
        assert order.index(classify(s + 1, o, m, p)) >= order.index(got)
        if not p:
            assert got is not Outcome.PROMOTED


def test_plan_is_applied_first() -> None:
    # move v1-0's sync replicas out of west: west's failure no longer takes it offline
    moved = PartitionAssignment("v1", 0, (4, 5, 6, 7, 8), (7, 8))
    parts = apply_plan(PARTITIONS, [moved, PartitionAssignment("new", 0, (1,))])
    assert moved in parts and len(parts) == len(PARTITIONS)  # unknown partitions ignored
    report, unclean = simulate(parts, _infos(), _failure("rack:west"), plan="p.json")
    v1 = next(t for t in report.topics if t.topic == "v1")
    assert (v1.available, v1.offline) == (1, 1)
    assert [(u.topic, u.partition) for u in unclean] == [("v1", 1)]
    assert report.plan == "p.json"


def test_failure_resolution_errors() -> None:
    with pytest.raises(UsageError, match="no broker is in rack"):
        Failure.resolve(RACKS, "mars", None)
    with pytest.raises(UsageError, match=r"broker\(s\) 42 are not in the inventory"):
        Failure.resolve(RACKS, None, [1, 42])
    with pytest.raises(UsageError, match="name one failure"):
        Failure.resolve(RACKS, "west", [1])
    with pytest.raises(UsageError, match="name one failure"):
        Failure.resolve(RACKS, None, None)
    with pytest.raises(UsageError, match="--fail-brokers: broker id: 'x' is not an integer"):
        parse_ids("1,x")
    with pytest.raises(UsageError, match=r"--drain: broker id: 2147483648 is out of range"):
        parse_ids("2147483648", "--drain")
    assert parse_ids("4, 8,12") == [4, 8, 12]


def _inv(controllers: dict[int, str | None]) -> Inventory:
    return Inventory.model_validate(
        {
            "brokers": [{"id": b, "rack": r} for b, r in RACKS.items()],
            "controllers": [Controller(id=c, rack=r).model_dump() for c, r in controllers.items()],
        }
    )


@pytest.mark.parametrize(
    ("controllers", "failure", "kept", "surviving"),
    [
        ({91: "west", 92: "east", 93: "central"}, "rack:west", True, 2),
        ({91: "west", 92: "west", 93: "east"}, "rack:west", False, 1),
        ({91: "west", 92: "west", 93: "east", 94: "east"}, "rack:east", False, 2),
        ({91: "west", 92: "west", 93: "east", 94: "east", 95: "central"}, "rack:east", True, 3),
        ({91: "west", 92: "west", 93: "west", 94: "east", 95: "central"}, "rack:west", False, 2),
        # naming brokers takes down no dedicated controller
        ({91: "west", 92: "east", 93: "central"}, "brokers:1,2,3", True, 3),
        # combined mode: naming a broker id takes its controller down too
        ({1: "west", 4: "east", 7: "central"}, "brokers:1,4", False, 1),
        ({1: "west", 4: "east", 7: "central"}, "brokers:1", True, 2),
    ],
)
def test_quorum_after_failure(
    controllers: dict[int, str | None], failure: str, kept: bool, surviving: int
) -> None:
    q = quorum(_inv(controllers), _failure(failure))
    assert q is not None
    assert (q.kept, q.surviving, q.controllers) == (kept, surviving, len(controllers))


def test_no_controllers_no_quorum() -> None:
    assert (
        quorum(
            Inventory.model_validate({"brokers": [{"id": 1, "rack": "a"}]}), _failure("rack:west")
        )
        is None
    )


def test_from_files_matches_the_model(tmp_path: Path) -> None:
    paths = write_inputs(tmp_path)
    loaded = load_inventory(paths["inventory"])
    for name in EXPECTED:
        kind, _, arg = name.partition(":")
        report, _ = simulate_files(
            paths["current"],
            loaded,
            topics=paths["topics"],
            fail_rack=arg if kind == "rack" else None,
            fail_brokers=parse_ids(arg) if kind == "brokers" else None,
        )
        got = {t.topic: tuple(getattr(t, f) for f in FIELDS) for t in report.topics}
        assert got == EXPECTED[name]
        assert report.quorum is not None


def test_describe_input_carries_policies_and_min_isr(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[2] / "examples"
    loaded = load_inventory(examples / "inventory.json")
    report, unclean = simulate_files(
        examples / "describe.txt", loaded, fail_rack="us-west", assume_in_sync=True
    )
    # orders (min.insync.replicas=2 in its configs): 1,2,5 | 2,3,4 | 3,4,7 sync, one observer
    # each; legacy-events has no policy and keeps every replica (brokers 5-8)
    got = {t.topic: (t.min_isr, *(getattr(t, f) for f in FIELDS)) for t in report.topics}
    assert got == {"orders": (2, 0, 2, 0, 1, 1, 0), "legacy-events": (1, 2, 0, 0, 0, 0, 0)}
    assert [(u.topic, u.partition, u.observers) for u in unclean] == [("orders", 1, [10])]
    assert report.isr == "assumed" and report.totals.isr_unknown == 0


def test_describe_input_uses_the_recorded_isr(tmp_path: Path) -> None:
    """examples/describe.txt records orders-2 offline (Leader: none, empty Isr, its sync
    replicas Offline) and legacy-events-1 with broker 8 out of its ISR."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    loaded = load_inventory(examples / "inventory.json")
    report, unclean = simulate_files(examples / "describe.txt", loaded, fail_rack="us-west")
    got = {t.topic: (t.min_isr, *(getattr(t, f) for f in FIELDS)) for t in report.topics}
    # orders-0: ISR 1,2,5 -> 5 survives, observer 9 promotes; orders-1: ISR all in us-west;
    # orders-2: offline already, 7 survives outside the ISR beside observer 11
    assert got == {"orders": (2, 0, 1, 0, 2, 2, 0), "legacy-events": (1, 2, 0, 0, 0, 0, 0)}
    orders = next(t for t in report.topics if t.topic == "orders")
    assert (orders.offline_before, orders.under_min_isr_before, orders.broken) == (1, 0, 1)
    assert [(u.partition, u.observers, u.lagging) for u in unclean] == [
        (1, [10], []),
        (2, [11], [7]),
    ]
    assert report.isr == "recorded" and report.totals.isr_unknown == 0


# the recorded state of _sim_cluster.RECORDED, worked by hand (default min ISR 1): per
# failure, per partition, (outcome, outcome before, surviving observers and sync replicas
# outside the ISR when it goes offline)
Survivors = tuple[list[int], list[int]] | None
RECORDED_EXPECTED: dict[str, dict[tuple[str, int], tuple[str, str, Survivors]]] = {
    "rack:west": {
        ("umi", 0): ("promoted", "available", None),  # ISR 1,4: 4 survives, observer 7
        ("umi", 1): ("available", "available", None),  # promoted observer 8 and 5 survive
        ("urep", 0): ("under_min_isr", "available", None),  # no ISR: sync 1,2,4 count
        ("lio", 0): ("under_min_isr", "available", None),  # ISR 2,4: 4 alone
        ("v1", 0): ("offline", "offline", ([4, 5], [])),
        ("v1", 1): ("offline", "under_min_isr", ([6, 4], [])),
        ("westonly", 0): ("offline", "available", None),  # lost
        ("free", 0): ("available", "available", None),
    },
    "brokers:1,4": {
        ("umi", 0): ("offline", "available", ([7], [2])),  # 2 out of sync, observer 7
        ("umi", 1): ("available", "available", None),
        ("urep", 0): ("under_min_isr", "available", None),  # sync 2 alone, + observer < 3
        ("lio", 0): ("under_min_isr", "available", None),  # ISR 2,4: 2 alone, no promotion
        ("v1", 0): ("offline", "offline", ([5], [2, 3])),
        ("v1", 1): ("under_min_isr", "under_min_isr", None),  # ISR 3 survives, alone
        ("westonly", 0): ("available", "available", None),  # ISR 1,2: 2 survives
        ("free", 0): ("offline", "available", None),  # lost
    },
}


def _recorded_cluster(tmp_path: Path) -> tuple[Path, Path]:
    """The hand-built cluster as a snapshot with RECORDED's ISRs and leaders, and its
    inventory."""
    paths = write_inputs(tmp_path / "in")
    return write_snapshot_jsonl(tmp_path / "snap", recorded=RECORDED), paths["inventory"]


@pytest.mark.parametrize("name", sorted(RECORDED_EXPECTED))
def test_the_recorded_isr_decides_per_partition(tmp_path: Path, name: str) -> None:
    snap, inventory = _recorded_cluster(tmp_path)
    kind, _, arg = name.partition(":")
    report, unclean = simulate_files(
        snap,
        load_inventory(inventory),
        fail_rack=arg if kind == "rack" else None,
        fail_brokers=parse_ids(arg) if kind == "brokers" else None,
    )
    want = RECORDED_EXPECTED[name]
    t = report.totals
    for field in ("available", "promoted", "under_min_isr", "offline"):
        assert getattr(t, field) == sum(1 for o, _, _ in want.values() if o == field), field
    assert t.offline_before == sum(1 for _, b, _ in want.values() if b == "offline")
    assert t.under_min_isr_before == sum(1 for _, b, _ in want.values() if b == "under_min_isr")
    failing = ("offline", "under_min_isr")
    assert t.broken == sum(1 for o, b, _ in want.values() if o in failing and b not in failing)
    # the failure never mends a partition: what failed before fails after
    assert t.offline + t.under_min_isr == t.offline_before + t.under_min_isr_before + t.broken
    assert [(u.topic, u.partition, u.observers, u.lagging) for u in unclean] == [
        (*key, *survivors) for key, (_, _, survivors) in sorted(want.items()) if survivors
    ]
    assert t.unclean == len(unclean) and t.lost == t.offline - t.unclean
    assert report.isr == "recorded" and t.isr_unknown == 1  # urep-0


def test_assume_in_sync_ignores_the_recorded_isr(tmp_path: Path) -> None:
    """--assume-in-sync on the recorded cluster is the model without any ISR (EXPECTED)."""
    snap, inventory = _recorded_cluster(tmp_path)
    for name in EXPECTED:
        kind, _, arg = name.partition(":")
        report, _ = simulate_files(
            snap,
            load_inventory(inventory),
            fail_rack=arg if kind == "rack" else None,
            fail_brokers=parse_ids(arg) if kind == "brokers" else None,
            assume_in_sync=True,
        )
        got = {t.topic: tuple(getattr(t, f) for f in FIELDS) for t in report.topics}
        assert got == EXPECTED[name]
        assert report.isr == "assumed" and report.totals.isr_unknown == 0


def test_a_plan_leaves_the_isr_as_snapshot_apply_does(tmp_path: Path) -> None:
    """simulate --plan P on a snapshot is simulate on `snapshot apply`'s result of P: the
    kept sync replicas keep their ISR membership, the added ones join it (not without a
    leader: v1-0), an entry equal to the current one changes nothing (lio-0)."""
    from placement.io.reassignment import render_reassignment
    from placement.io.snapshot import read_snapshot, write_snapshot
    from placement.snapshot.apply import apply_plan_file

    snap, inventory = _recorded_cluster(tmp_path)
    entries = [
        PartitionAssignment("umi", 0, (1, 5, 4, 7), (7,)),  # 2 -> 5
        PartitionAssignment("umi", 1, (2, 3, 6, 8), (8,)),  # 5 -> 6
        PartitionAssignment("lio", 0, (1, 2, 4, 7, 8), (7, 8)),  # as it is
        PartitionAssignment("v1", 0, (6, 2, 3, 4, 5), (4, 5)),  # no leader: 6 not in sync
        PartitionAssignment("free", 0, (4, 5)),
        PartitionAssignment("urep", 0, (4, 5, 6, 7), (7,)),  # no ISR recorded: none after
    ]
    plan = tmp_path / "plan.json"
    plan.write_text(render_reassignment(entries))
    applied = tmp_path / "applied"
    write_snapshot(applied, apply_plan_file(read_snapshot(snap), plan).snapshot)
    loaded = load_inventory(inventory)
    for failure in ({"fail_rack": "west"}, {"fail_rack": "east"}, {"fail_brokers": [4, 5]}):
        with_plan, unclean = simulate_files(snap, loaded, plan=plan, **failure)
        after, unclean_after = simulate_files(applied, loaded, **failure)
        assert with_plan.totals == after.totals, failure
        assert with_plan.topics == after.topics
        assert unclean == unclean_after
