"""`assign`: load the cluster's state, plan, check the plan independently, summarize.

The CLI renders the outcome; nothing here prints or writes.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat

from placement.errors import UsageError
from placement.io.current import CurrentState
from placement.io.inventory import LoadedInventory
from placement.model.assignment import PartitionAssignment
from placement.model.policy import PlacementPolicy
from placement.plan.checker import PlanContext, verify_plan
from placement.plan.topics import TopicSpec
from placement.solver.capacity import bytes_held, check_capacity, disk_caps
from placement.solver.core import LeaderStats
from placement.solver.engine import Options, RackSolve, solve
from placement.solver.feasibility import check_feasible
from placement.solver.repair import Request

Key = tuple[str, int]


@dataclass(frozen=True)
class RackBalance:
    rack: str
    before: tuple[int, int]
    after: tuple[int, int]


@dataclass(frozen=True)
class Goal:
    """One goal's figure after the plan, in the goal order (README: "How a plan is chosen")."""

    name: str
    value: float
    bound: float | None  # no plan does better (None: no bound is computed)
    before: float | None = None
    unit: str = ""


def _spread(counts: Mapping[int, int], ids: Sequence[int]) -> int:
    values = [counts.get(b, 0) for b in ids]
    return max(values) - min(values) if values else 0


def _goals(
    loaded: LoadedInventory,
    policies: Mapping[str, PlacementPolicy],
    before: Mapping[Key, PartitionAssignment],
    plan: Sequence[PartitionAssignment],
    drained: frozenset[int],
    unusable: frozenset[int],
    caps: Mapping[int, int],
    sizes: Mapping[Key, int],
) -> tuple[list[Goal], list[RackBalance], list[RackBalance]]:
    """Balance goals before and after: the worst rack, the worst (topic, rack), the worst
    lead rack. A spread's bound is 1 where the replicas do not divide evenly, else 0.
    Also the per-rack tables: replicas per broker (drained brokers left out) and preferred
    leaders per broker of each lead rack (drained and excluded left out). One pass over
    the current state; the state after is counted from the plan's changes."""
    inv = loaded.inventory
    rack_of = {b.id: b.rack for b in inv.brokers if b.id not in unusable}
    ids: dict[str, list[int]] = {}
    for b, r in rack_of.items():
        if r is not None:
            ids.setdefault(r, []).append(b)

    lead_of = {t: p.replicas[0].constraints.rack for t, p in policies.items()}

    def counts(
        state: Iterable[PartitionAssignment],
    ) -> tuple[Counter[int], Counter[int], Counter[tuple[str, int]], set[str]]:
        load: Counter[int] = Counter()
        leaders: Counter[int] = Counter()
        per_topic: Counter[tuple[str, int]] = Counter()  # (topic, broker)
        lead_racks: set[str] = set()
        parts = [a for a in state if a.replicas]
        leaders.update(a.replicas[0] for a in parts)
        load.update(chain.from_iterable(a.replicas for a in parts))
        per_topic.update(chain.from_iterable(zip(repeat(a.topic), a.replicas) for a in parts))
        lead_racks.update(lead_of[t] for t in {a.topic for a in parts} if t in lead_of)
        return load, leaders, per_topic, lead_racks

    def figures(
        load: Counter[int],
        leaders: Counter[int],
        per_topic: Counter[tuple[str, int]],
        lead_racks: set[str],
        topics: Iterable[tuple[str, str]],
    ) -> tuple[int, int, int, int, int]:
        rack = max((_spread(load, m) for m in ids.values()), default=0)
        topic = max(
            (
                max(per_topic[(t, b)] for b in ids[r]) - min(per_topic[(t, b)] for b in ids[r])
                for t, r in topics
            ),
            default=0,
        )
        lead = max((_spread(leaders, ids[r]) for r in lead_racks if r in ids), default=0)
        rack_lb = max((int(sum(load[b] for b in m) % len(m) != 0) for m in ids.values()), default=0)
        lead_lb = max(
            (
                int(sum(leaders[b] for b in ids[r]) % len(ids[r]) != 0)
                for r in lead_racks
                if r in ids
            ),
            default=0,
        )
        return rack, topic, lead, rack_lb, lead_lb

    c0 = counts(before.values())
    # the state after: the counts before, less what the plan takes away, plus what it adds
    load, leaders, per_topic, lead_racks = (
        Counter(c0[0]),
        Counter(c0[1]),
        Counter(c0[2]),
        set(c0[3]),
    )
    touched: set[tuple[str, str]] = set()
    for a in plan:
        old = before.get(a.key)
        for sign, x in ((-1, old), (1, a)):
            if x is None or not x.replicas:
                continue
            leaders[x.replicas[0]] += sign
            for b in x.replicas:
                load[b] += sign
                per_topic[(x.topic, b)] += sign
                r = rack_of.get(b)
                if r is not None:
                    touched.add((x.topic, r))
        lead = lead_of.get(a.topic)
        if lead is not None:
            lead_racks.add(lead)
    pairs0 = {(t, r) for (t, b) in c0[2] if (r := rack_of.get(b)) is not None}
    b0 = figures(*c0, pairs0)
    b1 = figures(load, leaders, per_topic, lead_racks, pairs0 | touched)
    goals = [
        Goal("rack spread (replicas per broker, worst rack)", b1[0], b1[3], b0[0]),
        Goal(
            "topic spread (replicas of a topic per broker, worst topic and rack)",
            b1[1],
            None,
            b0[1],
        ),
        Goal("preferred-leader spread (per broker, worst lead rack)", b1[2], b1[4], b0[2]),
    ]
    if caps and sizes:
        held: Counter[int] = Counter()
        changed = {a.key: a for a in plan}
        for key, a in before.items():
            for b in changed.get(key, a).replicas:
                held[b] += sizes.get(key, 0)
        over = sum(1 for b, cap in caps.items() if b in rack_of and held[b] > cap)
        goals.insert(0, Goal("brokers above --max-disk-usage", over, 0))
    inv_racks = inv.racks()
    balance = []
    for rack in inv_racks:
        rids = [b.id for b in inv.brokers if b.rack == rack and b.id not in drained]
        if rids:
            balance.append(RackBalance(rack, _minmax(c0[0], rids), _minmax(load, rids)))
    lead_table = []
    for rack in inv_racks:
        if rack in lead_racks and rack in ids:
            lids = ids[rack]
            lead_table.append(RackBalance(rack, _minmax(c0[1], lids), _minmax(leaders, lids)))
    return goals, balance, lead_table


@dataclass(frozen=True)
class AssignOutcome:
    plan: list[PartitionAssignment]
    rollback: list[PartitionAssignment]
    election: list[Key]  # partitions whose preferred leader the plan changes
    replicas_added: int
    replicas_removed: int
    bytes_to_move: int | None  # None: a partition that gains replicas has no known size
    lower_bound: int
    bytes_bound: int | None
    balance: list[RackBalance]
    leaders: list[RackBalance]  # preferred leaders per broker of each lead rack
    leader_stats: LeaderStats | None
    exact: list[RackSolve]
    engine: str
    seconds: float
    unmanaged_topics: list[str]  # in the cluster, with no policy anywhere: left alone
    missing_topics: list[str]  # in the topics file, not in the cluster: not created
    # brokers holding replicas in the current assignment that the inventory does not know
    # (its replicas of managed topics are moved off), or lists without a rack
    unknown_brokers: list[int] = field(default_factory=list)
    rackless_brokers: list[int] = field(default_factory=list)
    goals: list[Goal] = field(default_factory=list)

    def summary(self) -> dict[str, object]:
        """What `--summary` writes: every figure the text summary prints, and the goals."""
        ls = self.leader_stats
        changes = len(self.election)
        return {
            "engine": self.engine,
            "partitions_changed": len(self.plan),
            "replicas_added": self.replicas_added,
            "replicas_removed": self.replicas_removed,
            "bytes_to_move": self.bytes_to_move,
            "leadership_changes": changes,
            "goals": [
                {"name": "replicas added", "value": self.replicas_added, "bound": self.lower_bound}
            ]
            + (
                [
                    {
                        "name": "bytes over the cap that had to leave",
                        "value": None,
                        "bound": self.bytes_bound,
                    }
                ]
                if self.bytes_bound is not None
                else []
            )
            + [
                {"name": g.name, "value": g.value, "bound": g.bound, "before": g.before}
                for g in self.goals
            ]
            + [
                {
                    "name": "leadership changes",
                    "value": changes,
                    "bound": ls.bound if ls is not None else None,
                    "forced": ls.forced if ls is not None else None,
                }
            ],
            "racks": [
                {"rack": b.rack, "replicas_before": list(b.before), "replicas_after": list(b.after)}
                for b in self.balance
            ],
            "unmanaged_topics": self.unmanaged_topics,
            "missing_topics": self.missing_topics,
        }


def _ids(inventory_ids: set[int], ids: Sequence[int], flag: str) -> frozenset[int]:
    unknown = sorted(set(ids) - inventory_ids)
    if unknown:
        raise UsageError(
            f"{flag}: broker(s) {', '.join(map(str, unknown))} are not in the inventory",
            "use broker ids from --inventory",
        )
    return frozenset(ids)


def _minmax(counts: Counter[int], ids: list[int]) -> tuple[int, int]:
    return (min(counts[b] for b in ids), max(counts[b] for b in ids))


def assign(
    loaded: LoadedInventory,
    topics: Sequence[TopicSpec],
    current: CurrentState | None,
    *,
    drain: Sequence[int] = (),
    exclude: Sequence[int] = (),
    options: Options | None = None,
) -> AssignOutcome:
    started = time.perf_counter()
    options = options or Options()
    inv = loaded.inventory
    ids = {b.id for b in inv.brokers}
    drained = _ids(ids, drain, "--drain")
    excluded = _ids(ids, exclude, "--exclude")
    policies: dict[str, PlacementPolicy] = {}
    if current is not None:
        policies.update(current.policies)
    policies.update({t.name: t.policy for t in topics})
    assignments = current.assignments if current else []
    present = {a.topic for a in assignments}
    unmanaged = sorted(present - set(policies))
    missing = sorted({t.name for t in topics} - present) if current is not None else []
    fresh = {t.name: t.partitions for t in topics} if current is None else {}
    managed = [a for a in assignments if a.topic in policies]
    in_use = {t: policies[t] for t in present | set(fresh) if t in policies}
    check_feasible(inv, in_use, drained=drained, excluded=excluded, current=managed)
    sizes = current.sizes if current else {}
    caps = disk_caps(inv, options.max_disk_usage) if sizes else {}
    fixed: dict[int, int] = {}
    if caps:
        check_capacity(inv, in_use, assignments, sizes, caps, drained=drained, excluded=excluded)
        fixed = bytes_held([a for a in assignments if a.topic not in policies], sizes)
    req = Request(inv, in_use, managed, fresh, drained, excluded, sizes, caps, fixed)
    solution = solve(req, options)
    plan = solution.plan
    before = {a.key: a for a in managed}
    verify_plan(
        plan,
        PlanContext(
            inv,
            in_use,
            before,
            drained,
            excluded,
            partition_counts=fresh or None,
            disk_caps=caps,
            sizes=sizes,
        ),
    )
    goals, balance, lead_table = _goals(
        loaded, in_use, before, plan, drained, drained | excluded, caps, sizes
    )
    added = removed = 0
    moved: int | None = 0
    for a in plan:
        old = set(before[a.key].replicas) if a.key in before else set()
        new = set(a.replicas)
        added += len(new - old)
        removed += len(old - new)
        if new - old and a.key in before and moved is not None:  # a new partition has no data
            size = sizes.get(a.key)
            moved = None if size is None else moved + size * len(new - old)
    racks = {b.id: b.rack for b in inv.brokers}
    used = {b for a in assignments for b in a.replicas}
    return AssignOutcome(
        plan=plan,
        rollback=[before[a.key] for a in plan if a.key in before],
        election=[
            a.key for a in plan if a.key in before and before[a.key].replicas[0] != a.replicas[0]
        ],
        replicas_added=added,
        replicas_removed=removed,
        bytes_to_move=moved,
        lower_bound=solution.lower_bound,
        bytes_bound=solution.bytes_bound,
        balance=balance,
        leaders=lead_table,
        leader_stats=solution.leaders,
        exact=solution.exact,
        engine=solution.engine,
        seconds=time.perf_counter() - started,
        unmanaged_topics=unmanaged,
        missing_topics=missing,
        unknown_brokers=sorted(used - set(racks)),
        rackless_brokers=sorted(b for b in used if b in racks and racks[b] is None),
        goals=goals,
    )
