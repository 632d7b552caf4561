"""assign at scale: 1,000,000 partitions on 1,000 brokers, against the scale targets.

Every goal on, the defaults; runs 1-3 on a synthetic cluster (RF 3-5, observers, 5 racks),
each <= 8 GiB peak RSS:

1. fresh assignment: <= 30 s; per-rack, per-(topic, rack) and preferred-leader spread per
   broker <= 1;
2. drain 10 brokers of that result: <= 15 s; replicas added <= 1.02 x the lower bound + 2,
   nothing left on them; balance no worse than before (on the brokers that stay): rack
   spread <= max(1, before), per-(topic, rack) spread <= max(2, before), preferred-leader
   spread <= max(1, before) + 1;
3. --rebalance after adding 10 empty brokers (2 per rack): <= 60 s; replicas added <= 1.02 x
   the lower bound + 2; rack spread <= 1, the other two spreads as for the drain;
4. read the fresh result (a 1,000,000-partition reassignment JSON) as `assign --current`
   reads it, every Kafka rule checked: <= 3 s, median of 3, each in a process of its own
   (interpreter start and imports included);
5. drain 10 brokers (3, 3, 2 and 2 of 4 racks of 250) of a cluster under every kind of
   rule, a snapshot from bench/describe_gen.py's flat_cluster: a third of the topics with a
   topic policy (the topics table's `placement`), a third placed by the default policy
   (given with --default-policy FILE), a third by Kafka's rack-aware assignment (RF 3, the
   4 racks): <= 15 s and <= 4 GiB peak RSS (on 2 cores), and the figures of bench_quality's
   describe cases against their goals: nothing left on the drained brokers, replicas added
   equal to the independent bound, no rack-aware spread grown, no rule broken, leadership
   changes only where forced, nothing changed outside the scope. With the default every
   topic without a policy of its own is under it, the rack-aware third too: those on a
   drained broker must be brought to it, the others break it and are left alone (no
   --repair), as in a cluster that set its default after creating topics. When `assign
   --help` lacks --default-policy the run goes without it (the flag-missing note is in the
   wall-time row) and the default's third is under the rack-aware rule.

Every spread is computed from the plan written (overlaid on the fresh result) with
bench_quality's figures; the lower bound of runs 1-3 is read from mrc-plan's summary, that
of run 5 computed from the partitions the plan touches.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import describe_gen as dgen
from bench_quality import (
    DescribeCase,
    Figures,
    Outcome,
    State,
    added,
    assign_options,
    describe_figures,
    describe_rows,
    exit_row,
    figures,
    overlay,
    read_plan,
)
from harness import Timing, cli, result, run_once, time_command

BROKERS, RACKS, TOPICS, PER_TOPIC = 1_000, 5, 1_000, 1_000
NEW_PER_RACK = 2  # the rebalance adds RACKS x NEW_PER_RACK = 10 brokers
DRAIN = tuple(range(1, 11))
GOAL_FRESH_S, GOAL_DRAIN_S, GOAL_REBALANCE_S = 30.0, 15.0, 60.0
GOAL_READ_S, READ_REPEAT = 3.0, 3
# what `assign --current FILE` does to read a reassignment JSON, alone in a process
READ = "import sys; from placement.io.current import read_current; read_current(sys.argv[1])"
GOAL_MIB = 8 * 1024
# run 5: every kind of rule; drained brokers 3, 3, 2 and 2 of racks r1-r4
MIXED_TOPICS, MIXED_PER_TOPIC = 1_000, 1_000
MIXED_DRAIN = (1, 2, 3, 251, 252, 253, 501, 502, 751, 752)
GOAL_MIXED_S, GOAL_MIXED_MIB = 15.0, 4 * 1024

Racks = dict[str, list[int]]


def _inputs(tmp: Path) -> tuple[Path, Path, Path, Racks, Racks]:
    """inventory, inventory with NEW_PER_RACK new brokers per rack, topics (from a synthetic
    snapshot), and the racks of both inventories."""
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
        for _ in range(NEW_PER_RACK):
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

    def members(rows: list[dict[str, Any]]) -> Racks:
        out: Racks = {}
        for b in rows:
            out.setdefault(b["rack"], []).append(b["id"])
        return out

    return (*paths, members(inv), members(grown))


def _bound(stderr: bytes) -> int | None:
    m = re.search(r"lower bound on added replicas: ([\d,]+)", stderr.decode(errors="replace"))
    return int(m.group(1).replace(",", "")) if m else None


def _time_rows(
    what: str, t: Timing, goal_s: float, detail: str, goal_mib: float = GOAL_MIB
) -> list[dict[str, Any]]:
    return [
        result(f"assign {what}, wall", t.best, "s", goal_s, detail),
        result(f"assign {what}, peak RSS", t.max_rss_kib / 1024, "MiB", goal_mib),
    ]


def _read_row(plan: Path, partitions: int) -> dict[str, Any]:
    """How long `assign --current` takes to read ``plan``, a process per run."""
    t = time_command([sys.executable, "-c", READ, str(plan)], READ_REPEAT)
    return result(
        f"read a {partitions:,}-partition reassignment JSON (median of {READ_REPEAT})",
        t.median,
        "s",
        GOAL_READ_S,
        f"best {t.best:.2f} s; {plan.stat().st_size / 2**20:,.0f} MiB; "
        f"peak RSS {t.max_rss_kib / 1024:,.0f} MiB",
    )


def _moves_row(what: str, before: State, plan: State, t: Timing) -> dict[str, Any]:
    """Replicas the written plan adds, against mrc-plan's lower bound (x 1.02 + 2)."""
    moves = added(before, plan)
    bound = _bound(t.runs[0].stderr)
    if bound is None:
        row = result(f"assign {what}: replicas added", moves, "", None)
        row["error"] = "no 'lower bound on added replicas' in mrc-plan's summary"
        return row
    return result(
        f"assign {what}: replicas added",
        moves,
        "",
        1.02 * bound + 2,
        f"lower bound {bound:,}, gap {100 * (moves - bound) / max(bound, 1):.2f} %",
    )


# figure, its floor and slack: the goal after a plan is max(floor, before) + slack
SPREADS = (
    ("rack spread (replicas/broker)", "worst_rack", 1, 0),
    ("per-(topic, rack) spread", "topic_spread", 2, 0),
    ("preferred-leader spread", "worst_leader", 1, 1),
)


def _spread_rows(
    what: str, f0: Figures | None, f1: Figures, rebalance: bool
) -> list[dict[str, Any]]:
    """Rack, per-(topic, rack) and preferred-leader spread against the targets; f0 is
    the state before on the same brokers (None: a fresh assignment, every choice free)."""
    rows = []
    for name, attr, floor, slack in SPREADS:
        value: int = getattr(f1, attr)
        if f0 is None:
            goal, detail = 1, "fresh: every choice is free"
        else:
            was: int = getattr(f0, attr)
            goal, detail = max(floor, was) + slack, f"before {was}"
            if rebalance and attr == "worst_rack":
                goal = 1
        if attr == "topic_spread":
            detail += f"; uneven (topic, rack) pairs {f1.uneven_pct:.1f} %"
        rows.append(result(f"assign {what}: {name}", value, "", goal, detail))
    return rows


def _mixed_rules_rows(tmp: Path) -> list[dict[str, Any]]:
    """Run 5: drain 10 brokers of a snapshot whose topics are under every kind of rule."""
    cluster = dgen.flat_cluster(MIXED_TOPICS, MIXED_PER_TOPIC, seed=1)
    snap = dgen.write_flat_snapshot(tmp / "mixed", cluster)
    drain = ["--drain", ",".join(map(str, MIXED_DRAIN))]
    plan_path = tmp / "mixed-drain.json"
    cmd = [cli(), "assign", "--current", str(snap), *drain, "--out", str(plan_path)]
    fallback: dgen.Policy | None = dgen.PERF_DEFAULT
    note = "with --default-policy"
    if "--default-policy" in assign_options():
        cmd += ["--default-policy", str(dgen.write_policy(tmp / "default.json", fallback))]
    else:
        fallback, note = None, "flag missing: --default-policy (its third is rack-aware)"
    what = f"--drain {len(MIXED_DRAIN)}, {len(cluster.offsets) - 1:,} partitions, every rule"
    r = run_once(cmd)
    out = Outcome(r.returncode, r.seconds, {}, None, (r.stdout + r.stderr).decode(errors="replace"))
    rows = _time_rows(what, Timing([r]), GOAL_MIXED_S, note, GOAL_MIXED_MIB)
    if r.returncode != 0:
        return [*rows, exit_row(f"assign {what}", out)]
    out.plan = read_plan(plan_path) if plan_path.exists() else {}
    # the partitions the plan may and does touch: the others keep their state
    touched = set(cluster.rows_on(MIXED_DRAIN).tolist()) | {cluster.row(k) for k in out.plan}
    case = DescribeCase(
        f"assign {what}",
        before=cluster.state(sorted(touched)),
        rule_of={t: cluster.policy_of.get(t, fallback) for t in cluster.topics},
        all_racks=cluster.racks,
        inventory=snap,
        current=snap,
        args=drain,
        drained=MIXED_DRAIN,
    )
    return [*rows, *describe_rows(case, out, describe_figures(case, out.plan))]


def run() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="mrc-bench-assign-") as name:
        tmp = Path(name)
        inventory, grown, topics, racks, grown_racks = _inputs(tmp)
        base = [cli(), "assign", "--topics", str(topics)]

        fresh = tmp / "fresh.json"
        t = time_command([*base, "--inventory", str(inventory), "--out", str(fresh)], 1)
        state = read_plan(fresh)
        out += _time_rows(
            f"fresh {len(state):,} partitions / {BROKERS:,} brokers", t, GOAL_FRESH_S, ""
        )
        out += _spread_rows("fresh", None, figures(state, racks, {}), rebalance=False)
        out.append(_read_row(fresh, len(state)))

        drained = tmp / "drain.json"
        t = time_command(
            [
                *base,
                "--inventory",
                str(inventory),
                "--current",
                str(fresh),
                "--drain",
                ",".join(map(str, DRAIN)),
                "--out",
                str(drained),
            ],
            1,
        )
        plan = read_plan(drained)
        after = overlay(state, plan)
        live = {r: [b for b in ids if b not in DRAIN] for r, ids in racks.items()}
        left = sum(1 for reps, _ in after.values() for b in reps if b in DRAIN)
        out += _time_rows(f"--drain {len(DRAIN)} brokers", t, GOAL_DRAIN_S, "")
        out.append(_moves_row("--drain", state, plan, t))
        out.append(result("assign --drain: replicas left on drained brokers", left, "", 0))
        out += _spread_rows(
            "--drain", figures(state, live, {}), figures(after, live, {}), rebalance=False
        )

        rebalanced = tmp / "rebalance.json"
        t = time_command(
            [
                *base,
                "--inventory",
                str(grown),
                "--current",
                str(fresh),
                "--rebalance",
                "--out",
                str(rebalanced),
            ],
            1,
        )
        plan = read_plan(rebalanced)
        new = sum(len(ids) for ids in grown_racks.values()) - BROKERS
        out += _time_rows(f"--rebalance after adding {new} brokers", t, GOAL_REBALANCE_S, "")
        out.append(_moves_row("--rebalance", state, plan, t))
        out += _spread_rows(
            "--rebalance",
            figures(state, grown_racks, {}),
            figures(overlay(state, plan), grown_racks, {}),
            rebalance=True,
        )
        out += _mixed_rules_rows(tmp)
    return out
