"""validate: 3,000 generated placement files, `--help` start-up, peak memory."""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import ROOT, cli, result, time_command

FILES = 3_000
BROKEN_EVERY = 10  # one file in ten carries a typical mistake
SEED = 20_260_101
VALIDATE_GOAL_S = 3.0
# hooks and editors start a process per file: start-up is most of what they wait for
HELP_GOAL_S = 0.2
ONE_FILE_GOAL_S = 0.25

BROKERS = {"us-west": 6, "us-east": 6, "eu-central": 3}
PROMOTION = ["under-min-isr", "under-replicated", "leader-is-observer"]
TEAMS = ["payments", "orders", "search", "identity", "ledger", "logistics", "ads", "ml"]
ENTITIES = ["events", "commands", "changelog", "snapshots", "dlq", "audit", "metrics"]

Policy = dict[str, Any]


def inventory() -> dict[str, Any]:
    brokers, next_id = [], 1
    for rack, count in BROKERS.items():
        for _ in range(count):
            brokers.append({"id": next_id, "rack": rack, "capacity_bytes": 4_000_000_000_000})
            next_id += 1
    controllers = [{"id": 9001 + i, "rack": rack} for i, rack in enumerate(BROKERS)]
    return {"brokers": brokers, "controllers": controllers}


def _entries(counts: dict[str, int]) -> list[dict[str, Any]]:
    return [{"count": n, "constraints": {"rack": rack}} for rack, n in counts.items()]


def valid_policy(rng: random.Random) -> Policy:
    """A policy an operator would really write, sized to fit `BROKERS`."""
    west, east = rng.sample(["us-west", "us-east"], 2)  # either US region may lead
    shape = rng.choices(["stretched", "primary-dr", "three-rack", "overlap"], [5, 3, 2, 1])[0]
    observers: dict[str, int] = {}
    if shape == "stretched":
        replicas = {west: rng.randint(2, 3), east: rng.randint(1, 3)}
        if rng.random() < 0.6:
            observers = {"eu-central": rng.randint(1, 2)}
    elif shape == "primary-dr":
        replicas = {west: 3}
        observers = {east: rng.randint(1, 3)}
        if rng.random() < 0.3:
            observers["eu-central"] = 1
    elif shape == "three-rack":
        replicas = {west: rng.randint(1, 2), east: rng.randint(1, 2), "eu-central": 1}
    else:  # sync replicas and observers sharing racks (IBP 3.3+)
        replicas = {west: 2, east: 2}
        observers = {west: 1, east: 1}
    version = 1 if rng.random() < 0.2 else 2
    policy: Policy = {"version": version, "replicas": _entries(replicas)}
    if observers or rng.random() < 0.2:  # some write "observers": [] explicitly
        policy["observers"] = _entries(observers)
    if version == 2 and rng.random() < 0.7:
        policy["observerPromotionPolicy"] = rng.choice(PROMOTION)
    return policy


def render(policy: Policy) -> str:
    """Hand-written layout: one member per line, one constraint entry per line."""
    members = []
    for key, value in policy.items():
        if isinstance(value, list) and value:
            entries = ",\n".join(f"    {json.dumps(e)}" for e in value)
            members.append(f"  {json.dumps(key)}: [\n{entries}\n  ]")
        else:
            members.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(members) + "\n}\n"


# Typical mistakes, each an error for `validate`; they edit the policy or its text.
def _comment(p: Policy) -> str:
    return render(p).replace("{\n", "{\n  // placement copied from the docs\n", 1)


def _trailing_comma(p: Policy) -> str:
    return render(p).rstrip().removesuffix("}").rstrip() + ",\n}\n"


def _duplicate_key(p: Policy) -> str:
    return render(p).replace("{\n", '{\n  "version": 1,\n', 1)


def _edit(change: Callable[[Policy], None]) -> Callable[[Policy], str]:
    def mistake(p: Policy) -> str:
        change(p)
        return render(p)

    return mistake


def _version_string(p: Policy) -> None:
    p["version"] = str(p["version"])


def _observer_typo(p: Policy) -> None:
    p["observer"] = p.pop("observers", _entries({"eu-central": 1}))


def _count_string(p: Policy) -> None:
    p["replicas"][0]["count"] = str(p["replicas"][0]["count"])


def _promotion_typo(p: Policy) -> None:
    p["version"], p["observerPromotionPolicy"] = 2, "under-min-isrs"


def _v1_promotion(p: Policy) -> None:
    p["version"], p["observerPromotionPolicy"] = 1, "under-min-isr"


def _duplicate_rack(p: Policy) -> None:
    p["replicas"].append(dict(p["replicas"][0]))


def _unknown_rack(p: Policy) -> None:
    p["replicas"][-1]["constraints"]["rack"] = "US-East"


def _too_many(p: Policy) -> None:
    first = p["replicas"][0]
    first["count"] = BROKERS[first["constraints"]["rack"]] + 1


MISTAKES: list[Callable[[Policy], str]] = [
    _comment,
    _trailing_comma,
    _duplicate_key,
    *map(
        _edit,
        [
            _version_string,
            _observer_typo,
            _count_string,
            _promotion_typo,
            _v1_promotion,
            _duplicate_rack,
            _unknown_rack,
            _too_many,
        ],
    ),
]


def generate(root: Path) -> tuple[Path, Path, int]:
    """Write the inventory and `FILES` placement files under ``root``; return the broken count."""
    rng = random.Random(SEED)
    inv = root / "inventory.json"
    inv.write_text(json.dumps(inventory(), indent=2) + "\n", encoding="utf-8")
    placement = root / "placement"
    broken = 0
    for i in range(FILES):
        team = TEAMS[i % len(TEAMS)]
        path = placement / team / f"{team}-{rng.choice(ENTITIES)}-{i:04d}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        policy = valid_policy(rng)
        if i % BROKEN_EVERY == BROKEN_EVERY - 1:
            text = rng.choice(MISTAKES)(policy)
            broken += 1
        else:
            text = render(policy)
        path.write_text(text, encoding="utf-8")
    return inv, placement, broken


def run() -> list[dict[str, Any]]:
    mrc = cli()
    with tempfile.TemporaryDirectory(prefix="mrc-bench-") as tmp:
        inv, placement, broken = generate(Path(tmp))
        cmd = [mrc, "validate", str(placement), "--inventory", str(inv), "--format", "json"]
        big = time_command(cmd, 3, expect=1)
    report = json.loads(big.runs[-1].stdout)
    summary = report["summary"]
    if (summary["files"], summary["invalid_files"]) != (FILES, broken):
        raise RuntimeError(
            f"validate saw {summary['files']} files, {summary['invalid_files']} invalid; "
            f"generated {FILES}, {broken} broken: update the generator or the rules"
        )
    one = time_command(
        [
            mrc,
            "validate",
            str(ROOT / "examples/placement/orders.json"),
            "--inventory",
            str(ROOT / "examples/inventory.json"),
        ],
        7,
    )
    help_ = time_command([mrc, "--help"], 7)
    return [
        result(
            f"validate {FILES:,} files, wall (median of 3)",
            big.median,
            "s",
            VALIDATE_GOAL_S,
            f"best {big.best:.3f} s; all {broken} seeded broken files flagged "
            f"({summary['errors']:,} errors)",
        ),
        result("validate throughput (median run)", FILES / big.median, "files/s"),
        result("validate peak RSS (max of 3)", big.max_rss_kib / 1024, "MiB", detail="ru_maxrss"),
        result(
            "validate 1 file, wall (median of 7)",
            one.median,
            "s",
            ONE_FILE_GOAL_S,
            f"best {one.best:.3f} s; start-up cost per call",
        ),
        result(
            "mrc-plan --help, wall (median of 7)",
            help_.median,
            "s",
            HELP_GOAL_S,
            f"best {help_.best:.3f} s",
        ),
    ]
