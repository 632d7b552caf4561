"""Snapshot directories as `score` and `simulate` stage them for Spark.

The inputs: the fixture snapshot with extra part files under odd names (`_x=1.parquet`,
`part:0.parquet`, `.hidden`, `_SUCCESS`, names with spaces, non-ASCII, subdirectories),
part files of odd types (int64, int16 or unsigned ids, strings where ints go, nulls, extra
or re-cased columns, the legacy list layout), and the table as JSON Lines with records
split over lines, two on a line, blank lines, CRLF.

The property (`agrees`): the in-process reader (`read_table`) and the staging that Spark
reads (`stage_partitions`, its files read back with pyarrow) both refuse, or both accept
the same rows in the same order. For a sample of the accepted inputs (`SparkSample`), a
real Spark session (one for the whole run, started in the background on first use) reads
the staged files as `score` does and must see the same rows.
"""

from __future__ import annotations

import io
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PARTS = "partitions/part-00000.parquet"
ODD_NAMES = [
    "_x=1.parquet",
    "part:0.parquet",
    ".hidden",
    ".hidden.parquet",
    "_SUCCESS",
    ".part-00000.parquet.crc",
    "part 1 \N{SNOWMAN}.parquet",
    "p\N{LATIN SMALL LETTER A WITH DIAERESIS}rt-2.parquet",
    "_temporary/part-9.parquet",
    "sub dir/part-3.parquet",
    "k=v/part-4.parquet",
    "part-00001.parquet",
    "part-00002",
]
_LIST_COLUMNS = ("replicas", "observers", "isr")
_INT_COLUMNS = ("partition", "leader", "size_bytes")


class DisagreementError(AssertionError):
    """The in-process reader and the staged files (or Spark) do not see the same table."""


def _parquet(table: Any, rng: random.Random) -> bytes:
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    options: dict[str, Any] = {}
    if rng.random() < 0.2:
        options["use_compliant_nested_type"] = False  # lists as `list.item`
    if rng.random() < 0.2:
        options["row_group_size"] = rng.choice((1, 2, 3))
    if rng.random() < 0.1:
        options["use_dictionary"] = False
    pq.write_table(table, sink, **options)
    return sink.getvalue()


def _table(data: bytes) -> Any:
    import pyarrow.parquet as pq

    return pq.read_table(io.BytesIO(data))


def _retyped(rng: random.Random, table: Any) -> Any:
    """``table`` with a column of another type, nulls, or its columns renamed or added."""
    import pyarrow as pa
    import pyarrow.compute as pc

    op = rng.randrange(7)
    names = table.column_names
    if not names:
        return table
    if op <= 2:  # every id of another integer type, or a string or float type
        kind = rng.choice(
            (pa.int64(), pa.int64(), pa.int16(), pa.int8(), pa.uint8(), pa.uint32(), pa.uint64())
            if op < 2
            else (pa.string(), pa.float64(), pa.bool_())
        )
        fields = []
        for f in table.schema:
            if pa.types.is_list(f.type) and rng.random() < 0.7:
                fields.append(f.with_type(pa.list_(kind)))
            elif pa.types.is_integer(f.type) and rng.random() < 0.7:
                fields.append(f.with_type(kind))
            else:
                fields.append(f)
        try:
            return table.cast(pa.schema(fields), safe=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return table
    if op == 3:  # nulls in one column (the schema made nullable)
        name = rng.choice(names)
        i = names.index(name)
        values = table.column(i).to_pylist()
        if values:
            values[rng.randrange(len(values))] = None
        if pa.types.is_list(table.schema[i].type) and values and rng.random() < 0.5:
            row = rng.randrange(len(values))
            values[row] = [*(values[row] or []), None]
        field = table.schema[i].with_nullable(True)
        return table.set_column(i, field, pa.array(values, field.type))
    if op == 4:  # a column renamed: letter case, or another name
        name = rng.choice(names)
        new = rng.choice((name.upper(), name.capitalize(), name + "_", "extra"))
        return table.rename_columns([new if n == name else n for n in names])
    if op == 5:  # an extra column, maybe a case twin of one of ours
        name = rng.choice(("extra", "Topic", "PARTITION", "size_Bytes", "__index_level_0__"))
        if name in names:
            return table
        return table.append_column(name, pa.array([rng.randrange(9)] * table.num_rows))
    # optional columns dropped, or the ids made larger than int32
    if rng.random() < 0.5:
        keep = [n for n in names if n in ("topic", "partition", "replicas") or rng.random() < 0.5]
        return table.select(keep)
    if "leader" in names:
        i = names.index("leader")
        big = pc.add(table.column(i).cast(pa.int64()), rng.choice((0, 2**31, 2**32 - 1)))
        return table.set_column(i, "leader", big)
    return table


def _fresh_rows(rng: random.Random, table: Any) -> Any:
    """Rows for an extra file: new partitions (unique), duplicates of existing ones, or
    rows with a bad value."""
    import pyarrow as pa

    n = table.num_rows
    if not n:
        return table
    take = table.slice(rng.randrange(n), rng.choice((1, 1, 2, n)))
    kind = rng.randrange(4)
    if kind <= 1:  # new partitions of the same topics
        i = take.column_names.index("partition")
        offset = 1000 + rng.randrange(1000)
        parts = [p + offset for p in take.column(i).to_pylist()]
        take = take.set_column(i, take.schema[i], pa.array(parts, take.schema[i].type))
    elif kind == 2:  # a bad value: negative broker, null topic, illegal name
        rows = take.to_pylist()
        row = rows[0]
        bad = rng.randrange(3)
        if bad == 0:
            row["replicas"] = [*row["replicas"][:1], -4]
        elif bad == 1:
            row["topic"] = None
        else:
            row["topic"] = "a/b"
        schema = pa.schema([f.with_nullable(True) for f in take.schema])
        take = pa.Table.from_pylist(rows, schema)
    return take  # kind 3: duplicates


def _jsonl(rng: random.Random, table: Any) -> bytes:
    """The rows as JSON Lines, perturbed: a record split over lines or two on a line (both
    must be refused), blank lines, CRLF, spaces around records (all accepted)."""
    lines = [json.dumps(r) for r in table.to_pylist()]
    op = rng.randrange(6)
    if lines and op == 0:  # a record split at a comma or inside a list
        i = rng.randrange(len(lines))
        cuts = [k + 1 for k, ch in enumerate(lines[i]) if ch in ",[:"]
        if cuts:
            k = rng.choice(cuts)
            lines[i : i + 1] = [lines[i][:k], rng.choice(("", " ", "\t")) + lines[i][k:]]
    elif len(lines) > 1 and op == 1:  # two records on one line
        i = rng.randrange(len(lines) - 1)
        lines[i : i + 2] = [lines[i] + rng.choice((" ", "", "\t")) + lines[i + 1]]
    elif op == 2:  # blank lines
        for _ in range(rng.randrange(1, 4)):
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(("", " ", "\t", "\r")))
    elif op == 3 and lines:  # a nested object closing on the next line
        i = rng.randrange(len(lines))
        lines[i : i + 1] = [lines[i][:-1] + ', "x": {}', "}"]
    end = "\r\n" if rng.random() < 0.2 else "\n"
    pad = " " if rng.random() < 0.2 else ""
    text = end.join(pad + line + pad for line in lines)
    if rng.random() < 0.8:
        text += end
    return text.encode("utf-8")


def mutate_staging(rng: random.Random, files: dict[str, bytes]) -> dict[str, bytes]:
    """One to three changes to the fixture snapshot's partitions table."""
    from fuzz import mutate

    base = _table(files[PARTS])
    for _ in range(rng.choice((1, 1, 2, 3))):
        op = rng.randrange(10)
        parts = sorted(n for n in files if n.startswith("partitions/"))
        if op <= 3:  # an extra file under an odd name
            name = "partitions/" + rng.choice(ODD_NAMES)
            rows = _fresh_rows(rng, base)
            if rng.random() < 0.4:
                rows = _retyped(rng, rows)
            files[name] = _parquet(rows, rng) if rng.random() < 0.9 else b"\x00junk"
        elif op <= 5 and parts:  # a part file of odd types
            name = rng.choice(parts)
            try:
                files[name] = _parquet(_retyped(rng, _table(files[name])), rng)
            except Exception:  # an earlier change left no Parquet there
                continue
        elif op == 6 and parts:  # a part file renamed oddly
            name = rng.choice(parts)
            new = "partitions/" + rng.choice(ODD_NAMES)
            files[new] = files.pop(name)
        elif op == 7:  # the table as one JSON Lines file
            for n in parts:
                del files[n]
            files.pop("partitions.parquet", None)
            files["partitions.jsonl"] = _jsonl(rng, base)
            return files
        elif op == 8 and PARTS in files:  # the table as one Parquet file
            files["partitions.parquet"] = _parquet(_table(files.pop(PARTS)), rng)
            return files
        elif parts:  # rows changed as the snapshot family changes them
            name = rng.choice(parts)
            try:
                rows = mutate.mutate_table(rng, _table(files[name]).to_pylist())
                files[name] = mutate.table_bytes(rows, "parquet")
            except Exception:
                continue
    return files


# -- the property ------------------------------------------------------------------------


@dataclass
class SparkSample:
    """A real Spark read of every ``every``-th accepted input's staged files (0: none), on
    one local session for the whole run, started at the first accepted input.

    The start is synchronous and off the input's clock (the per-input timer is paused):
    a JVM launched on a thread would be ended by the first pre-Spark reader that fails,
    as `Starting.cancel` ends the JVM that no session holds yet."""

    every: int = 0
    session: Any = None
    accepted: int = 0
    sampled: int = 0
    _failed: bool = False
    _started: bool = False  # this object started the session (and stops it)

    def _start(self) -> None:
        import signal

        from placement.score.session import build_session

        paused = signal.setitimer(signal.ITIMER_REAL, 0) if hasattr(signal, "setitimer") else None
        try:
            spark = build_session("local[2]", app="mrc-plan fuzz")
            spark.conf.set("spark.sql.shuffle.partitions", "2")
            spark.range(1).count()  # the first job's start-up, paid here
        except Exception as exc:
            self._failed = True
            raise RuntimeError(f"Spark did not start for the sample: {exc!r}") from exc
        finally:
            if paused is not None and paused[0] > 0:
                signal.setitimer(signal.ITIMER_REAL, paused[0])
        self.session, self._started = spark, True

    def check(self, staged: Any, expected: Any) -> None:
        """Spark's rows of ``staged`` must be ``expected`` (a sampled input only)."""
        if not self.every or self._failed:
            return
        self.accepted += 1
        if (self.accepted - 1) % self.every:
            return
        if self.session is None:
            self._start()
        self.sampled += 1
        from placement.score.run import read_partitions

        frame = read_partitions(self.session, staged)
        count = frame.count()
        if count != expected.num_rows:
            raise DisagreementError(f"Spark counts {count} rows, read_table {expected.num_rows}")
        names = [f.name for f in expected.schema]
        got = sorted(_key(r.asDict(), names) for r in frame.collect())
        want = sorted(_key(r, names) for r in expected.to_pylist())
        if got != want:
            raise DisagreementError("Spark reads other rows than read_table")

    def stop(self) -> None:
        if self._started and self.session is not None:
            from placement.score.session import stop_jvm

            self.session.stop()
            stop_jvm()
        self.session = None


def _key(row: dict[str, Any], names: list[str]) -> tuple[Any, ...]:
    """A row as a tuple that sorts: a null before any value, lists as tuples."""
    values = [tuple(row[n]) if isinstance(row[n], list) else row[n] for n in names]
    return tuple((v is None, "" if v is None else v) for v in values)


SPARK = SparkSample()


def agrees(p: Path, c: Any) -> object:
    """`read_table` and `stage_partitions` on snapshot ``p``: both refuse (the refusal is
    raised), or both accept the same rows; the staged files hold Spark's types and no
    other file is staged. A sample of the accepted inputs is read by Spark too."""
    import os

    import pyarrow as pa
    import pyarrow.parquet as pq

    from placement.errors import MrcPlanError
    from placement.io.snapshot import PARTITIONS, conform, read_table, stage_partitions
    from placement.io.staging import staging_area

    try:
        expected, refusal = read_table(p, "partitions"), None
    except MrcPlanError as exc:
        expected, refusal = None, exc
    with staging_area() as into:
        try:
            staged = stage_partitions(p, into)
        except MrcPlanError as exc:
            if refusal is None:
                raise DisagreementError(f"staging refused what read_table accepts: {exc}") from exc
            raise  # both refuse: an error, as the command would exit 2
        if expected is None:
            raise DisagreementError(f"staging accepted what read_table refused: {refusal}")
        names = [f"part-{i:05d}.parquet" for i in range(len(staged.files))]
        if sorted(os.listdir(into / "spark")) != names:
            raise DisagreementError("the staging directory holds files Spark should not read")
        tables = []
        for f in staged.files:
            with open(f, "rb") as fh:
                pf = pq.ParquetFile(fh)
                tables.append(conform(pf.read(), "partitions", str(f)))
            schema = pq.read_schema(f)
            for name in schema.names:
                if schema.field(name).type != PARTITIONS.field(name).type:
                    raise DisagreementError(f"staged column {name} is {schema.field(name).type}")
        # Spark reads the columns it scores: a snapshot's other columns (a reassignment in
        # flight) stay with the in-process readers
        scored = [f.name for f in PARTITIONS]
        expected = expected.select(scored)
        got = (pa.concat_tables(tables) if tables else expected.slice(0, 0)).select(scored)
        if staged.rows != expected.num_rows or not got.equals(expected):
            raise DisagreementError(
                f"staged {staged.rows} rows ({got.num_rows} read back), "
                f"read_table {expected.num_rows}, or other values"
            )
        SPARK.check(staged, expected)
    return None
