"""Snapshots: typed column checks up front, Parquet and JSONL, atomic writes, round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from placement.errors import InputError
from placement.io.convert import read_sizes, snapshot_from_describe
from placement.io.describe import read_describe
from placement.io.inventory import load_inventory
from placement.io.reassignment import parse_reassignment, render_reassignment
from placement.io.snapshot import read_snapshot, write_snapshot
from placement.model.assignment import PartitionAssignment

ROOT = Path(__file__).parent.parent.parent
DESCRIBE = ROOT / "tests" / "fixtures" / "describe" / "cluster.txt"


def _jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _small(tmp_path: Path) -> Path:
    _jsonl(
        tmp_path / "brokers.jsonl", [{"broker_id": 1, "rack": "a"}, {"broker_id": 2, "rack": "b"}]
    )
    _jsonl(tmp_path / "topics.jsonl", [{"topic": "t", "placement": None, "min_isr": 1}])
    _jsonl(
        tmp_path / "partitions.jsonl",
        [{"topic": "t", "partition": 0, "replicas": [1, 2], "observers": [], "size_bytes": 10}],
    )
    return tmp_path


def test_jsonl_snapshot_fills_optional_columns(tmp_path: Path) -> None:
    snap = read_snapshot(_small(tmp_path))
    assert snap.partitions.column("leader").null_count == 1
    assert snap.partitions.schema.field("replicas").type == pa.list_(pa.int32())
    assert snap.brokers.column("capacity_bytes").null_count == 2


def test_missing_column_is_named(tmp_path: Path) -> None:
    _small(tmp_path)
    _jsonl(tmp_path / "partitions.jsonl", [{"topic": "t", "partition": 0}])
    with pytest.raises(InputError, match="'replicas' is missing"):
        read_snapshot(tmp_path)


def test_wrong_type_is_named(tmp_path: Path) -> None:
    _small(tmp_path)
    (tmp_path / "partitions.jsonl").unlink()
    pq.write_table(
        pa.table({"topic": ["t"], "partition": [0], "replicas": ["1,2"]}),
        tmp_path / "partitions.parquet",
    )
    with pytest.raises(InputError, match="column 'replicas' has type string"):
        read_snapshot(tmp_path)


def test_missing_table(tmp_path: Path) -> None:
    _small(tmp_path)
    (tmp_path / "topics.jsonl").unlink()
    with pytest.raises(InputError, match="'topics' not found"):
        read_snapshot(tmp_path)


def test_describe_to_snapshot_to_reassignment_round_trip(tmp_path: Path) -> None:
    described = read_describe(DESCRIBE)
    sizes_csv = tmp_path / "sizes.csv"
    sizes_csv.write_text("topic,partition,size_bytes\norders,0,100\norders,1,200\n")
    snap = snapshot_from_describe(
        described,
        load_inventory(ROOT / "examples" / "inventory.json").inventory,
        read_sizes(sizes_csv),
    )
    write_snapshot(tmp_path / "snap", snap)
    back = read_snapshot(tmp_path / "snap")
    assert back.partitions.column("size_bytes").to_pylist()[:2] == [None, None]  # legacy first
    rows = [
        PartitionAssignment(
            r["topic"], r["partition"], tuple(r["replicas"]), tuple(r["observers"] or ())
        )
        for r in back.partitions.to_pylist()
    ]
    expected = sorted(p.assignment() for p in described.partitions)
    assert parse_reassignment(render_reassignment(rows)) == expected


def test_write_is_atomic_and_replaces(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    snap = read_snapshot(_small(tmp_path / "in"))
    write_snapshot(tmp_path / "out", snap)
    write_snapshot(tmp_path / "out", snap)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "_mrc-plan-snapshot.json",  # the marker: only such a directory is replaced
        "brokers.parquet",
        "partitions",
        "topics.parquet",
    ]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_sizes_csv_errors(tmp_path: Path) -> None:
    bad = tmp_path / "s.csv"
    bad.write_text("topic,partition,size_bytes\norders,zero,1\n")
    with pytest.raises(InputError) as err:
        read_sizes(bad)
    assert err.value.line == 2


def test_the_marker_is_not_written_through_a_link(tmp_path: Path) -> None:
    """Every file of a snapshot is created new in its staged directory: a link planted
    there (a directory others could write to) is not followed."""
    from placement.io.outputs import SNAPSHOT_MARKER
    from placement.io.snapshot import write_snapshot_files

    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / SNAPSHOT_MARKER).symlink_to(victim)
    with pytest.raises(FileExistsError):
        write_snapshot_files(staged, read_snapshot(_small(tmp_path)))
    assert victim.read_text() == "precious\n"


def test_partitions_are_laid_out_for_parallel_reads(tmp_path: Path) -> None:
    """A table of more than one row group: `PART_FILES` part files of equal rows (within
    one) and row groups no larger than asked, the same bytes for the same table, the
    same rows for every reader; a table of one row group stays one file."""
    from placement.io.snapshot import PART_FILES, PARTITIONS, conform, verify_partitions
    from placement.snapshot.synth import SynthSpec, synth

    snap = synth(SynthSpec(9, 3, 7, 11, violations=0.1, seed=3)).snapshot
    for name in ("a", "b"):
        write_snapshot(tmp_path / name, snap, row_group_rows=10)
    files = sorted((tmp_path / "a" / "partitions").iterdir())
    assert [f.name for f in files] == [f"part-{i:05d}.parquet" for i in range(PART_FILES)]
    metas = [pq.ParquetFile(f).metadata for f in files]
    rows = [m.num_rows for m in metas]
    assert sum(rows) == 77 and max(rows) - min(rows) <= 1
    assert all(m.row_group(i).num_rows <= 10 for m in metas for i in range(m.num_row_groups))
    for f in files:
        assert f.read_bytes() == (tmp_path / "b" / "partitions" / f.name).read_bytes()
    expected = conform(snap.partitions, "partitions", "test")
    assert read_snapshot(tmp_path / "a").partitions.equals(expected)
    # no move in flight: the files leave the adding and removing columns out
    assert pq.read_table(tmp_path / "a" / "partitions").equals(expected.select(PARTITIONS.names))
    facts = verify_partitions(tmp_path / "a")
    assert facts.unsized == expected.column("size_bytes").null_count
    write_snapshot(tmp_path / "c", snap, row_group_rows=77)
    assert [f.name for f in (tmp_path / "c" / "partitions").iterdir()] == ["part-00000.parquet"]
