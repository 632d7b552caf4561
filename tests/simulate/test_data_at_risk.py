"""Data at risk in an unclean election, estimated from kafka-replica-status output: the most
caught-up surviving replica, what electing it would truncate, the order of risk, totals per
topic, and the --unclean-out file and stderr that carry them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from _sim_cluster import RECORDED, write_inputs, write_replica_status, write_snapshot_jsonl
from typer.testing import Result

from placement.io.inventory import load_inventory
from placement.io.replicastatus import ReplicaStatus, ReplicaStatusRead, read_replica_status
from placement.simulate.failure import parse_ids, simulate_files
from placement.simulate.risk import PartitionRisk, estimate, partition_risk, risk_order

Cli = Callable[..., Result]
REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
SCHEMA = REPO / "schemas" / "simulate-report.schema.json"


def _s(replica: int, end: int, lag: int = 0, leader: bool = False) -> ReplicaStatus:
    return ReplicaStatus(replica, leader, False, True, False, False, lag, 0, 0, end)


def _replicas(*statuses: ReplicaStatus) -> dict[int, ReplicaStatus]:
    return {s.replica: s for s in statuses}


def test_the_most_caught_up_survivor_and_what_electing_it_truncates() -> None:
    replicas = _replicas(_s(1, 1000, leader=True), _s(5, 940, 800), _s(9, 990, 120))
    r = partition_risk("t", 0, [5, 9], replicas)
    assert (r.replica, r.offsets, r.lag_ms) == (9, 10, 120)
    # Kafka elects the first live replica in replica order, here the one further behind
    assert (r.kafka_elects, r.kafka_elects_offsets) == (5, 60)
    assert r.listed


def test_ties_go_to_the_smallest_known_lag_then_the_lowest_id() -> None:
    leader = _s(1, 1000, leader=True)
    r = partition_risk("t", 0, [7, 5, 6], _replicas(leader, _s(7, 990, 300), _s(5, 990, 200)))
    assert r.replica == 5
    # an unknown lag (-1) loses to a known one
    r = partition_risk("t", 0, [7, 5], _replicas(leader, _s(7, 990, -1), _s(5, 990, 900)))
    assert (r.replica, r.lag_ms) == (5, 900)
    r = partition_risk("t", 0, [8, 6], _replicas(leader, _s(8, 990, -1), _s(6, 990, -1)))
    assert (r.replica, r.lag_ms) == (6, None)


def test_without_a_leader_listed_its_end_is_the_highest_listed() -> None:
    r = partition_risk("t", 0, [4], _replicas(_s(2, 700), _s(3, 720), _s(4, 650)))
    assert r.offsets == 70


def test_unknown_offsets_give_no_estimate() -> None:
    leader = _s(1, 1000, leader=True)
    r = partition_risk("t", 0, [4, 5], _replicas(leader, _s(4, -1), _s(5, -1)))
    assert (r.replica, r.offsets, r.lag_ms, r.kafka_elects_offsets) == (None, None, None, None)
    assert r.listed and r.kafka_elects == 4
    r = partition_risk("t", 0, [4], {})
    assert not r.listed and r.offsets is None
    # a candidate the status does not list (added by a plan) counts as unknown
    r = partition_risk("t", 0, [9, 4], _replicas(leader, _s(4, 990)))
    assert (r.replica, r.offsets, r.kafka_elects, r.kafka_elects_offsets) == (4, 10, 9, None)


def test_riskiest_first_unknown_last_then_by_name() -> None:
    status = ReplicaStatusRead(
        "rs",
        "json",
        {
            ("a", 0): _replicas(_s(1, 100, leader=True), _s(2, 90, 50)),
            ("b", 0): _replicas(_s(1, 100, leader=True), _s(2, 60, 400)),
            ("b", 1): _replicas(_s(1, 100, leader=True), _s(2, 90, 70)),
            ("c", 0): _replicas(_s(1, 100, leader=True), _s(2, -1)),
        },
    )
    unclean = [("a", 0, [2]), ("b", 0, [2]), ("b", 1, [2]), ("c", 0, [2]), ("c", 1, [2])]
    got = estimate(unclean, status)
    order = [(r.topic, r.partition, r.offsets) for r in got.partitions]
    assert order == [("b", 0, 40), ("a", 0, 10), ("b", 1, 10), ("c", 0, None), ("c", 1, None)]
    assert got.partitions == sorted(got.partitions, key=risk_order)
    t = got.totals
    assert (t.partitions, t.unknown, t.not_listed, t.offsets, t.max_lag_ms) == (5, 2, 1, 60, 400)
    per = {x.topic: (x.partitions, x.offsets, x.max_lag_ms, x.unknown) for x in got.topics}
    assert per == {"a": (1, 10, 50, 0), "b": (2, 50, 400, 0), "c": (2, 0, None, 2)}


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        # v1-1: observers 6 and 4 survive; 4 is further ahead, Kafka elects 6. v1-0 has no
        # leader: not in the status
        ("rack:west", [("v1", 1, 4, 1, 6, 20), ("v1", 0, None, None, 4, None)]),
        # umi-0: 2 (out of the ISR) and observer 7 survive: 2 is ahead and first
        ("brokers:1,4", [("umi", 0, 2, 10, 2, 10), ("v1", 0, None, None, 2, None)]),
    ],
)
def test_in_process_unclean_partitions_come_riskiest_first(
    tmp_path: Path, failure: str, expected: list[tuple[object, ...]]
) -> None:
    paths = write_inputs(tmp_path / "in")
    snap = write_snapshot_jsonl(tmp_path / "snap", recorded=RECORDED)
    status = read_replica_status(str(write_replica_status(tmp_path / "status.txt")))
    kind, _, arg = failure.partition(":")
    report, unclean = simulate_files(
        snap,
        load_inventory(paths["inventory"]),
        fail_rack=arg if kind == "rack" else None,
        fail_brokers=parse_ids(arg) if kind == "brokers" else None,
        replica_status=status,
    )
    at_risk = report.data_at_risk
    assert at_risk is not None
    got = [
        (r.topic, r.partition, r.replica, r.offsets, r.kafka_elects, r.kafka_elects_offsets)
        for r in at_risk.partitions
    ]
    assert got == expected
    assert [(u.topic, u.partition) for u in unclean] == [(t, n) for t, n, *_ in got]
    assert at_risk.totals.partitions == report.totals.unclean
    # the sample stays in (topic, partition) order
    keys = [(u.topic, u.partition) for u in report.unclean_sample]
    assert keys == sorted(keys)


def _args(*more: str | Path) -> list[str | Path]:
    return [
        "simulate",
        "--current",
        EXAMPLES / "describe.txt",
        "--inventory",
        EXAMPLES / "inventory.json",
        *more,
    ]


def test_cli_writes_the_election_file_riskiest_first_with_estimates_on_stderr(
    cli: Cli, tmp_path: Path
) -> None:
    """examples/describe.txt and examples/replica-status.json: brokers 1-5 down leave
    orders-0, -1 and -2 to an unclean election; orders-2 had no leader, so no status."""
    out = tmp_path / "unclean.json"
    status = EXAMPLES / "replica-status.json"
    r = cli(
        _args(
            "--fail-brokers",
            "1,2,3,4,5",
            "--replica-status",
            status,
            "--unclean-out",
            out,
            "--format",
            "json",
        )
    )
    assert r.exit_code == 1, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    risk = doc["data_at_risk"]
    assert [(p["partition"], p["offsets"]) for p in risk["partitions"]] == [
        (0, 1204880 - 1198532),
        (1, 983417 - 983102),
        (2, None),
    ]
    assert risk["topics"] == [
        {
            "partitions": 3,
            "unknown": 1,
            "not_listed": 1,
            "offsets": 6348 + 315,
            "max_lag_ms": 4210,
            "topic": "orders",
        }
    ]
    assert json.loads(out.read_text()) == {  # still kafka-leader-election input
        "partitions": [{"topic": "orders", "partition": p} for p in (0, 1, 2)]
    }
    said = " ".join(r.stderr.split())
    assert "riskiest first: orders-0: 6,348 offsets at risk electing 9" in said
    assert "orders-2: no estimate, not in" in said
    assert "Kafka picks the new leader itself" in said


def test_cli_text_report_shows_the_data_at_risk(cli: Cli) -> None:
    r = cli(_args("--fail-rack", "us-west", "--replica-status", EXAMPLES / "replica-status.json"))
    assert r.exit_code == 1, r.stderr
    said = " ".join(r.stdout.split())
    assert "data at risk in an unclean election" in said
    assert "orders-1: 315 offsets at risk electing 10, the most caught up" in said
    assert said.index("orders-1: 315") < said.index("orders-2: no estimate")


def test_cli_refuses_a_bad_replica_status_before_any_work(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "status.json"
    bad.write_text('{"replicas": []}')
    r = cli(_args("--fail-rack", "us-west", "--replica-status", bad))
    assert r.exit_code == 2
    assert f"{bad}:1:1" in r.stderr and "prints an array" in r.stderr
    r = cli(
        _args(
            "--fail-rack",
            "us-west",
            "--replica-status",
            bad,
            "--unclean-out",
            bad,
        )
    )
    assert r.exit_code == 2 and bad.read_text() == '{"replicas": []}'


def test_estimates_are_the_same_whatever_the_form(tmp_path: Path) -> None:
    loaded = load_inventory(EXAMPLES / "inventory.json")
    fixtures = REPO / "tests" / "fixtures" / "replica-status"
    reports = []
    for path in (
        EXAMPLES / "replica-status.json",
        fixtures / "cluster-verbose.txt",
        fixtures / "cluster-compact.txt",
        fixtures / "cluster-flat.json",
    ):
        report, _ = simulate_files(
            EXAMPLES / "describe.txt",
            loaded,
            fail_brokers=[1, 2, 3, 4, 5],
            replica_status=read_replica_status(str(path)),
        )
        assert report.data_at_risk is not None
        reports.append(report.data_at_risk.partitions)
    assert all(r == reports[0] for r in reports)
    assert all(isinstance(p, PartitionRisk) for p in reports[0])
