"""`simulate` before the failure: a recorded ISR short of min ISR is under min ISR already,
whatever the policy (a recorded ISR shows any promotion: Confluent lists a promoted
observer in it), and the failure does not count it as broken; both engines agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from placement.io.inventory import load_inventory
from placement.simulate.failure import SimulateReport, simulate_files

POLICY = json.dumps(
    {
        "version": 2,
        "replicas": [{"count": 2, "constraints": {"rack": "north"}}],
        "observers": [{"count": 1, "constraints": {"rack": "south"}}],
        "observerPromotionPolicy": "under-min-isr",
    },
    separators=(",", ":"),
)
# brokers 1-2 in north, 3-4 in south, 5-6 in far (no replica there)
DESCRIBE = f"""\
Topic: bare\tTopicId: c2ltdWxhdGVkLXRvcGljLTE\tPartitionCount: 2\tReplicationFactor: 2\t\
Configs: min.insync.replicas=2
\tTopic: bare\tPartition: 0\tLeader: 1\tReplicas: 1,3\tIsr: 1
\tTopic: bare\tPartition: 1\tLeader: 3\tReplicas: 3,1\tIsr: 3,1
Topic: promo\tTopicId: c2ltdWxhdGVkLXRvcGljLTI\tPartitionCount: 3\tReplicationFactor: 3\t\
Configs: min.insync.replicas=2,confluent.placement.constraints={POLICY}
\tTopic: promo\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1\tOffline: \tObservers: 3
\tTopic: promo\tPartition: 1\tLeader: 2\tReplicas: 2,1,4\tIsr: 2,1\tOffline: \tObservers: 4
\tTopic: promo\tPartition: 2\tLeader: 1\tReplicas: 1,2,4\tIsr: 1,4\tOffline: \tObservers: 4
"""
# bare-0 and promo-0 record 1 of min 2 in their ISR: under min ISR already; promo-2's
# observer 4 is promoted (in the ISR); the others are healthy
BEFORE = {"offline_before": 0, "under_min_isr_before": 2}


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    describe, inventory = tmp_path / "describe.txt", tmp_path / "inventory.json"
    describe.write_text(DESCRIBE)
    racks = {1: "north", 2: "north", 3: "south", 4: "south", 5: "far", 6: "far"}
    brokers = [{"id": b, "rack": r} for b, r in racks.items()]
    inventory.write_text(json.dumps({"brokers": brokers}))
    return describe, inventory


def _totals(report: SimulateReport) -> dict[str, int]:
    return report.totals.model_dump()


def _in_process(inputs: tuple[Path, Path], rack: str) -> SimulateReport:
    describe, inventory = inputs
    report, _ = simulate_files(describe, load_inventory(inventory), fail_rack=rack)
    return report


def test_an_unrelated_rack_breaks_nothing(inputs: tuple[Path, Path]) -> None:
    t = _totals(_in_process(inputs, "far"))
    assert {k: t[k] for k in BEFORE} == BEFORE
    assert t["broken"] == 0
    # still under min ISR after: observer 3, never promoted, is not caught up
    assert (t["under_min_isr"], t["promoted"], t["available"]) == (2, 0, 3)


def test_losing_the_observers_rack_breaks_only_the_healthy(inputs: tuple[Path, Path]) -> None:
    """south holds bare-0's follower and promo-0's observer, both outside the ISR: they
    were already under min ISR, not broken by the failure; bare-1 loses its leader 3 and
    promo-2 its promoted observer 4: those two are broken."""
    t = _totals(_in_process(inputs, "south"))
    assert {k: t[k] for k in BEFORE} == BEFORE
    assert t["broken"] == 2
    assert t["offline"] + t["under_min_isr"] == 2 + t["broken"]


def test_without_a_recorded_isr_observers_still_promote(inputs: tuple[Path, Path]) -> None:
    describe, inventory = inputs
    report, _ = simulate_files(
        describe, load_inventory(inventory), fail_brokers=[1], assume_in_sync=True
    )
    promo = next(t for t in report.topics if t.topic == "promo")
    # sync replicas 1, 2 assumed in the ISR: 2 survives, each observer promotes
    assert (promo.promoted, promo.under_min_isr_before, promo.broken) == (3, 0, 0)


@pytest.mark.spark
def test_the_spark_stage_agrees(
    spark: Any, cli: Any, inputs: tuple[Path, Path], tmp_path: Path
) -> None:
    from placement.score.simulate import run_simulate

    describe, inventory = inputs
    snap = tmp_path / "snap"
    made: Result = cli(
        ["snapshot", "from-describe", describe, "--inventory", inventory, "--out", snap]
    )
    assert made.exit_code == 0, made.stderr
    for rack in ("far", "south"):
        on_spark, _ = run_simulate(snap, fail_rack=rack)
        assert _totals(on_spark) == _totals(_in_process(inputs, rack)), rack
