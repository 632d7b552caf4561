"""The rules of a snapshot's rows (`check_rows`): no null where a value is needed, legal
topic names, ids in range, no broker twice in a list, the observers the replicas' tail,
each broker, topic and partition once; an error names the table, the row and the column.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from placement.errors import InputError
from placement.model.kafka import TOPIC_NAME_HINT, topic_name_error


def _first_row(mask: pa.ChunkedArray | pa.Array) -> int:
    """The 1-based row number of the first true value of ``mask``."""
    import pyarrow.compute as pc

    return int(pc.index(mask, True).as_py()) + 1


def _all_distinct(table: pa.Table, keys: list[str]) -> bool:
    """Whether no two rows share ``keys`` (fast path: one int64 key per row)."""
    import numpy as np
    import pyarrow.compute as pc

    codes = []
    for k in keys:
        col = table.column(k)
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            col = pc.dictionary_encode(col).combine_chunks().indices
        codes.append(np.asarray(pc.cast(col, pa.int64()).to_numpy(zero_copy_only=False)))
    key = codes[0].copy()
    for c in codes[1:]:
        key = key * (2**31) + c
    key.sort()
    return bool((key[1:] != key[:-1]).all())


def list_arrays(col: pa.ChunkedArray) -> tuple[Any, Any]:
    """(offsets from 0, values) of a list column as numpy arrays, without copying the
    values; a null list is empty."""
    import numpy as np
    import pyarrow.compute as pc

    arr = col.combine_chunks()
    arr = arr.fill_null([]) if arr.null_count else arr
    offsets = arr.offsets.to_numpy()
    values = pc.list_flatten(arr).to_numpy(zero_copy_only=False)
    return (offsets - offsets[0]).astype(np.int64, copy=False), values


def _first_observers_misfit(table: pa.Table) -> int | None:
    """The first row (from 1) whose observers are not the tail of its replicas."""
    import numpy as np

    o_off, o_val = list_arrays(table.column("observers"))
    if not o_val.size:
        return None
    r_off, r_val = list_arrays(table.column("replicas"))
    o_len = np.diff(o_off)
    rows = np.flatnonzero(o_len)  # only rows with observers are looked at
    bad = o_len[rows] > (r_off[rows + 1] - r_off[rows])
    row = np.repeat(rows, o_len[rows])  # each observer's row
    nth = np.arange(o_val.size) - o_off[row]  # its place among the row's observers
    where = r_off[row + 1] - o_len[row] + nth
    fits = where >= r_off[row]
    where[~fits] = 0
    mismatch = np.zeros(o_len.size, dtype=bool)
    mismatch[row[(r_val[where] != o_val) | ~fits]] = True
    mismatch[rows[bad]] = True
    hits = np.flatnonzero(mismatch)
    return int(hits[0]) + 1 if hits.size else None


def _first_emptied(table: pa.Table) -> int | None:
    """The first row (from 1) whose `removing` list names every one of its replicas; only
    the rows of a reassignment in flight (a few) are looked at one by one."""
    import numpy as np
    import pyarrow.compute as pc

    removing = table.column("removing")
    moving = np.flatnonzero(
        pc.fill_null(pc.list_value_length(removing), 0).to_numpy(zero_copy_only=False)
    )
    if not moving.size:
        return None
    rows = pa.array(moving)
    pairs = zip(
        table.column("replicas").take(rows).to_pylist(),
        removing.take(rows).to_pylist(),
        strict=True,
    )
    for row, (replicas, gone) in zip(moving.tolist(), pairs, strict=True):
        if not set(replicas) - set(gone):
            return int(row) + 1
    return None


def _check_lists(table: pa.Table, fail: Callable[..., InputError]) -> None:
    """The replica, observer and ISR lists: no null or negative id, no empty replica list,
    observers at the end of the replicas."""
    import pyarrow.compute as pc

    for column in ("replicas", "observers", "isr", "adding", "removing"):
        if column not in table.column_names:
            continue
        col = table.column(column).combine_chunks()
        flat = pc.list_flatten(col)
        if flat.null_count:
            parents = pc.list_parent_indices(col)
            row = int(pc.filter(parents, pc.is_null(flat)).to_pylist()[0]) + 1
            raise fail(f"a {column} list holds a null broker id", row)
        if len(flat) and pc.min(flat).as_py() < 0:
            parents = pc.list_parent_indices(col)
            row = int(pc.filter(parents, pc.less(flat, 0)).to_pylist()[0]) + 1
            raise fail(f"a {column} list holds a negative broker id", row)
        if column == "replicas":
            empty = pc.equal(pc.list_value_length(col), 0)
            if pc.any(empty).as_py():
                raise fail("a partition has an empty replicas list", _first_row(empty))
    if {"replicas", "removing"} <= set(table.column_names):
        emptied = _first_emptied(table)
        if emptied is not None:
            raise fail(
                "its removing list names every one of its replicas",
                emptied,
                "a reassignment keeps at least one replica: `removing` lists the brokers "
                "leaving the partition, `replicas` the old and the new ones together",
            )
    if {"replicas", "observers"} <= set(table.column_names):
        misfit = _first_observers_misfit(table)
        if misfit is not None:
            raise fail(
                "its observers are not the last entries of its replicas",
                misfit,
                "Kafka lists a partition's sync replicas first and its observers last",
            )


def check_rows(
    table: pa.Table, name: str, source: str, *, row_offset: int = 0, unique: bool = True
) -> None:
    """Kafka's rules on a snapshot table's values; each refusal names the first bad row.

    Ids and partitions are non-negative (int32 is enforced by the schema); replica,
    observer and ISR lists hold no nulls; a topic name is legal; no partition, broker or
    topic appears twice (unless ``unique`` is off: the caller checks across batches).
    Row numbers count from ``row_offset`` + 1.
    """
    import pyarrow.compute as pc

    def fail(message: str, row: int | None = None, hint: str = "") -> InputError:
        where = f" (row {row + row_offset:,})" if row is not None else ""
        return InputError(source, f"{name}: {message}{where}", hint)

    if table.num_rows == 0:
        return
    for column in ("broker_id", "partition", "leader", "capacity_bytes", "size_bytes", "min_isr"):
        if column in table.column_names:
            col = table.column(column)
            low = 1 if column == "min_isr" else 0
            bad = pc.less(col, low)
            if pc.any(bad).as_py():
                row = _first_row(pc.fill_null(bad, False))
                value = col[row - 1].as_py()
                raise fail(f"{column} is {value}; it must be at least {low}", row)
    _check_lists(table, fail)
    if "topic" in table.column_names:
        for topic in pc.unique(table.column("topic")).to_pylist():
            problem = topic_name_error(topic)
            if problem is not None:
                row = _first_row(pc.equal(table.column("topic"), topic))
                raise fail(problem, row, TOPIC_NAME_HINT)
    keys = {"brokers": ["broker_id"], "topics": ["topic"], "partitions": ["topic", "partition"]}[
        name
    ]
    if not unique or _all_distinct(table, keys):
        return
    counts = table.select(keys).group_by(keys).aggregate([([], "count_all")])
    dup = counts.filter(pc.greater(counts.column("count_all"), 1))
    if dup.num_rows:
        first = {k: dup.column(k)[0].as_py() for k in keys}
        mask = pc.equal(table.column(keys[0]), first[keys[0]])
        for k in keys[1:]:
            mask = pc.and_(mask, pc.equal(table.column(k), first[k]))
        rows = [i + 1 for i, hit in enumerate(mask.to_pylist()) if hit][:2]
        shown = ", ".join(f"{k} {v!r}" for k, v in first.items())
        raise fail(
            f"{shown} appears {dup.column('count_all')[0].as_py()} times "
            f"(rows {rows[0]:,} and {rows[1]:,})",
            None,
            "a snapshot holds each broker, topic and partition once",
        )
