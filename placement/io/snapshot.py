"""Cluster snapshots (SPEC §6): brokers, topics and partitions as Parquet or JSON Lines.

Each table may be a file (`brokers.parquet`, `brokers.jsonl`) or a directory of part
files (`partitions/part-00000.parquet`, as Spark writes them). Columns are checked up
front so a bad snapshot fails with the column's name, not deep inside a job.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.json as pajson
import pyarrow.parquet as pq

from placement.errors import InputError
from placement.io.outputs import Output, Outputs

BROKERS = pa.schema(
    [
        pa.field("broker_id", pa.int32(), nullable=False),
        pa.field("rack", pa.string()),
        pa.field("capacity_bytes", pa.int64()),
    ]
)
TOPICS = pa.schema(
    [
        pa.field("topic", pa.string(), nullable=False),
        pa.field("placement", pa.string()),
        pa.field("min_isr", pa.int32()),
    ]
)
PARTITIONS = pa.schema(
    [
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("replicas", pa.list_(pa.int32()), nullable=False),
        pa.field("observers", pa.list_(pa.int32())),
        pa.field("isr", pa.list_(pa.int32())),
        pa.field("leader", pa.int32()),
        pa.field("size_bytes", pa.int64()),
    ]
)
SCHEMAS = {"brokers": BROKERS, "topics": TOPICS, "partitions": PARTITIONS}
# columns a snapshot may omit; they are filled with nulls
OPTIONAL = {"capacity_bytes", "placement", "min_isr", "observers", "isr", "leader", "size_bytes"}
ROW_GROUP_ROWS = 1_000_000  # ~tens of MB per row group: one Spark task each


@dataclass(frozen=True)
class Snapshot:
    brokers: pa.Table
    topics: pa.Table
    partitions: pa.Table


def _compatible(actual: pa.DataType, expected: pa.DataType) -> bool:
    if pa.types.is_null(actual):
        return True
    if pa.types.is_integer(expected):
        return bool(pa.types.is_integer(actual))
    if pa.types.is_string(expected):
        return bool(pa.types.is_string(actual) or pa.types.is_large_string(actual))
    if pa.types.is_list(expected):
        is_list = pa.types.is_list(actual) or pa.types.is_large_list(actual)
        return bool(is_list) and _compatible(actual.value_type, expected.value_type)
    return bool(actual == expected)


def conform(table: pa.Table, name: str, source: str) -> pa.Table:
    """Check ``table``'s columns against the snapshot schema and cast to the exact types."""
    schema = SCHEMAS[name]
    columns = []
    for f in schema:
        if f.name not in table.column_names:
            if f.name in OPTIONAL:
                columns.append(pa.nulls(table.num_rows, f.type))
                continue
            raise InputError(
                source,
                f"{name}: required column {f.name!r} is missing "
                f"(found: {', '.join(table.column_names) or 'none'})",
                f"the {name} table needs: " + ", ".join(s.name for s in schema),
            )
        col = table.column(f.name)
        if not _compatible(col.type, f.type):
            raise InputError(
                source, f"{name}: column {f.name!r} has type {col.type}, expected {f.type}"
            )
        try:
            col = col.cast(f.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise InputError(
                source, f"{name}: column {f.name!r} does not fit {f.type}: {exc}"
            ) from None
        if not f.nullable and col.null_count:
            raise InputError(
                source, f"{name}: column {f.name!r} has {col.null_count} null value(s)"
            )
        columns.append(col)
    return pa.Table.from_arrays(columns, schema=schema)


def table_path(root: Path, name: str) -> Path:
    """The file or directory holding table ``name`` under ``root``."""
    for candidate in (root / f"{name}.parquet", root / name, root / f"{name}.jsonl"):
        if candidate.exists():
            return candidate
    raise InputError(
        str(root),
        f"snapshot table {name!r} not found",
        f"expected {name}.parquet, {name}/ (Parquet part files) or {name}.jsonl",
    )


def read_table(root: Path, name: str) -> pa.Table:
    path = table_path(root, name)
    try:
        table = pajson.read_json(path) if path.suffix == ".jsonl" else pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(str(path), f"cannot read the {name} table: {exc}") from None
    return conform(table, name, str(path))


def read_snapshot(root: str | Path) -> Snapshot:
    r = Path(root)
    if not r.is_dir():
        raise InputError(str(r), "a snapshot is a directory holding brokers, topics, partitions")
    return Snapshot(*(read_table(r, n) for n in ("brokers", "topics", "partitions")))


# every snapshot mrc-plan writes holds this file: `--out` replaces only such a directory
SNAPSHOT_MARKER = "_mrc-plan-snapshot.json"
_MARKER_TEXT = '{"written_by": "mrc-plan", "tables": ["brokers", "topics", "partitions"]}\n'


def is_written_snapshot(root: Path) -> bool:
    """A directory mrc-plan wrote as a snapshot: it holds the marker, or (written before
    the marker existed) exactly brokers.parquet, topics.parquet and partitions/ with
    part-NNNNN.parquet files, and nothing else."""
    try:
        entries = set(os.listdir(root))
        if SNAPSHOT_MARKER in entries:
            return True
        if entries != {"brokers.parquet", "topics.parquet", "partitions"}:
            return False
        parts = os.listdir(root / "partitions")
    except OSError:
        return False
    return all(re.fullmatch(r"part-[0-9]{5}\.parquet", p) for p in parts) and all(
        (root / n).is_file() and not (root / n).is_symlink()
        for n in ("brokers.parquet", "topics.parquet")
    )


def add_snapshot_output(outputs: Outputs, flag: str, root: str | Path) -> Output:
    """Register snapshot directory ``root`` as an output: it may replace only an empty
    directory or a snapshot mrc-plan wrote."""
    return outputs.add_dir(flag, root, marker=SNAPSHOT_MARKER, recognise=is_written_snapshot)


def write_snapshot_files(
    directory: Path, snap: Snapshot, *, row_group_rows: int = ROW_GROUP_ROWS
) -> None:
    """The three tables as Parquet, and the marker, into the (staged, empty) ``directory``.
    A failed write raises OSError naming the file."""

    for name, table in (("brokers", snap.brokers), ("topics", snap.topics)):
        conformed = conform(table, name, name)
        path = directory / f"{name}.parquet"
        with _naming(path):
            pq.write_table(conformed, path)
    parts = directory / "partitions"
    with _naming(parts):
        parts.mkdir()
    conformed = conform(snap.partitions, "partitions", "partitions")
    part = parts / "part-00000.parquet"
    with _naming(part):
        pq.write_table(conformed, part, row_group_size=row_group_rows, compression="zstd")
    marker = directory / SNAPSHOT_MARKER
    with _naming(marker):
        marker.write_text(_MARKER_TEXT, encoding="utf-8")


@contextlib.contextmanager
def _naming(path: Path) -> Iterator[None]:
    """An OSError while writing ``path`` names it (pyarrow's do not)."""
    try:
        yield
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc


def write_snapshot(
    root: str | Path,
    snap: Snapshot,
    *,
    row_group_rows: int = ROW_GROUP_ROWS,
) -> None:
    """Write the three tables as Parquet; the directory appears complete or not at all,
    and replaces only an empty directory or an earlier snapshot (else UsageError)."""
    outputs = Outputs()
    out = add_snapshot_output(outputs, "snapshot", root)
    with outputs:
        write_snapshot_files(out.staged(), snap, row_group_rows=row_group_rows)
        outputs.commit()
