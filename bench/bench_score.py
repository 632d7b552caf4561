"""score: 5,000,000 partitions + a 500,000-partition plan on local[2], vs pyarrow/numpy.

Generates a snapshot (`mrc-plan snapshot synth`) and a plan that moves one replica of every
10th partition (mostly within its rack, 1 in 50 across racks, 1 in 7 also swaps the
leader), then times, each as its own process and including start-up:
- `mrc-plan score --master local[2]` (Spark session start included), with the peak memory
  of its whole process tree (Python driver + JVM), sampled from /proc;
- `bench/score_ref.py`, the same metrics in pyarrow + numpy over the same Parquet.
Both reports must agree number for number (floats to 1e-9), else the benchmark fails.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from harness import ROOT, clean_env, cli, result, synth_snapshot

BROKERS, RACKS, TOPICS, PER_TOPIC = 300, 3, 5_000, 1_000
EVERY = 10  # every 10th partition is in the plan: 500,000
RATIO_GOAL = 2.0
MEMORY_GOAL_MIB = 4 * 1024


def make_plan(snapshot: Path, out: Path, seed: int = 7, every: int = EVERY) -> int:
    """Write a plan moving one sync replica of every ``every``-th partition; its size."""
    import pyarrow.parquet as pq

    sys.path.insert(0, str(ROOT))
    from placement.io.atomic import write_atomic
    from placement.io.reassignment import render_reassignment
    from placement.model.assignment import PartitionAssignment

    brokers = pq.read_table(snapshot / "brokers.parquet").to_pylist()
    rack_of = {b["broker_id"]: b["rack"] for b in brokers}
    members: dict[str, list[int]] = {}
    for b, r in sorted(rack_of.items()):
        members.setdefault(r, []).append(b)
    parts = pq.read_table(
        snapshot / "partitions", columns=["topic", "partition", "replicas", "observers"]
    )
    rng = random.Random(seed)
    plan = []
    topics, numbers = parts.column("topic"), parts.column("partition")
    replicas, observers = parts.column("replicas"), parts.column("observers")
    for i in range(0, parts.num_rows, every):
        reps = list(replicas[i].as_py())
        obs = observers[i].as_py() or []
        n_sync = len(reps) - len(obs)
        k = rng.randrange(n_sync)
        home = rack_of[reps[k]]
        if (i // every) % 50 == 0:
            pool = [b for r, bs in members.items() if r != home for b in bs]
        else:
            pool = members[home]
        choice = rng.choice(pool)
        while choice in reps:
            choice = rng.choice(pool)
        reps[k] = choice
        if (i // every) % 7 == 0 and n_sync > 1:
            reps[0], reps[1] = reps[1], reps[0]
        plan.append(
            PartitionAssignment(topics[i].as_py(), numbers[i].as_py(), tuple(reps), tuple(obs))
        )
    write_atomic(out, render_reassignment(plan))
    return len(plan)


def _tree(root: int) -> tuple[list[int], dict[int, int]]:
    """``root`` and every descendant, and each one's resident memory (KiB), from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid, ppid = int(entry), int(fields[1])
        children.setdefault(ppid, []).append(pid)
        rss[pid] = int(fields[21]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    return tree, rss


# the start of a JVM thread's name (as /proc shows it, cut to 15 characters) -> what it does
THREAD_GROUPS = {"C1 CompilerThre": "jit", "C2 CompilerThre": "jit", "Executor task": "tasks"}


def _thread_cpu(pids: list[int], seen: dict[tuple[int, int], tuple[str, float]]) -> None:
    """Record the CPU seconds so far of every thread of ``pids`` in ``seen``, by group."""
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as fh:
                    text = fh.read()
            except OSError:
                continue
            name = text[text.index("(") + 1 : text.rindex(")")]
            fields = text.rsplit(")", 1)[1].split()
            group = next((g for p, g in THREAD_GROUPS.items() if name.startswith(p)), "other")
            seen[(pid, int(tid))] = (group, (int(fields[11]) + int(fields[12])) / tick)


def run_traced(
    cmd: list[str], env: dict[str, str] | None = None
) -> tuple[float, int, dict[str, float]]:
    """Wall seconds, the peak process-tree RSS (KiB) and the CPU seconds of the tree's
    threads by `THREAD_GROUPS` group (JIT compiler, Spark tasks, other), sampled every
    0.2 s: the last 0.2 s of a thread are missed. ``env``: added to the environment."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            env={**clean_env(), **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        peak = [0]
        seen: dict[tuple[int, int], tuple[str, float]] = {}

        def sample() -> None:
            while proc.poll() is None:
                tree, rss = _tree(proc.pid)
                peak[0] = max(peak[0], sum(rss.get(pid, 0) for pid in tree))
                _thread_cpu(tree, seen)
                time.sleep(0.2)

        watcher = threading.Thread(target=sample, daemon=True)
        watcher.start()
        code = proc.wait()
        seconds = time.perf_counter() - started
        watcher.join()
        if code != 0:
            out.seek(0)
            raise RuntimeError(f"{' '.join(cmd)} exited {code}:\n{out.read().decode()[-3000:]}")
    cpu: dict[str, float] = {"jit": 0.0, "tasks": 0.0, "other": 0.0}
    for group, seconds_used in seen.values():
        cpu[group] += seconds_used
    return seconds, peak[0], cpu


def run_sampled(cmd: list[str]) -> tuple[float, int]:
    """Wall seconds and the peak process-tree RSS (KiB, sampled every 0.2 s)."""
    seconds, peak, _ = run_traced(cmd)
    return seconds, peak


def compare(a: Any, b: Any, where: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k in ("score", "plan"):
                continue
            if k not in a or k not in b:
                out.append(f"{where}.{k}: only in one report")
            else:
                out += compare(a[k], b[k], f"{where}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} vs {len(b)} items"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in compare(x, y, f"{where}[{i}]")
        ]
    if isinstance(a, float) or isinstance(b, float):
        ok = math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)
        return [] if ok else [f"{where}: {a} vs {b}"]
    return [] if a == b else [f"{where}: {a} vs {b}"]


def run() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="mrc-bench-score-") as tmp:
        t = Path(tmp)
        snap, plan = t / "snap", t / "plan.json"
        synth_snapshot(snap, BROKERS, RACKS, TOPICS, PER_TOPIC)
        moved = make_plan(snap, plan)
        spark_s, spark_kib = run_sampled(
            [
                cli(), "score", "--snapshot", str(snap), "--plan", str(plan),
                "--master", "local[2]", "--format", "json", "--out", str(t / "spark.json"),
            ]
        )  # fmt: skip
        ref_s, ref_kib = run_sampled(
            [
                sys.executable, str(Path(__file__).with_name("score_ref.py")), str(snap),
                str(plan), "--out", str(t / "ref.json"),
            ]
        )  # fmt: skip
        spark = json.loads((t / "spark.json").read_text())
        ref = json.loads((t / "ref.json").read_text())
    diffs = compare(spark, ref)
    if diffs:
        raise RuntimeError("Spark and the reference disagree:\n" + "\n".join(diffs[:20]))
    partitions = TOPICS * PER_TOPIC
    ratio = spark_s / ref_s
    figures = spark["plans"][0]
    return [
        result(
            f"score {partitions:,} partitions + {moved:,}-partition plan, local[2], wall",
            spark_s,
            "s",
            None,
            f"session start included; {figures['replicas_added']:,} replicas added, "
            f"{spark['baseline']['violations']:,} -> {figures['violations_after']:,} violations",
        ),
        result(
            "score reference (pyarrow + numpy), wall",
            ref_s,
            "s",
            None,
            f"same numbers as Spark; peak RSS {ref_kib / 1024:,.0f} MiB",
        ),
        result("score Spark / reference wall ratio", ratio, "x", RATIO_GOAL),
        result("score peak RSS, driver + JVM", spark_kib / 1024, "MiB", MEMORY_GOAL_MIB),
    ]
