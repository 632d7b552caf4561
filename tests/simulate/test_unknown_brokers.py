"""A broker of unknown rack never survives a rack loss, and `score` and `simulate` count a
rack loss with one definition (every partition, with a policy or not).

Before: a broker missing from the inventory (or listed without a rack) counted as
surviving `--fail-rack`, silently; `score` left topics without a policy out of its rack
failure figures (examples/describe.txt, us-east lost: `score` 0 offline, `simulate` 2).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from typer.testing import Result

from placement.io.inventory import load_inventory
from placement.io.snapshot import read_snapshot, write_snapshot
from placement.simulate.failure import simulate_files
from placement.snapshot.synth import SynthSpec, synth

Cli = Callable[..., Result]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

RACKS: dict[int, str | None] = {1: "west", 2: "west", 3: "east", 4: "east", 5: None}
# 99 is in no inventory; 5 is listed without a rack; no policies, min ISR 1
PARTS = [
    ("t", 0, [1, 99]),  # west lost: 1 down, 99 may be in west: offline (was "available")
    ("t", 1, [5, 2]),  # west lost: 2 down, 5 may be in west: offline (was "available")
    ("t", 2, [1, 2]),  # west lost: offline
    ("t", 3, [3, 4]),  # west lost: available
]


def _inputs(root: Path) -> dict[str, Path]:
    root.mkdir(parents=True, exist_ok=True)
    inventory = root / "inventory.json"
    inventory.write_text(
        json.dumps({"brokers": [{"id": b} | ({"rack": r} if r else {}) for b, r in RACKS.items()]})
    )
    current = root / "current.json"
    current.write_text(
        json.dumps(
            {
                "version": 1,
                "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in PARTS],
            }
        )
    )
    snap = root / "snap"
    snap.mkdir()

    def lines(rows: list[dict[str, Any]]) -> str:
        return "".join(json.dumps(r) + "\n" for r in rows)

    (snap / "brokers.jsonl").write_text(
        lines([{"broker_id": b, "rack": r} for b, r in RACKS.items()])
    )
    (snap / "topics.jsonl").write_text(lines([{"topic": "t", "placement": None, "min_isr": None}]))
    (snap / "partitions.jsonl").write_text(
        lines([{"topic": t, "partition": p, "replicas": r, "observers": []} for t, p, r in PARTS])
    )
    return {"inventory": inventory, "current": current, "snapshot": snap}


def _simulate(cli: Cli, *args: str | Path) -> tuple[Result, dict[str, Any]]:
    r = cli(["simulate", *args, "--format", "json", "--exit-zero"])
    assert r.exit_code == 0, r.stderr
    return r, json.loads(r.stdout)


def test_a_rack_loss_takes_brokers_of_unknown_rack_down_and_says_so(
    cli: Cli, tmp_path: Path
) -> None:
    paths = _inputs(tmp_path)
    r, doc = _simulate(
        cli,
        "--current",
        paths["current"],
        "--inventory",
        paths["inventory"],
        "--fail-rack",
        "west",
    )
    assert doc["failure"]["brokers"] == [1, 2]
    assert doc["failure"]["unknown_rack"] == [5, 99]
    assert doc["totals"]["offline"] == 3 and doc["totals"]["available"] == 1
    assert "99" in r.stderr and "5" in r.stderr and "down" in r.stderr
    # naming brokers takes down those only; the unknown ones are still named
    r, doc = _simulate(
        cli,
        "--current",
        paths["current"],
        "--inventory",
        paths["inventory"],
        "--fail-brokers",
        "1",
    )
    assert doc["failure"]["unknown_rack"] == [5, 99]
    assert doc["totals"]["offline"] == 0
    assert "99" in r.stderr


@pytest.mark.spark
def test_spark_and_in_process_agree_on_brokers_of_unknown_rack(
    spark: Any, cli: Cli, tmp_path: Path
) -> None:
    paths = _inputs(tmp_path)
    for failure in (["--fail-rack", "west"], ["--fail-rack", "east"], ["--fail-brokers", "1,5"]):
        _, local = _simulate(
            cli, "--current", paths["current"], "--inventory", paths["inventory"], *failure
        )
        r, on_spark = _simulate(cli, "--snapshot", paths["snapshot"], *failure)
        assert on_spark.pop("engine") == "spark" and local.pop("engine") == "in-process"
        assert on_spark == local, failure
        assert on_spark["failure"]["unknown_rack"] == [5, 99]
        assert "99" in r.stderr
    # and `score` counts the rack losses the same way
    from placement.score.run import run_score

    report = run_score(paths["snapshot"], master="local[2]")
    assert report.baseline.rack_failure["west"].offline == 3


def _agree(snapshot: Path, inventory: Path, default_min_isr: int) -> None:
    """`score`'s rack failure figures are `simulate`'s, rack by rack, both from the ISR
    the snapshot recorded."""
    from placement.score.run import run_score

    report = run_score(snapshot, master="local[2]", default_min_isr=default_min_isr)
    loaded = load_inventory(inventory)
    assert report.baseline.rack_failure
    for rack, scored in report.baseline.rack_failure.items():
        simulated, _ = simulate_files(
            snapshot, loaded, fail_rack=rack, default_min_isr=default_min_isr
        )
        t = simulated.totals
        got = (scored.offline, scored.under_min_isr, scored.promoted)
        assert got == (t.offline, t.under_min_isr, t.promoted), rack


@pytest.mark.spark
def test_score_and_simulate_agree_on_the_example(
    spark: Any, tmp_path: Path, example_snapshot: Callable[[Path], Path]
) -> None:
    snap = tmp_path / "snap"
    example_snapshot(snap)
    from placement.score.run import run_score

    # legacy-events has no policy; both its partitions live in us-east only, so they are
    # among the offline ones (with any partition whose recorded ISR is all in us-east)
    assert run_score(snap, master="local[2]").baseline.rack_failure["us-east"].offline >= 2
    _agree(snap, EXAMPLES / "inventory.json", 1)
    _agree(snap, EXAMPLES / "inventory.json", 2)


@pytest.mark.spark
def test_score_and_simulate_agree_on_a_synthetic_snapshot(spark: Any, tmp_path: Path) -> None:
    snap = synth(SynthSpec(12, 3, 8, 6, violations=0.2, seed=7)).snapshot
    topics = snap.topics
    # every other topic without a policy, some min ISRs unset: the default decides
    n = topics.num_rows
    placement = [p if i % 2 else None for i, p in enumerate(topics.column("placement").to_pylist())]
    min_isr = [m if i % 3 else None for i, m in enumerate(topics.column("min_isr").to_pylist())]
    topics = topics.set_column(
        topics.schema.get_field_index("placement"), "placement", pa.array(placement, pa.string())
    ).set_column(topics.schema.get_field_index("min_isr"), "min_isr", pa.array(min_isr, pa.int32()))
    assert n >= 4 and sum(p is None for p in placement) >= 2
    root = tmp_path / "snap"
    write_snapshot(root, type(snap)(snap.brokers, topics, snap.partitions))
    written = read_snapshot(root)
    inventory = tmp_path / "inventory.json"
    inventory.write_text(
        json.dumps(
            {
                "brokers": [
                    {"id": b, "rack": r}
                    for b, r in zip(
                        written.brokers.column("broker_id").to_pylist(),
                        written.brokers.column("rack").to_pylist(),
                        strict=True,
                    )
                ]
            }
        )
    )
    _agree(root, inventory, 2)
