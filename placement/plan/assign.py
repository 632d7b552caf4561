"""`assign`: load the cluster's state, plan, check the plan independently, summarize.

The CLI renders the outcome; nothing here prints or writes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Literal

from placement.errors import UsageError
from placement.io.columns import REPLICAS, TOPIC
from placement.io.current import CurrentState
from placement.io.inventory import LoadedInventory
from placement.io.reassignment import collector_paused
from placement.model.assignment import Key, PartitionAssignment
from placement.model.inventory import Inventory
from placement.model.planview import PlanView
from placement.model.policy import PlacementPolicy
from placement.model.scope import Scope
from placement.plan.balance import Goal, RackBalance, balance_goals, movement
from placement.plan.checker import PlanContext, verify_plan
from placement.plan.degraded import Degraded, degraded_report, offline_keys
from placement.plan.inputs import DefaultPolicies
from placement.plan.policies import policy_changes
from placement.plan.summary import (
    AssignSummary,
    BrokerFigures,
    GoalFigure,
    LeftAlone,
    PolicyChange,
    RackFigures,
    RackFlow,
    TopicFigures,
    rack_to_rack,
)
from placement.plan.topics import TopicSpec
from placement.solver.capacity import check_capacity, disk_caps
from placement.solver.engine import Options, RackSolve, solve
from placement.solver.feasibility import check_feasible
from placement.solver.goals import figure_name
from placement.solver.leaders import LeaderStats
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
    degraded: Degraded | None = None  # the cluster before the plan (None: no --current)
    topics: list[TopicFigures] = field(default_factory=list)  # per topic changed
    left_alone: list[LeftAlone] = field(default_factory=list)  # outside the scope, broken
    rules: dict[str, int] = field(default_factory=dict)  # topics per rule kind
    # the recorded leader before the plan of each partition it changes (the sending broker
    # of its new replicas, docs/definitions.md); None: the input records no leaders
    senders: dict[Key, int | None] | None = None
    scope: Literal["everything", "asked"] = "everything"
    only_topics: str | None = None
    offline_kept: int = 0  # offline partitions the plan may not move
    in_flight_kept: int = 0  # partitions being reassigned (not offline): not moved either

    @property
    def left_on_drained(self) -> int:
        """Replicas on drained brokers after the plan, from the brokers' figures."""
        return sum(b.replicas_after for b in self.brokers if b.status == "drained")

    def summary(self, batches: PlanView | None = None) -> AssignSummary:
        """What `--summary`, `--format json` and `--report` show: every figure the text
        summary prints, the goals, the policy changes, every broker's load and the bytes
        between racks; ``batches``: the split of an --out-dir, as `plan show` reads it."""
        ls = self.leader_stats
        changes = len(self.election)
        goals = [
            GoalFigure(name=figure_name("moves"), value=self.replicas_added, bound=self.lower_bound)
        ]
        if self.bytes_bound is not None:
            goals.append(GoalFigure(name=figure_name("bytes"), value=None, bound=self.bytes_bound))
        goals += [
            GoalFigure(name=g.name, value=g.value, bound=g.bound, before=g.before)
            for g in self.goals
        ]
        goals.append(
            GoalFigure(
                name=figure_name("leadership"),
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
            topic_rules=self.rules,
            scope=self.scope,
            only_topics=self.only_topics,
            replicas_left_on_drained=self.left_on_drained,
            leadership_forced=ls.forced if ls is not None else 0,
            leadership_chosen=changes - (ls.forced if ls is not None else 0),
            topics=self.topics,
            left_alone=self.left_alone,
            offline_kept=self.offline_kept,
            in_flight_kept=self.in_flight_kept,
            missing_topics=self.missing_topics,
            brokers_from=self.brokers_from,
            cluster_policies_known=self.cluster_policies_known,
            policy_changes=self.policy_changes,
            brokers=self.brokers,
            rack_to_rack=self.flows,
            batches=batches,
            degraded=self.degraded,
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


@dataclass(frozen=True)
class Ask:
    """What the operator asked of the plan beyond the state (README, `assign`: the scope
    rule and the leader rule)."""

    repair: bool = False  # --repair: partitions outside the scope that break their rule too
    only_topics: re.Pattern[str] | None = None  # --only-topics: no other topic changes
    first_rack: bool = False  # --leaders-in-first-rack
    defaults: DefaultPolicies = field(default_factory=DefaultPolicies)  # --default-policy


def _rules(
    present: Iterable[str],
    policies: Mapping[str, PlacementPolicy],
    topic_level: Iterable[str],
    defaults: DefaultPolicies,
) -> tuple[dict[str, PlacementPolicy], dict[str, str]]:
    """Every topic's rule, in Confluent's order: its own policy (the cluster's or the
    topics file's), the broker setting for an internal topic, the cluster default, else
    Kafka's rack-aware rule (no policy). Returns the policies and each topic's rule kind."""
    own = set(topic_level)
    out = dict(policies)
    kind = {t: "policy" for t in out if t in own}
    for topic in sorted(set(present) - set(out)):
        if topic in defaults.internal:
            out[topic] = defaults.internal[topic]
            kind[topic] = "default"
        elif defaults.default is not None:
            out[topic] = defaults.default
            kind[topic] = "default"
        else:
            kind[topic] = "rack-aware"
    return out, kind


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
    ask: Ask | None = None,
) -> AssignOutcome:
    """Plan ``topics`` over the inventory, check the plan, measure it. ``policies_known``:
    ``current`` holds the cluster's policies, so the policy changes can be told."""
    started = time.perf_counter()
    options = options or Options()
    ask = ask or Ask()
    inv = loaded.inventory
    ids = {b.id for b in inv.brokers}
    drained = _ids(ids, drain, "--drain")
    excluded = _ids(ids, exclude, "--exclude")
    assignments = current.assignments if current else []
    present = set(map(TOPIC, assignments))  # columns at C speed: up to millions
    # the cluster's policies, and those --topics gives (new or changed) over them
    given = {**(current.policies if current else {}), **{t.name: t.policy for t in topics}}
    policies, kinds = _rules(present, given, given, ask.defaults)
    missing = sorted({t.name for t in topics} - present) if current is not None else []
    fresh = {t.name: t.partitions for t in topics if t.partitions} if current is None else {}
    dead = _dead(assignments, inv.rack_of)
    offline, in_flight = _kept_as_they_are(current)
    frozen = offline | in_flight
    changes = _changes(topics, current) if policies_known else []
    scope = _scope(topics, changes, policies_known, options, ask, bool(drained or dead), frozen)
    in_use = {t: policies[t] for t in present | set(fresh) if t in policies}
    req = _request(inv, in_use, current, fresh, drained, excluded, scope, options, ask)
    solution = solve(req, options)
    plan = solution.plan
    before = req.before
    caps, sizes = req.caps, req.sizes
    _verify(req, plan, current is not None, options, ask)
    figures = balance_goals(
        inv, in_use, before, plan, drained, drained | excluded, caps, sizes, req.columns
    )
    added, removed, moved = movement(plan, before, sizes)
    election = [a.key for a in plan if a.key in before and _new_leader(before[a.key], a)]
    senders = _recorded_leaders(current, {a.key for a in plan})
    return AssignOutcome(
        plan=plan,
        rollback=[before[a.key] for a in plan if a.key in before],
        election=election,
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
        missing_topics=missing,
        unknown_brokers=sorted(b for b in dead if b not in inv.rack_of),
        rackless_brokers=sorted(b for b in dead if b in inv.rack_of),
        goals=figures.goals,
        brokers_from=brokers_from,
        cluster_policies_known=policies_known and current is not None,
        policy_changes=changes,
        brokers=figures.brokers,
        flows=rack_to_rack(inv.rack_of, plan, before, sizes, senders),
        senders=senders,
        degraded=degraded_report(current) if current is not None else None,
        topics=topic_figures(plan, before, sizes, kinds),
        left_alone=_left_alone(solution.left_alone, kinds),
        rules=_rule_counts(kinds, present | set(fresh)),
        scope="everything" if scope.everything else "asked",
        only_topics=ask.only_topics.pattern if ask.only_topics is not None else None,
        offline_kept=len(offline),
        in_flight_kept=len(in_flight),
    )


def _dead(assignments: Iterable[Any], rack_of: Mapping[int, str | None]) -> set[int]:
    """Brokers holding replicas that the inventory lacks, or places in no rack: dead, or
    on their way out; moving their replicas is asked for by the inventory itself."""
    held = set(chain.from_iterable(map(REPLICAS, assignments)))
    return {b for b in held if rack_of.get(b) is None}


def _kept_as_they_are(current: CurrentState | None) -> tuple[frozenset[Key], frozenset[Key]]:
    """The offline partitions (no leader to copy from) and those with a reassignment in
    flight (a second move on top would replace it halfway): left as they are."""
    if current is None:
        return frozenset(), frozenset()
    offline = frozenset(offline_keys(current))
    return offline, current.in_flight - offline


def _new_leader(old: PartitionAssignment, new: PartitionAssignment) -> bool:
    return old.replicas[0] != new.replicas[0]


def _scope(
    topics: Sequence[TopicSpec],
    changes: Sequence[PolicyChange],
    policies_known: bool,
    options: Options,
    ask: Ask,
    draining: bool,
    frozen: frozenset[Key],
) -> Scope:
    """What the plan may move: everything, or the topics asked for (and the brokers
    drained or dead, ``draining``), never the ``frozen`` partitions."""
    # the topics --topics asks to change: those whose policy differs from the cluster's
    # (or that are new) when the cluster's policies are known, else every one it names.
    # A topics file still asks about its topics when it restates their policies: the plan
    # then changes nothing, rather than repairing topics nobody named
    named = {c.topic for c in changes} if policies_known else {t.name for t in topics}
    asked = bool(draining or topics or options.rebalance or options.balance_leaders)
    return Scope(
        everything=ask.repair or options.rebalance or not asked,
        topics=frozenset(named),
        only=ask.only_topics,
        frozen=frozen,
    )


def _request(
    inv: Inventory,
    in_use: dict[str, PlacementPolicy],
    current: CurrentState | None,
    fresh: dict[str, int],
    drained: frozenset[int],
    excluded: frozenset[int],
    scope: Scope,
    options: Options,
    ask: Ask,
) -> Request:
    """The solver's request, once the policies in use are feasible on the inventory and,
    with sizes, the disks can hold them."""
    assignments = current.assignments if current else []
    feasible = in_use
    if ask.only_topics is not None:
        feasible = {t: p for t, p in in_use.items() if ask.only_topics.fullmatch(t)}
    check_feasible(inv, feasible, drained=drained, excluded=excluded, current=assignments)
    sizes = current.sizes if current else {}
    caps = disk_caps(inv, options.max_disk_usage) if sizes else {}
    if caps:
        check_capacity(inv, in_use, assignments, sizes, caps, drained=drained, excluded=excluded)
    read = current.columns if current is not None else None
    return Request(
        inv,
        in_use,
        assignments,
        fresh,
        drained,
        excluded,
        sizes,
        caps,
        {},
        read,
        scope,
        ask.first_rack,
    )


def _verify(
    req: Request, plan: list[PartitionAssignment], known: bool, options: Options, ask: Ask
) -> None:
    """The independent checker's verdict on ``plan`` (``known``: a current state was read,
    so the scope holds)."""
    context = PlanContext(
        req.inventory,
        req.policies,
        req.before,
        req.drained,
        req.excluded,
        req.fresh or None,
        req.caps,
        req.sizes,
        scope=req.scope if known else None,
        leaders_free=options.balance_leaders or ask.first_rack,
        first_rack=ask.first_rack,
    )
    verify_plan(plan, context)


def _left_alone(left: Mapping[str, int], kinds: Mapping[str, str]) -> list[LeftAlone]:
    """The topics the plan left alone, the most partitions first."""
    return [
        LeftAlone(topic=t, partitions=n, rule=kinds.get(t, "policy"))
        for t, n in sorted(left.items(), key=lambda tn: (-tn[1], tn[0]))
    ]


def _rule_counts(kinds: Mapping[str, str], present: Iterable[str]) -> dict[str, int]:
    """Topics of the cluster per rule: policy, default, rack-aware."""
    out = {"policy": 0, "default": 0, "rack-aware": 0}
    for topic in present:
        out[kinds.get(topic, "rack-aware")] += 1
    return out


def topic_figures(
    plan: Sequence[PartitionAssignment],
    before: Mapping[Key, PartitionAssignment],
    sizes: Mapping[Key, int],
    kinds: Mapping[str, str],
) -> list[TopicFigures]:
    """Per topic the plan changes: partitions changed, replicas added and removed, bytes
    copied (the added replicas' sizes; null when one is unknown) and leadership changes,
    largest first (bytes, then replicas added)."""
    rows: dict[str, list[Any]] = {}
    for a in plan:
        old = before.get(a.key)
        row = rows.setdefault(a.topic, [0, 0, 0, 0, 0])
        had = set(old.replicas) if old is not None else set()
        now = set(a.replicas)
        gained = len(now - had)
        row[0] += 1
        row[1] += gained
        row[2] += len(had - now)
        if row[3] is not None and gained:
            size = sizes.get(a.key) if old is not None else 0
            row[3] = None if size is None else row[3] + size * gained
        if old is not None and old.replicas and old.replicas[0] != a.replicas[0]:
            row[4] += 1
    out = [
        TopicFigures(
            topic=t,
            rule=kinds.get(t, "rack-aware"),
            partitions_changed=r[0],
            replicas_added=r[1],
            replicas_removed=r[2],
            bytes_to_move=r[3],
            leadership_changes=r[4],
        )
        for t, r in rows.items()
    ]
    out.sort(key=lambda f: (-(f.bytes_to_move or 0), -f.replicas_added, f.topic))
    return out


def _recorded_leaders(
    current: CurrentState | None, changed: set[Key]
) -> dict[Key, int | None] | None:
    """The leader ``current`` recorded for each partition in ``changed``; None when it
    records no leaders (reassignment JSON: the first replica then sends)."""
    if current is None or current.leaders is None:
        return None
    return {
        a.key: leader
        for a, leader in zip(current.assignments, current.leaders, strict=True)
        if a.key in changed
    }
