"""Plan quality: what `assign` leaves, scenario by scenario, against the targets.

In the default set (`make bench`). Each goal is one of the targets, not what today's
planner happens to reach: a missed goal is a gap still open. Run alone:

    .venv/bin/python bench/run.py quality                       # 30,000 partitions
    MRC_BENCH_QUALITY_PEER_PARTITIONS=0 .venv/bin/python bench/run.py quality   # no peers
    MRC_BENCH_QUALITY_DESCRIBE_PARTITIONS=20000 .venv/bin/python bench/run.py quality
                              # describe clusters of 20,000 partitions (default 1,000; 0: none)
    .venv/bin/python bench/bench_quality.py --large              # 200,000 partitions
    MRC_BENCH_QUALITY_PARTITIONS=46000 .venv/bin/python bench/run.py quality   # any size

Clusters come from bench/quality_gen.py (seeded): 6 racks of 12/10/9/8/7/5 brokers, v1 and v2
policies with observers (RF 3-6), heavy-tailed partition counts per topic and partition sizes.
Every figure is computed here from the files mrc-plan writes (the plan overlaid on the input
state), never from its summary; mrc-plan's own bounds are read from its output and shown
next to a simple independent bound. When `assign --help` lists `--summary`, every run writes
the JSON summary too, and a row counts where its replicas_added and leadership_changes disagree
with the written plan and election files. Scenarios:

- policy change: three policies lose one sync replica in a rack that holds two; the cluster
  starts balanced (replicas, topics and leaders per broker within one). Then the same state
  through --rebalance (two steps), against the bound of one --rebalance from the original.
- drain: three brokers (racks r1, r3, r6) drained; dead: two brokers missing from the
  inventory; drain + --balance-leaders.
- scale-out + --rebalance: five new brokers (r1 +2, r3 +2, r5 +1).
- skewed + --rebalance: a valid but skewed start (random broker weights, a fifth nearly
  empty), by counts (reassignment JSON) and by bytes (snapshot with sizes, --tolerance 0.1).
- capacity: the balanced cluster with sizes, capacity_bytes set so that the drain fits under
  the default --max-disk-usage 0.85 (rack mean after the drain at 75 % of capacity_bytes, and
  every broker that stays below 85 % at the start), and a variant whose rack r6 cannot hold
  its bytes even at 100 % (mean after the drain at 105 % of capacity_bytes): the goal is exit 1.
- from describe output (bench/describe_gen.py, about 1,000 partitions each): what a real
  cluster hands mrc-plan, `kafka-topics --describe` text and an inventory, with no topics
  file but for a policy change. A plain Apache cluster (3 racks, RF 2-4, no policy at all,
  placed by Kafka's rack-aware assignment, `__consumer_offsets` included, a few partitions
  moved by hand into a rack that already holds one) and a mixed Confluent one (4 racks: topic
  policies with observers, topics placed by the default policy, topics with none), the mixed
  one run with `--default-policy FILE` (without the rack-aware topics, which would break the
  default) and without (every topic lacking a policy under the rack-aware rule). Cases: drain
  of 2 brokers of one rack; 2 dead brokers (absent from the inventory, offline in the
  describe output); a topics file setting one topic's policy (with `partitions` only while
  the schema requires it); drain + --balance-leaders; on the plain cluster also --repair and
  drain + --only-topics. A case whose option `assign --help` lacks is a "flag missing" row.

Figures: violations (policy counts per rack, observers last, leader a sync replica, nothing
on a drained or absent broker); replicas added vs max(mrc-plan's bound, an independent one:
per partition the replicas each rack lacks on live brokers, plus for rebalances the floor /
ceil excess per rack); rack spread (max - min replicas per broker of a rack, the worst rack);
topic spread (the same per (topic, rack)) and the share of uneven (topic, rack) pairs
(spread > 1); leader spread per lead rack; leadership changes (first replica changed) against
the forced ones (old leader gone, or its rack no longer holds sync replicas); bytes and
replicas per broker vs the rack mean; brokers above 85 % of capacity_bytes (above 100 % with an
mrc-plan that has no --max-disk-usage yet); wall time.

Figures of the describe cases, each topic under its rule (its topic policy, else the
default, else Kafka's rack-aware rule: no broker twice, at most ceil(RF / racks) per rack,
rack counts as even as the racks allow): replicas left on drained or dead brokers (0; a
partition with every replica dead has nothing to copy from and is left out); replicas added
against an independent lower bound (equal), summed over the partitions in scope (a replica
on a drained or dead broker, a topic the topics file sets, a broken partition under
--repair, all restricted by --only-topics): per rack the policy's count minus the live
brokers held there, or for the rack-aware rule RF minus the most live replicas a valid rack
spread keeps; rack-aware partitions whose rack spread (max - min replicas over racks) grew
(0); partitions breaking their rule after, among those in scope or valid before (0: a
broken partition out of scope is left alone and only counted in the detail); leadership
changes (first replica changed) against the unavoidable ones (old leader on a drained or
dead broker, or in a rack its policy gives no sync replica): equal, and with
--balance-leaders at most 1.02 x + 2 the fewest changes that put preferred leaders within
floor / ceil of the mean over the brokers holding sync replicas (exact: a min-cost flow
over the plan's sync replicas), with that spread after (at most 1); partitions changed
outside the scope (0; with --balance-leaders a leader-only reorder is in scope).

Peers, on what they can express (RF 3, one replica per rack, no observers, 3 racks of
10/8/6 brokers, 6,000 partitions): Yelp kafka-utils 4.1.0 (bench/kafka_utils_ref.py,
PartitionCountBalancer with replication groups: rebalance, decommission) and LinkedIn
kafka-tools 0.1.9 (bench/kafka_tools_ref.py: `kafka-assigner balance -t count rackaware`,
`remove -b`), each in its own venv that `make bench` installs (.venv-kafka-utils and
.venv-kafka-tools: kafka-tools builds from the sdist and runs offline on Python 3.11, but
imports `six` without declaring it). A peer whose venv is missing is reported as skipped.
Wall time is the whole process for every tool (interpreter start and file reading
included). The peer target, on each case kafka-utils runs: mrc-plan's topic spread, leader
spread and moves at most kafka-utils' (the goal of each row is kafka-utils' figure) and
mrc-plan's time at most 20 % of kafka-utils' (5x faster). kafka-tools' figures stand beside
them, without goals; every tool's own row lists its violations, moves, spreads, leadership
changes and time.
On the plain describe cluster kafka-utils runs beside mrc-plan where it can: `decommission`
for the drain and the dead brokers (inactive in its topology), then `rebalance --leaders`
for the drain + --balance-leaders case; its row (no goal) holds the same figures. It has no
placement policies, so the policy change is a skipped row.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import describe_gen as dgen
import quality_gen as gen
from harness import ROOT, cli, result, run_once

PARTITIONS = int(os.environ.get("MRC_BENCH_QUALITY_PARTITIONS", "30000"))
PEER_PARTITIONS = int(os.environ.get("MRC_BENCH_QUALITY_PEER_PARTITIONS", "6000"))
DESCRIBE_PARTITIONS = int(os.environ.get("MRC_BENCH_QUALITY_DESCRIBE_PARTITIONS", "1000"))
ONLY_TOPICS = "topic-00[0-9]"  # --only-topics: a whole-name match, ten topics
SEED = 1
TOLERANCE = 0.1
MAX_DISK_USAGE = 0.85  # mrc-plan's default --max-disk-usage
KU_PY = ROOT / ".venv-kafka-utils" / "bin" / "python"
KT_PY = ROOT / ".venv-kafka-tools" / "bin" / "python"

Key = gen.Key
State = gen.State


# ---- reading what was written ---------------------------------------------------------


def read_plan(path: Path) -> State:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return {
        (p["topic"], int(p["partition"])): (
            tuple(int(r) for r in p["replicas"]),
            tuple(int(r) for r in p.get("observers") or ()),
        )
        for p in doc["partitions"]
    }


def overlay(before: State, plan: State) -> State:
    after = dict(before)
    after.update(plan)
    return after


# ---- figures ---------------------------------------------------------------------------


def _spread(values: list[int]) -> int:
    return max(values) - min(values) if values else 0


def _targets_excess(loads: list[int]) -> int:
    """Fewest unit moves off these brokers that leave them within floor/ceil of the mean."""
    values = sorted(loads, reverse=True)
    q, extra = divmod(sum(values), len(values))
    return sum(max(0, v - (q + 1 if i < extra else q)) for i, v in enumerate(values))


@dataclass
class Figures:
    rack_spread: dict[str, int]
    topic_spread: int
    uneven_pct: float
    leader_spread: dict[str, int]
    replicas: dict[int, int]
    leaders: dict[int, int]
    bytes: dict[int, int] = field(default_factory=dict)

    @property
    def worst_rack(self) -> int:
        return max(self.rack_spread.values(), default=0)

    @property
    def worst_leader(self) -> int:
        return max(self.leader_spread.values(), default=0)


def figures(state: State, live_racks: dict[str, list[int]], sizes: dict[Key, int]) -> Figures:
    rack_of = {b: r for r, ids in live_racks.items() for b in ids}
    replicas: Counter[int] = Counter()
    leaders: Counter[int] = Counter()
    nbytes: Counter[int] = Counter()
    per_topic: dict[tuple[str, str], Counter[int]] = defaultdict(Counter)
    for (t, p), (reps, _obs) in state.items():
        if reps:
            leaders[reps[0]] += 1
        size = sizes.get((t, p), 0)
        for b in reps:
            replicas[b] += 1
            nbytes[b] += size
            r = rack_of.get(b)
            if r is not None:
                per_topic[(t, r)][b] += 1
    rack_spread = {r: _spread([replicas[b] for b in ids]) for r, ids in live_racks.items()}
    lead_racks = {rack_of[b] for b in leaders if b in rack_of}
    leader_spread = {r: _spread([leaders[b] for b in live_racks[r]]) for r in sorted(lead_racks)}
    spreads = [_spread([c[b] for b in live_racks[r]]) for (_t, r), c in per_topic.items()]
    uneven = 100 * sum(s > 1 for s in spreads) / max(1, len(spreads))
    live = set(rack_of)
    return Figures(
        rack_spread,
        max(spreads, default=0),
        uneven,
        leader_spread,
        {b: replicas[b] for b in live},
        {b: leaders[b] for b in live},
        {b: nbytes[b] for b in live},
    )


def violations(state: State, policy_of: dict[str, gen.Policy], rack_of: dict[int, str]) -> int:
    """Partitions breaking their policy; rack_of holds only the brokers that may keep replicas."""
    bad = 0
    for (t, _p), (reps, obs) in state.items():
        pol = policy_of.get(t)
        if pol is None:
            continue
        need_sync, need_obs = pol.need()
        sync = reps[: len(reps) - len(obs)]
        wrong = (
            len(set(reps)) != len(reps)
            or any(b not in rack_of for b in reps)
            or set(reps[len(reps) - len(obs) :]) != set(obs)
            or Counter(rack_of.get(b) for b in sync) != need_sync
            or Counter(rack_of.get(b) for b in obs) != need_obs
        )
        bad += wrong
    return bad


def repair_bound(before: State, policy_of: dict[str, gen.Policy], rack_of: dict[int, str]) -> int:
    """Per partition, the replicas each rack needs beyond those already on its live brokers."""
    total = 0
    for (t, _p), (reps, _obs) in before.items():
        pol = policy_of.get(t)
        if pol is None:
            continue
        need_sync, need_obs = pol.need()
        have = Counter(rack_of[b] for b in set(reps) if b in rack_of)
        total += sum(max(0, need_sync[r] + need_obs[r] - have[r]) for r in {*need_sync, *need_obs})
    return total


def balance_bound(before: State, live_racks: dict[str, list[int]]) -> int:
    load = Counter(b for reps, _ in before.values() for b in reps)
    return sum(_targets_excess([load[b] for b in ids]) for ids in live_racks.values())


def leader_bound(
    before: State, after: State, live_racks: dict[str, list[int]], forced: set[Key]
) -> int:
    """Forced changes plus, per lead rack, the leaders above floor/ceil that must go."""
    rack_of = {b: r for r, ids in live_racks.items() for b in ids}
    kept = Counter(reps[0] for k, (reps, _) in before.items() if k not in forced and reps)
    totals = Counter(rack_of.get(reps[0]) for reps, _ in after.values() if reps)
    excess = 0
    for r, ids in live_racks.items():
        if totals[r]:
            loads = sorted((kept[b] for b in ids), reverse=True)
            q, extra = divmod(totals[r], len(ids))
            excess += sum(max(0, v - (q + 1 if i < extra else q)) for i, v in enumerate(loads))
    return len(forced) + excess


def added(before: State, plan: State) -> int:
    """Replicas added by the plan (partitions changed count as their new brokers)."""
    n = 0
    for k, (reps, _) in plan.items():
        n += len(set(reps) - set(before[k][0]))
    return n


def bytes_added(before: State, plan: State, sizes: dict[Key, int]) -> int:
    return sum(
        len(set(reps) - set(before[k][0])) * sizes.get(k, 0) for k, (reps, _) in plan.items()
    )


def ratio_to_rack_mean(values: dict[int, int], live_racks: dict[str, list[int]]) -> float:
    worst = 0.0
    for ids in live_racks.values():
        mean = sum(values[b] for b in ids) / len(ids)
        if mean:
            worst = max(worst, max(values[b] for b in ids) / mean)
    return worst


# ---- running mrc-plan ------------------------------------------------------------------


@functools.cache
def assign_options() -> frozenset[str]:
    """The long options `mrc-plan assign --help` lists: --summary and --max-disk-usage are new,
    so the benchmark asks once and measures what the installed mrc-plan has."""
    r = run_once([cli(), "assign", "--help"])
    return frozenset(re.findall(r"--[a-z][a-z-]*[a-z]", r.stdout.decode(errors="replace")))


def disk_usage_limit() -> float:
    """The share of capacity_bytes a plan may fill: 1.0 before --max-disk-usage exists."""
    return MAX_DISK_USAGE if "--max-disk-usage" in assign_options() else 1.0


@dataclass
class Outcome:
    rc: int
    seconds: float
    plan: State
    election: int | None
    text: str
    plan_bytes: bytes = b""
    summary: dict[str, Any] | None = None  # --summary's JSON, when mrc-plan wrote one

    def bound(self) -> int | None:
        m = re.search(r"lower bound on added replicas: (\d+)", self.text)
        return int(m.group(1)) if m else None

    def bytes_bound(self) -> int | None:
        m = re.search(r"had to leave their broker: >= ([\d,]+)", self.text)
        return int(m.group(1).replace(",", "")) if m else None

    def leader_summary(self) -> tuple[int | None, int | None]:
        m = re.search(r"leadership changes: (\d+)(?:.*lower bound (\d+))?", self.text)
        if not m:
            return None, None
        return int(m.group(1)), (int(m.group(2)) if m.group(2) else None)


def mrc_assign(
    work: Path, inventory: Path, topics: Path | None, current: Path, args: list[str]
) -> Outcome:
    """`mrc-plan assign` on these inputs; no topics file with describe output as --current
    (the cluster's own policies then stand)."""
    plan_path, election = work / "plan.json", work / "election.json"
    summary = work / "summary.json"
    for p in (plan_path, election, summary):
        p.unlink(missing_ok=True)
    if "--summary" in assign_options():
        args = [*args, "--summary", str(summary)]
    cmd = [cli(), "assign", "--inventory", str(inventory), "--current", str(current)]
    if topics is not None:
        cmd += ["--topics", str(topics)]
    cmd += ["--out", str(plan_path), "--election", str(election), *args]
    r = run_once(cmd)
    text = (r.stdout + r.stderr).decode(errors="replace")
    if r.returncode != 0:
        return Outcome(r.returncode, r.seconds, {}, None, text)
    elections = None
    if election.exists():
        elections = len(json.loads(election.read_text(encoding="utf-8"))["partitions"])
    said = json.loads(summary.read_text(encoding="utf-8")) if summary.exists() else None
    return Outcome(
        r.returncode,
        r.seconds,
        read_plan(plan_path) if plan_path.exists() else {},  # no file: nothing to do
        elections,
        text,
        plan_path.read_bytes() if plan_path.exists() else b"",
        said,
    )


def exit_row(name: str, out: Outcome) -> dict[str, Any]:
    tail = out.text.strip().splitlines()[-1:] or [""]
    return result(f"{name}: mrc-plan exit code", out.rc, "", 0, tail[0][:160])


# ---- scenarios -------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    before: State
    racks: dict[str, list[int]]  # inventory racks
    policy_of: dict[str, gen.Policy]  # the policies of --topics
    inventory: Path
    topics: Path
    current: Path
    args: list[str]
    drained: tuple[int, ...] = ()
    sizes: dict[Key, int] = field(default_factory=dict)
    capacity: dict[int, int] = field(default_factory=dict)
    bound_from: int | None = None  # a bound from another run (policy change, two steps)
    moves_before: int = 0  # moves already spent by an earlier step

    @property
    def live_racks(self) -> dict[str, list[int]]:
        return {r: [b for b in ids if b not in self.drained] for r, ids in self.racks.items()}

    @property
    def rebalance(self) -> bool:
        return "--rebalance" in self.args

    @property
    def balance_leaders(self) -> bool:
        return "--balance-leaders" in self.args


def forced_leader_changes(case: Case) -> set[Key]:
    live = {b: r for r, ids in case.live_racks.items() for b in ids}
    out = set()
    for k, (reps, _) in case.before.items():
        pol = case.policy_of.get(k[0])
        if pol is None or not reps:
            continue
        need_sync, _ = pol.need()
        if reps[0] not in live or need_sync[live[reps[0]]] == 0:
            out.add(k)
    return out


def summary_row(name: str, out: Outcome, replicas_added: int, changes: int) -> dict[str, Any]:
    """How many of the JSON summary's counts differ from what the written files contain."""
    if "--summary" not in assign_options():
        return result(name, 0, "", None, "skipped: `assign --help` lists no --summary yet")
    if out.summary is None:
        return result(name, 1, "", 0, "--summary given, no file written")
    checks = [
        ("replicas_added", replicas_added, "the plan"),
        ("leadership_changes", changes, "the plan"),
    ]
    if out.election is not None:
        checks.append(("leadership_changes", out.election, "the election file"))
    wrong = []
    for key, truth, where in checks:
        said = out.summary.get(key)
        if said != truth:
            wrong.append(f"{key} {said} vs {truth:,} in {where}")
    detail = "; ".join(wrong) or ", ".join(f"{k} {v:,}" for k, v, _ in checks[:2])
    return result(name, len(wrong), "", 0, detail)


def measure(case: Case, out: Outcome) -> list[dict[str, Any]]:
    n = case.name
    rows: list[dict[str, Any]] = []
    if out.rc != 0:
        return [exit_row(n, out)]
    after = overlay(case.before, out.plan)
    live = case.live_racks
    rack_of = {b: r for r, ids in live.items() for b in ids}
    f0 = figures(case.before, live, case.sizes)
    f1 = figures(after, live, case.sizes)
    rows.append(
        result(f"{n}: policy violations after", violations(after, case.policy_of, rack_of), "", 0)
    )
    moves = added(case.before, out.plan)
    moves += case.moves_before
    ours = repair_bound(case.before, case.policy_of, rack_of)
    if case.rebalance and ours == 0:
        ours = balance_bound(case.before, live)
    theirs = out.bound() if case.bound_from is None else case.bound_from
    # two steps are held to the bound of one run from the original state
    bound = max(ours, theirs or 0) if case.bound_from is None else case.bound_from
    if not case.sizes or case.capacity:
        rows.append(
            result(
                f"{n}: replicas added",
                moves,
                "",
                1.02 * bound + 2,
                (
                    f"bound of one --rebalance from the original state {bound:,}; this step "
                    f"{moves - case.moves_before:,} (mrc-plan bound {out.bound()}, "
                    f"independent {ours:,}) after {case.moves_before:,}"
                )
                if case.bound_from is not None
                else f"bound {bound:,} (mrc-plan {theirs if theirs is not None else '-'}, "
                f"independent {ours:,})",
            )
        )
    # bytes mode balances bytes; its replica counts are held to 1.10 x the rack mean below
    rack_goal = 1 if case.rebalance and not case.sizes else max(1, f0.worst_rack)
    rows.append(
        result(
            f"{n}: rack spread (replicas/broker)",
            f1.worst_rack,
            "",
            rack_goal,
            f"before {f0.worst_rack}; after by rack "
            + " ".join(f"{r}:{v}" for r, v in sorted(f1.rack_spread.items())),
        )
    )
    rows.append(
        result(
            f"{n}: per-(topic, rack) spread",
            f1.topic_spread,
            "",
            max(2, f0.topic_spread),
            f"before {f0.topic_spread}",
        )
    )
    rows.append(
        result(
            f"{n}: uneven (topic, rack) pairs",
            f1.uneven_pct,
            "%",
            f0.uneven_pct + 1,
            f"before {f0.uneven_pct:.1f} %",
        )
    )
    lead_goal = 1 if case.balance_leaders else max(1, f0.worst_leader) + 1
    rows.append(
        result(
            f"{n}: preferred-leader spread",
            f1.worst_leader,
            "",
            lead_goal,
            f"before {f0.worst_leader}; after by rack "
            + " ".join(f"{r}:{v}" for r, v in sorted(f1.leader_spread.items())),
        )
    )
    changes = sum(1 for k, (reps, _) in out.plan.items() if reps[0] != case.before[k][0][0])
    forced = forced_leader_changes(case)
    said, said_bound = out.leader_summary()
    if case.balance_leaders:
        lb = leader_bound(case.before, after, live, forced)
        best = max(lb, said_bound or 0)
        rows.append(
            result(
                f"{n}: leadership changes",
                changes,
                "",
                1.02 * best + 2,
                f"bound {best:,} (independent {lb:,}, mrc-plan {said_bound}); "
                f"summary says {said}, election file lists {out.election}",
            )
        )
    else:
        rows.append(
            result(
                f"{n}: leadership changes",
                changes,
                "",
                len(forced),
                f"forced {len(forced):,}; election file lists {out.election}",
            )
        )
    rows.append(
        summary_row(
            f"{n}: summary disagrees with the files", out, added(case.before, out.plan), changes
        )
    )
    if case.sizes:
        bmoved = bytes_added(case.before, out.plan, case.sizes)
        over = sum(
            max(0.0, f0.bytes[b] - (1 + TOLERANCE) * sum(f0.bytes[x] for x in ids) / len(ids))
            for ids in live.values()
            for b in ids
        )
        if case.rebalance:
            bb = max(int(over), out.bytes_bound() or 0)
            rows.append(
                result(
                    f"{n}: bytes moved (GiB)",
                    bmoved / 2**30,
                    "GiB",
                    1.05 * bb / 2**30,
                    f"bound {bb / 2**30:,.1f} GiB (mrc-plan "
                    f"{(out.bytes_bound() or 0) / 2**30:,.1f}, independent {over / 2**30:,.1f})",
                )
            )
            rows.append(
                result(
                    f"{n}: max bytes/broker vs rack mean",
                    100 * ratio_to_rack_mean(f1.bytes, live),
                    "%",
                    100 * (1 + TOLERANCE),
                    f"before {100 * ratio_to_rack_mean(f0.bytes, live):.0f} %",
                )
            )
            rows.append(
                result(
                    f"{n}: max replicas/broker vs rack mean",
                    100 * ratio_to_rack_mean(f1.replicas, live),
                    "%",
                    110,
                    f"before {100 * ratio_to_rack_mean(f0.replicas, live):.0f} %",
                )
            )
        if case.capacity:
            limit = disk_usage_limit()
            high = [b for b in rack_of if f1.bytes[b] > limit * case.capacity[b]]
            full = [b for b in rack_of if f1.bytes[b] > case.capacity[b]]
            worst = max(f1.bytes[b] / case.capacity[b] for b in rack_of)
            rows.append(
                result(
                    f"{n}: brokers above {100 * limit:.0f} % of capacity_bytes",
                    len(high),
                    "",
                    0,
                    f"worst at {100 * worst:.0f} % of capacity; {len(full)} above 100 %; "
                    f"{bmoved / 2**30:,.0f} GiB moved"
                    + ("" if limit < 1 else "; mrc-plan has no --max-disk-usage yet"),
                )
            )
    rows.append(result(f"{n}: wall time", out.seconds, "s", None, ""))
    return rows


# ---- building the inputs ---------------------------------------------------------------


def _bytes_per_broker(state: State, sizes: dict[Key, int]) -> Counter[int]:
    out: Counter[int] = Counter()
    for k, (reps, _) in state.items():
        for b in reps:
            out[b] += sizes[k]
    return out


def quality_rows(tmp: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    base = gen.generate(PARTITIONS, SEED, layout="balanced")
    skew = gen.generate(PARTITIONS, SEED + 1, layout="skewed")
    d = tmp / "base"
    inv = gen.write_json(d / "inventory.json", gen.inventory_doc(base.racks))
    topics = gen.write_topics(d, base)
    cur = gen.write_current(d / "current.json", base.state)
    new_policy = {t: gen.CHANGED.get(p.name, p) for t, p in base.policy_of.items()}
    topics_new = gen.write_topics(tmp / "changed", base, new_policy)
    work = tmp / "work"
    work.mkdir()

    def go(case: Case) -> Outcome:
        out = mrc_assign(work, case.inventory, case.topics, case.current, case.args)
        rows.extend(measure(case, out))
        print(f"  {case.name}: exit {out.rc}, {out.seconds:.1f} s", file=sys.stderr, flush=True)
        return out

    common: dict[str, Any] = {
        "racks": base.racks,
        "inventory": inv,
        "current": cur,
        "before": base.state,
    }
    # policy change, then --rebalance; and the bound of a single --rebalance
    pc = Case("policy change", policy_of=new_policy, topics=topics_new, args=[], **common)
    out = go(pc)
    one = mrc_assign(work, inv, topics_new, cur, ["--rebalance", "--seed", "0"])
    step1 = overlay(base.state, out.plan)
    step1_path = gen.write_current(tmp / "changed" / "step1.json", step1)
    go(
        Case(
            "policy change, then --rebalance",
            before=step1,
            racks=base.racks,
            policy_of=new_policy,
            inventory=inv,
            topics=topics_new,
            current=step1_path,
            args=["--rebalance"],
            bound_from=one.bound(),
            moves_before=added(base.state, out.plan),
        )
    )
    rows.append(
        result(
            "policy change in one --rebalance: replicas added",
            added(base.state, one.plan),
            "",
            1.02 * (one.bound() or 0) + 2,
            f"mrc-plan bound {one.bound()} (drops are free: no independent bound); "
            f"exit {one.rc}, {one.seconds:.1f} s",
        )
    )
    drained = (base.racks["r1"][0], base.racks["r3"][0], base.racks["r6"][0])
    drain_arg = ["--drain", ",".join(map(str, drained))]
    first = go(
        Case(
            "drain 3",
            policy_of=base.policy_of,
            topics=topics,
            args=drain_arg,
            drained=drained,
            **common,
        )
    )
    again = mrc_assign(work, inv, topics, cur, drain_arg)
    rows.append(
        result(
            "drain 3, run twice: plans differ (0 = byte-identical)",
            int(first.plan_bytes != again.plan_bytes),
            "",
            0,
        )
    )
    dead = (base.racks["r2"][0], base.racks["r4"][0])
    alive = {r: [b for b in ids if b not in dead] for r, ids in base.racks.items()}
    inv_dead = gen.write_json(tmp / "dead" / "inventory.json", gen.inventory_doc(alive))
    go(
        Case(
            "dead brokers 2",
            before=base.state,
            racks=alive,
            policy_of=base.policy_of,
            inventory=inv_dead,
            topics=topics,
            current=cur,
            args=[],
        )
    )
    grown = {r: list(ids) for r, ids in base.racks.items()}
    nxt = 1000
    for r, extra in (("r1", 2), ("r3", 2), ("r5", 1)):
        grown[r] += list(range(nxt, nxt + extra))
        nxt += extra
    inv_grown = gen.write_json(tmp / "grown" / "inventory.json", gen.inventory_doc(grown))
    go(
        Case(
            "scale-out +5, --rebalance",
            before=base.state,
            racks=grown,
            policy_of=base.policy_of,
            inventory=inv_grown,
            topics=topics,
            current=cur,
            args=["--rebalance"],
        )
    )
    go(
        Case(
            "drain 3, --balance-leaders",
            policy_of=base.policy_of,
            topics=topics,
            args=[*drain_arg, "--balance-leaders"],
            drained=drained,
            **common,
        )
    )
    # skewed valid start
    sd = tmp / "skew"
    skew_topics = gen.write_topics(sd, skew)
    skew_cur = gen.write_current(sd / "current.json", skew.state)
    go(
        Case(
            "skewed, --rebalance (counts)",
            before=skew.state,
            racks=skew.racks,
            policy_of=skew.policy_of,
            inventory=inv,
            topics=skew_topics,
            current=skew_cur,
            args=["--rebalance"],
        )
    )
    snap = gen.write_sized_snapshot(sd / "snapshot", skew.racks, skew.state, skew.sizes)
    go(
        Case(
            "skewed, --rebalance (bytes)",
            before=skew.state,
            racks=skew.racks,
            policy_of=skew.policy_of,
            inventory=inv,
            topics=skew_topics,
            current=snap,
            args=["--rebalance", "--tolerance", str(TOLERANCE)],
            sizes=skew.sizes,
        )
    )
    # capacity: the balanced cluster with sizes, the drain of three brokers
    load = _bytes_per_broker(base.state, base.sizes)
    for label, tight in (("capacity-tight drain 3", False), ("capacity short in r6", True)):
        cap: dict[int, int] = {}
        for r, ids in base.racks.items():
            rest = [b for b in ids if b not in drained]
            mean_after = sum(load[b] for b in ids) / len(rest)
            if tight and r == "r6":
                c = mean_after / 1.05  # the bytes do not fit even at 100 %
            else:
                # fits under the default --max-disk-usage with some room; no broker that
                # stays starts above it (the drain, not the start, is what must fit)
                c = max(mean_after / 0.75, max(load[b] for b in rest) * 1.01 / MAX_DISK_USAGE)
            cap.update({b: int(c) for b in ids})
        cd = tmp / label.replace(" ", "-")
        inv_cap = gen.write_json(cd / "inventory.json", gen.inventory_doc(base.racks, cap))
        snap_cap = gen.write_sized_snapshot(
            cd / "snapshot", base.racks, base.state, base.sizes, cap
        )
        case = Case(
            label,
            before=base.state,
            racks=base.racks,
            policy_of=base.policy_of,
            inventory=inv_cap,
            topics=topics,
            current=snap_cap,
            args=drain_arg,
            drained=drained,
            sizes=base.sizes,
            capacity=cap,
        )
        if not tight:
            go(case)
            continue
        out = mrc_assign(work, inv_cap, topics, snap_cap, drain_arg)
        # the error line (it should name the brokers and the missing bytes), not the hint
        said = [x for x in out.text.strip().splitlines() if not x.startswith("hint:")]
        last = (said or [""])[-1][:240]
        if out.rc == 0:
            after = _bytes_per_broker(overlay(base.state, out.plan), base.sizes)
            full = sorted(b for b in after if b in cap and b not in drained and after[b] > cap[b])
            missing = sum(after[b] - cap[b] for b in full)
            last = (
                f"the plan puts {len(full)} broker(s) above capacity_bytes "
                f"({', '.join(map(str, full))}: {missing / 2**30:,.0f} GiB over)"
            )
        rows.append(
            result(
                f"{label}: exit code is not 1 (0 = proven infeasible, exit 1)",
                int(out.rc != 1),
                "",
                0,
                f"exit {out.rc}; {last}",
            )
        )
    return rows


# ---- peers -----------------------------------------------------------------------------


def run_peer(
    python: Path, script: str, inv: Path, cur: Path, out: Path, extra: Sequence[str] = ()
) -> tuple[State | None, float, str]:
    """A peer's driver in its own venv: (its plan, wall seconds, a note)."""
    cmd = [str(python), str(ROOT / "bench" / script), "--inventory", str(inv)]
    r = run_once([*cmd, "--current", str(cur), "--out", str(out), *extra])
    if r.returncode != 0:
        err = r.stderr.decode(errors="replace").strip().splitlines()[-1:]
        return None, r.seconds, f"exit {r.returncode}: {err}"
    doc = json.loads(out.read_text())
    plan: State = {
        (p["topic"], int(p["partition"])): (tuple(int(r) for r in p["replicas"]), ())
        for p in doc["plan"]["partitions"]
    }
    return plan, r.seconds, f"balancing {doc['seconds']:.1f} s"


def beside(key: str, ku: dict[str, float] | None, kt: dict[str, float] | None) -> str:
    """The peers' figure for ``key``, '-' for a peer that did not run."""
    return ", ".join(
        f"{peer} {'-' if f is None else format(f[key], ',')}"
        for peer, f in (("kafka-utils", ku), ("kafka-tools", kt))
    )


def peer_rows(tmp: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    kw: dict[str, Any] = {"policies": [gen.PEER_POLICY], "rack_sizes": gen.PEER_RACK_SIZES}
    base = gen.generate(PEER_PARTITIONS, SEED + 2, layout="balanced", **kw)
    skew = gen.generate(PEER_PARTITIONS, SEED + 3, layout="skewed", **kw)
    grown = {r: list(ids) for r, ids in base.racks.items()}
    grown["r1"] += [1000, 1001]
    grown["r3"] += [1002, 1003]
    drained = (base.racks["r1"][0], base.racks["r2"][0])
    cases = [
        ("skewed, --rebalance", skew, skew.racks, ["--rebalance"], ()),
        ("scale-out +4, --rebalance", base, grown, ["--rebalance"], ()),
        ("drain 2", base, base.racks, ["--drain", ",".join(map(str, drained))], drained),
    ]
    for label, cl, racks, args, drain in cases:
        d = tmp / "peer" / label.split(",")[0].replace(" ", "-")
        inv = gen.write_json(d / "inventory.json", gen.inventory_doc(racks))
        topics = gen.write_topics(d, cl)
        cur = gen.write_current(d / "current.json", cl.state)
        live = {r: [b for b in ids if b not in drain] for r, ids in racks.items()}
        rack_of = {b: r for r, ids in live.items() for b in ids}
        work = d / "work"
        work.mkdir()
        plans: dict[str, tuple[State | None, float, str]] = {}
        o = mrc_assign(work, inv, topics, cur, args)
        plans["mrc-plan"] = (o.plan if o.rc == 0 else None, o.seconds, f"exit {o.rc}")
        if not KU_PY.exists():
            plans["kafka-utils"] = (None, 0.0, "skipped: .venv-kafka-utils missing")
        else:
            what = ["--decommission", ",".join(map(str, drain))] if drain else []
            plans["kafka-utils"] = run_peer(
                KU_PY, "kafka_utils_ref.py", inv, cur, work / "ku.json", what
            )
        if not KT_PY.exists():
            plans["kafka-tools"] = (None, 0.0, "skipped: .venv-kafka-tools missing")
        else:
            what = (
                ["--remove", ",".join(map(str, drain))]
                if drain
                else ["--balance", "count,rackaware"]
            )
            plans["kafka-tools"] = run_peer(
                KT_PY, "kafka_tools_ref.py", inv, cur, work / "kt.json", what
            )
        f0 = figures(cl.state, live, {})
        got: dict[str, dict[str, float]] = {}
        for tool, (plan, secs, note) in plans.items():
            name = f"peer {label}: {tool}"
            if plan is None:
                rows.append(result(name, secs, "s", None, note))
                continue
            after = overlay(cl.state, plan)
            f1 = figures(after, live, {})
            fig = {
                "violations": violations(after, cl.policy_of, rack_of),
                "moves": added(cl.state, plan),
                "rack": f1.worst_rack,
                "topic": f1.topic_spread,
                "uneven": f1.uneven_pct,
                "leader": f1.worst_leader,
                "changes": sum(1 for k, (reps, _) in plan.items() if reps[0] != cl.state[k][0][0]),
                "seconds": secs,
            }
            got[tool] = fig
            rows.append(
                result(
                    name,
                    secs,
                    "s",
                    None,
                    f"violations {fig['violations']}, moves {fig['moves']:,}, rack spread "
                    f"{fig['rack']}, topic spread {fig['topic']}, uneven {fig['uneven']:.1f} %, "
                    f"leader spread {fig['leader']}, leadership changes {fig['changes']:,}; "
                    f"{note}",
                )
            )
        need = repair_bound(cl.state, cl.policy_of, rack_of)
        if not drain:
            need = max(need, balance_bound(cl.state, live))
        rows.append(
            result(
                f"peer {label}: before",
                0,
                "",
                None,
                f"rack spread {f0.worst_rack}, topic spread {f0.topic_spread}, uneven "
                f"{f0.uneven_pct:.1f} %, leader spread {f0.worst_leader}; "
                f"moves bound {need:,}",
            )
        )
        ours = got.get("mrc-plan")
        if ours is None:
            tail = (o.text.strip().splitlines() or [""])[-1][:160]
            rows.append(result(f"peer {label}: mrc-plan exit code", o.rc, "", 0, tail))
            continue
        ku, kt = got.get("kafka-utils"), got.get("kafka-tools")

        rows.append(
            result(
                f"peer {label}: mrc-plan policy violations",
                ours["violations"],
                "",
                0,
                beside("violations", ku, kt),
            )
        )
        # the peer target: each figure at most kafka-utils' (its figure is the goal)
        for key, figure in (
            ("topic", "topic spread"),
            ("leader", "leader spread"),
            ("moves", "replicas added"),
        ):
            rows.append(
                result(
                    f"peer {label}: mrc-plan {figure}"
                    + ("" if ku is None else " (<= kafka-utils')"),
                    ours[key],
                    "",
                    None if ku is None else ku[key],
                    beside(key, ku, kt),
                )
            )
        for peer, theirs in (("kafka-utils", ku), ("kafka-tools", kt)):
            if theirs is None:
                continue
            rows.append(
                result(
                    f"peer {label}: mrc-plan time in % of {peer}"
                    + (" (goal: 5x faster)" if peer == "kafka-utils" else ""),
                    100 * ours["seconds"] / max(theirs["seconds"], 1e-9),
                    "%",
                    20 if peer == "kafka-utils" else None,
                    f"{ours['seconds']:.2f} s vs {theirs['seconds']:.2f} s",
                )
            )
    return rows


# ---- scenarios from describe output ----------------------------------------------------

Rule = gen.Policy | None  # a topic's rule; None: Kafka's rack-aware rule


@dataclass
class Brokers:
    """The brokers a rule is checked against (each one's rack) and the inventory's racks."""

    rack_of: dict[int, str]
    names: tuple[str, ...]

    @functools.cached_property
    def room(self) -> tuple[int, ...]:
        per = Counter(self.rack_of.values())
        return tuple(per[r] for r in self.names)

    def counts(self, replicas: Sequence[int]) -> tuple[int, ...]:
        per = Counter(self.rack_of.get(b) for b in replicas)
        return tuple(per[r] for r in self.names)


@functools.cache
def rack_aware_targets(rf: int, room: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The replica counts per rack Kafka's rack-aware rule accepts for rf replicas over racks
    of room[i] brokers: at most ceil(rf / racks) per rack and none above its brokers, with
    the spread (max - min over racks) as small as the racks allow."""
    cap = -(-rf // len(room))
    fits = [t for t in itertools.product(*(range(min(cap, n) + 1) for n in room)) if sum(t) == rf]
    best = min((max(t) - min(t) for t in fits), default=0)
    return tuple(t for t in fits if max(t) - min(t) == best)


def rule_rf(rule: Rule, replicas: Sequence[int]) -> int:
    """Replicas the rule asks for: the policy's total, or the partition's count before."""
    if rule is None:
        return len(replicas)
    sync, obs = rule.need()
    return sum(sync.values()) + sum(obs.values())


def breaks(
    replicas: Sequence[int], observers: Sequence[int], rule: Rule, brokers: Brokers, rf: int
) -> bool:
    """Whether a partition breaks its rule on these brokers (any other broker is gone)."""
    if len(set(replicas)) != len(replicas) or any(b not in brokers.rack_of for b in replicas):
        return True
    if rule is None:
        targets = rack_aware_targets(rf, brokers.room)
        return len(replicas) != rf or brokers.counts(replicas) not in targets
    need_sync, need_obs = rule.need()
    sync = replicas[: len(replicas) - len(observers)]
    return (
        set(replicas[len(sync) :]) != set(observers)
        or Counter(brokers.rack_of[b] for b in sync) != need_sync
        or Counter(brokers.rack_of[b] for b in observers) != need_obs
    )


def added_bound(replicas: Sequence[int], rule: Rule, brokers: Brokers, rf: int) -> int:
    """Fewest replicas a partition must gain to meet its rule on these brokers: per rack, the
    policy's count minus the brokers it holds there; for the rack-aware rule, rf minus the
    most of its replicas that a valid rack spread keeps."""
    held = Counter(brokers.rack_of[b] for b in set(replicas) if b in brokers.rack_of)
    if rule is not None:
        need_sync, need_obs = rule.need()
        return sum(max(0, c - held[r]) for r, c in (need_sync + need_obs).items())
    keep = max(
        (
            sum(min(held[r], t) for r, t in zip(brokers.names, target, strict=True))
            for target in rack_aware_targets(rf, brokers.room)
        ),
        default=0,
    )
    return rf - keep


def rack_spread(replicas: Sequence[int], brokers: Brokers) -> int:
    """Replicas of the partition in its fullest rack minus in its emptiest one."""
    return _spread(list(brokers.counts(replicas)))


def leader_targets(state: State) -> tuple[set[int], Counter[int]]:
    """The brokers holding sync replicas, and the preferred leaders per broker."""
    holders = {b for reps, obs in state.values() for b in reps[: len(reps) - len(obs)]}
    return holders, Counter(reps[0] for reps, _ in state.values())


def leader_change_bound(before: State, after: State, gone: set[int]) -> tuple[int, bool]:
    """The fewest leadership changes that leave preferred leaders within floor / ceil of the
    mean over the brokers holding sync replicas after, given the plan's replica sets, and
    whether that target can be met at all. Exact: a min-cost flow sends each partition to
    one of its sync replicas (cost 1 unless it is the old leader) and on to the sink through
    each broker's `floor` arc, which pays back more than any change costs, its arc of one
    to the ceiling when the mean is not whole, and an overflow arc that costs more than any
    change (used only when the target cannot be met)."""
    from ortools.graph.python import min_cost_flow

    parts = [
        (before[k][0][0], [b for b in reps[: len(reps) - len(obs)] if b not in gone])
        for k, (reps, obs) in after.items()
    ]
    parts = [(old, sync) for old, sync in parts if sync]
    holders = sorted({b for _, sync in parts for b in sync})
    if not holders:
        return 0, True
    node = {b: len(parts) + 1 + i for i, b in enumerate(holders)}
    sink, big = len(parts) + len(holders) + 1, len(parts) + 1
    q, extra = divmod(len(parts), len(holders))
    flow = min_cost_flow.SimpleMinCostFlow()
    changes = []
    for i, (old, sync) in enumerate(parts, start=1):
        flow.add_arc_with_capacity_and_unit_cost(0, i, 1, 0)
        for b in sync:
            if b != old:
                changes.append(flow.add_arc_with_capacity_and_unit_cost(i, node[b], 1, 1))
            else:
                flow.add_arc_with_capacity_and_unit_cost(i, node[b], 1, 0)
    floors = [flow.add_arc_with_capacity_and_unit_cost(node[b], sink, q, -big) for b in holders]
    overflow = []
    for b in holders:
        if extra:
            flow.add_arc_with_capacity_and_unit_cost(node[b], sink, 1, 0)
        overflow.append(flow.add_arc_with_capacity_and_unit_cost(node[b], sink, len(parts), big))
    flow.set_node_supply(0, len(parts))
    flow.set_node_supply(sink, -len(parts))
    if flow.solve() != flow.OPTIMAL:
        raise RuntimeError("the leader flow has no solution")
    met = sum(flow.flow(a) for a in floors) == q * len(holders)
    met = met and not any(flow.flow(a) for a in overflow)
    return sum(flow.flow(a) for a in changes), met


@dataclass
class DescribeCase:
    name: str
    before: State  # the partitions the describe output holds
    rule_of: dict[str, Rule]  # the rule the planner should apply to each topic
    all_racks: dict[str, list[int]]  # every broker the describe output names, by rack
    inventory: Path
    current: Path
    args: list[str]
    topics: Path | None = None
    changed: frozenset[str] = frozenset()  # topics whose policy the topics file sets
    drained: tuple[int, ...] = ()
    dead: tuple[int, ...] = ()  # absent from the inventory
    needs: tuple[str, ...] = ()  # options of `assign` the case uses
    # kafka_utils_ref.py's options; a text: why kafka-utils cannot run it; None: not compared
    kafka_utils: list[str] | str | None = None

    @property
    def gone(self) -> set[int]:
        return {*self.drained, *self.dead}

    @property
    def balance_leaders(self) -> bool:
        return "--balance-leaders" in self.args

    @property
    def only(self) -> str | None:
        args = self.args
        return args[args.index("--only-topics") + 1] if "--only-topics" in args else None

    def brokers(self) -> tuple[Brokers, Brokers]:
        """The brokers before (every one, each in its rack) and those that may hold
        replicas after (neither drained nor dead)."""
        names = tuple(sorted(self.all_racks))
        start = {b: r for r, ids in self.all_racks.items() for b in ids}
        live = {b: r for b, r in start.items() if b not in self.gone}
        return Brokers(start, names), Brokers(live, names)

    def in_scope(self, key: Key, replicas: Sequence[int], valid: bool) -> bool:
        """Whether the plan may change this partition: its topic selected by --only-topics
        and either a replica on a drained or dead broker, a topic the topics file sets, a
        --rebalance, or a broken partition under --repair."""
        if self.only is not None and not re.fullmatch(self.only, key[0]):
            return False
        return (
            "--rebalance" in self.args
            or key[0] in self.changed
            or any(b in self.gone for b in replicas)
            or ("--repair" in self.args and not valid)
        )


@dataclass
class DescribeFigures:
    left: int = 0  # replicas on drained or dead brokers after (selected topics)
    added: int = 0
    bound: int = 0
    rack_aware: int = 0  # partitions under the rack-aware rule
    grew: int = 0  # ... whose rack spread grew
    worst_spread: tuple[int, int] = (0, 0)  # their worst rack spread before, after
    violations: int = 0  # partitions in scope, or valid before, that break their rule after
    left_alone: int = 0  # partitions out of scope that broke their rule before and still do
    changes: int = 0  # first replica changed
    forced: int = 0  # old first replica no longer a sync replica after
    unavoidable: int = 0  # old leader on a gone broker, or in a rack its policy gives no sync
    outside: int = 0  # partitions changed outside the scope
    leader_bound: int = 0  # with --balance-leaders
    leader_target_met: bool = True  # whether any leader order is within floor / ceil
    leader_spread: tuple[int, int] = (0, 0)  # over brokers holding sync replicas, before, after
    lost: int = 0  # partitions with every replica on a dead broker: nothing to copy from


def describe_figures(case: DescribeCase, plan: State) -> DescribeFigures:
    """Every figure of a case, from the plan overlaid on the describe state."""
    before = case.before
    after = overlay(before, plan)
    start, live = case.brokers()
    gone = case.gone
    f = DescribeFigures()
    worst = [0, 0]
    for k, (reps, obs) in before.items():
        new, new_obs = after[k]
        rule = case.rule_of[k[0]]
        rf = rule_rf(rule, reps)
        valid = not breaks(reps, obs, rule, start, rf)
        scope = case.in_scope(k, reps, valid)
        changed = (new, new_obs) != (reps, obs)
        if case.balance_leaders:  # a leader-only reorder is in every partition's scope
            changed = set(new) != set(reps) or set(new_obs) != set(obs)
        f.outside += changed and not scope
        f.added += len(set(new) - set(reps))
        f.changes += new[0] != reps[0]
        f.forced += reps[0] not in new[: len(new) - len(new_obs)]
        if case.only is not None and not re.fullmatch(case.only, k[0]):
            continue
        if all(b in case.dead for b in reps):  # no replica left: no reassignment can help
            f.lost += 1
            continue
        f.left += sum(b in gone for b in new)
        broken = breaks(new, new_obs, rule, live, rf)
        if scope or valid:
            f.violations += broken
        else:
            f.left_alone += broken
        if scope:
            f.bound += added_bound(reps, rule, live, rf)
            lead_rack = start.rack_of.get(reps[0])
            f.unavoidable += reps[0] in gone or (
                rule is not None and rule.need()[0][lead_rack or ""] == 0
            )
        if rule is None:
            s0, s1 = rack_spread(reps, start), rack_spread(new, live)
            f.rack_aware += 1
            f.grew += s1 > s0
            worst = [max(worst[0], s0), max(worst[1], s1)]
    f.worst_spread = (worst[0], worst[1])
    if case.balance_leaders:
        f.leader_bound, f.leader_target_met = leader_change_bound(before, after, gone)
    (h0, l0), (h1, l1) = leader_targets(before), leader_targets(after)
    f.leader_spread = (_spread([l0[b] for b in h0]), _spread([l1[b] for b in h1 - gone]))
    return f


def describe_rows(case: DescribeCase, out: Outcome, f: DescribeFigures) -> list[dict[str, Any]]:
    """A successful run's figures against their goals (its wall time aside)."""
    n = case.name
    rows = []
    within = "" if case.only is None else f" (topics matching {case.only})"
    if case.gone:
        lost = f"{f.lost} partition(s) had every replica on a dead broker (left out)"
        rows.append(
            result(
                f"{n}: replicas left on drained/dead brokers{within}",
                f.left,
                "",
                0,
                lost if f.lost else "",
            )
        )
    rows.append(
        result(
            f"{n}: replicas added",
            f.added,
            "",
            f.bound,
            f"lower bound {f.bound:,} (independent); mrc-plan's {out.bound()}",
        )
    )
    if f.rack_aware:
        rows.append(
            result(
                f"{n}: rack-aware partitions whose rack spread grew",
                f.grew,
                "",
                0,
                f"of {f.rack_aware:,}; worst spread before {f.worst_spread[0]}, "
                f"after {f.worst_spread[1]}",
            )
        )
    rows.append(
        result(
            f"{n}: rule violations after",
            f.violations,
            "",
            0,
            f"besides {f.left_alone:,} out-of-scope partition(s) of the {len(case.before):,} "
            "measured that broke their rule before and are left alone",
        )
    )
    said, _ = out.leader_summary()
    detail = (
        f"unavoidable {f.unavoidable:,}; the plan takes {f.forced:,} old leaders out of the "
        f"sync replicas; mrc-plan says {said}"
    )
    if out.election is not None:
        detail += f", election file lists {out.election:,}"
    if case.balance_leaders:
        rows.append(
            result(
                f"{n}: leadership changes",
                f.changes,
                "",
                1.02 * f.leader_bound + 2,
                f"fewest {f.leader_bound:,} (min-cost flow over the plan's sync replicas"
                + ("" if f.leader_target_met else "; floor / ceil cannot be met")
                + "); "
                + detail,
            )
        )
        rows.append(
            result(
                f"{n}: preferred-leader spread (brokers holding sync replicas)",
                f.leader_spread[1],
                "",
                1,
                f"before {f.leader_spread[0]}",
            )
        )
    else:
        rows.append(result(f"{n}: leadership changes", f.changes, "", f.unavoidable, detail))
    rows.append(result(f"{n}: partitions changed outside the scope", f.outside, "", 0))
    return rows


def kafka_utils_row(case: DescribeCase, work: Path, plain_json: Path) -> dict[str, Any]:
    """kafka-utils on the same case, its figures beside ours (no goal)."""
    name = f"{case.name}: kafka-utils"
    if isinstance(case.kafka_utils, str) or case.kafka_utils is None:
        return result(name, 0, "", None, f"skipped: {case.kafka_utils}")
    if not KU_PY.exists():
        return result(name, 0, "", None, "skipped: .venv-kafka-utils missing")
    plan, secs, note = run_peer(
        KU_PY, "kafka_utils_ref.py", case.inventory, plain_json, work / "ku.json", case.kafka_utils
    )
    if plan is None:
        return result(name, secs, "s", None, note)
    f = describe_figures(case, plan)
    return result(
        name,
        secs,
        "s",
        None,
        f"replicas added {f.added:,} (bound {f.bound:,}), left on drained/dead {f.left}, "
        f"spread grew {f.grew}, violations {f.violations}, leadership changes "
        f"{f.changes:,} (unavoidable {f.unavoidable:,}), preferred-leader spread "
        f"{f.leader_spread[1]}, changed outside the scope {f.outside}; {note}",
    )


def _topic_near(cluster: dgen.DescribeCluster, ok: Any, size: int = 24) -> str:
    """The topic passing ``ok`` whose partition count is nearest ``size``."""
    names = [t for t in cluster.topics if t != dgen.OFFSETS and ok(t)]
    return min(names, key=lambda t: (abs(cluster.topics[t] - size), t))


def describe_cases(tmp: Path) -> tuple[list[DescribeCase], Path]:
    """The cases, and the plain cluster as reassignment JSON (kafka-utils' input)."""
    partitions_key = "partitions" in topics_required()
    cases: list[DescribeCase] = []
    # plain Apache cluster: every topic under the rack-aware rule
    pl = dgen.plain(DESCRIBE_PARTITIONS, SEED)
    d = tmp / "describe-plain"
    inv = gen.write_json(d / "inventory.json", gen.inventory_doc(pl.racks))
    cur = dgen.write_describe(d / "describe.txt", pl)
    plain_json = gen.write_current(d / "current.json", pl.state)
    rules: dict[str, Rule] = dict.fromkeys(pl.topics)
    common: dict[str, Any] = {"before": pl.state, "all_racks": pl.racks, "inventory": inv}
    drained = tuple(pl.racks["rack-a"][:2])
    drain = ["--drain", ",".join(map(str, drained))]
    dead = (pl.racks["rack-b"][2], pl.racks["rack-c"][2])
    alive = {r: [b for b in ids if b not in dead] for r, ids in pl.racks.items()}
    dead_inv = gen.write_json(d / "inventory-dead.json", gen.inventory_doc(alive))
    dead_cur = dgen.write_describe(d / "describe-dead.txt", pl, dead=dead)
    t = _topic_near(pl, lambda t: len(pl.state[(t, 0)][0]) == 3)
    change = dgen.write_change(
        d / "change", t, dgen.PLAIN_NEW_POLICY, pl.topics[t] if partitions_key else None
    )
    ids = ",".join(map(str, drained))
    cases += [
        DescribeCase(
            "plain: drain 2 of rack-a",
            rule_of=rules,
            current=cur,
            args=drain,
            drained=drained,
            kafka_utils=["--decommission", ids],
            **common,
        ),
        DescribeCase(
            "plain: dead 2",
            before=pl.state,
            rule_of=rules,
            all_racks=pl.racks,
            inventory=dead_inv,
            current=dead_cur,
            args=[],
            dead=dead,
            kafka_utils=["--decommission", ",".join(map(str, dead))],
        ),
        DescribeCase(
            f"plain: policy change ({t})",
            rule_of={**rules, t: dgen.PLAIN_NEW_POLICY},
            current=cur,
            args=[],
            topics=change,
            changed=frozenset([t]),
            kafka_utils="kafka-utils has no placement policies (its groups only balance racks)",
            **common,
        ),
        DescribeCase(
            "plain: drain 2, --balance-leaders",
            rule_of=rules,
            current=cur,
            args=[*drain, "--balance-leaders"],
            drained=drained,
            kafka_utils=["--decommission", ids, "--leaders"],
            **common,
        ),
        DescribeCase(
            "plain: --repair",
            rule_of=rules,
            current=cur,
            args=["--repair"],
            needs=("--repair",),
            **common,
        ),
        DescribeCase(
            "plain: drain 2, --only-topics",
            rule_of=rules,
            current=cur,
            args=[*drain, "--only-topics", ONLY_TOPICS],
            drained=drained,
            needs=("--only-topics",),
            **common,
        ),
    ]
    # mixed Confluent cluster, with the default policy and without one
    mx = dgen.mixed(DESCRIBE_PARTITIONS, SEED)
    d = tmp / "describe-mixed"
    inv = gen.write_json(d / "inventory.json", gen.inventory_doc(mx.racks))
    default = dgen.write_policy(d / "default-policy.json", dgen.DEFAULT_POLICY)
    drained = tuple(mx.racks["dc1-a"][:2])
    dead = (mx.racks["dc1-b"][2], mx.racks["dc2-a"][2])
    alive = {r: [b for b in ids if b not in dead] for r, ids in mx.racks.items()}
    dead_inv = gen.write_json(d / "inventory-dead.json", gen.inventory_doc(alive))
    t = _topic_near(mx, lambda t: mx.policy_of.get(t) == dgen.TOPIC_POLICIES[0])
    change = dgen.write_change(
        d / "change", t, dgen.MIXED_NEW_POLICY, mx.topics[t] if partitions_key else None
    )
    variants = [
        ("mixed, default policy", dgen.DEFAULT_POLICY, ["--default-policy", str(default)]),
        ("mixed, no default", None, []),
    ]
    for label, fallback, extra in variants:
        # with a default, the rack-aware topics would break it: that cluster has none
        names = [x for x in mx.topics if fallback is None or mx.placed_by[x] != "rack-aware"]
        vd = d / label.split(", ")[1].replace(" ", "-")
        before = {k: x for k, x in mx.state.items() if k[0] in set(names)}
        rules = {x: mx.policy_of.get(x, fallback) for x in names}
        common = {
            "before": before,
            "all_racks": mx.racks,
            "needs": tuple(extra[:1]),
        }
        cur = dgen.write_describe(vd / "describe.txt", mx, names)
        dead_cur = dgen.write_describe(vd / "describe-dead.txt", mx, names, dead=dead)
        drain = ["--drain", ",".join(map(str, drained)), *extra]
        cases += [
            DescribeCase(
                f"{label}: drain 2 of dc1-a",
                rule_of=rules,
                inventory=inv,
                current=cur,
                args=drain,
                drained=drained,
                **common,
            ),
            DescribeCase(
                f"{label}: dead 2",
                rule_of=rules,
                inventory=dead_inv,
                current=dead_cur,
                args=extra,
                dead=dead,
                **common,
            ),
            DescribeCase(
                f"{label}: policy change ({t})",
                rule_of={**rules, t: dgen.MIXED_NEW_POLICY},
                inventory=inv,
                current=cur,
                args=extra,
                topics=change,
                changed=frozenset([t]),
                **common,
            ),
            DescribeCase(
                f"{label}: drain 2, --balance-leaders",
                rule_of=rules,
                inventory=inv,
                current=cur,
                args=[*drain, "--balance-leaders"],
                drained=drained,
                **common,
            ),
        ]
    return cases, plain_json


@functools.cache
def topics_required() -> frozenset[str]:
    """The keys a topics file's entry must hold, from `mrc-plan schema topics`: whether a
    policy change may leave out `partitions`."""
    r = run_once([cli(), "schema", "topics"])
    entry = json.loads(r.stdout)["$defs"]["TopicEntry"]
    return frozenset(entry.get("required", ()))


def describe_scenario_rows(tmp: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    cases, plain_json = describe_cases(tmp)
    work = tmp / "describe-work"
    work.mkdir()
    for case in cases:
        missing = [o for o in case.needs if o not in assign_options()]
        if missing:
            note = f"skipped: flag missing ({', '.join(missing)} is not in `assign --help`)"
            rows.append(result(case.name, 0, "", None, note))
            continue
        out = mrc_assign(work, case.inventory, case.topics, case.current, case.args)
        print(f"  {case.name}: exit {out.rc}, {out.seconds:.1f} s", file=sys.stderr, flush=True)
        if out.rc != 0:
            rows.append(exit_row(case.name, out))
        else:
            f = describe_figures(case, out.plan)
            rows.extend(describe_rows(case, out, f))
            name = f"{case.name}: summary disagrees with the files"
            rows.append(summary_row(name, out, f.added, f.changes))
        rows.append(result(f"{case.name}: wall time", out.seconds, "s", None, ""))
        if case.kafka_utils is not None:
            rows.append(kafka_utils_row(case, work, plain_json))
    return rows


def run() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="mrc-bench-quality-") as name:
        tmp = Path(name)
        rows = quality_rows(tmp)
        if DESCRIBE_PARTITIONS:
            rows.extend(describe_scenario_rows(tmp))
        if PEER_PARTITIONS:
            rows.extend(peer_rows(tmp))
    return rows


if __name__ == "__main__":  # direct run: the table only; --large = 200,000 partitions
    if "--large" in sys.argv[1:]:
        os.environ["MRC_BENCH_QUALITY_PARTITIONS"] = "200000"
    import run as runner  # imports this file again as bench_quality, reading the size

    sys.exit(runner.main(["quality"]))
