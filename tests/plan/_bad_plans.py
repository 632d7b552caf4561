"""Plans Kafka would refuse, shared by the in-process and the Spark tests of the reader."""

from __future__ import annotations

import json
from pathlib import Path

from placement.io.reassignment import render_reassignment
from placement.model.assignment import PartitionAssignment

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# a valid plan for examples/describe.txt, in the layout `assign` writes (one entry a line)
GOOD = render_reassignment(
    [
        PartitionAssignment("orders", 0, (1, 2, 5, 9), (9,)),
        PartitionAssignment("orders", 1, (2, 3, 6, 10), (10,)),
        PartitionAssignment("legacy-events", 0, (5, 6, 7)),
    ]
)
LINES = GOOD.splitlines(keepends=True)  # header, legacy-events-0, orders-0, orders-1, "]}"


def _with_line(n: int, text: str) -> str:
    """GOOD with line ``n`` (1-based) replaced."""
    return "".join(LINES[: n - 1]) + text + "\n" + "".join(LINES[n:])


def _entry(**fields: object) -> str:
    base: dict[str, object] = {"topic": "orders", "partition": 0, "replicas": [1, 2, 5, 9]}
    return '{"version":1,"partitions":[\n' + json.dumps(base | fields) + "\n]}\n"


# name -> (file text, the line the error must name); every one of these was read (or
# crashed) before: exit 0 with partitions dropped, or exit 101
BAD_PLANS: dict[str, tuple[str, int]] = {
    "garbage": ("this is not a plan\n", 1),
    "empty": ("", 1),
    "whitespace only": ("\n\n  \n", 1),
    "cut in half": (GOOD[: len(GOOD) // 2], 3),
    "corrupt line": (_with_line(3, '{"topic":"orders","partition":0,"replicas":[1,2,5,9]]},'), 3),
    "deep arrays": ("[" * 100_000, 1),
    "deep objects": ('{"a":' * 100_000, 1),
    "broker id 2^31": (_entry(replicas=[1, 2, 5, 2**31]), 2),
    "negative broker id": (_entry(replicas=[1, -2, 5]), 2),
    "partition 2^31": (_entry(partition=2**31), 2),
    "negative partition": (_entry(partition=-1), 2),
    "duplicate partition": (_with_line(4, LINES[2].rstrip("\n").rstrip(",")), 4),
    "duplicate broker": (_entry(replicas=[1, 2, 2, 9]), 2),
    "observers not a suffix": (_entry(replicas=[1, 2, 5, 9], observers=[5]), 2),
    "observers not a subset": (_entry(replicas=[1, 2, 5], observers=[9]), 2),
    "illegal topic name": (_entry(topic="orders\n::error::x"), 2),
    "float broker id": (_entry(replicas=[1, 2.0, 5]), 2),
    "topic a list": (_entry(topic=["orders"]), 2),
}
# line 3 is orders-0; putting it again as line 4 (orders-1's place) lists it twice
assert BAD_PLANS["duplicate partition"][0].count('"partition":0,"replicas":[1,2,5,9]') == 2


# the kinds the in-process paths (`plan show`, `simulate --current`) let through, or
# crashed on, before the one strict reader; the Spark paths let every kind through
NEW_IN_PROCESS = (
    "deep arrays",
    "deep objects",
    "broker id 2^31",
    "partition 2^31",
    "illegal topic name",
)


# plans that are well-formed but do not fit examples/describe.txt + inventory.json
FOREIGN: dict[str, tuple[str, int, str]] = {
    "unknown topic": (
        _with_line(3, '{"topic":"payments","partition":0,"replicas":[1,2,5,9],"observers":[9]},'),
        3,
        "topic payments",
    ),
    "partition out of range": (
        _with_line(4, '{"topic":"orders","partition":3,"replicas":[2,3,6,10],"observers":[10]}'),
        4,
        "partition 3 of topic orders",
    ),
    "broker not in the inventory": (
        _with_line(2, '{"topic":"legacy-events","partition":0,"replicas":[5,6,77]},'),
        2,
        "77",
    ),
}
