"""The cache of partitions tables already checked (`verify_partitions`): a table whose
bytes passed is not read again, any other bytes are checked in full, and the cache, being
private and optional, never makes a command fail or trusts what it cannot vouch for."""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from placement.errors import InputError
from placement.io import checkcache, snapshot
from placement.io.checkcache import CHECK_CACHE_ENV
from placement.io.snapshot import PartitionFacts, verify_partitions

DAY = 24 * 3600.0
FACTS = PartitionFacts(unsized=0, longest=5)  # those of `written`


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$XDG_CACHE_HOME`` is ``tmp_path/cache``; returns where the entries go."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(CHECK_CACHE_ENV, raising=False)
    return tmp_path / "cache" / "mrc-plan" / "checked"


@pytest.fixture
def rows_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the batches `check_rows` saw (empty: no row was read)."""
    seen: list[int] = []
    real = snapshot.check_rows

    def counting(table: pa.Table, *args: Any, **kwargs: Any) -> None:
        seen.append(table.num_rows)
        real(table, *args, **kwargs)

    monkeypatch.setattr(snapshot, "check_rows", counting)
    return seen


def _entries(where: Path) -> list[Path]:
    return sorted(where.glob("*.json")) if where.is_dir() else []


def _only_entry(where: Path) -> Path:
    (entry,) = _entries(where)
    return entry


def _parts(root: Path) -> list[Path]:
    return sorted((root / "partitions").glob("*.parquet"))


def _rewrite(part: Path, column: str, row: int, value: object) -> None:
    """``part`` written again with one value of ``column`` changed."""
    table = pq.read_table(part)
    values = table.column(column).to_pylist()
    values[row] = value
    i = table.column_names.index(column)
    pq.write_table(table.set_column(i, column, pa.array(values, table.schema.field(i).type)), part)


def test_a_table_checked_once_is_not_read_again(
    snap: Path, cache: Path, rows_read: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = verify_partitions(snap)
    assert sum(rows_read) == 77 and first == FACTS
    assert len(_entries(cache)) == 1

    def no_rows(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("the rows were read again")

    monkeypatch.setattr(snapshot, "check_rows", no_rows)
    assert verify_partitions(snap) == first
    # the same bytes elsewhere are the same table
    assert verify_partitions(shutil.copytree(snap, snap.with_name("moved"))) == first


@pytest.mark.parametrize(
    ("column", "row", "value", "refusal"),
    [
        ("replicas", 3, [1, -1, 2], "a replicas list holds a negative broker id"),
        ("partition", 1, 0, "appears more than once"),
    ],
)
def test_changed_bytes_are_checked_in_full(
    snap: Path,
    cache: Path,
    rows_read: list[int],
    column: str,
    row: int,
    value: object,
    refusal: str,
) -> None:
    verify_partitions(snap)
    before = _entries(cache)
    _rewrite(_parts(snap)[0], column, row, value)  # the same path, other bytes
    rows_read.clear()
    with pytest.raises(InputError, match=refusal):
        verify_partitions(snap)
    assert rows_read  # read again
    assert _entries(cache) == before  # and the failure recorded nothing


def test_a_failed_check_records_nothing(snap: Path, cache: Path) -> None:
    _rewrite(_parts(snap)[1], "replicas", 0, [2, -3])
    for _ in range(2):
        with pytest.raises(InputError, match="negative broker id"):
            verify_partitions(snap)
    assert cache.is_dir() and list(cache.iterdir()) == []  # no entry, no temporary file


def test_a_file_changed_while_its_copy_is_checked_is_checked_again(
    snap: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key and the check are of the private copy: the user's file changing under the
    check changes nothing checked, and its new bytes are another key, checked in full."""
    real = snapshot.check_rows
    changed: list[str] = []

    def changing(table: pa.Table, name: str, source: str, **kwargs: Any) -> None:
        if not changed:  # the user's file, while its copy is being checked
            _rewrite(Path(source), "replicas", 3, [1, -1, 2])
            changed.append(source)
        real(table, name, source, **kwargs)

    monkeypatch.setattr(snapshot, "check_rows", changing)
    assert verify_partitions(snap) == FACTS  # the bytes copied passed
    assert changed and len(_entries(cache)) == 1
    monkeypatch.setattr(snapshot, "check_rows", real)
    with pytest.raises(InputError, match="a replicas list holds a negative broker id"):
        verify_partitions(snap)


def test_the_cache_can_be_turned_off(
    snap: Path,
    cache: Path,
    rows_read: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(CHECK_CACHE_ENV, "0")
    verify_partitions(snap)
    assert not cache.parent.exists()  # not even the directory is made
    monkeypatch.delenv(CHECK_CACHE_ENV)
    verify_partitions(snap)  # recorded
    entry = _only_entry(cache)
    old = time.time_ns() - 10**9 * int(DAY)
    os.utime(entry, ns=(old, old))
    monkeypatch.setenv(CHECK_CACHE_ENV, "0")

    def no_cache(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the cache was used")

    for name in ("open_private", "private_dir", "cache_dir"):
        monkeypatch.setattr(checkcache, name, no_cache)
    rows_read.clear()
    verify_partitions(snap)
    assert sum(rows_read) == 77  # checked in full, with the entry there
    assert entry.stat().st_mtime_ns == old and _entries(cache) == [entry]


@pytest.mark.parametrize(
    "how",
    ["a link", "a link to the entries", "group-writable", "entries group-writable", "a file"],
)
def test_a_cache_dir_that_is_not_private_does_not_fail_the_check(
    snap: Path, cache: Path, tmp_path: Path, rows_read: list[int], how: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    if how == "a link":
        cache.parent.parent.mkdir()
        cache.parent.symlink_to(elsewhere)
    elif how == "a link to the entries":
        cache.parent.mkdir(parents=True, mode=0o700)
        cache.symlink_to(elsewhere)
    elif how == "a file":
        cache.parent.parent.mkdir()
        cache.parent.write_text("not a directory\n")
    else:
        private = cache if how.startswith("entries") else cache.parent
        private.mkdir(parents=True)
        private.chmod(0o770)
    for _ in range(2):
        rows_read.clear()
        assert verify_partitions(snap) == FACTS
        assert sum(rows_read) == 77  # checked in full each time
    assert list(elsewhere.iterdir()) == []  # what a link points to: untouched
    if how == "group-writable":
        assert list(cache.parent.iterdir()) == []
    elif how == "entries group-writable":
        assert list(cache.iterdir()) == []


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"\xff\xfe\x00garbage",
        b"",
        b'{"unsized": -1, "longest": 3}',
        b'{"unsized": 0, "longest": -3}',
        b'{"unsized": "0", "longest": "3"}',
        b'{"unsized": true, "longest": 3}',
        b'{"unsized": 0.0, "longest": 3}',
        b'{"unsized": 0, "longest": null}',
        b'{"unsized": 0}',
        b'{"unsized": 0, "longest": 3, "more": 1}',
        b"[0, 3]",
        b'{"unsized": 0, "longest": 99999999999999999999999}',
        b"[" * 4000,  # deeper than json.loads goes
        b"[" * 100_000,
        b'{"unsized": 0, "longest": 3}' + b" " * 5000,  # no entry is this large
    ],
)
def test_a_malformed_entry_is_not_trusted(
    snap: Path, cache: Path, rows_read: list[int], content: bytes
) -> None:
    verify_partitions(snap)
    entry = _only_entry(cache)
    entry.write_bytes(content)
    rows_read.clear()
    assert verify_partitions(snap) == FACTS
    assert sum(rows_read) == 77
    assert json.loads(entry.read_text()) == FACTS._asdict()  # written again


@pytest.mark.parametrize("how", ["others can read it", "a link", "a directory", "a fifo"])
def test_an_entry_that_is_not_a_private_file_is_not_trusted(
    snap: Path, cache: Path, tmp_path: Path, rows_read: list[int], how: str
) -> None:
    verify_partitions(snap)
    entry = _only_entry(cache)
    if how == "others can read it":
        entry.chmod(0o644)
    else:
        entry.unlink()
        if how == "a link":
            planted = tmp_path / "planted.json"
            planted.write_text(json.dumps(FACTS._asdict()))
            planted.chmod(0o600)
            entry.symlink_to(planted)
        elif how == "a directory":
            entry.mkdir()
        else:
            os.mkfifo(entry, 0o600)
    rows_read.clear()
    assert verify_partitions(snap) == FACTS
    assert sum(rows_read) == 77


@pytest.fixture
def no_umask() -> Iterator[None]:
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def test_entries_are_private(snap: Path, cache: Path, no_umask: None) -> None:
    verify_partitions(snap)
    entry = _only_entry(cache)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE(cache.parent.stat().st_mode) == 0o700
    assert [p.name for p in cache.iterdir()] == [entry.name]  # no temporary file left
    assert json.loads(entry.read_text()) == FACTS._asdict()


def test_a_hit_marks_the_entry_used(snap: Path, cache: Path) -> None:
    verify_partitions(snap)
    entry = _only_entry(cache)
    old = time.time() - 20 * DAY
    os.utime(entry, (old, old))
    verify_partitions(snap)
    assert time.time() - entry.stat().st_mtime < DAY


def test_entries_unused_for_30_days_are_removed(
    snap: Path, written: Path, cache: Path, tmp_path: Path
) -> None:
    verify_partitions(written)
    kept = _only_entry(cache)
    cache.joinpath(f"{'a' * 64}.json").write_text('{"unsized": 0, "longest": 1}')
    cache.joinpath(f".{'b' * 64}.1.abcd.tmp").write_text("{")  # from a killed run
    cache.joinpath(f".{'c' * 64}.2.abcd.tmp").write_text("{")  # being written
    cache.joinpath("not-an-entry").write_text("x")
    ages = {f"{'a' * 64}.json": 31, f".{'b' * 64}.1.abcd.tmp": 2, "not-an-entry": 99}
    ages[kept.name] = 29
    now = time.time()
    for name, days in ages.items():
        os.utime(cache / name, (now - days * DAY, now - days * DAY))
    verify_partitions(snap)  # a hit: writes nothing, removes nothing
    assert len(list(cache.iterdir())) == 5
    _rewrite(_parts(snap)[0], "size_bytes", 0, None)  # another table: a new entry
    assert verify_partitions(snap) == FACTS._replace(unsized=1)
    left = sorted(p.name for p in cache.iterdir())
    new = [n for n in left if n.endswith(".json") and n != kept.name]
    assert len(new) == 1
    assert left == sorted([kept.name, new[0], f".{'c' * 64}.2.abcd.tmp", "not-an-entry"])


def test_a_table_in_one_file_and_jsonl_tables(
    written: Path, tmp_path: Path, cache: Path, rows_read: list[int]
) -> None:
    """A table that is one Parquet file is cached by its name and bytes too; a JSON Lines
    table is read whole as before, and never recorded."""
    table = pq.read_table(written / "partitions")
    one = tmp_path / "one"
    one.mkdir()
    for name in ("brokers.parquet", "topics.parquet"):
        shutil.copy(written / name, one / name)
    pq.write_table(table, one / "partitions.parquet")
    assert verify_partitions(one) == verify_partitions(one) == FACTS
    assert sum(rows_read) == 77 and len(_entries(cache)) == 1
    (one / "partitions.parquet").unlink()
    with open(one / "partitions.jsonl", "w", encoding="utf-8") as fh:
        for row in table.to_pylist():
            fh.write(json.dumps(row) + "\n")
    assert verify_partitions(one) == verify_partitions(one) == FACTS
    assert len(_entries(cache)) == 1


def test_names_that_are_not_utf8(
    written: Path, tmp_path: Path, cache: Path, rows_read: list[int]
) -> None:
    root = Path(os.fsdecode(bytes(tmp_path) + b"/snap-\xff"))
    shutil.copytree(written, root)
    first, second = _parts(root)
    first.rename(first.with_name(os.fsdecode(b"part-\xfe.parquet")))
    assert verify_partitions(root) == verify_partitions(root) == FACTS
    assert sum(rows_read) == 77 and len(_entries(cache)) == 1
    second.rename(second.with_name(os.fsdecode(b"part-\xfd.parquet")))  # another name
    assert verify_partitions(root) == FACTS
    assert sum(rows_read) == 2 * 77 and len(_entries(cache)) == 2
