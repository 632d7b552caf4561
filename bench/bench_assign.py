"""assign at scale: 1,000,000 partitions (RF 3-5, observers) on 1,000 brokers in 5 racks.

1. fresh assignment: <= 60 s, <= 8 GiB; per-rack, per-topic and preferred-leader spread
   per broker <= 1 (read back from the plan written);
2. drain 10 brokers of that result: <= 60 s, replicas added == the lower bound;
3. rebalance after adding 2 empty brokers per rack: replicas added within 2 % of the
   lower bound.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from harness import cli, result, time_command

BROKERS, RACKS, TOPICS, PER_TOPIC = 1_000, 5, 1_000, 1_000
GOAL_S = 60.0
GOAL_MIB = 8 * 1024


def _inputs(tmp: Path) -> tuple[Path, Path, Path]:
    """inventory, inventory with 2 new brokers per rack, topics: from a synthetic snapshot."""
    import pyarrow.parquet as pq

    snap = tmp / "snap"
    time_command(
        [
            cli(),
            "snapshot",
            "synth",
            "--brokers",
            str(BROKERS),
            "--racks",
            str(RACKS),
            "--topics",
            str(TOPICS),
            "--partitions-per-topic",
            str(PER_TOPIC),
            "--seed",
            "1",
            "--out",
            str(snap),
        ],
        1,
    )
    brokers = pq.read_table(snap / "brokers.parquet").to_pylist()
    topics = pq.read_table(snap / "topics.parquet").to_pylist()
    inv = [{"id": b["broker_id"], "rack": b["rack"]} for b in brokers]
    racks = sorted({b["rack"] for b in inv})
    grown = list(inv)
    next_id = max(b["id"] for b in inv) + 1
    for rack in racks:
        for _ in range(2):
            grown.append({"id": next_id, "rack": rack})
            next_id += 1
    paths = (tmp / "inventory.json", tmp / "inventory-grown.json", tmp / "topics.json")
    paths[0].write_text(json.dumps({"brokers": inv}))
    paths[1].write_text(json.dumps({"brokers": grown}))
    paths[2].write_text(
        json.dumps(
            {
                "topics": [
                    {
                        "name": t["topic"],
                        "partitions": PER_TOPIC,
                        "placement": json.loads(t["placement"]),
                    }
                    for t in topics
                ]
            }
        )
    )
    return paths


def _figures(stderr: bytes) -> tuple[int, int]:
    text = stderr.decode()
    added = re.search(r"replicas added: (\d+)", text)
    bound = re.search(r"lower bound on added replicas: (\d+)", text)
    if added is None or bound is None:
        raise RuntimeError(f"no figures in the summary:\n{text[-2000:]}")
    return int(added.group(1)), int(bound.group(1))


def _spreads(plan: Path, inventory: Path, topics: Path) -> tuple[int, int, int]:
    """Worst per-rack, per-topic-per-rack and preferred-leader-per-lead-rack spreads."""
    rack_of = {b["id"]: b["rack"] for b in json.loads(inventory.read_text())["brokers"]}
    members: dict[str, list[int]] = {}
    for b, r in rack_of.items():
        members.setdefault(r, []).append(b)
    lead_rack = {
        t["name"]: t["placement"]["replicas"][0]["constraints"]["rack"]
        for t in json.loads(topics.read_text())["topics"]
    }
    total: Counter[int] = Counter()
    leaders: dict[str, Counter[int]] = {r: Counter() for r in members}
    per_topic: dict[str, Counter[int]] = {}
    for p in json.loads(plan.read_text())["partitions"]:
        total.update(p["replicas"])
        per_topic.setdefault(p["topic"], Counter()).update(p["replicas"])
        leaders[lead_rack[p["topic"]]][p["replicas"][0]] += 1

    def spread(c: Counter[int], ids: list[int]) -> int:
        return max(c[b] for b in ids) - min(c[b] for b in ids)

    rack = max(spread(total, ids) for ids in members.values())
    topic = max(
        spread(c, ids)
        for c in per_topic.values()
        for ids in members.values()
        if any(c[b] for b in ids)
    )
    leader = max(spread(leaders[r], ids) for r, ids in members.items() if leaders[r])
    return rack, topic, leader


def run() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="mrc-bench-assign-") as name:
        tmp = Path(name)
        inventory, grown, topics = _inputs(tmp)
        base = [cli(), "assign", "--topics", str(topics)]
        fresh = tmp / "fresh.json"
        t = time_command([*base, "--inventory", str(inventory), "--out", str(fresh)], 1)
        rack, topic, leader = _spreads(fresh, inventory, topics)
        out += [
            result(
                "assign fresh 1,000,000 partitions / 1,000 brokers, wall",
                t.best,
                "s",
                GOAL_S,
                f"spread per broker: rack {rack}, topic {topic}, preferred leaders {leader}",
            ),
            result("assign fresh peak RSS", t.max_rss_kib / 1024, "MiB", GOAL_MIB),
            result(
                "assign fresh worst spread (rack, topic, leaders)", max(rack, topic, leader), "", 1
            ),
        ]
        drain = ",".join(str(b) for b in range(1, 11))
        t = time_command(
            [
                *base,
                "--inventory",
                str(inventory),
                "--current",
                str(fresh),
                "--drain",
                drain,
                "--out",
                str(tmp / "drain.json"),
            ],
            1,
        )
        added, bound = _figures(t.runs[0].stderr)
        out += [
            result(
                "assign --drain 10 brokers, wall",
                t.best,
                "s",
                GOAL_S,
                f"{added:,} replicas added, lower bound {bound:,}",
            ),
            result("assign --drain replicas above the lower bound", added - bound, "", 0),
        ]
        t = time_command(
            [
                *base,
                "--inventory",
                str(grown),
                "--current",
                str(fresh),
                "--rebalance",
                "--out",
                str(tmp / "rebalance.json"),
            ],
            1,
        )
        added, bound = _figures(t.runs[0].stderr)
        out += [
            result(
                "assign --rebalance after adding 10 brokers, wall",
                t.best,
                "s",
                None,
                f"{added:,} replicas added, lower bound {bound:,}; peak "
                f"{t.max_rss_kib / 1024:,.0f} MiB",
            ),
            result(
                "assign --rebalance gap to the lower bound", 100 * (added - bound) / bound, "%", 2.0
            ),
        ]
    return out
