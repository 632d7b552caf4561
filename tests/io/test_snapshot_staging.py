"""Staging (`placement.io.staging`, `stage_partitions`): the partitions table is copied
once into a private directory, checked there, and Spark is given only those copies. These
tests need no Spark: they look at what is staged, and at refusals made before Spark."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import Result

from placement.errors import InputError, UsageError
from placement.io import snapshot, staging
from placement.io.checkcache import CHECK_CACHE_ENV
from placement.io.snapshot import (
    PARTITIONS,
    read_snapshot,
    stage_partitions,
    verify_partitions,
)
from placement.io.staging import STAGING_ENV, copy_in, staging_area

Cli = Callable[..., Result]


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting Spark fails the test: what is refused must be refused before it starts."""
    import placement.score.session as session

    def build_session(*args: object, **kwargs: object) -> None:
        raise AssertionError("Spark started before the inputs were refused")

    monkeypatch.setattr(session, "build_session", build_session)


def _parts(root: Path) -> list[Path]:
    return sorted((root / "partitions").glob("*.parquet"))


def _staged_rows(files: tuple[Path, ...]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for f in files:
        rows += pq.read_table(f).to_pylist()
    return rows


def _split_jsonl(snap: Path) -> Path:
    """``snap`` with its partitions as JSON Lines, the third record split over two lines
    (lines 3 and 4)."""
    table = pq.read_table(snap / "partitions")
    shutil.rmtree(snap / "partitions")
    lines = [json.dumps(r) for r in table.to_pylist()]
    head, tail = lines[2].split(', "replicas"')
    lines[2:3] = [head + ",", '"replicas"' + tail]
    path = snap / "partitions.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


# -- hole: a JSON Lines record split over lines ------------------------------------------


def test_a_jsonl_record_split_over_lines_is_refused_by_every_reader(
    snap: Path, cli: Cli, no_spark: None
) -> None:
    """pyarrow joins a record split over lines, Spark reads each line alone: every
    command refuses the file, naming the line, instead of counting different rows."""
    path = _split_jsonl(snap)
    with pytest.raises(InputError) as err:
        read_snapshot(snap)
    assert err.value.line == 3 and err.value.path == str(path)
    where = f"{path}:3:"
    for args in (
        ["validate", snap],
        ["snapshot", "show", snap],
        ["score", "--snapshot", snap, "--master", "local[1]"],
        ["simulate", "--snapshot", snap, "--fail-rack", "rack-01", "--master", "local[1]"],
    ):
        r = cli(args)
        assert r.exit_code == 2, (args, r.output)
        assert where in r.stderr and "one whole JSON object" in r.stderr, (args, r.stderr)
        assert '"replicas"' not in r.stderr  # the content is not quoted


@pytest.mark.parametrize(
    "text",
    [
        b'{"topic": "t", "partition": 0, "replicas": [1]} {"topic": "t", "partition": 1, '
        b'"replicas": [2]}\n',
        b'{"topic": "t", "partition": 0,\n"replicas": [1]}\n',
        b'{"topic": "t", "partition": 0, "replicas": [1], "x": {}\n}\n',
        b'{"topic": "t", "partition": 0, "replicas": [1], "x": {}\n,"y": 1}\n',
    ],
)
def test_one_record_a_line(tmp_path: Path, text: bytes) -> None:
    (tmp_path / "partitions.jsonl").write_bytes(text)
    with pytest.raises(InputError, match="one whole JSON object") as err:
        snapshot.read_table(tmp_path, "partitions")
    assert err.value.line == 1


def test_blank_lines_and_crlf_are_one_record_a_line(tmp_path: Path) -> None:
    text = b'\n{"topic": "t", "partition": 0, "replicas": [1]}\r\n  \n{"topic": "t", '
    text += b'"partition": 1, "replicas": [2]}  \r\n'
    (tmp_path / "partitions.jsonl").write_bytes(text)
    assert snapshot.read_table(tmp_path, "partitions").num_rows == 2


def test_a_jsonl_table_is_staged_as_the_parquet_of_its_checked_rows(snap: Path) -> None:
    rows = read_snapshot(snap).partitions.select(PARTITIONS.names)  # what Spark reads
    table = pq.read_table(snap / "partitions")
    shutil.rmtree(snap / "partitions")
    with open(snap / "partitions.jsonl", "w", encoding="utf-8") as fh:
        for row in table.to_pylist():
            fh.write(json.dumps(row) + "\n")
    with staging_area() as into:
        staged = stage_partitions(snap, into)
        assert [f.name for f in staged.files] == ["part-00000.parquet"]
        assert staged.rows == 77
        assert pq.read_table(staged.files[0]).equals(rows)


# -- hole: files the check skips, names Hadoop misreads, types Spark refuses -------------


def test_only_the_files_the_check_reads_are_staged_under_our_names(snap: Path) -> None:
    """`_x=1.parquet` (Spark would read it: a `=` makes it a partition directory to Spark),
    `.hidden`, `_SUCCESS` and `.crc` files are not staged; `part:0.parquet` and names with
    spaces are staged under names of ours."""
    first, second = _parts(snap)
    bad = pq.read_table(first).slice(0, 2)  # duplicates of partitions in `first`
    pq.write_table(bad, snap / "partitions" / "_x=1.parquet")
    pq.write_table(bad, snap / "partitions" / ".hidden.parquet")
    (snap / "partitions" / "_SUCCESS").write_bytes(b"")
    (snap / "partitions" / ".part-00000.parquet.crc").write_bytes(b"\x00crc")
    first.rename(first.with_name("part:0.parquet"))
    second.rename(second.with_name("part 1 \N{SNOWMAN}.parquet"))
    expected = read_snapshot(snap).partitions.select(PARTITIONS.names).to_pylist()
    with staging_area() as into:
        staged = stage_partitions(snap, into)
        assert [f.name for f in staged.files] == ["part-00000.parquet", "part-00001.parquet"]
        assert sorted(os.listdir(into / "spark")) == ["part-00000.parquet", "part-00001.parquet"]
        assert staged.rows == len(expected) == 77
        assert _staged_rows(staged.files) == expected


@pytest.mark.parametrize("id_type", [pa.int64(), pa.int16(), pa.uint16()])
def test_ids_of_other_integer_types_are_staged_as_int32(snap: Path, id_type: pa.DataType) -> None:
    expected = read_snapshot(snap).partitions.select(PARTITIONS.names).to_pylist()
    for part in _parts(snap):
        table = pq.read_table(part)
        schema = pa.schema(
            [
                f.with_type(
                    pa.list_(id_type)
                    if pa.types.is_list(f.type)
                    else id_type
                    if f.type == pa.int32()
                    else f.type
                )
                for f in table.schema
            ]
        )
        pq.write_table(table.cast(schema), part)
    with staging_area() as into:
        staged = stage_partitions(snap, into)
        for f in staged.files:
            assert pq.read_schema(f).remove_metadata() == PARTITIONS.remove_metadata()
        assert _staged_rows(staged.files) == expected


def test_an_id_beyond_int32_is_refused_naming_the_file(snap: Path) -> None:
    part = _parts(snap)[1]
    table = pq.read_table(part)
    leaders = table.column("leader").to_pylist()
    leaders[4] = 2**31
    i = table.column_names.index("leader")
    pq.write_table(table.set_column(i, "leader", pa.array(leaders, pa.int64())), part)
    with pytest.raises(InputError, match="does not fit int32") as err:
        verify_partitions(snap)
    assert err.value.path == str(part)


def test_a_file_as_spark_reads_it_is_staged_byte_for_byte(snap: Path) -> None:
    with staging_area() as into:
        staged = stage_partitions(snap, into)
        for ours, theirs in zip(staged.files, _parts(snap), strict=True):
            assert ours.read_bytes() == theirs.read_bytes()


# -- the staging directory ---------------------------------------------------------------


def test_the_staging_directory_is_private_and_removed(snap: Path) -> None:
    old = os.umask(0)
    try:
        with staging_area() as into:
            stage_partitions(snap, into)
            for p in [into, *into.rglob("*")]:
                mode = stat.S_IMODE(p.lstat().st_mode)
                assert mode == (0o700 if p.is_dir() else 0o600), p
        assert not into.exists()
    finally:
        os.umask(old)
    with pytest.raises(KeyboardInterrupt), staging_area() as into:  # Ctrl-C: removed too
        raise KeyboardInterrupt
    assert not into.exists()


@pytest.fixture
def parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``MRC_PLAN_STAGING_DIR``: where the staging directories of this test go."""
    monkeypatch.setenv(STAGING_ENV, str(tmp_path / "staging"))
    return tmp_path / "staging"


def test_verify_leaves_nothing_behind(snap: Path, parent: Path) -> None:
    verify_partitions(snap)
    assert stat.S_IMODE(parent.stat().st_mode) == 0o700 and os.listdir(parent) == []
    _parts(snap)[0].write_bytes(b"PAR1 not parquet")
    with pytest.raises(InputError):
        verify_partitions(snap)
    assert os.listdir(parent) == []


def test_a_command_interrupted_while_staging_leaves_nothing(
    snap: Path, parent: Path, cli: Cli, no_spark: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*_args: Any, **_kwargs: Any) -> None:
        assert os.listdir(parent)  # staging has begun
        raise KeyboardInterrupt

    monkeypatch.setattr(snapshot, "check_rows", interrupted)
    # the Ctrl-C handler ends the JVM of this process: here, the suite's shared session's
    import placement.score.session as session

    monkeypatch.setattr(session, "stop_jvm", lambda *_a, **_k: None)
    r = cli(["score", "--snapshot", snap, "--master", "local[1]"])
    assert r.exit_code == 130, r.output
    assert os.listdir(parent) == []


def test_staging_directories_left_by_killed_runs_are_removed(snap: Path, parent: Path) -> None:
    import time

    parent.mkdir(mode=0o700)
    old, recent = parent / "staged-old", parent / "staged-recent"
    for d in (old, recent):
        (d / "spark").mkdir(parents=True)
        (d / "spark" / "part-00000.parquet").write_bytes(b"x")
    day_ago = time.time() - 25 * 3600
    os.utime(old, (day_ago, day_ago))
    verify_partitions(snap)
    assert sorted(os.listdir(parent)) == ["staged-recent"]


def test_a_staging_parent_others_can_write_is_refused(
    snap: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli, no_spark: None
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv(STAGING_ENV, str(shared))
    with pytest.raises(UsageError, match="others can write"):
        verify_partitions(snap)
    r = cli(["score", "--snapshot", snap, "--master", "local[1]"])
    assert r.exit_code == 2 and "others can write" in r.stderr
    shared.chmod(0o755)
    assert verify_partitions(snap).longest == 5
    assert os.listdir(shared) == []


def test_a_master_on_other_machines_needs_a_shared_staging_dir(
    snap: Path, cli: Cli, no_spark: None
) -> None:
    r = cli(["score", "--snapshot", snap, "--master", "spark://192.0.2.7:7077"])
    assert r.exit_code == 2, r.output
    assert STAGING_ENV in r.stderr


def test_a_part_file_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    """(The listing skips what is not a file; one replaced by a FIFO after it is listed is
    refused when it is opened, without waiting for a writer.)"""
    fifo = tmp_path / "part-00002.parquet"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file") as err:
        copy_in(fifo, tmp_path / "copy")
    assert err.value.path == str(fifo) and not (tmp_path / "copy").exists()


def test_a_file_that_changes_while_it_is_copied_is_refused(
    snap: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    part = _parts(snap)[0]
    real = os.read
    grown: list[int] = []

    def reading(fd: int, n: int) -> bytes:
        chunk = real(fd, n)
        if not grown and os.path.samestat(os.fstat(fd), os.stat(part)):
            with open(part, "ab") as fh:  # someone writes the file while it is copied
                fh.write(b"more")
            grown.append(fd)
        return chunk

    monkeypatch.setattr(staging, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(staging.os, "read", reading)
    with pytest.raises(InputError, match="changed while it was read") as err:
        copy_in(part, tmp_path / "copy")
    assert grown and err.value.path == str(part)


# -- hole: the check cache poisoned by a swap between the hash and the check --------------


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(CHECK_CACHE_ENV, raising=False)
    return tmp_path / "cache" / "mrc-plan" / "checked"


def test_a_swap_around_the_check_cannot_record_a_verdict_for_unchecked_bytes(
    snap: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The part file holds bad rows when it is hashed; good bytes are swapped in for the
    check and the bad ones back afterwards. No entry may say those bad bytes passed: the
    next run must refuse them."""
    part = _parts(snap)[0]
    good = part.read_bytes()
    table = pq.read_table(part)
    replicas = table.column("replicas").to_pylist()
    replicas[3] = [1, -1]
    i = table.column_names.index("replicas")
    pq.write_table(table.set_column(i, "replicas", pa.array(replicas, pa.list_(pa.int32()))), part)
    bad = part.read_bytes()
    real = snapshot._check_partitions

    def swapped(*args: Any, **kwargs: Any) -> Any:
        part.write_bytes(good)
        try:
            return real(*args, **kwargs)
        finally:
            part.write_bytes(bad)

    monkeypatch.setattr(snapshot, "_check_partitions", swapped)
    with pytest.raises(InputError, match="negative broker id"):
        verify_partitions(snap)
    assert not list(cache.glob("*.json"))
    monkeypatch.setattr(snapshot, "_check_partitions", real)
    assert part.read_bytes() == bad
    with pytest.raises(InputError, match="negative broker id"):
        verify_partitions(snap)


def test_a_part_file_without_rows_or_columns_is_refused_as_the_reader_does(snap: Path) -> None:
    """(Found by the fuzzer: its batches are none, so only its schema can be checked.)"""
    pq.write_table(pa.table({"t": pa.array([], pa.string())}), snap / "partitions" / "x.parquet")
    for read in (lambda: read_snapshot(snap), lambda: verify_partitions(snap)):
        with pytest.raises(InputError, match="required column 'topic' is missing"):
            read()


def test_a_part_file_with_a_column_twice_is_refused_by_every_reader(
    snap: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyarrow cannot read a file holding a column name twice whole, so `read_snapshot`
    refuses it; the staged check reads only its own columns and accepted it, even when the
    twice-named column is not one of ours. Every reader now refuses it alike."""
    monkeypatch.setenv(CHECK_CACHE_ENV, "0")
    first = _parts(snap)[0]
    table = pq.read_table(first)
    extra = pa.array([1] * table.num_rows, pa.int32())
    doubled = table.append_column("extra", extra).append_column("extra", extra)
    pq.write_table(doubled, first)
    with pytest.raises(InputError):
        read_snapshot(snap)
    with pytest.raises(InputError, match="appears more than once"):
        verify_partitions(snap)
