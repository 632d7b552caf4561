"""`assign`: load the cluster's state, plan, check the plan independently, summarize.

The CLI renders the outcome; nothing here prints or writes.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Literal

from placement.errors import UsageError
from placement.io.columns import REPLICAS, TOPIC
from placement.io.current import CurrentState
from placement.io.inventory import LoadedInventory
from placement.io.reassignment import collector_paused
from placement.model.assignment import Key, PartitionAssignment
from placement.model.planview import PlanView
from placement.model.policy import PlacementPolicy
from placement.plan.balance import Goal, RackBalance, balance_goals, movement, rack_flows
from placement.plan.checker import PlanContext, verify_plan
from placement.plan.policies import policy_changes
from placement.plan.summary import (
    AssignSummary,
    BrokerFigures,
    GoalFigure,
    PolicyChange,
    RackFigures,
    RackFlow,
)
from placement.plan.topics import TopicSpec
from placement.solver.capacity import bytes_held, check_capacity, disk_caps
from placement.solver.core import LeaderStats
from placement.solver.engine import Options, RackSolve, solve
from placement.solver.feasibility import check_feasible
from placement.solver.repair import Request


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

    brokers_from: Literal["inventory", "snapshot"] = "inventory"
    cluster_policies_known: bool = False  # --current holds the topics' policies
    policy_changes: list[PolicyChange] = field(default_factory=list)
    brokers: list[BrokerFigures] = field(default_factory=list)  # every broker's load
    flows: list[RackFlow] = field(default_factory=list)  # what each rack sends to each

    def summary(self, batches: PlanView | None = None) -> AssignSummary:
        """What `--summary`, `--format json` and `--report` show: every figure the text
        summary prints, the goals, the policy changes, every broker's load and the bytes
        between racks; ``batches``: the split of an --out-dir, as `plan show` reads it."""
        ls = self.leader_stats
        changes = len(self.election)
        goals = [
            GoalFigure(name="replicas added", value=self.replicas_added, bound=self.lower_bound)
        ]
        if self.bytes_bound is not None:
            goals.append(
                GoalFigure(
                    name="bytes over the cap that had to leave", value=None, bound=self.bytes_bound
                )
            )
        goals += [
            GoalFigure(name=g.name, value=g.value, bound=g.bound, before=g.before)
            for g in self.goals
        ]
        goals.append(
            GoalFigure(
                name="leadership changes",
                value=changes,
                bound=ls.bound if ls is not None else None,
                forced=ls.forced if ls is not None else None,
            )
        )
        leaders = {b.rack: b for b in self.leaders}
        return AssignSummary(
            engine=self.engine,
            partitions_changed=len(self.plan),
            replicas_added=self.replicas_added,
            replicas_removed=self.replicas_removed,
            bytes_to_move=self.bytes_to_move,
            leadership_changes=changes,
            goals=goals,
            racks=[
                RackFigures(
                    rack=b.rack,
                    replicas_before=b.before,
                    replicas_after=b.after,
                    leaders_before=leaders[b.rack].before if b.rack in leaders else None,
                    leaders_after=leaders[b.rack].after if b.rack in leaders else None,
                )
                for b in self.balance
            ],
            unmanaged_topics=self.unmanaged_topics,
            missing_topics=self.missing_topics,
            brokers_from=self.brokers_from,
            cluster_policies_known=self.cluster_policies_known,
            policy_changes=self.policy_changes,
            brokers=self.brokers,
            rack_to_rack=self.flows,
            batches=batches,
        )


def _ids(inventory_ids: set[int], ids: Sequence[int], flag: str) -> frozenset[int]:
    unknown = sorted(set(ids) - inventory_ids)
    if unknown:
        raise UsageError(
            f"{flag}: broker(s) {', '.join(map(str, unknown))} are not in the inventory",
            "use broker ids from --inventory",
        )
    return frozenset(ids)


def _changes(topics: Sequence[TopicSpec], current: CurrentState | None) -> list[PolicyChange]:
    """The topics whose policy the cluster must get first (none without a current state)."""
    if current is None:
        return []
    existing = {a.topic for a in current.assignments} | set(current.policies)
    return policy_changes(topics, current.policies, existing)


@collector_paused()  # a cluster's state: millions of long-lived objects, no cycles
def assign(
    loaded: LoadedInventory,
    topics: Sequence[TopicSpec],
    current: CurrentState | None,
    *,
    drain: Sequence[int] = (),
    exclude: Sequence[int] = (),
    options: Options | None = None,
    policies_known: bool = False,
    brokers_from: Literal["inventory", "snapshot"] = "inventory",
) -> AssignOutcome:
    """Plan ``topics`` over the inventory, check the plan, measure it. ``policies_known``:
    ``current`` holds the cluster's policies, so the policy changes can be told."""
    started = time.perf_counter()
    options = options or Options()
    inv = loaded.inventory
    ids = {b.id for b in inv.brokers}
    drained = _ids(ids, drain, "--drain")
    excluded = _ids(ids, exclude, "--exclude")
    # the cluster's policies, and those --topics gives (new or changed) over them
    policies: dict[str, PlacementPolicy] = {
        **(current.policies if current else {}),
        **{t.name: t.policy for t in topics},
    }
    assignments = current.assignments if current else []
    present = set(map(TOPIC, assignments))  # columns at C speed: up to millions
    unmanaged = sorted(present - set(policies))
    missing = sorted({t.name for t in topics} - present) if current is not None else []
    fresh = {t.name: t.partitions for t in topics} if current is None else {}
    managed = (
        list(assignments) if not unmanaged else [a for a in assignments if a.topic in policies]
    )
    in_use = {t: policies[t] for t in present | set(fresh) if t in policies}
    check_feasible(inv, in_use, drained=drained, excluded=excluded, current=managed)
    sizes = current.sizes if current else {}
    caps = disk_caps(inv, options.max_disk_usage) if sizes else {}
    fixed: dict[int, int] = {}
    if caps:
        check_capacity(inv, in_use, assignments, sizes, caps, drained=drained, excluded=excluded)
        fixed = bytes_held([a for a in assignments if a.topic not in policies], sizes)
    read = current.columns if current is not None and not unmanaged else None
    req = Request(inv, in_use, managed, fresh, drained, excluded, sizes, caps, fixed, read)
    solution = solve(req, options)
    plan = solution.plan
    before = req.before  # managed, by key
    context = PlanContext(inv, in_use, before, drained, excluded, fresh or None, caps, sizes)
    verify_plan(plan, context)
    figures = balance_goals(
        inv, in_use, before, plan, drained, drained | excluded, caps, sizes, req.columns
    )
    added, removed, moved = movement(plan, before, sizes)
    racks = inv.rack_of
    used = set(chain.from_iterable(map(REPLICAS, assignments)))
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
        balance=figures.replicas,
        leaders=figures.leaders,
        leader_stats=solution.leaders,
        exact=solution.exact,
        engine=solution.engine,
        seconds=time.perf_counter() - started,
        unmanaged_topics=unmanaged,
        missing_topics=missing,
        unknown_brokers=sorted(used - set(racks)),
        rackless_brokers=sorted(b for b in used if b in racks and racks[b] is None),
        goals=figures.goals,
        brokers_from=brokers_from,
        cluster_policies_known=policies_known and current is not None,
        policy_changes=_changes(topics, current) if policies_known else [],
        brokers=figures.brokers,
        flows=rack_flows(inv, plan, before, sizes),
    )
