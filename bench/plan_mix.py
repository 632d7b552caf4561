"""A plan that touches partitions in every way a reassignment can, for scoring benchmarks.

    .venv/bin/python bench/plan_mix.py SNAPSHOT --partitions N [--seed S] --out PLAN.json

`bench_engines` scores it with Spark and with the DuckDB yardstick: a plan that only moves
replicas (`bench_score.make_plan`) leaves most of the movement and failure figures at one
value, so a wrong rule for role changes, no-ops or changed replica counts would go
unseen. Each of the N partitions (drawn without repetition, seeded: same snapshot and
seed, same bytes) gets one change, in turn:

- ``within_rack``: a replica (sync or observer) replaced by a broker of its own rack;
- ``across_racks``: a replica replaced by a broker of another rack;
- ``leader_swap``: the preferred leader swapped with another sync replica;
- ``role_swap``: a sync replica and an observer trade roles (the last sync replica
  becomes the only observer when there is none);
- ``no_op``: the same replicas and observers;
- ``added``: one more replica, as a sync replica or an observer;
- ``dropped_observers``: every observer removed (the last sync replica when there is none).

Written in the layout `assign` writes (`render_reassignment`), so it is read the way real
plans are.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from placement.io.atomic import write_atomic
from placement.io.reassignment import render_reassignment
from placement.model.assignment import PartitionAssignment

KINDS = (
    "within_rack",
    "across_racks",
    "leader_swap",
    "role_swap",
    "no_op",
    "added",
    "dropped_observers",
)


class Mixer:
    """Applies one kind of change to a partition's (sync, observers)."""

    def __init__(self, rack_of: dict[int, str | None], rng: random.Random) -> None:
        self.rack_of = rack_of
        self.rng = rng
        members: dict[str, list[int]] = {}
        for b, r in sorted(rack_of.items()):
            if r is not None:
                members.setdefault(r, []).append(b)
        self.members = members
        self.everyone = sorted(rack_of)

    def pick(self, pool: list[int], taken: list[int]) -> int | None:
        """A broker of ``pool`` not in ``taken`` (None when there is none)."""
        free = [b for b in pool if b not in taken] if len(pool) <= 2 * len(taken) else None
        if free is not None:
            return self.rng.choice(free) if free else None
        while True:  # the pool is large next to the partition: a few tries at most
            b = self.rng.choice(pool)
            if b not in taken:
                return b

    def move(self, sync: list[int], obs: list[int], same_rack: bool) -> bool:
        reps = sync + obs
        k = self.rng.randrange(len(reps))
        home = self.rack_of.get(reps[k])
        if same_rack and home is not None:
            pool = self.members[home]
        elif home is not None and len(self.members) > 1:
            pool = [b for r, bs in self.members.items() if r != home for b in bs]
        else:
            pool = self.everyone
        new = self.pick(pool, reps)
        if new is None:
            return False
        if k < len(sync):
            sync[k] = new
        else:
            obs[k - len(sync)] = new
        return True

    def apply(self, kind: str, sync: list[int], obs: list[int]) -> bool:
        """Change (sync, obs) in place; False when this partition cannot take ``kind``."""
        if kind in ("within_rack", "across_racks"):
            return self.move(sync, obs, kind == "within_rack")
        if kind == "leader_swap":
            if len(sync) < 2:
                return False
            j = self.rng.randrange(1, len(sync))
            sync[0], sync[j] = sync[j], sync[0]
            return True
        if kind == "role_swap":
            if obs and sync:
                i, j = self.rng.randrange(len(sync)), self.rng.randrange(len(obs))
                sync[i], obs[j] = obs[j], sync[i]
                return True
            if len(sync) < 2:
                return False
            obs.append(sync.pop())
            return True
        if kind == "no_op":
            return True
        if kind == "added":
            new = self.pick(self.everyone, sync + obs)
            if new is None:
                return False
            (obs if obs and self.rng.random() < 0.5 else sync).append(new)
            return True
        if kind == "dropped_observers":
            if obs:
                obs.clear()
                return True
            if len(sync) < 2:
                return False
            sync.pop()
            return True
        raise ValueError(f"unknown kind {kind!r}")


def make_plan_mix(snapshot: Path, out: Path, partitions: int, seed: int = 17) -> Counter[str]:
    """Write a plan touching ``partitions`` partitions of ``snapshot`` (kinds in turn, see
    the module docstring); how many partitions got each kind."""
    brokers = pq.read_table(snapshot / "brokers.parquet", columns=["broker_id", "rack"])
    rack_of = {row["broker_id"]: row["rack"] for row in brokers.to_pylist()}
    parts = pq.read_table(
        snapshot / "partitions", columns=["topic", "partition", "replicas", "observers"]
    )
    if partitions > parts.num_rows:
        raise SystemExit(f"{snapshot} has {parts.num_rows:,} partitions, fewer than {partitions:,}")
    rng = random.Random(seed)
    rows = sorted(rng.sample(range(parts.num_rows), partitions))
    chosen = parts.take(rows).to_pylist()
    mixer = Mixer(rack_of, rng)
    counts: Counter[str] = Counter()
    plan = []
    for i, row in enumerate(chosen):
        obs = list(row["observers"] or [])
        reps = row["replicas"]
        sync = reps[: max(len(reps) - len(obs), 0)]
        kind = KINDS[i % len(KINDS)]
        if not mixer.apply(kind, sync, obs):
            kind = "within_rack" if mixer.apply("within_rack", sync, obs) else "no_op"
        counts[kind] += 1
        plan.append(
            PartitionAssignment(row["topic"], row["partition"], tuple(sync + obs), tuple(obs))
        )
    write_atomic(out, render_reassignment(plan))
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("snapshot", type=Path)
    ap.add_argument("--partitions", type=int, required=True, help="partitions the plan touches")
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    counts = make_plan_mix(args.snapshot, args.out, args.partitions, args.seed)
    print(", ".join(f"{k} {counts[k]:,}" for k in KINDS), file=sys.stderr)


if __name__ == "__main__":
    main()
