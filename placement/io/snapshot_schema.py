"""The tables of a snapshot (docs/formats.md, snapshots): their schemas, the columns a
table may leave out, and `conform`, which brings a table read from a user's file to its
schema (or says which column is wrong, by name)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow as pa

from placement.errors import InputError

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
# A reassignment in flight (describe's `Adding Replicas`/`Removing Replicas`): the brokers
# being added and removed, among `replicas`; null when none runs. The snapshot's table has
# them after PARTITIONS' columns, which are what Spark reads (PARTITIONS_DDL of
# placement.score.run): no score needs them, so the files staged for Spark leave them out,
# and a table where no move runs is written without them (its files go to Spark as they are).
IN_FLIGHT = ("adding", "removing")
SNAPSHOT_PARTITIONS = pa.schema(
    [*PARTITIONS, *(pa.field(c, pa.list_(pa.int32())) for c in IN_FLIGHT)]
)
SCHEMAS = {"brokers": BROKERS, "topics": TOPICS, "partitions": SNAPSHOT_PARTITIONS}
# columns a snapshot may omit; they are filled with nulls
OPTIONAL = {
    "capacity_bytes",
    "placement",
    "min_isr",
    "observers",
    "isr",
    "leader",
    "size_bytes",
    "adding",
    "removing",
}
# The partitions table's layout, so that Spark's scan shares it evenly. Spark cuts a table into
# splits of max(4 MiB, bytes / cores) (at most 128 MiB) and gives each row group to the
# split holding its middle byte: row groups of 65,536 rows (~1 MiB at ~16 bytes a row)
# are a quarter of the smallest split or less, so no split gets a row group more than
# another. Spark also counts 4 MiB per file in that division, so one file on two cores
# leaves the second split 4 MiB short (1M partitions: 655k rows vs 345k); two part files
# of equal rows are one split each on two cores, and are cut like one file on more.
ROW_GROUP_ROWS = 65_536
PART_FILES = 2  # for a table of more than one row group; a smaller one stays one file
# sizes are nearly all distinct: a dictionary of them is larger than the values (+40%)
NO_DICTIONARY = {"size_bytes"}


@dataclass(frozen=True)
class Snapshot:
    brokers: pa.Table
    topics: pa.Table
    partitions: pa.Table
    source: str = "the snapshot"  # what error messages name: the directory it was read from


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
    seen: set[str] = set()
    for c in table.column_names:
        # any column twice, ours or not: pyarrow cannot read such a file whole (so every
        # reader refuses it alike), nor pick one of the two (a KeyError)
        if c in seen:
            shown = repr(c) if len(c) <= 16 else f"of {len(c)} characters"
            raise InputError(
                source,
                f"{name}: a column name {shown} appears more than once",
                "write the table again with one column per name",
            )
        seen.add(c)
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
        if pa.types.is_string(f.type):
            _check_utf8(col, name, f.name, source)
        columns.append(col)
    return pa.Table.from_arrays(columns, schema=schema)


def _check_utf8(col: pa.ChunkedArray, name: str, column: str, source: str) -> None:
    """Refuse a string column holding bytes that are not UTF-8 (Parquet does not check
    them on read; Python would fail on the first one it decodes)."""
    before = 0
    for chunk in col.chunks:
        try:
            chunk.validate(full=True)
        except pa.ArrowInvalid as exc:
            found = re.search(r"string index (\d+)", str(exc))
            where = f" (row {before + int(found.group(1)) + 1:,})" if found else ""
            raise InputError(
                source,
                f"{name}: column {column!r} holds a value that is not valid UTF-8{where}",
                "names in a snapshot are UTF-8 text: write the snapshot again",
            ) from None
        before += len(chunk)
