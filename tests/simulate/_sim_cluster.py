"""A hand-built cluster whose failure outcomes are worked out by hand, per policy.

Racks: west 1,2,3 · east 4,5,6 · central 7,8. Controllers 2+2+1 (west, east, central).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from placement.model.assignment import PartitionAssignment


def _entry(count: int, rack: str) -> dict[str, Any]:
    return {"count": count, "constraints": {"rack": rack}}


RACKS = {
    1: "west",
    2: "west",
    3: "west",
    4: "east",
    5: "east",
    6: "east",
    7: "central",
    8: "central",
}
CONTROLLERS = {9001: "west", 9002: "west", 9003: "east", 9004: "east", 9005: "central"}

POLICIES: dict[str, dict[str, Any]] = {
    # name: policy (None: no policy), min ISR, partitions (sync..., observers)
    "umi": {
        "version": 2,
        "replicas": [_entry(2, "west"), _entry(1, "east")],
        "observers": [_entry(1, "central")],
        "observerPromotionPolicy": "under-min-isr",
    },
    "urep": {
        "version": 2,
        "replicas": [_entry(2, "west"), _entry(1, "east")],
        "observers": [_entry(1, "central")],
        "observerPromotionPolicy": "under-replicated",
    },
    "lio": {
        "version": 2,
        "replicas": [_entry(2, "west"), _entry(1, "east")],
        "observers": [_entry(2, "central")],
        "observerPromotionPolicy": "leader-is-observer",
    },
    "v1": {"version": 1, "replicas": [_entry(3, "west")], "observers": [_entry(2, "east")]},
    "westonly": {"version": 2, "replicas": [_entry(2, "west")]},
}
MIN_ISR = {"umi": 2, "urep": 3, "lio": 2, "v1": 2, "westonly": 1, "free": None}

PARTITIONS = [
    PartitionAssignment("umi", 0, (1, 2, 4, 7), (7,)),
    PartitionAssignment("umi", 1, (2, 3, 5, 8), (8,)),
    PartitionAssignment("urep", 0, (1, 2, 4, 7), (7,)),
    PartitionAssignment("lio", 0, (1, 2, 4, 7, 8), (7, 8)),
    PartitionAssignment("v1", 0, (1, 2, 3, 4, 5), (4, 5)),
    PartitionAssignment("v1", 1, (3, 2, 1, 6, 4), (6, 4)),
    PartitionAssignment("westonly", 0, (1, 2)),
    PartitionAssignment("free", 0, (1, 4)),  # no policy: min ISR from the default
]

# failure -> topic -> (available, promoted, under_min_isr, offline, unclean, lost); default
# min ISR 1. Worked by hand from SPEC §7:
EXPECTED: dict[str, dict[str, tuple[int, int, int, int, int, int]]] = {
    "rack:west": {
        "umi": (0, 2, 0, 0, 0, 0),  # s=1 < 2, s+o = 2: promoted
        "urep": (0, 0, 1, 0, 0, 0),  # s=1 < 3, s+o = 2 < 3: under min ISR
        "lio": (0, 0, 1, 0, 0, 0),  # s=1 < 2, never promotes
        "v1": (0, 0, 0, 2, 2, 0),  # s=0, observers in east: unclean election
        "westonly": (0, 0, 0, 1, 0, 1),  # nothing left
        "free": (1, 0, 0, 0, 0, 0),  # broker 4 survives, min ISR 1
    },
    "rack:east": {
        "umi": (2, 0, 0, 0, 0, 0),  # s=2 >= 2
        "urep": (0, 1, 0, 0, 0, 0),  # s=2 < 3, s+o = 3: promoted
        "lio": (1, 0, 0, 0, 0, 0),
        "v1": (2, 0, 0, 0, 0, 0),  # sync replicas all in west
        "westonly": (1, 0, 0, 0, 0, 0),
        "free": (1, 0, 0, 0, 0, 0),
    },
    "brokers:1,4": {
        "umi": (1, 1, 0, 0, 0, 0),  # p0: s=1 (2), o=1: promoted; p1 (2,3,5,8) untouched
        "urep": (0, 0, 1, 0, 0, 0),  # s=1, o=1 < 3
        "lio": (0, 0, 1, 0, 0, 0),  # s=1 < 2
        "v1": (2, 0, 0, 0, 0, 0),  # p0: s=2 (2,3), p1: s=2 (3,2): min ISR 2 kept
        "westonly": (1, 0, 0, 0, 0, 0),
        "free": (0, 0, 0, 1, 0, 1),  # both replicas down
    },
}


def write_inputs(root: Path) -> dict[str, Path]:
    """Inventory, topics file and current assignment (reassignment JSON) for the cluster."""
    from placement.io.reassignment import render_reassignment

    root.mkdir(parents=True, exist_ok=True)
    inv = {
        "brokers": [{"id": b, "rack": r} for b, r in RACKS.items()],
        "controllers": [{"id": c, "rack": r} for c, r in CONTROLLERS.items()],
    }
    topics: list[dict[str, Any]] = []
    for name, policy in POLICIES.items():
        count = sum(1 for p in PARTITIONS if p.topic == name)
        entry: dict[str, Any] = {"name": name, "partitions": count, "placement": policy}
        if MIN_ISR[name] is not None:
            entry["min_isr"] = MIN_ISR[name]
        topics.append(entry)
    paths = {
        "inventory": root / "inventory.json",
        "topics": root / "topics.json",
        "current": root / "current.json",
    }
    paths["inventory"].write_text(json.dumps(inv, indent=1))
    paths["topics"].write_text(json.dumps({"topics": topics}, indent=1))
    paths["current"].write_text(render_reassignment(PARTITIONS))
    return paths


# a recorded state per partition for the ISR cases: (isr, leader); None: not recorded
RECORDED: dict[tuple[str, int], tuple[list[int] | None, int | None]] = {
    ("umi", 0): ([1, 4], 1),  # 2 lags behind
    ("umi", 1): ([2, 3, 5, 8], 2),  # observer 8 promoted: in the ISR
    ("urep", 0): (None, 1),  # no ISR recorded: the sync replicas count
    ("lio", 0): ([2, 4], 1),  # the leader is not in the ISR it records
    ("v1", 0): ([], None),  # offline already
    ("v1", 1): ([3], 3),  # under min ISR 2 already (v1 never promotes)
    ("westonly", 0): ([1, 2], 1),
    ("free", 0): ([4], 4),
}


def write_snapshot_jsonl(
    root: Path,
    parts: list[PartitionAssignment] = PARTITIONS,
    recorded: dict[tuple[str, int], tuple[list[int] | None, int | None]] | None = None,
) -> Path:
    """The same cluster as a JSON Lines snapshot (sizes: 100 bytes per partition), with
    each partition's ``recorded`` ISR and leader when given (else none recorded)."""
    root.mkdir(parents=True)

    def lines(rows: list[dict[str, Any]]) -> str:
        return "".join(json.dumps(r) + "\n" for r in rows)

    (root / "brokers.jsonl").write_text(
        lines([{"broker_id": b, "rack": r} for b, r in RACKS.items()])
    )
    topics = [
        {
            "topic": t,
            "placement": json.dumps(POLICIES[t]) if t in POLICIES else None,
            "min_isr": MIN_ISR[t],
        }
        for t in MIN_ISR
    ]
    (root / "topics.jsonl").write_text(lines(topics))
    (root / "partitions.jsonl").write_text(
        lines(
            [
                {
                    "topic": p.topic,
                    "partition": p.partition,
                    "replicas": list(p.replicas),
                    "observers": list(p.observers),
                    "size_bytes": 100,
                    **(
                        dict(zip(("isr", "leader"), recorded[p.key], strict=True))
                        if recorded and p.key in recorded
                        else {}
                    ),
                }
                for p in parts
            ]
        )
    )
    return root


# RECORDED's cluster as kafka-replica-status --verbose would show it: (topic, partition,
# replica, leader, log end offset, last caught-up lag ms); v1-0 has no leader: absent
STATUS = [
    ("umi", 0, 1, True, 1000, 0),
    ("umi", 0, 2, False, 990, 2500),  # out of the ISR
    ("umi", 0, 4, False, 1000, 40),
    ("umi", 0, 7, False, 950, 9000),
    ("v1", 1, 3, True, 500, 0),
    ("v1", 1, 2, False, 480, 7000),
    ("v1", 1, 1, False, 470, 8000),
    ("v1", 1, 6, False, 480, 3000),  # first surviving observer, behind 4
    ("v1", 1, 4, False, 499, -1),  # the most caught up; its lag unknown
]


def write_replica_status(path: Path) -> Path:
    """STATUS in the layout of kafka-replica-status --verbose."""
    observers = {p.key: set(p.observers) for p in PARTITIONS}
    blocks = []
    for topic, partition, replica, leader, end, lag in STATUS:
        isr, _ = RECORDED[(topic, partition)]
        obs = replica in observers[(topic, partition)]
        fields = {
            "Topic": topic,
            "Partition": partition,
            "Replica": replica,
            "IsLeader": leader,
            "IsObserver": obs,
            "IsIsrEligible": not obs,
            "IsInIsr": replica in (isr or []),
            "IsCaughtUp": lag == 0,
            "LastCaughtUpLagMs": lag,
            "LastFetchLagMs": 0 if lag < 0 else min(lag, 500),
            "LogStartOffset": 0,
            "LogEndOffset": end,
        }
        blocks.append(
            "".join(
                f"{k}: {str(v).lower() if isinstance(v, bool) else v}\n" for k, v in fields.items()
            )
        )
    path.write_text("\n".join(blocks))
    return path
