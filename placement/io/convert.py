"""Build a snapshot from what operators have: describe output, an inventory, sizes."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pyarrow as pa

from placement.errors import InputError
from placement.io.describe import Describe
from placement.io.snapshot import BROKERS, PARTITIONS, TOPICS, Snapshot
from placement.io.textfile import read_text
from placement.model.inventory import Inventory


def read_sizes(path: str | Path) -> dict[tuple[str, int], int]:
    """`topic,partition,size_bytes` CSV (header required) -> sizes."""
    p = Path(path)
    text = read_text(p)
    rows = csv.reader(io.StringIO(text))
    header = [c.strip() for c in next(rows, [])]
    if header != ["topic", "partition", "size_bytes"]:
        raise InputError(
            str(p), f"header must be topic,partition,size_bytes, found {header}", line=1, column=1
        )
    out: dict[tuple[str, int], int] = {}
    for line_no, row in enumerate(rows, start=2):
        if not any(c.strip() for c in row):
            continue
        try:
            topic, part, size = row[0].strip(), int(row[1]), int(row[2])
        except (ValueError, IndexError):
            raise InputError(
                str(p), f"expected topic,partition,size_bytes, found {row}", line=line_no, column=1
            ) from None
        if size < 0:
            raise InputError(str(p), f"negative size {size}", line=line_no, column=1)
        out[(topic, part)] = size
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
