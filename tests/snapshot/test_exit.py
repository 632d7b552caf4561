"""Reading a snapshot leaves nothing for pyarrow's threads to hand back to Python.

A Parquet file given to pyarrow as a Python file object is read on pyarrow's I/O threads,
which may still hold it when the read returns and need the interpreter to let it go. When
that happens as the interpreter exits, the process aborts after its output is complete
(`terminate called without an active exception`, exit 134): `snapshot show` and `snapshot
export` did so about once in 100 runs (bench/bench_exit.py counts 1,000 runs)."""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from typer.testing import Result

import placement.io.snapshot as snapshot_io
from placement.io.snapshot import read_snapshot

READS = 200  # of three tables each: the old reader left a file held in some of them


@pytest.fixture(scope="module")
def snapshots(
    tmp_path_factory: pytest.TempPathFactory,
    synth_snapshot: Callable[..., Path],
    example_snapshot: Callable[[Path], Path],
) -> list[Path]:
    root = tmp_path_factory.mktemp("exit")
    return [
        synth_snapshot(root / "synth", brokers=9, racks=3, topics=20, per_topic=30),
        example_snapshot(root / "example"),
    ]


@pytest.mark.slow  # the fast tier leaves it to make test
def test_no_file_object_outlives_the_read(
    snapshots: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[weakref.ref[Any]] = []
    real_open = open

    def tracking_open(*args: Any, **kwargs: Any) -> Any:
        fh = real_open(*args, **kwargs)
        opened.append(weakref.ref(fh))
        return fh

    monkeypatch.setattr(snapshot_io, "open", tracking_open, raising=False)
    held = 0
    for i in range(READS):
        read_snapshot(snapshots[i % len(snapshots)])
        # checked at once: a file still referenced here is one only pyarrow holds
        held += sum(ref() is not None for ref in opened)
        opened.clear()
    assert held == 0, f"{held} file object(s) still held after the reads"


def test_pyarrow_reads_tables_from_memory(
    snapshots: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the table readers get is pyarrow's own (bytes in memory), never a Python
    file object that pyarrow's threads call back into."""
    given: list[object] = []
    real_read = snapshot_io.pq.read_table

    def spy(source: object, *args: Any, **kwargs: Any) -> pa.Table:
        given.append(source)
        return real_read(source, *args, **kwargs)

    monkeypatch.setattr(snapshot_io.pq, "read_table", spy)
    for snap in snapshots:
        read_snapshot(snap)
    assert given
    assert [s for s in given if not _native(s)] == []


def _native(source: object) -> bool:
    """A source pyarrow reads without calling back into Python: a path, a buffer or a
    file of its own (pa.PythonFile wraps a Python file object)."""
    if isinstance(source, pa.PythonFile):
        return False
    return isinstance(source, str | os.PathLike | pa.Buffer | pa.NativeFile)


@pytest.mark.parametrize("command", [["show", "--format", "json"], ["export"]])
def test_show_and_export_succeed(
    snapshots: list[Path], cli: Callable[..., Result], command: list[str]
) -> None:
    for snap in snapshots:
        result = cli(["snapshot", *command, snap])
        assert result.exit_code == 0, result.output
        assert result.stdout.lstrip().startswith("{")
