"""Reading a snapshot: a corrupt Parquet file is named before Spark or pyarrow reads it, and
rows that break Kafka's rules (nulls in replica lists, duplicate partitions, negative ids,
illegal topic names) are refused instead of counted."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from placement.errors import InputError
from placement.io.snapshot import read_snapshot, table_path

Cli = Callable[..., Result]


@pytest.fixture(scope="module")
def parquet_snapshot(
    tmp_path_factory: pytest.TempPathFactory, synth_snapshot: Callable[..., Path]
) -> Path:
    """6 brokers in 3 racks, 3 topics of 4 partitions."""
    return synth_snapshot(tmp_path_factory.mktemp("snap") / "snap")


def _part_file(snap: Path) -> Path:
    (part,) = sorted((snap / "partitions").glob("*.parquet"))
    return part


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped"])
def test_corrupt_parquet_names_the_file(
    cli: Cli, parquet_snapshot: Path, tmp_path: Path, damage: str
) -> None:
    snap = tmp_path / "snap"
    shutil.copytree(parquet_snapshot, snap)
    part = _part_file(snap)
    data = bytearray(part.read_bytes())
    if damage == "garbage":
        part.write_bytes(b"not parquet at all" * 10)
    elif damage == "truncated":
        part.write_bytes(bytes(data[: len(data) // 2]))
    else:  # the footer's metadata, just before the trailing length and magic
        for i in range(len(data) - 60, len(data) - 8):
            data[i] ^= 0x5A
        part.write_bytes(bytes(data))
    # the Spark path resolves the table with table_path before Spark reads it
    with pytest.raises(InputError) as err:
        table_path(snap, "partitions")
    assert err.value.path == str(part)
    result = cli(["snapshot", "show", snap])
    assert result.exit_code == 2, result.output
    assert f"error: {part}: not a readable Parquet file (partitions table)" in result.stderr
    assert "Traceback" not in result.stderr and "\tat " not in result.stderr


def _jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _snapshot(tmp_path: Path, partitions: list[dict[str, object]], topic: str = "t") -> Path:
    _jsonl(tmp_path / "brokers.jsonl", [{"broker_id": i, "rack": "a"} for i in (1, 2, 3)])
    _jsonl(tmp_path / "topics.jsonl", [{"topic": topic, "placement": None, "min_isr": 1}])
    _jsonl(tmp_path / "partitions.jsonl", partitions)
    return tmp_path


def _row(partition: int = 0, replicas: list[object] | None = None, **extra: object) -> dict:
    return {"topic": "t", "partition": partition, "replicas": replicas or [1, 2], **extra}


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([_row(0), _row(1, [1, None])], "a replicas list holds a null broker id (row 2)"),
        ([_row(0, isr=[None])], "a isr list holds a null broker id (row 1)"),
        ([_row(0), _row(1), _row(0)], "topic 't', partition 0 appears 2 times (rows 1 and 3)"),
        ([_row(0), _row(-1)], "partition is -1; it must be at least 0 (row 2)"),
        ([_row(0, [1, -2])], "a replicas list holds a negative broker id (row 1)"),
        ([_row(0, leader=-5)], "leader is -5"),
        ([_row(0, size_bytes=-1)], "size_bytes is -1"),
    ],
)
def test_rows_that_break_kafkas_rules_are_refused(
    tmp_path: Path, rows: list[dict[str, object]], message: str
) -> None:
    with pytest.raises(InputError, match="partitions: ") as err:
        read_snapshot(_snapshot(tmp_path, rows))
    assert message in err.value.message
    assert err.value.path == str(tmp_path / "partitions.jsonl")


def test_empty_replica_list_is_refused(tmp_path: Path) -> None:
    rows = [{"topic": "t", "partition": 0, "replicas": []}]
    with pytest.raises(InputError, match="empty replicas list"):
        read_snapshot(_snapshot(tmp_path, rows))


def test_illegal_topic_name_in_a_snapshot_is_refused(tmp_path: Path) -> None:
    rows = [{"topic": "a/b", "partition": 0, "replicas": [1]}]
    with pytest.raises(InputError, match="Kafka allows only"):
        read_snapshot(_snapshot(tmp_path, rows, topic="a/b"))


def test_duplicate_brokers_and_topics_are_refused(tmp_path: Path) -> None:
    _snapshot(tmp_path, [_row(0)])
    _jsonl(tmp_path / "brokers.jsonl", [{"broker_id": 1, "rack": "a"}] * 2)
    with pytest.raises(InputError, match="broker_id 1 appears 2 times"):
        read_snapshot(tmp_path)


def test_spark_path_scan_names_file_and_row_and_finds_duplicates_across_files(
    parquet_snapshot: Path, tmp_path: Path
) -> None:
    """`verify_partitions` streams the Parquet files on the driver (for the Spark path)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from placement.io.snapshot import verify_partitions

    snap = tmp_path / "snap"
    shutil.copytree(parquet_snapshot, snap)
    part = _part_file(snap)
    table = pq.read_table(part)
    pq.write_table(table, part.with_name("part-00001.parquet"))  # every row twice
    with pytest.raises(InputError, match="partition 0 appears more than once"):
        verify_partitions(snap)
    part.with_name("part-00001.parquet").unlink()
    replicas = table.column("replicas").to_pylist()
    replicas[5] = [1, None]
    pq.write_table(table.set_column(2, "replicas", pa.array(replicas, pa.list_(pa.int32()))), part)
    with pytest.raises(InputError, match=r"null broker id \(row 6\)") as err:
        verify_partitions(snap)
    assert err.value.path == str(part)


def test_a_column_written_twice_is_refused(parquet_snapshot: Path, tmp_path: Path) -> None:
    """Both readers (the Spark path's scan, the in-process read): exit 2 naming the file, not
    pyarrow's KeyError (exit 101)."""
    import pyarrow.parquet as pq

    from placement.io.snapshot import verify_partitions

    snap = tmp_path / "snap"
    shutil.copytree(parquet_snapshot, snap)
    part = _part_file(snap)
    table = pq.read_table(part)
    pq.write_table(table.append_column("partition", table.column("partition")), part)
    for read in (verify_partitions, read_snapshot):
        with pytest.raises(InputError) as err:
            read(snap)
        assert err.value.path == str(part)


@pytest.mark.parametrize(
    ("replicas", "observers", "bad_row"),
    [
        ([[1, 2, 3], [4, 5, 6]], [[3], [5]], 2),  # an observer in the middle
        ([[1, 2, 4, 6], [1, 2]], [[5], []], 1),  # an observer that is no replica
        ([[1], [1, 2]], [[], [1, 2, 3]], 2),  # more observers than replicas
        ([[1, 2, 3], [4, 5, 6]], [[2, 3], [6]], None),  # tails: fine
        ([[1, 2, 3], [4, 5, 6]], [None, [5, 6]], None),  # a null list is no observer
    ],
)
def test_observers_must_be_the_tail_of_the_replicas(
    replicas: list[list[int]], observers: list[list[int] | None], bad_row: int | None
) -> None:
    """Kafka lists sync replicas first and observers last: a snapshot row that says
    otherwise is refused naming the row, before the violation counts of `snapshot show`
    (which read only how many observers there are) and of Spark (which read which) could
    disagree about it."""
    import pyarrow as pa

    from placement.io.snapshot import check_rows

    table = pa.table(
        {
            "topic": ["t", "t"],
            "partition": pa.array([0, 1], pa.int32()),
            "replicas": pa.array(replicas, pa.list_(pa.int32())),
            "observers": pa.array(observers, pa.list_(pa.int32())),
        }
    )
    if bad_row is None:
        check_rows(table, "partitions", "snap")
        return
    with pytest.raises(InputError, match=f"observers are not the last .* \\(row {bad_row}\\)"):
        check_rows(table, "partitions", "snap")
