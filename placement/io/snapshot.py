"""Cluster snapshots (docs/formats.md, snapshots): brokers, topics and partitions as
Parquet or JSON Lines.

Each table may be a file (`brokers.parquet`, `brokers.jsonl`) or a directory of part
files (`partitions/part-00000.parquet`, as Spark writes them). Columns are checked up
front so a bad snapshot fails with the column's name, not deep inside a job.

By idea: `snapshot_schema` (the tables' schemas, `conform`), `snapshot_rows` (the rules
of the rows), `snapshot_write` (writing), `checkcache` (the verdicts kept of partitions
tables); this module reads the tables, stages the partitions for Spark and makes the
model's objects of them, and re-exports the others' names.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.json as pajson
import pyarrow.parquet as pq

from placement.errors import InputError
from placement.io import checkcache
from placement.io.checkcache import PartitionFacts
from placement.io.inventory import LoadedInventory
from placement.io.limits import BROKERS as MAX_BROKERS
from placement.io.limits import check_count

# re-exported: tests/test_checked_cache.py replaces them here to see the cache unused
from placement.io.snapshot_rows import check_rows as check_rows  # (staging calls it by this name)
from placement.io.snapshot_rows import list_arrays as list_arrays
from placement.io.snapshot_schema import BROKERS as BROKERS
from placement.io.snapshot_schema import IN_FLIGHT as IN_FLIGHT
from placement.io.snapshot_schema import NO_DICTIONARY
from placement.io.snapshot_schema import OPTIONAL as OPTIONAL
from placement.io.snapshot_schema import PART_FILES as PART_FILES
from placement.io.snapshot_schema import PARTITIONS as PARTITIONS
from placement.io.snapshot_schema import ROW_GROUP_ROWS as ROW_GROUP_ROWS
from placement.io.snapshot_schema import SCHEMAS as SCHEMAS
from placement.io.snapshot_schema import SNAPSHOT_PARTITIONS as SNAPSHOT_PARTITIONS
from placement.io.snapshot_schema import TOPICS as TOPICS
from placement.io.snapshot_schema import Snapshot as Snapshot
from placement.io.snapshot_schema import conform as conform
from placement.io.snapshot_write import add_snapshot_output as add_snapshot_output
from placement.io.snapshot_write import is_written_snapshot as is_written_snapshot
from placement.io.snapshot_write import partition_slices as partition_slices
from placement.io.snapshot_write import write_partitions as write_partitions
from placement.io.snapshot_write import write_snapshot as write_snapshot
from placement.io.snapshot_write import write_snapshot_files as write_snapshot_files
from placement.io.staging import Copied, copy_in, staging_area

if TYPE_CHECKING:
    from placement.io.inventory import LoadedInventory
    from placement.model.assignment import Key, PartitionAssignment
    from placement.model.policy import PlacementPolicy


def table_path(root: Path, name: str) -> Path:
    """The file or directory holding table ``name`` under ``root``.

    Every Parquet file of the table is opened on the driver (its footer and schema, not
    its data) so that a corrupt or foreign file fails here, naming the file, before Spark
    or pyarrow reads it.
    """
    for candidate in (root / f"{name}.parquet", root / name, root / f"{name}.jsonl"):
        if candidate.exists():
            if candidate.suffix != ".jsonl":
                verify_parquet_files(candidate, name)
            return candidate
    raise InputError(
        str(root),
        f"snapshot table {name!r} not found",
        f"expected {name}.parquet, {name}/ (Parquet part files) or {name}.jsonl",
    )


def _reason(exc: BaseException) -> str:
    """An exception's first line, short: it may quote bytes of a corrupt file."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)
    return text if len(text) <= 200 else text[:200] + "..."


def parquet_files(path: Path) -> list[Path]:
    """The Parquet files of a table: ``path`` itself, or the part files under it (as Spark
    and pyarrow see them: hidden and `_`-prefixed files such as `_SUCCESS` skipped)."""
    if path.is_file():
        return [path]
    return sorted(
        p
        for p in path.rglob("*")
        if p.is_file()
        and not any(part.startswith((".", "_")) for part in p.relative_to(path).parts)
    )


def verify_parquet_files(path: Path, name: str) -> None:
    """Open every Parquet file of table ``name``: exit 2 naming the first unreadable one."""
    files = parquet_files(path)
    if not files:
        raise InputError(str(path), f"the {name} table holds no Parquet file")
    for f in files:
        # a file object: pyarrow cannot open a path that is not UTF-8
        with _unreadable(f, f"not a readable Parquet file ({name} table)"), open(f, "rb") as fh:
            pq.ParquetFile(arrow_owned(fh)).schema_arrow  # noqa: B018 - reads the footer


@contextlib.contextmanager
def _unreadable(f: Path, message: str) -> Iterator[None]:
    """A file that cannot be opened or that pyarrow cannot read is an `InputError` naming
    it: ``message``, then the reason."""
    try:
        yield
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
        raise InputError(
            str(f),
            f"{message}: {_reason(exc)}",
            "the file is truncated or corrupt: write the snapshot again",
        ) from None


def arrow_owned(fh: io.BufferedReader) -> pa.BufferReader:
    """The rest of the open file ``fh``, read into memory that pyarrow allocated, for
    pyarrow to read from. Not a path: pyarrow cannot open one that is not UTF-8. Not a
    Python file object nor Python bytes: pyarrow's thread pools would then hold Python
    objects (the file, buffers of its bytes) after the read, and the pool thread that
    lets the last one go must take the GIL; if that happens while the interpreter exits,
    the thread is ended mid-C++ and the process aborts (`terminate called without an
    active exception`, exit 134, after complete output). Memory pyarrow owns is let go
    without Python."""
    size = max(os.fstat(fh.fileno()).st_size - fh.tell(), 0)
    buf = pa.allocate_buffer(size)
    view = memoryview(buf)
    got = 0
    while got < size:
        n = fh.readinto(view[got:])
        if not n:
            break
        got += n
    view.release()
    if fh.read(1):
        raise OSError("the file grew while it was read")
    return pa.BufferReader(buf if got == size else buf.slice(0, got))


def _read_file(f: Path, name: str, shown: Path | None = None) -> pa.Table:
    """One file of table ``name``, conformed to the schema; errors name ``shown`` (the
    user's file, when ``f`` is a staged copy of it), else ``f``. Read here and handed to
    pyarrow in memory it owns (`arrow_owned`). A JSON Lines file must hold one whole
    record on each line that is not blank (`one_record_a_line`)."""
    source = shown if shown is not None else f
    with _unreadable(source, f"cannot read the {name} table"):
        with open(f, "rb") as fh:
            data = arrow_owned(fh)
        if f.suffix == ".jsonl":
            table = pajson.read_json(data)
            data.seek(0)
            text = data.read_buffer().to_pybytes()  # Python's own copy, never pyarrow's
            one_record_a_line(text, table.num_rows, str(source), name)
        else:
            table = pq.read_table(data)
    return conform(table, name, str(source))


# a line (not blank) whose first character is not `{`, or whose last is not `}`
_NOT_OPENED = re.compile(rb"^[ \t\r]*[^{ \t\r\n]", re.MULTILINE)
_NOT_CLOSED = re.compile(rb"[^} \t\r\n][ \t\r]*$", re.MULTILINE)
_OPENED = re.compile(rb"^[ \t\r]*\{", re.MULTILINE)
_RECORD_HINT = (
    "JSON Lines holds one whole JSON object on each line: write each record on a line of "
    "its own (a reader that reads line by line, as Spark does, sees other records)"
)


def one_record_a_line(data: bytes, rows: int, source: str, name: str) -> None:
    """Refuse JSON Lines ``data`` (which pyarrow read as ``rows`` records) unless each
    line that is not blank holds exactly one whole JSON object: pyarrow joins a record
    split over lines, Spark reads each line alone. The error names the first such line
    (its content is not quoted).

    Every line starts with `{` and ends with `}`: then no record spans two lines (a line
    ending inside a record ends a nested object, and the record's next character would be
    `,`, `}` or `]`, not `{`), and as many lines as records means one record a line."""
    whole = _NOT_OPENED.search(data) is None and _NOT_CLOSED.search(data) is None
    if whole and sum(1 for _ in _OPENED.finditer(data)) == rows:
        return

    line = None
    for n, text in enumerate(data.split(b"\n"), 1):
        text = text.strip(b" \t\r")
        if not text:
            continue
        try:
            record = json.loads(text)
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
            record = None
        if not isinstance(record, dict):
            line = n
            break
    raise InputError(
        source,
        f"{name}: a line that is not one whole JSON object (a record split over lines, "
        "or more than one on a line)",
        _RECORD_HINT,
        line=line,
    )


def read_table(root: Path, name: str) -> pa.Table:
    path = table_path(root, name)
    files = [path] if path.suffix == ".jsonl" else parquet_files(path)
    # each part file is conformed alone (parts may differ in optional columns), then joined
    tables = [_read_file(f, name) for f in files]
    table = pa.concat_tables(tables) if len(tables) != 1 else tables[0]
    check_rows(table, name, str(path))
    return table


PARTITION_BATCH_ROWS = 1_000_000


LISTS = ("replicas", "observers")


def _longest(table: pa.Table) -> int:
    import pyarrow.compute as pc

    most = [pc.max(pc.list_value_length(table.column(c))).as_py() for c in LISTS]
    return max((m for m in most if m is not None), default=0)


def verify_partitions(root: str | Path) -> PartitionFacts:
    """`stage_partitions` into a staging directory of its own, removed before it returns:
    the check of the partitions table (and the check cache) as `score` and `simulate`
    run it, for callers that do not hand the table to Spark."""
    with staging_area() as into:
        return stage_partitions(root, into).facts


@dataclass(frozen=True)
class StagedPartitions:
    """The partitions table as Spark is to read it: ``files``, Parquet files in a private
    staging directory holding exactly the rows that were checked, ``rows`` of them."""

    source: Path  # the user's table: a file or a directory
    files: tuple[Path, ...]
    rows: int
    facts: PartitionFacts


def stage_partitions(root: str | Path, into: Path) -> StagedPartitions:
    """Copy the partitions table of snapshot ``root`` into the private, empty directory
    ``into`` (`placement.io.staging.copy_in`: each file read once, refused if it changes
    meanwhile), check every row of the copies (`check_rows`, streamed in batches, then no
    partition twice across files) and leave in ``into/spark`` the files Spark reads,
    named here (`part-00000.parquet`...): a copy whose columns are exactly Spark's types
    (`ready_for_spark`) is used as it is; any other (int64 or int16 ids, extra columns, a
    legacy list layout) is written again from its checked, conformed batches; a JSON Lines
    table is read whole (`read_table`'s reader) and written as Parquet. Files of the table
    that the check skips (hidden, `_`-prefixed) are not copied, so Spark never sees them.
    Errors name the user's files and rows.

    The check cache (`placement.io.checkcache`) records the facts of a Parquet table that
    passed, keyed by the bytes copied and the rules that judged them: a hit stages the
    copies without checking them again. A JSON Lines table is always checked in full.

    The rows Spark will see (the staged files' row counts, from their footers) must be
    the rows checked: a difference is an internal error (RuntimeError, exit 101)."""
    path = table_path(Path(root), "partitions")
    copies, ready = into / "copies", into / "spark"
    copies.mkdir(mode=0o700)
    ready.mkdir(mode=0o700)
    if path.suffix == ".jsonl":
        copy = copy_in(path, copies / "partitions.jsonl")
        table = _read_file(copy.path, "partitions", path)
        check_rows(table, "partitions", str(path))
        facts = PartitionFacts(int(table.column("size_bytes").null_count), _longest(table))
        files = [ready / "part-00000.parquet"]
        with _spark_writer(files[0]) as writer:
            writer.write_table(table.select(PARTITIONS.names), row_group_size=ROW_GROUP_ROWS)
        os.unlink(copy.path)
        rows = table.num_rows
    else:
        sources = parquet_files(path)
        copied = [copy_in(f, copies / f"part-{i:05d}.parquet") for i, f in enumerate(sources)]
        files = [ready / c.path.name for c in copied]
        # Sound: the verdict is a function of the bytes and of the rules that judged them.
        # The key names every byte copied (SHA-256) and the rules (CHECKS_VERSION, the
        # versions of mrc-plan and of the pyarrow that decoded the rows); the check reads
        # those very copies, and Spark reads them (or files written from their checked
        # rows). The directory is the user's own (0700, not a link, refused otherwise),
        # so no one else can plant a verdict there.
        key, where, known = None, None, None
        if checkcache.enabled():
            key = checkcache.cache_key(path, copied)
            where = checkcache.entries_dir()
            known = checkcache.recorded_facts(where, key) if where is not None else None
        if known is not None:
            facts = known
            rows = sum(_stage_part(c, f, None) for c, f in zip(copied, files, strict=True))
        else:
            facts, rows = _check_partitions(path, copied, files)
            if key is not None and where is not None:
                checkcache.record(where, key, facts)
    staged = sum(_footer_rows(f) for f in files)
    if staged != rows:
        raise RuntimeError(f"internal error: {staged} rows staged for Spark, {rows} checked")
    return StagedPartitions(path, tuple(files), rows, facts)


def _footer_rows(f: Path) -> int:
    with open(f, "rb") as fh:
        return int(pq.ParquetFile(arrow_owned(fh)).metadata.num_rows)


# What Spark's reader is given (the PARTITIONS_DDL of placement.score.run): each leaf
# column's path, its Parquet physical type and the logical types that mean Spark's type.
_INT32 = {'{"Type":"None"}', '{"Type":"Int","bitWidth":32,"isSigned":true}'}
_INT64 = {'{"Type":"None"}', '{"Type":"Int","bitWidth":64,"isSigned":true}'}
_SPARK_LEAVES = {
    "topic": ("BYTE_ARRAY", {'{"Type":"String"}'}),
    "partition": ("INT32", _INT32),
    "leader": ("INT32", _INT32),
    "size_bytes": ("INT64", _INT64),
    **{
        f"{c}.list.{item}": ("INT32", _INT32)
        for c in ("replicas", "observers", "isr")
        for item in ("element", "item")
    },
}


def ready_for_spark(pf: pq.ParquetFile) -> bool:
    """Whether Spark can be given this Parquet file as it is: its columns are some of the
    partitions table's (no other, none twice, in any letter case) with exactly the types
    Spark's schema names, as pyarrow reads them and as they are stored (the standard
    three-level lists), so that both readers decode the same values."""
    arrow = pf.schema_arrow
    names = arrow.names
    if len({n.lower() for n in names}) != len(names) or not set(names) <= set(PARTITIONS.names):
        return False
    if any(arrow.field(n).type != PARTITIONS.field(n).type for n in names):
        return False
    schema = pf.schema
    for i in range(len(schema)):
        column = schema.column(i)
        want = _SPARK_LEAVES.get(column.path)
        if want is None or column.physical_type != want[0]:
            return False
        if column.logical_type.to_json() not in want[1]:
            return False
    return True


@contextlib.contextmanager
def _spark_writer(target: Path) -> Iterator[pq.ParquetWriter]:
    """A Parquet writer of the partitions schema into the new private file ``target``,
    laid out as `write_partitions` lays out a snapshot."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    dictionary = [f.name for f in PARTITIONS if f.name not in NO_DICTIONARY]
    with (
        open(fd, "wb") as fh,
        pq.ParquetWriter(fh, PARTITIONS, compression="zstd", use_dictionary=dictionary) as writer,
    ):
        yield writer


def _stage_part(copy: Copied, target: Path, check: Callable[[pa.Table, int], None] | None) -> int:
    """Stage the copied part file ``copy`` as ``target``, the file Spark reads; returns
    its rows. Its batches, conformed, go through ``check`` (with the rows before them)
    unless None (a cache hit); a copy `ready_for_spark` becomes ``target`` as it is, any
    other is written again from its conformed batches."""
    rows = 0
    shown = str(copy.source)
    wanted = [f.name for f in SNAPSHOT_PARTITIONS]  # all checked; Spark's are staged
    with _unreadable(copy.source, "cannot read the partitions table"), open(copy.path, "rb") as fh:
        pf = pq.ParquetFile(arrow_owned(fh))
        # the columns, even of a file without rows (whose batches conform never sees)
        conform(pf.schema_arrow.empty_table(), "partitions", shown)
        ready = ready_for_spark(pf)
        if ready and check is None:
            rows = int(pf.metadata.num_rows)
        else:
            columns = [c for c in wanted if c in pf.schema_arrow.names]
            with contextlib.ExitStack() as stack:
                writer = None if ready else stack.enter_context(_spark_writer(target))
                for batch in pf.iter_batches(batch_size=PARTITION_BATCH_ROWS, columns=columns):
                    table = conform(pa.Table.from_batches([batch]), "partitions", shown)
                    if check is not None:
                        check(table, rows)
                    if writer is not None:
                        spark = table.select(PARTITIONS.names)
                        writer.write_table(spark, row_group_size=ROW_GROUP_ROWS)
                    rows += table.num_rows
    if ready:
        os.rename(copy.path, target)
    else:
        os.unlink(copy.path)
    return rows


def _check_partitions(
    path: Path, copied: list[Copied], files: list[Path]
) -> tuple[PartitionFacts, int]:
    """The full check of `stage_partitions`: every row of the ``copied`` Parquet files of
    table ``path`` through `check_rows` as each is staged as its file of ``files``, then
    no partition twice across them. The facts, and the rows checked."""
    import numpy as np
    import pyarrow.compute as pc

    unsized = 0
    longest = 0
    codes: dict[str, int] = {}
    keys: list[np.ndarray] = []
    rows = 0
    for c, target in zip(copied, files, strict=True):
        shown = str(c.source)

        def check(table: pa.Table, offset: int, shown: str = shown) -> None:
            nonlocal unsized, longest
            check_rows(table, "partitions", shown, row_offset=offset, unique=False)
            topics = pc.dictionary_encode(table.column("topic")).combine_chunks()
            local = np.array(
                [codes.setdefault(t, len(codes)) for t in topics.dictionary.to_pylist()],
                dtype=np.int64,
            )
            idx = np.asarray(topics.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
            part = table.column("partition").to_numpy().astype(np.int64)
            keys.append(local[idx] * 2**31 + part)
            unsized += table.column("size_bytes").null_count
            longest = max(longest, _longest(table))

        rows += _stage_part(c, target, check)
    if not keys:
        return PartitionFacts(unsized, longest), rows
    key = np.concatenate(keys)
    key.sort()
    same = np.flatnonzero(key[1:] == key[:-1])
    if same.size:
        k = int(key[same[0]])
        topic = next(t for t, c in codes.items() if c == k >> 31)
        raise InputError(
            str(path),
            f"partitions: topic {topic!r}, partition {k & (2**31 - 1)} appears more than once",
            "a snapshot holds each partition once",
        )
    return PartitionFacts(unsized, longest), rows


def read_snapshot(root: str | Path) -> Snapshot:
    r = Path(root)
    if not r.is_dir():
        raise InputError(str(r), "a snapshot is a directory holding brokers, topics, partitions")
    return Snapshot(
        read_table(r, "brokers"), read_table(r, "topics"), read_table(r, "partitions"), str(r)
    )


def cluster_policy(source: str, topic: str, text: str) -> PlacementPolicy:
    """A topic's `confluent.placement.constraints` as a cluster reports it (a snapshot or
    `kafka-topics --describe` output): one that does not validate is the same InputError
    from every reader of a cluster's state, naming ``source`` and the topic."""
    from pydantic import ValidationError

    from placement.model.policy import PlacementPolicy

    try:
        return PlacementPolicy.model_validate_json(text)
    except ValidationError as exc:
        reason = exc.errors()[0]["msg"]
        raise InputError(
            source,
            f"topic {topic}: its confluent.placement.constraints is not a valid policy ({reason})",
            f"run `mrc-plan validate {source}` to see every finding",
        ) from None


def snapshot_policies(root: str | Path, topics: pa.Table) -> dict[str, PlacementPolicy]:
    """Each topic's policy from a snapshot's topics table; topics without one are absent.
    A policy that does not validate is the InputError naming the snapshot and the topic:
    nothing downstream guesses what an invalid policy meant."""
    parsed: dict[str, PlacementPolicy] = {}  # by text: topics often share a policy
    out: dict[str, PlacementPolicy] = {}
    names = topics.column("topic").to_pylist()
    for name, text in zip(names, topics.column("placement").to_pylist(), strict=True):
        if not text:
            continue
        if text not in parsed:
            parsed[text] = cluster_policy(str(root), name, text)
        out[name] = parsed[text]
    return out


def list_column(column: Any) -> list[tuple[int, ...]]:
    """A list<int> column as tuples (a null list is empty), sliced from one flat list of
    Python ints rather than made one Python list per row."""
    import numpy as np
    import pyarrow as pa

    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    lengths = array.value_lengths().fill_null(0).to_numpy(zero_copy_only=False)
    flat = array.flatten().to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    values = flat.tolist()
    ends = np.cumsum(lengths).tolist()
    starts = [0, *ends[:-1]]
    return list(map(tuple, map(values.__getitem__, map(slice, starts, ends))))


def snapshot_assignments(
    snap: Snapshot, topics: Collection[str] = ()
) -> tuple[list[PartitionAssignment], dict[Key, int]]:
    """The partitions as assignments (only those of ``topics``, when given), and the sizes
    of those that have one. The objects are made a column at a time (a snapshot holds up
    to millions of rows)."""
    from placement.io.ownlayout_make import assignments as made

    parts = snap.partitions
    if topics:
        import pyarrow.compute as pc

        parts = parts.filter(pc.is_in(parts.column("topic"), value_set=_strings(set(topics))))
    names = parts.column("topic").to_pylist()
    numbers = parts.column("partition").to_pylist()
    replicas = list_column(parts.column("replicas"))
    observers = list_column(parts.column("observers"))
    rows = made(names, numbers, replicas, observers)
    sizes = {
        (t, n): size
        for t, n, size in zip(names, numbers, parts.column("size_bytes").to_pylist(), strict=True)
        if size is not None
    }
    return rows, sizes


def _strings(values: set[str]) -> Any:
    import pyarrow as pa

    return pa.array(sorted(values), pa.string())


def snapshot_inventory(root: str | Path) -> LoadedInventory:
    """The brokers of a snapshot as an inventory: id, rack and capacity from its brokers
    table, in table order (a snapshot records no controllers). A table without brokers is
    refused, as an inventory without brokers is."""
    from placement.model.inventory import Broker, Inventory

    r = Path(root)
    table = read_table(r, "brokers")
    if table.num_rows == 0:
        raise InputError(
            str(r), "the snapshot's brokers table is empty", "give the brokers with --inventory"
        )
    check_count(MAX_BROKERS, table.num_rows, f"{r}: brokers")
    columns = (table.column(c).to_pylist() for c in ("broker_id", "rack", "capacity_bytes"))
    brokers = [
        Broker(id=i, rack=rack, capacity_bytes=cap) for i, rack, cap in zip(*columns, strict=True)
    ]
    return LoadedInventory(Inventory(brokers=brokers), str(r))
