"""A reassignment in flight survives into a snapshot: `snapshot from-describe` keeps the
brokers being added and removed (`adding`/`removing`, null when none runs), the checks
refuse a `removing` list that would leave no replica, Spark is still handed the staged
files, and `snapshot show` counts the partitions in flight."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import Result

from placement.errors import InputError
from placement.io.snapshot import (
    PARTITIONS,
    SNAPSHOT_PARTITIONS,
    Snapshot,
    read_snapshot,
    ready_for_spark,
    stage_partitions,
    verify_partitions,
    write_snapshot,
)
from placement.io.staging import staging_area

Cli = Callable[..., Result]

INVENTORY = "id,rack,capacity_bytes\n1,a,1000\n2,b,1000\n3,c,1000\n4,a,1000\n5,b,1000\n6,c,1000\n"
# ledger-1 trades broker 1 for 4 and ledger-2 broker 2 for 1: Kafka lists the target
# replicas first and those leaving last, all under Replicas
MOVING = (
    "Topic: ledger\tPartitionCount: 4\tReplicationFactor: 3\tConfigs: min.insync.replicas=2\n"
    "\tTopic: ledger\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n"
    "\tTopic: ledger\tPartition: 1\tLeader: 2\tReplicas: 4,2,3,1\tIsr: 2,3,1\t"
    "Adding Replicas: 4\tRemoving Replicas: 1\n"
    "\tTopic: ledger\tPartition: 2\tLeader: 5\tReplicas: 1,5,3,2\tIsr: 5,3,2\t"
    "Adding Replicas: 1\tRemoving Replicas: 2\n"
    "\tTopic: ledger\tPartition: 3\tLeader: 6\tReplicas: 6,4,5\tIsr: 6,4,5\n"
)


def write_inputs(tmp_path: Path) -> tuple[Path, Path]:
    describe = tmp_path / "describe.txt"
    describe.write_text(MOVING)
    inventory = tmp_path / "inventory.csv"
    inventory.write_text(INVENTORY)
    return describe, inventory


def _from_describe(cli: Cli, tmp_path: Path) -> tuple[Result, Path]:
    describe, inventory = write_inputs(tmp_path)
    out = tmp_path / "snap"
    r = cli(["snapshot", "from-describe", describe, "--inventory", inventory, "--out", out])
    return r, out


def test_from_describe_keeps_the_move_in_flight(cli: Cli, tmp_path: Path) -> None:
    r, out = _from_describe(cli, tmp_path)
    assert r.exit_code == 0, r.output
    assert "2 partition(s) are being reassigned" in r.stderr
    rows = read_snapshot(out).partitions.to_pylist()
    got = {row["partition"]: (row["replicas"], row["adding"], row["removing"]) for row in rows}
    assert got == {
        0: ([1, 2, 3], None, None),
        1: ([4, 2, 3, 1], [4], [1]),
        2: ([1, 5, 3, 2], [1], [2]),
        3: ([6, 4, 5], None, None),
    }


def test_snapshot_show_counts_the_partitions_in_flight(cli: Cli, tmp_path: Path) -> None:
    _, out = _from_describe(cli, tmp_path)
    r = cli(["snapshot", "show", out, "--format", "json"])
    assert r.exit_code == 0, r.output
    doc: dict[str, Any] = json.loads(r.stdout)
    assert doc["reassigning"] == 2 and doc["partitions"] == 4
    text = cli(["snapshot", "show", out])
    assert text.exit_code == 0, text.output
    line = next(x for x in text.stdout.splitlines() if "being reassigned" in x)
    assert line.split()[-1] == "2"


def test_apply_ends_the_move_in_flight_only_where_the_plan_reassigns(
    cli: Cli, tmp_path: Path
) -> None:
    """A plan's entry for a partition being reassigned is its new target: once applied
    nothing is in flight there; the partition the plan leaves alone keeps its move."""
    _, snap = _from_describe(cli, tmp_path)
    plan = tmp_path / "plan.json"
    entries = [{"topic": "ledger", "partition": 1, "replicas": [4, 2, 3], "log_dirs": ["any"] * 3}]
    plan.write_text(json.dumps({"version": 1, "partitions": entries}))
    out = tmp_path / "after"
    r = cli(["snapshot", "apply", snap, plan, "--out", out])
    assert r.exit_code == 0, r.output
    rows = {row["partition"]: row for row in read_snapshot(out).partitions.to_pylist()}
    assert (rows[1]["replicas"], rows[1]["adding"], rows[1]["removing"]) == ([4, 2, 3], None, None)
    assert (rows[2]["adding"], rows[2]["removing"]) == ([1], [2])
    shown = cli(["snapshot", "show", out, "--format", "json"])
    assert json.loads(shown.stdout)["reassigning"] == 1


def test_a_snapshot_without_the_columns_has_none_in_flight(cli: Cli, tmp_path: Path) -> None:
    """Older snapshots have no adding/removing columns: read as nulls, nothing in flight."""
    _, out = _from_describe(cli, tmp_path)
    for f in (out / "partitions").glob("*.parquet"):
        table = pq.read_table(f)
        pq.write_table(table.drop_columns(["adding", "removing"]), f)
    r = cli(["snapshot", "show", out, "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["reassigning"] == 0


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=SNAPSHOT_PARTITIONS)


def _snapshot(root: Path, rows: list[dict[str, Any]]) -> Path:
    brokers = pa.table({"broker_id": pa.array([1, 2, 3, 4], pa.int32()), "rack": list("abca")})
    topics = pa.table({"topic": ["ledger"]})
    write_snapshot(root, Snapshot(brokers, topics, _table(rows)))
    return root


ROW = {"topic": "ledger", "partition": 0, "replicas": [4, 2, 3, 1]}


def test_a_removing_list_naming_every_replica_is_refused(tmp_path: Path) -> None:
    root = _snapshot(tmp_path / "s", [{**ROW, "removing": [4, 2, 3, 1], "adding": []}])
    with pytest.raises(InputError, match="removing list names every one of its replicas"):
        verify_partitions(root)
    root = _snapshot(tmp_path / "t", [{**ROW, "removing": [-1]}])
    with pytest.raises(InputError, match="removing list holds a negative broker id"):
        verify_partitions(root)


def test_spark_is_staged_the_columns_it_reads(cli: Cli, tmp_path: Path) -> None:
    """Spark reads PARTITIONS_DDL's columns: the staged copy of an in-flight table leaves
    adding/removing out, and a table where no move runs is written without them, so its
    files are handed to Spark as they are."""
    with staging_area() as into:
        staged = stage_partitions(_snapshot(tmp_path / "s", [{**ROW, "removing": [1]}]), into)
        for f in staged.files:
            assert pq.read_schema(f).remove_metadata() == PARTITIONS.remove_metadata()
    describe, inventory = write_inputs(tmp_path)
    describe.write_text("\n".join(MOVING.splitlines()[:2]) + "\n")  # ledger-0 only
    out = tmp_path / "quiet"
    r = cli(["snapshot", "from-describe", describe, "--inventory", inventory, "--out", out])
    assert r.exit_code == 0, r.output
    files = sorted((out / "partitions").glob("*.parquet"))
    assert files and all(ready_for_spark(pq.ParquetFile(f)) for f in files)
    assert read_snapshot(out).partitions.column("adding").null_count == 1
