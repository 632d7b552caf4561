"""Build a snapshot from what operators have: describe output, an inventory, sizes."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pyarrow as pa

from placement.errors import InputError
from placement.io.describe import Describe
from placement.io.limits import SIZES_BYTES
from placement.io.snapshot import BROKERS, PARTITIONS, TOPICS, Snapshot
from placement.io.textfile import read_text
from placement.model.inventory import Inventory
from placement.model.kafka import (
    INT64_MAX,
    TOPIC_NAME_HINT,
    int_problem,
    parse_ascii_int,
    topic_name_error,
)


def read_sizes(path: str | Path) -> dict[tuple[str, int], int]:
    """`topic,partition,size_bytes` CSV (header required) -> sizes.

    Kafka's rules: a legal topic name, a partition in 0..2^31-1, a size in 0..2^63-1
    (ASCII digits), each partition once.
    """
    p = Path(path)
    name = str(p)
    text = read_text(p, "the sizes file", SIZES_BYTES)
    rows = csv.reader(io.StringIO(text, newline=""))

    def fail(message: str, line: int, column: int = 1, hint: str = "") -> InputError:
        return InputError(name, message, hint, line=line, column=column)

    try:
        header = [c.strip() for c in next(rows, [])]
        if header != ["topic", "partition", "size_bytes"]:
            raise fail(f"header must be topic,partition,size_bytes, found {header}", 1)
        out: dict[tuple[str, int], int] = {}
        first_line: dict[tuple[str, int], int] = {}
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
            problem = topic_name_error(topic)
            if problem is not None:
                raise fail(problem, line_no, 1, TOPIC_NAME_HINT)
            part = parse_ascii_int(row[1])
            if part is None:
                raise fail(int_problem(row[1], "partition"), line_no, len(row[0]) + 2)
            size = parse_ascii_int(row[2], high=INT64_MAX)
            if size is None:
                raise fail(
                    int_problem(row[2], "size_bytes", high=INT64_MAX),
                    line_no,
                    len(row[0]) + len(row[1]) + 3,
                    "sizes are bytes: an integer from 0 to 2^63-1",
                )
            key = (topic, part)
            if key in out:
                raise fail(
                    f"{topic}-{part} is listed twice (first on line {first_line[key]})", line_no
                )
            out[key] = size
            first_line[key] = line_no
    except csv.Error as exc:
        raise fail(f"not a valid CSV line: {exc}", rows.line_num) from None
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
        },
        schema=PARTITIONS,
    )
    return Snapshot(brokers, topics, partitions)
