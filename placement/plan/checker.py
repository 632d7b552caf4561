"""The independent plan checker: every plan is verified here before it is written.

It shares nothing with the solver but the models, so a solver bug cannot hide itself.
A failed check is a bug in mrc-plan (exit 101), never a plan written anyway.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter, not_

from placement.errors import MrcPlanError
from placement.model.assignment import Key, PartitionAssignment
from placement.model.inventory import Inventory
from placement.model.policy import PlacementPolicy
from placement.model.rackaware import rack_sizes, spread_ok
from placement.model.scope import Scope


@dataclass(frozen=True, slots=True)
class PlanProblem:
    topic: str
    partition: int
    message: str

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}: {self.message}"


class PlanCheckError(MrcPlanError):
    """The planner produced a plan that breaks a hard constraint: a bug."""

    def __init__(self, problems: list[PlanProblem]) -> None:
        shown = "; ".join(str(p) for p in problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        super().__init__(
            f"the plan failed its independent check: {shown}{more}",
            "this is a bug in mrc-plan; nothing was written. Please report it with the inputs.",
        )
        self.problems = problems


@dataclass(frozen=True)
class PlanContext:
    inventory: Inventory
    policies: Mapping[str, PlacementPolicy]
    current: Mapping[Key, PartitionAssignment] = field(default_factory=dict)
    drained: frozenset[int] = frozenset()
    excluded: frozenset[int] = frozenset()
    # for a fresh assignment: the partitions every topic must have (0..n-1)
    partition_counts: Mapping[str, int] | None = None
    # broker -> the bytes it may hold, and partition sizes (unknown: 0 bytes)
    disk_caps: Mapping[int, int] = field(default_factory=dict)
    sizes: Mapping[Key, int] = field(default_factory=dict)
    # what the plan may change (None: anything); the leader rule: a partition keeps its
    # preferred leader while it stays a sync replica, unless leaders are to be evened
    # (--balance-leaders) or put in the first rack (--leaders-in-first-rack)
    scope: Scope | None = None
    leaders_free: bool = False
    first_rack: bool = False


def _form(a: PartitionAssignment, brokers: Collection[int], where: str) -> Iterator[str]:
    """Kafka's own rules on one entry, whatever the policy: a non-empty list of distinct
    brokers the cluster has (``where`` names its source), the observers a proper suffix."""
    reps = a.replicas
    if not reps:
        yield "empty replica list"
        return
    if len(set(reps)) != len(reps):
        yield f"a broker appears twice in {list(reps)}"
    if len(a.observers) >= len(reps) or reps[len(reps) - len(a.observers) :] != a.observers:
        yield f"observers {list(a.observers)} are not a proper suffix of replicas {list(reps)}"
    unknown = [b for b in reps if b not in brokers]
    if unknown:
        yield f"brokers {unknown} are not in {where}"


def _check_one(
    a: PartitionAssignment,
    ctx: PlanContext,
    rack_of: Mapping[int, str | None],
    sizes: Mapping[str, int],
) -> Iterable[str]:
    yield from _form(a, rack_of.keys(), "the inventory")
    reps = a.replicas
    if not reps:
        return
    rackless = [b for b in reps if b in rack_of and rack_of[b] is None]
    if rackless:
        yield f"brokers {rackless} have no broker.rack"
    drained = sorted(set(reps) & ctx.drained)
    if drained:
        yield f"replicas on drained brokers {drained}"
    before = ctx.current.get(a.key)
    new = set(reps) - set(before.replicas if before else ())
    excluded = sorted(new & ctx.excluded)
    if excluded:
        yield f"new replicas on excluded brokers {excluded}"
    if (
        before is not None
        and not ctx.leaders_free
        and before.replicas
        and before.replicas[0] in a.sync
        and a.replicas[0] != before.replicas[0]
    ):
        yield (
            f"preferred leader moved from {before.replicas[0]} to {a.replicas[0]}, "
            f"though {before.replicas[0]} stays a sync replica"
        )
    policy = ctx.policies.get(a.topic)
    if policy is None:  # Kafka's rack-aware rule
        counts: dict[str, int] = {}
        for b in reps:
            r = rack_of.get(b)
            if r is not None:
                counts[r] = counts.get(r, 0) + 1
        if a.observers:
            yield f"observers {list(a.observers)} on a topic without a placement policy"
        if not spread_ok(counts, sizes, len(reps)):
            yield (
                f"replicas per rack {dict(sorted(counts.items()))} break Kafka's rack-aware "
                f"rule over racks of {dict(sorted(sizes.items()))} brokers"
            )
        return
    got: dict[str | None, list[int]] = {}
    for b in a.sync:
        got.setdefault(rack_of.get(b), [0, 0])[0] += 1
    for b in a.observers:
        got.setdefault(rack_of.get(b), [0, 0])[1] += 1
    want = policy.per_rack()
    if {r: tuple(c) for r, c in got.items()} != want:
        shown = {r: tuple(c) for r, c in got.items()}
        yield f"per-rack (sync, observers) {shown} differ from the policy's {want}"
    first_rack = policy.lead_rack
    # a topic the plan creates leads from its first rack, as Confluent creates one
    created = before is None and ctx.partition_counts is not None
    if (ctx.first_rack or created) and rack_of.get(reps[0]) != first_rack:
        yield f"preferred leader {reps[0]} is not in the first replicas rack {first_rack!r}"


def check_plan(plan: Iterable[PartitionAssignment], ctx: PlanContext) -> list[PlanProblem]:
    """Every hard constraint (the README's goal order, goal 1; docs/definitions.md, policy
    violations), for every planned partition and the cluster after it."""
    rack_of = ctx.inventory.rack_of
    sizes = rack_sizes(ctx.inventory, ctx.drained)
    problems: list[PlanProblem] = []
    seen: set[Key] = set()
    planned: dict[Key, PartitionAssignment] = {}
    for a in plan:
        if a.key in seen:
            problems.append(PlanProblem(a.topic, a.partition, "listed twice in the plan"))
            continue
        seen.add(a.key)
        if ctx.disk_caps:
            planned[a.key] = a
        if ctx.current and a.key not in ctx.current:
            problems.append(PlanProblem(a.topic, a.partition, "not a partition of the cluster"))
        if ctx.partition_counts is not None and not (
            0 <= a.partition < ctx.partition_counts.get(a.topic, 0)
        ):
            problems.append(PlanProblem(a.topic, a.partition, "not a partition of the topic"))
        problems.extend(
            PlanProblem(a.topic, a.partition, m) for m in _check_one(a, ctx, rack_of, sizes)
        )
        old = ctx.current.get(a.key)
        if ctx.scope is not None and old is not None:
            problems.extend(
                PlanProblem(a.topic, a.partition, m) for m in _outside(old, a, ctx, ctx.scope)
            )
    if ctx.partition_counts is not None:
        for topic, count in ctx.partition_counts.items():
            missing = [p for p in range(count) if (topic, p) not in seen]
            if missing:
                problems.append(
                    PlanProblem(topic, missing[0], f"{len(missing)} partition(s) left unassigned")
                )
    if ctx.drained:
        # every partition of the cluster: the test per partition runs at C speed
        clear = map(ctx.drained.isdisjoint, map(attrgetter("replicas"), ctx.current.values()))
        for key in compress(ctx.current, map(not_, clear)):
            if key not in seen and (ctx.scope is None or ctx.scope.allows(key)):
                problems.append(PlanProblem(*key, "still on a drained broker after the plan"))
    if planned:
        problems.extend(_check_disks(planned, ctx))
    return problems


def _outside(
    old: PartitionAssignment, new: PartitionAssignment, ctx: PlanContext, scope: Scope
) -> Iterator[str]:
    """A change the operator did not ask for: a partition the scope keeps out of any plan,
    or one that neither sits on a broker that cannot keep it nor is asked for (a disk cap
    may move any partition of the plan's racks: a hard limit). Evening leaders
    (``leaders_free``) may reorder any partition's sync replicas."""
    if not scope.allows(old.key):
        yield "changed, though --only-topics or its state (offline) keeps it out of the plan"
        return
    if (
        ctx.leaders_free
        and set(old.replicas) == set(new.replicas)
        and set(old.observers) == set(new.observers)
    ):
        return
    rack_of = ctx.inventory.rack_of
    displaced = any(
        b in ctx.drained or b not in rack_of or rack_of[b] is None for b in old.replicas
    )
    if not scope.asks(old.key, displaced) and not ctx.disk_caps:
        yield "changed, though it lies outside what the plan was asked to change"


def check_form(
    plan: Iterable[PartitionAssignment],
    partitions: Collection[Key],
    brokers: Collection[int],
    where: str,
) -> list[PlanProblem]:
    """Kafka's rules alone, no policy: each entry is one of the cluster's ``partitions``,
    listed once, and holds distinct ``brokers`` with its observers a proper suffix. For a
    plan replayed as a what-if (`snapshot apply`): it may break policies, never these."""
    problems: list[PlanProblem] = []
    seen: set[Key] = set()
    for a in plan:
        if a.key in seen:
            problems.append(PlanProblem(a.topic, a.partition, "listed twice in the plan"))
            continue
        seen.add(a.key)
        if a.key not in partitions:
            problems.append(PlanProblem(a.topic, a.partition, "not a partition of the cluster"))
        problems.extend(PlanProblem(a.topic, a.partition, m) for m in _form(a, brokers, where))
    return problems


def _check_disks(planned: Mapping[Key, PartitionAssignment], ctx: PlanContext) -> list[PlanProblem]:
    """Brokers the plan gives more bytes than they held, ending above their disk cap. A
    broker already over its cap and not made worse is left alone: the plan may not be able
    to empty it, and it did not cause it."""
    gained: dict[int, int] = {}
    first: dict[int, Key] = {}  # the lowest partition the plan adds to the broker, to name
    for key, a in planned.items():
        size = ctx.sizes.get(key, 0)
        if not size:
            continue
        old = ctx.current.get(key)
        had = set(old.replicas) if old is not None else set()
        now = set(a.replicas)
        for b in now - had:
            gained[b] = gained.get(b, 0) + size
            first[b] = min(first.get(b, key), key)
        for b in had - now:
            gained[b] = gained.get(b, 0) - size
    grew = {b for b, g in gained.items() if g > 0 and b in ctx.disk_caps}
    if not grew:
        return []
    held = dict.fromkeys(grew, 0)
    for key, a in ctx.current.items():
        size = ctx.sizes.get(key, 0)
        if size:
            for b in a.replicas:
                if b in held:
                    held[b] += size
    problems = []
    for b in sorted(grew):
        cap, total = ctx.disk_caps[b], held[b] + gained[b]
        if total > cap:
            problems.append(
                PlanProblem(
                    *first[b],
                    f"broker {b} would hold {total:,} bytes, above its disk cap of {cap:,} "
                    f"(it held {held[b]:,} before the plan)",
                )
            )
    return problems


def verify_plan(plan: list[PartitionAssignment], ctx: PlanContext) -> None:
    """Raise :class:`PlanCheckError` unless ``plan`` passes every check."""
    problems = check_plan(plan, ctx)
    if problems:
        raise PlanCheckError(problems)


def check_batches(
    plan: Iterable[PartitionAssignment],
    current: Mapping[Key, PartitionAssignment],
    batches: Iterable[Iterable[PartitionAssignment]],
    leaders: Iterable[PartitionAssignment],
    *,
    batch_size: int | None,
    max_moves_per_broker: int | None,
) -> list[PlanProblem]:
    """A split of ``plan`` into data ``batches`` and a final ``leaders`` step, checked on
    its own terms: each partition moves in one batch at most; a batch entry holds the
    planned brokers in the planned roles (the order of sync replicas may differ: the old
    leader stays first); the caps hold; and applying every batch, then the leaders step,
    to ``current`` gives exactly ``plan``."""
    want = {a.key: a for a in plan}
    state = dict(current)
    problems: list[PlanProblem] = []
    moved: set[Key] = set()
    for number, batch in enumerate(batches, 1):
        entries = list(batch)
        if batch_size is not None and len(entries) > batch_size:
            problems.append(
                PlanProblem(*entries[0].key, f"batch {number} holds {len(entries)} partitions")
            )
        per_broker: dict[int, int] = {}
        for a in entries:
            if a.key in moved:
                problems.append(PlanProblem(*a.key, f"moves again in batch {number}"))
            moved.add(a.key)
            target = want.get(a.key)
            if target is None or set(a.sync) != set(target.sync) or a.observers != target.observers:
                problems.append(PlanProblem(*a.key, f"batch {number} differs from the plan"))
            before = set(current[a.key].replicas) if a.key in current else set()
            for b in set(a.replicas) ^ before:
                per_broker[b] = per_broker.get(b, 0) + 1
            state[a.key] = a
        over = {b: n for b, n in per_broker.items() if n > (max_moves_per_broker or n)}
        if over:
            b = min(over)
            problems.append(
                PlanProblem(
                    *entries[0].key, f"batch {number}: broker {b} has {over[b]} moves, over the cap"
                )
            )
    for a in leaders:
        state[a.key] = a
    for key, a in want.items():
        if state.get(key) != a:
            problems.append(PlanProblem(*key, "the batches and leaders step do not give the plan"))
    return problems
