"""Writing snapshots: the tables as Parquet (the partitions in row groups and part files
Spark reads in parallel), the marker that says mrc-plan wrote the directory, and the
directory written as one of a command's outputs."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from placement.io.outputs import SNAPSHOT_MARKER, Output, Outputs
from placement.io.snapshot_schema import (
    IN_FLIGHT,
    NO_DICTIONARY,
    PART_FILES,
    ROW_GROUP_ROWS,
    Snapshot,
    conform,
)

# every snapshot mrc-plan writes holds this file: `--out` replaces only such a directory
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
        with _naming(path), open(path, "xb") as fh:  # a file object: any path pyarrow can't
            pq.write_table(conformed, fh)
    parts = directory / "partitions"
    with _naming(parts):
        parts.mkdir()
    table = conform(snap.partitions, "partitions", "partitions")
    idle = [c for c in IN_FLIGHT if table.column(c).null_count == table.num_rows]
    write_partitions(parts, table.drop_columns(idle), row_group_rows)
    marker = directory / SNAPSHOT_MARKER
    with _naming(marker), open(marker, "x", encoding="utf-8") as fh:  # as the tables: no link
        fh.write(_MARKER_TEXT)


def partition_slices(rows: int, row_group_rows: int = ROW_GROUP_ROWS) -> list[tuple[int, int]]:
    """(first row, rows) of each part file of a partitions table of ``rows`` rows: one
    file up to one row group, else `PART_FILES` of equal rows (the first ones a row more
    when they cannot be equal)."""
    files = 1 if rows <= row_group_rows else PART_FILES
    each, extra = divmod(rows, files)
    sizes = [each + (i < extra) for i in range(files)]
    return [(sum(sizes[:i]), n) for i, n in enumerate(sizes)]


def write_partitions(
    parts: Path, table: pa.Table, row_group_rows: int = ROW_GROUP_ROWS
) -> list[Path]:
    """The (conformed) partitions table as part files `part-NNNNN.parquet` in the empty
    directory ``parts``, laid out for Spark's scan (`ROW_GROUP_ROWS`, `PART_FILES`); the
    same table gives the same bytes. The files are written side by side (pyarrow encodes
    and compresses a file on one thread). Returns the files."""
    from concurrent.futures import ThreadPoolExecutor

    dictionary = [f.name for f in table.schema if f.name not in NO_DICTIONARY]

    def write(i: int, first: int, rows: int) -> Path:
        part = parts / f"part-{i:05d}.parquet"
        with _naming(part), open(part, "xb") as fh:
            pq.write_table(
                table.slice(first, rows),
                fh,
                row_group_size=row_group_rows,
                compression="zstd",
                use_dictionary=dictionary,
            )
        return part

    slices = partition_slices(table.num_rows, row_group_rows)
    with ThreadPoolExecutor(len(slices)) as pool:
        futures = [pool.submit(write, i, *s) for i, s in enumerate(slices)]
        return [f.result() for f in futures]


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
