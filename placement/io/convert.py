"""Build a snapshot from what operators have: describe output, an inventory, sizes."""

from __future__ import annotations

import csv
import io
from collections.abc import Collection, Mapping
from pathlib import Path

import pyarrow as pa

from placement.errors import InputError
from placement.io.describe import Describe
from placement.io.formats import BY_NAME as FORMATS
from placement.io.formats import sizes_format
from placement.io.limits import too_large
from placement.io.logdirs import EXAMPLES, SizesRead, parse_logdirs
from placement.io.snapshot import BROKERS, SNAPSHOT_PARTITIONS, TOPICS, Snapshot
from placement.io.textfile import (
    cut,
    int_problem_short,
    read_text,
    starts_with,
    topic_name_problem,
)
from placement.model.assignment import Key
from placement.model.inventory import Inventory
from placement.model.kafka import INT64_MAX, TOPIC_NAME_HINT, parse_ascii_int

SIZES_HINT = (
    "a sizes file is a CSV with the header topic,partition,size_bytes, or the output of "
    "kafka-log-dirs --describe"
)


def load_sizes(path: str | Path) -> SizesRead:
    """Partition sizes from a CSV `topic,partition,size_bytes` or from `kafka-log-dirs
    --describe` output, told apart by content (docs/formats.md, sizes CSV), with what the
    operator should know about them (notes; none for a CSV)."""
    p = Path(path)
    text = read_text(p, "the sizes file", FORMATS["sizes"].cap)
    if sizes_format(p, text).name == "logdirs":
        cap = FORMATS["logdirs"].cap  # a JSON document costs more memory than a CSV
        if len(text) > cap.value():
            raise too_large(str(p), cap, len(text.encode("utf-8", "surrogatepass")))
        return parse_logdirs(text, str(p))
    return SizesRead(sizes_csv(text, str(p)))


def read_sizes(path: str | Path) -> dict[Key, int]:
    """The sizes of `load_sizes`, without its notes."""
    return load_sizes(path).sizes


def sizes_csv(text: str, name: str) -> dict[Key, int]:
    """`topic,partition,size_bytes` CSV (header required) -> sizes.

    Kafka's rules: a legal topic name, a partition in 0..2^31-1, a size in 0..2^63-1
    (ASCII digits), each partition once.
    """
    rows = csv.reader(io.StringIO(text, newline=""))

    def fail(message: str, line: int, column: int = 1, hint: str = "") -> InputError:
        return InputError(name, message, hint, line=line, column=column)

    if not text.strip():
        raise InputError(name, "the sizes file is empty", SIZES_HINT)
    try:
        header = [c.strip() for c in next(rows, [])]
        if header != ["topic", "partition", "size_bytes"]:
            # not a sizes file: nothing of the line is quoted (it may be a secret)
            raise fail(
                "not a sizes file: the first line should be the CSV header "
                "topic,partition,size_bytes or a kafka-log-dirs banner, and this one starts "
                f"with {starts_with(text)}",
                1,
                hint=SIZES_HINT,
            )
        out: dict[Key, int] = {}
        first_line: dict[Key, int] = {}
        start = rows.line_num + 1
        for row in rows:
            line_no, start = start, rows.line_num + 1
            if not any(c.strip() for c in row):
                continue
            if len(row) != 3:
                raise fail(
                    f"expected topic,partition,size_bytes, found {len(row)} field(s)", line_no
                )
            topic = row[0].strip()
            problem = topic_name_problem(topic)
            if problem is not None:
                raise fail(problem, line_no, 1, TOPIC_NAME_HINT)
            part = parse_ascii_int(row[1])
            if part is None:
                raise fail(
                    int_problem_short(row[1], "partition"),
                    line_no,
                    len(row[0]) + 2,
                    "partitions are integers from 0 to 2^31-1",
                )
            size = parse_ascii_int(row[2], high=INT64_MAX)
            if size is None:
                raise fail(
                    int_problem_short(row[2], "size_bytes", high=INT64_MAX),
                    line_no,
                    len(row[0]) + len(row[1]) + 3,
                    "sizes are bytes: an integer from 0 to 2^63-1",
                )
            key = (topic, part)
            if key in out:
                raise fail(
                    f"{cut(topic)}-{part} is listed twice (first on line {first_line[key]})",
                    line_no,
                )
            out[key] = size
            first_line[key] = line_no
    except csv.Error as exc:
        raise fail(f"not a valid CSV line: {exc}", rows.line_num, hint=SIZES_HINT) from None
    return out


def snapshot_from_describe(
    describe: Describe, inventory: Inventory, sizes: dict[tuple[str, int], int] | None = None
) -> Snapshot:
    brokers = pa.table(
        {
            "broker_id": [b.id for b in inventory.brokers],
            "rack": [b.rack for b in inventory.brokers],
            "capacity_bytes": [b.capacity_bytes for b in inventory.brokers],
        },
        schema=BROKERS,
    )
    names = sorted(describe.topics)
    topics = pa.table(
        {
            "topic": names,
            "placement": [
                (t.placement.value if t.placement else None)
                for t in (describe.topics[n] for n in names)
            ],
            "min_isr": [describe.topics[n].min_isr for n in names],
        },
        schema=TOPICS,
    )
    rows = sorted(describe.partitions, key=lambda p: (p.topic, p.partition))
    partitions = pa.table(
        {
            "topic": [p.topic for p in rows],
            "partition": [p.partition for p in rows],
            "replicas": [list(p.replicas) for p in rows],
            "observers": [list(p.observers) for p in rows],
            "isr": [list(p.isr) for p in rows],
            "leader": [p.leader for p in rows],
            "size_bytes": [(sizes or {}).get((p.topic, p.partition)) for p in rows],
            # a reassignment in flight: `replicas` lists the old and the new brokers
            "adding": [list(p.adding) if p.reassigning else None for p in rows],
            "removing": [list(p.removing) if p.reassigning else None for p in rows],
        },
        schema=SNAPSHOT_PARTITIONS,
    )
    return Snapshot(brokers, topics, partitions)


def coverage_notes(
    sizes: Mapping[Key, int], keys: Collection[Key], path: str, where: str
) -> list[str]:
    """What a sizes file ``path`` misses of the partitions ``keys`` of ``where`` (those get
    no size), and what it has beyond them (a file from another cluster, or a stale one)."""
    notes = []
    missing = sum(1 for k in keys if k not in sizes)
    if missing:
        notes.append(
            f"{missing:,} of the {len(keys):,} partitions of {where} have no size in {path}: "
            "their bytes are unknown"
        )
    known = set(keys)
    extra = sorted(k for k in sizes if k not in known)
    if extra:
        shown = ", ".join(f"{t}-{n}" for t, n in extra[:EXAMPLES])
        more = f" (and {len(extra) - EXAMPLES:,} more)" if len(extra) > EXAMPLES else ""
        notes.append(
            f"{len(extra):,} partitions in {path} are not in {where} and are left out: "
            f"{shown}{more}"
        )
    return notes
