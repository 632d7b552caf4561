"""Deterministic, rack-balanced but broker-unbalanced input for rebalance benchmarks.

Standard library only; runs with any python3 (>= 3.8):

    python3 bench/make_rebalance_input.py --partitions 3000 --brokers 30 --racks 3 --rf 3 \\
        --seed 1 --outdir DIR

writes
    DIR/inventory.json  {"brokers": [{"id": 1, "rack": "r1"}, ...]}  (racks r1..rN, round-robin)
    DIR/topics.json     default_placement = rf/racks replicas per rack; topics t00.. with no
                        "placement" of their own, so each one uses default_placement
    DIR/current.json    reassignment JSON (version 1) of the current, unbalanced layout

Every partition has exactly rf/racks replicas in each rack (so no replica has to cross racks),
but within each rack the load per broker is skewed: the last --new-fraction of each rack's
brokers are empty ("recently added"), and the others are picked with random weights between 1
and --skew. Replicas are listed in the policy's rack order (r1 first, so the leader is in r1),
which is the order our planner keeps; rotating it would make every partition "change".

The lower bound on rebalance moves is printed: per rack, with T replicas on n brokers, the
targets are floor(T/n) or ceil(T/n), the T mod n ceil targets going to the most-loaded
brokers, and LB = sum over brokers of max(0, load - target). A move (one replica added to a
partition) lowers at most one broker's excess by one, so no plan that ends balanced per rack
can use fewer moves.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path


def rack_of(broker: int, racks: int) -> str:
    """Broker ids 1..B go round-robin over racks r1..rN."""
    return f"r{(broker - 1) % racks + 1}"


def topic_sizes(partitions: int, topics: int, rng: random.Random) -> list[int]:
    """Split ``partitions`` over ``topics`` with random weights (largest remainder, >= 1 each)."""
    topics = max(1, min(topics, partitions))
    weights = [0.5 + rng.random() for _ in range(topics)]
    spare = partitions - topics
    scale = spare / sum(weights)
    exact = [w * scale for w in weights]
    sizes = [1 + int(e) for e in exact]
    order = sorted(range(topics), key=lambda i: (int(exact[i]) - exact[i], i))
    for i in order[: partitions - sum(sizes)]:
        sizes[i] += 1
    return sizes


def generate(
    partitions: int,
    brokers: int,
    racks: int,
    rf: int,
    seed: int,
    topics: int = 30,
    new_fraction: float = 0.2,
    skew: float = 4.0,
) -> tuple[dict, dict, dict]:
    """Return (inventory, topics, current) documents."""
    if racks < 1 or brokers < racks:
        raise ValueError("need at least one broker per rack")
    if rf < 1 or rf % racks:
        raise ValueError(f"--rf must be a positive multiple of --racks ({racks})")
    per_rack = rf // racks
    rng = random.Random(seed)
    rack_names = [f"r{i + 1}" for i in range(racks)]
    members = {r: [b for b in range(1, brokers + 1) if rack_of(b, racks) == r] for r in rack_names}
    pools: dict[str, tuple[list[int], list[float]]] = {}
    for r, ids in members.items():
        new = min(len(ids) - per_rack, round(len(ids) * new_fraction))
        old = ids[: len(ids) - max(0, new)]
        if len(old) < per_rack:
            raise ValueError(f"rack {r} has fewer than rf/racks = {per_rack} brokers")
        pools[r] = (old, [1.0 + rng.random() * (skew - 1.0) for _ in old])

    names = [f"t{i:02d}" for i in range(max(1, min(topics, partitions)))]
    sizes = topic_sizes(partitions, len(names), rng)
    rows = []
    for t, name in enumerate(names):
        for p in range(sizes[t]):
            replicas: list[int] = []
            for k in range(racks):
                old, weights = pools[rack_names[k]]
                chosen: list[int] = []
                while len(chosen) < per_rack:
                    b = rng.choices(old, weights)[0]
                    if b not in chosen:
                        chosen.append(b)
                replicas.extend(chosen)
            # Leader first: one replica of each rack in policy order, then the next round.
            ordered = [replicas[k * per_rack + j] for j in range(per_rack) for k in range(racks)]
            rows.append({"topic": name, "partition": p, "replicas": ordered})

    inventory = {
        "brokers": [{"id": b, "rack": rack_of(b, racks)} for b in range(1, brokers + 1)],
    }
    topics_doc = {
        "default_placement": {
            "version": 2,
            "replicas": [{"count": per_rack, "constraints": {"rack": r}} for r in rack_names],
        },
        "topics": [{"name": t, "partitions": sizes[i]} for i, t in enumerate(names)],
    }
    current = {"version": 1, "partitions": rows}
    return inventory, topics_doc, current


def broker_loads(inventory: dict, current: dict) -> dict[int, int]:
    """Replicas per inventory broker (brokers with none count 0)."""
    loads = {int(b["id"]): 0 for b in inventory["brokers"]}
    counts = Counter(int(b) for p in current["partitions"] for b in p["replicas"])
    for b, c in counts.items():
        loads[b] = loads.get(b, 0) + c
    return loads


def lower_bound(inventory: dict, current: dict) -> int:
    """Fewest replica moves that leave every rack's brokers within floor/ceil of its mean."""
    loads = broker_loads(inventory, current)
    rack = {int(b["id"]): b.get("rack") for b in inventory["brokers"]}
    by_rack: dict[object, list[int]] = {}
    for b, load in loads.items():
        by_rack.setdefault(rack.get(b), []).append(load)
    total = 0
    for values in by_rack.values():
        values.sort(reverse=True)
        q, extra = divmod(sum(values), len(values))
        for i, load in enumerate(values):
            total += max(0, load - (q + 1 if i < extra else q))
    return total


def spread(inventory: dict, loads: dict[int, int]) -> dict[str, list[int]]:
    """Per rack: [min, max] replicas per broker."""
    out: dict[str, list[int]] = {}
    for b in inventory["brokers"]:
        r = str(b.get("rack"))
        load = loads.get(int(b["id"]), 0)
        lo, hi = out.get(r, [load, load])
        out[r] = [min(lo, load), max(hi, load)]
    return dict(sorted(out.items()))


def _write(path: Path, doc: dict, one_per_line: str | None = None) -> None:
    if one_per_line is None:
        text = json.dumps(doc, indent=2) + "\n"
    else:
        head = {k: v for k, v in doc.items() if k != one_per_line}
        lines = ",\n".join(json.dumps(x, separators=(",", ":")) for x in doc[one_per_line])
        prefix = json.dumps(head)[:-1] + (", " if head else "")
        text = f'{prefix}"{one_per_line}": [\n{lines}\n]}}\n'
    path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--partitions", type=int, default=3000)
    ap.add_argument("--brokers", type=int, default=30)
    ap.add_argument("--racks", type=int, default=3)
    ap.add_argument("--rf", type=int, default=3)
    ap.add_argument("--topics", type=int, default=30, help="number of topics (default 30)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--new-fraction",
        type=float,
        default=0.2,
        help="fraction of each rack's brokers left empty (default 0.2)",
    )
    ap.add_argument(
        "--skew",
        type=float,
        default=4.0,
        help="other brokers get random weights in [1, skew] (default 4)",
    )
    ap.add_argument("--outdir", required=True)
    args = ap.parse_args(argv)
    try:
        inventory, topics_doc, current = generate(
            args.partitions,
            args.brokers,
            args.racks,
            args.rf,
            args.seed,
            args.topics,
            args.new_fraction,
            args.skew,
        )
    except ValueError as exc:
        ap.error(str(exc))
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    _write(out / "inventory.json", inventory, "brokers")
    _write(out / "topics.json", topics_doc)
    _write(out / "current.json", current, "partitions")
    loads = broker_loads(inventory, current)
    print(
        f"wrote {out}/inventory.json, topics.json, current.json: "
        f"{len(current['partitions'])} partitions, {len(topics_doc['topics'])} topics, "
        f"{len(loads)} brokers, {args.racks} racks, rf {args.rf}"
    )
    print(f"replicas per broker, [min, max] by rack: {spread(inventory, loads)}")
    print(f"lower_bound_moves: {lower_bound(inventory, current)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
