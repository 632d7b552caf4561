"""kafka-log-dirs: sizes of 1,000,000 partitions from 1,000 brokers' output (goal <= 10 s)."""

from __future__ import annotations

import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness import ROOT, result, time_command

BROKERS = 1_000
PARTITIONS = 1_000_000
TOPICS = 2_000
REPLICATION = 3
DIRS = ("/var/lib/kafka/data-1", "/var/lib/kafka/data-2")
FUTURE_EVERY = 1_000  # one replica in a thousand is being moved between log dirs
SEED = 20_260_115
GOAL_S = 10.0
REPEAT = 3

# the reader alone, in a process of its own, as `--sizes` runs it
READ = (
    "import sys\n"
    "from placement.io.convert import load_sizes\n"
    "r = load_sizes(sys.argv[1])\n"
    "assert len(r.sizes) == int(sys.argv[2]), len(r.sizes)\n"
)


def write_output(path: Path) -> int:
    """Kafka's layout: two banners, then the JSON on one line. Topic names carry dots and
    dashes; followers are a little behind their leader, a few far behind. Returns bytes."""
    rng = random.Random(SEED)
    held: list[list[list[str]]] = [[[] for _ in DIRS] for _ in range(BROKERS)]
    per_topic = PARTITIONS // TOPICS
    for t in range(TOPICS):
        topic = f"team-{t % 37}.orders-events-{t:05d}"
        for p in range(per_topic):
            size = rng.randrange(50 * 2**30)
            for i, b in enumerate(rng.sample(range(BROKERS), REPLICATION)):
                lag = 0 if i == 0 else rng.choice((0, 0, 0, 4096, 2**20, 2**30))
                d = rng.randrange(len(DIRS))
                entry = (
                    f'{{"partition":"{topic}-{p}","size":{max(size - lag, 0)},'
                    f'"offsetLag":{lag // 1024},"isFuture":false}}'
                )
                held[b][d].append(entry)
                if rng.randrange(FUTURE_EVERY) == 0:
                    future = entry.replace('"isFuture":false', '"isFuture":true')
                    held[b][1 - d].append(
                        future.replace(f'"size":{max(size - lag, 0)}', '"size":0')
                    )
    brokers = []
    for b, dirs in enumerate(held):
        logdirs = ",".join(
            f'{{"logDir":"{name}","error":null,"partitions":[{",".join(reps)}]}}'
            for name, reps in zip(DIRS, dirs, strict=True)
        )
        brokers.append(f'{{"broker":{b},"logDirs":[{logdirs}]}}')
    text = (
        "Querying brokers for log directories information\n"
        "Received log directory information from brokers "
        + ",".join(map(str, range(BROKERS)))
        + '\n{"version":1,"brokers":['
        + ",".join(brokers)
        + "]}\n"
    )
    path.write_text(text, encoding="utf-8")
    return len(text)


def run() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="mrc-bench-logdirs-") as tmp:
        path = Path(tmp) / "log-dirs.txt"
        size = write_output(path)
        cmd = [sys.executable, "-c", READ, str(path), str(PARTITIONS)]
        timing = time_command(cmd, REPEAT, cwd=ROOT)
    return [
        result(
            f"read {PARTITIONS:,} partitions' sizes from {BROKERS:,} brokers' kafka-log-dirs "
            f"output (median of {REPEAT})",
            timing.median,
            "s",
            GOAL_S,
            f"best {timing.best:.2f} s; {size / 2**20:,.0f} MiB, {REPLICATION} replicas each",
        ),
        result("kafka-log-dirs reader peak RSS", timing.max_rss_kib / 1024, "MiB"),
    ]
