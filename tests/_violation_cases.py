"""One table of policy-violation cases (docs/definitions.md, policy violations), for every
implementation of the definition: the numpy `violation_mask` (`snapshot show`) and the
Spark `violation()` column (`score`) are both tested against it, so they cannot drift apart.

A partition of a topic with a policy violates it when a broker appears twice in its
replica list, when one of its brokers has no known rack, or when in some rack its number
of sync replicas or of observers differs from the policy's. Order within each role does
not matter; partitions of topics without a policy never violate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from placement.io.snapshot import BROKERS, PARTITIONS, TOPICS, Snapshot

# brokers 1-3 in west, 4-5 in east, 6-7 in central; 8 listed without a rack, 9 with an
# empty rack name; 99 is in no table
RACKS: dict[int, str | None] = {
    1: "west",
    2: "west",
    3: "west",
    4: "east",
    5: "east",
    6: "central",
    7: "central",
    8: None,
    9: "",
}
UNLISTED = 99


def _policy(version: int, replicas: dict[str, int], observers: dict[str, int]) -> str:
    def entries(counts: dict[str, int]) -> list[dict[str, Any]]:
        return [{"count": n, "constraints": {"rack": r}} for r, n in counts.items()]

    doc = {"version": version, "replicas": entries(replicas), "observers": entries(observers)}
    return json.dumps(doc)


# sync: 2 in west, 1 in east; one observer in central
STRETCHED = _policy(2, {"west": 2, "east": 1}, {"central": 1})
# v1: one sync in west, one in east; one observer in central (v1 never promotes)
V1 = _policy(1, {"west": 1, "east": 1}, {"central": 1})
# replicas and observers sharing a rack: 2 sync and 1 observer, all in west
SAME_RACK = _policy(2, {"west": 2}, {"west": 1})
# no observers at all
NO_OBSERVERS = _policy(2, {"west": 2, "east": 1}, {})
# names a rack no broker is in
ABSENT_RACK = _policy(2, {"west": 1, "north": 1}, {})


@dataclass(frozen=True)
class Case:
    id: str
    replicas: tuple[int, ...]  # sync replicas first, observers last
    observers: tuple[int, ...] | None  # None: a null observers column
    policy: str | None  # the topic's placement; None: a topic without a policy
    violates: bool
    listed: bool = True  # the topic has a row in the topics table


CASES = [
    Case("as-the-policy-says", (1, 2, 4, 6), (6,), STRETCHED, False),
    Case("order-within-a-role-does-not-matter", (4, 2, 1, 7), (7,), STRETCHED, False),
    Case("one-sync-replica-too-many", (1, 2, 3, 4, 6), (6,), STRETCHED, True),
    Case("one-sync-replica-short", (1, 2, 6), (6,), STRETCHED, True),
    Case("one-observer-too-many", (1, 2, 4, 6, 7), (6, 7), STRETCHED, True),
    Case("observer-missing", (1, 2, 4), (), STRETCHED, True),
    Case("observer-listed-as-sync-replica", (1, 2, 4, 6), None, STRETCHED, True),
    Case("observer-in-the-wrong-rack", (1, 2, 4, 5), (5,), STRETCHED, True),
    Case("sync-replica-in-the-wrong-rack", (1, 6, 4, 7), (7,), STRETCHED, True),
    Case("roles-swapped-between-racks", (1, 2, 6, 4), (4,), STRETCHED, True),
    Case("broker-twice-rack-counts-right", (1, 1, 4, 6), (6,), STRETCHED, True),
    Case("broker-twice-across-roles", (1, 2, 2), (2,), SAME_RACK, True),
    Case("shared-rack-as-the-policy-says", (3, 1, 2), (2,), SAME_RACK, False),
    Case("broker-missing-from-the-inventory", (1, 2, UNLISTED, 6), (6,), STRETCHED, True),
    Case("observer-missing-from-the-inventory", (1, 2, 4, UNLISTED), (UNLISTED,), STRETCHED, True),
    Case("broker-listed-without-a-rack", (1, 2, 8, 6), (6,), STRETCHED, True),
    Case("broker-with-an-empty-rack-name", (1, 2, 9, 6), (6,), STRETCHED, True),
    Case("v1-as-the-policy-says", (1, 4, 6), (6,), V1, False),
    Case("v1-sync-replica-in-the-wrong-rack", (1, 2, 6), (6,), V1, True),
    Case("v1-observer-in-the-wrong-rack", (1, 4, 2), (2,), V1, True),
    Case("no-observers-null-column", (1, 2, 4), None, NO_OBSERVERS, False),
    Case("no-observers-in-the-policy-one-listed", (1, 2, 4, 6), (6,), NO_OBSERVERS, True),
    Case("policy-rack-without-brokers", (1, 4), (), ABSENT_RACK, True),
    Case("topic-without-a-policy", (1, 4), (), None, False),
    Case("topic-without-a-policy-anything-goes", (1, 1, UNLISTED, 8), (8,), None, False),
    Case("topic-not-in-the-topics-table", (1, 1, UNLISTED), (), STRETCHED, False, listed=False),
]


def case_snapshot(case: Case) -> Snapshot:
    """A snapshot holding the case's partition (topic `t`, partition 0), the brokers of
    `RACKS` and, when the case says it is listed, the topic's row."""
    brokers = pa.Table.from_pylist(
        [{"broker_id": b, "rack": r, "capacity_bytes": None} for b, r in RACKS.items()],
        schema=BROKERS,
    )
    topics = pa.Table.from_pylist(
        [{"topic": "t", "placement": case.policy, "min_isr": None}] if case.listed else [],
        schema=TOPICS,
    )
    row = {
        "topic": "t",
        "partition": 0,
        "replicas": list(case.replicas),
        "observers": None if case.observers is None else list(case.observers),
        "isr": None,
        "leader": None,
        "size_bytes": None,
    }
    return Snapshot(brokers, topics, pa.Table.from_pylist([row], schema=PARTITIONS))
