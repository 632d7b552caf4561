"""Snapshots that pyarrow reads but Python cannot take as they are: string columns or
column names holding bytes that are not UTF-8, broker ids near 2^31, a snapshot directory
whose own name is not UTF-8. Each is refused with exit 2 naming the file, or works."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import Result

from placement.errors import InputError
from placement.io.current import read_current
from placement.io.snapshot import read_snapshot, verify_partitions

Cli = Callable[..., Result]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def parquet_snapshot(
    tmp_path_factory: pytest.TempPathFactory, synth_snapshot: Callable[..., Path]
) -> Path:
    """6 brokers in 3 racks, 3 topics of 4 partitions."""
    return synth_snapshot(tmp_path_factory.mktemp("snap") / "snap")


def _not_utf8(values: list[str], row: int) -> pa.Array:
    """``values`` as a string array whose ``row`` (0-based) holds the bytes b"\\xd5x"."""
    raw = [v.encode() for v in values]
    raw[row] = b"\xd5x"
    return pa.array(raw, pa.binary()).view(pa.string())


def _table_file(snap: Path, name: str) -> Path:
    if name == "partitions":
        (part,) = sorted((snap / "partitions").glob("*.parquet"))
        return part
    return snap / f"{name}.parquet"


@pytest.mark.parametrize(
    ("table", "column", "row"),
    [("partitions", "topic", 5), ("brokers", "rack", 2), ("topics", "placement", 1)],
)
def test_string_column_that_is_not_utf8_is_refused_naming_file_and_row(
    cli: Cli, parquet_snapshot: Path, tmp_path: Path, table: str, column: str, row: int
) -> None:
    snap = tmp_path / "snap"
    shutil.copytree(parquet_snapshot, snap)
    path = _table_file(snap, table)
    data = pq.read_table(path)
    i = data.column_names.index(column)
    values = [v if v is not None else "" for v in data.column(column).to_pylist()]
    pq.write_table(data.set_column(i, column, _not_utf8(values, row)), path)

    for read in (read_snapshot, read_current):
        with pytest.raises(InputError, match="not valid UTF-8") as err:
            read(snap)
        assert err.value.path == str(path)
        assert f"(row {row + 1})" in err.value.message
    if table == "partitions":  # the Spark path's driver-side scan
        with pytest.raises(InputError, match="not valid UTF-8"):
            verify_partitions(snap)
    result = cli(["snapshot", "show", snap])
    assert result.exit_code == 2, result.output
    assert str(path) in result.stderr


def test_column_name_that_is_not_utf8_is_refused(
    cli: Cli, parquet_snapshot: Path, tmp_path: Path
) -> None:
    snap = tmp_path / "snap"
    shutil.copytree(parquet_snapshot, snap)
    path = snap / "brokers.parquet"
    data = pq.read_table(path).rename_columns(["broker_id", "rackX", "capacity_bytes"])
    pq.write_table(data, path, store_schema=False)
    raw = path.read_bytes()
    assert raw.count(b"rackX") == 2  # the schema, and the column chunk's path
    path.write_bytes(raw.replace(b"rackX", b"ra\xd5kX"))  # same length: the footer holds
    with pytest.raises(InputError) as err:
        read_snapshot(snap)
    assert err.value.path == str(path)
    result = cli(["snapshot", "show", snap])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.stderr


_FEW_THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2"}

# 6 GiB of address space: below the 8 or 16 GiB of an array indexed by broker id, above the
# 1.5 GiB that numpy, OpenBLAS and pyarrow reserve on import (threads capped in the child's
# environment: each thread's stack and malloc arena is address space, and a machine with
# many cores starts many of them)
_LIMITED_SUMMARY = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))
from placement.snapshot.facts import summarize
from placement.io.snapshot import read_snapshot
s = summarize(read_snapshot(sys.argv[1]))
print(s.replicas, s.violations)
"""


def test_broker_id_at_the_int32_limit_is_summarized_without_a_huge_array(tmp_path: Path) -> None:
    """The largest legal id: an array indexed by broker id would take 16 GiB."""
    from placement.io.snapshot import Snapshot, write_snapshot
    from placement.snapshot.facts import summarize, violation_mask

    top = 2**31 - 1
    policy = '{"version": 1, "replicas": [{"count": 1, "constraints": {"rack": "a"}}]}'
    snap = Snapshot(
        brokers=pa.table(
            {"broker_id": pa.array([1, top, 7], pa.int32()), "rack": ["a", "b", None]}
        ),
        topics=pa.table({"topic": ["t", "u"], "placement": [policy, None]}),
        partitions=pa.table(
            {
                "topic": ["t", "t", "u"],
                "partition": pa.array([0, 1, 0], pa.int32()),
                "replicas": pa.array([[1], [top], [top, 1, 9]], pa.list_(pa.int32())),
            }
        ),
    )
    write_snapshot(tmp_path / "s", snap)
    # first with a bounded address space, in a child: the old code took 16 GiB here
    limited = subprocess.run(
        [sys.executable, "-c", _LIMITED_SUMMARY, str(tmp_path / "s")],
        env={**os.environ, **_FEW_THREADS},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert limited.returncode == 0, limited.stderr[-2000:]
    assert limited.stdout.split() == ["5", "1"]
    read = read_snapshot(tmp_path / "s")
    assert violation_mask(read).tolist() == [False, True, False]
    summary = summarize(read)
    assert summary.replicas == 5
    assert summary.violations == 1
    assert summary.replicas_per_broker == {"(no rack)": (0, 0), "a": (2, 2), "b": (2, 2)}
    assert summary.leaders_per_broker == (1, 2)  # broker 7 holds no replica: not counted


def test_snapshot_directory_whose_name_is_not_utf8(
    cli: Cli, synth_snapshot: Callable[..., Path], tmp_path: Path
) -> None:
    """pyarrow cannot open such a path by name: the files are handed over opened."""
    out = synth_snapshot(Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/new\xff")))
    assert (Path(os.fsdecode(os.fsencode(str(out)))) / "partitions").is_dir()
    result = cli(["snapshot", "show", out])
    assert result.exit_code == 0, result.output
    assert read_snapshot(out).partitions.num_rows == 12

    described = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/d\xfe"))
    result = cli(
        [
            "snapshot",
            "from-describe",
            EXAMPLES / "describe.txt",
            "--inventory",
            EXAMPLES / "inventory.json",
            "--out",
            described,
        ]
    )
    assert result.exit_code == 0, result.output
    assert read_snapshot(described).partitions.num_rows == 5


def test_an_invalid_policy_in_a_snapshot_is_one_error_for_every_reader(tmp_path: Path) -> None:
    """assign's current state, the snapshot facts (show, simulate) and score read a
    snapshot's policies through one reader: an invalid one is the same InputError for all,
    never silently skipped by one of them."""
    from placement.io.snapshot import Snapshot, write_snapshot
    from placement.score.run import parsed_policies
    from placement.snapshot.facts import summarize

    bad = '{"version": 3, "replicas": [{"count": 1, "constraints": {"rack": "a"}}]}'
    good = '{"version": 1, "replicas": [{"count": 1, "constraints": {"rack": "a"}}]}'
    snap = Snapshot(
        brokers=pa.table({"broker_id": pa.array([1, 2], pa.int32()), "rack": ["a", "a"]}),
        topics=pa.table({"topic": ["ok", "broken"], "placement": [good, bad]}),
        partitions=pa.table(
            {
                "topic": ["ok", "broken"],
                "partition": pa.array([0, 0], pa.int32()),
                "replicas": pa.array([[1], [2]], pa.list_(pa.int32())),
            }
        ),
    )
    root = tmp_path / "s"
    write_snapshot(root, snap)
    read = read_snapshot(root)
    messages = []
    for attempt in (
        lambda: read_current(root),
        lambda: summarize(read),
        lambda: parsed_policies(root, read.topics),
    ):
        with pytest.raises(InputError) as caught:
            attempt()
        messages.append((caught.value.path, caught.value.message))
    assert len(set(messages)) == 1, messages
    path, message = messages[0]
    assert path == str(root)
    assert "topic broken" in message and "not a valid policy" in message
