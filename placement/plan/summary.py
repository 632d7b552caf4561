"""What `assign` reports about a plan, as JSON (`--summary FILE`, `--format json`): the
model behind schemas/assign-summary.schema.json (docs/formats.md, assign summary).

The same figures the text summary prints, the policy changes that must reach the
cluster before the plan runs (docs/formats.md, policy changes), and what the HTML page of
the plan draws (`assign --report`): every broker's load before and after, the bytes each
rack sends to each rack, and with --out-dir the batches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from placement.model.assignment import Key, PartitionAssignment
from placement.model.planview import PlanView
from placement.model.policy import PlacementPolicy
from placement.plan.degraded import Degraded
from placement.solver.goals import summary_order


def policy_document(policy: PlacementPolicy) -> dict[str, Any]:
    """A policy as Confluent writes it: `observers` and `observerPromotionPolicy` only when
    set (the placement schema allows no null), keys in the model's order."""
    doc = policy.model_dump(mode="json", exclude_none=True)
    if not doc.get("observers"):
        doc.pop("observers", None)
    return doc


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GoalFigure(_Model):
    name: str = Field(description="the goal, in the goal order (README: how a plan is chosen)")
    value: int | float | None = Field(description="after the plan; null: not measured")
    bound: int | float | None = Field(description="no plan does better; null: none computed")
    before: int | float | None = Field(
        default=None, description="before the plan (balance goals); null otherwise"
    )
    forced: int | None = Field(
        default=None,
        description="leadership changes only: those forced because the old leader left its "
        "partition or its lead rack",
    )


class RackFigures(_Model):
    rack: str
    replicas_before: tuple[int, int] = Field(description="[min, max] replicas per broker")
    replicas_after: tuple[int, int]
    leaders_before: tuple[int, int] | None = Field(
        default=None,
        description="[min, max] preferred leaders per broker; null: no topic leads here",
    )
    leaders_after: tuple[int, int] | None = None


class BrokerFigures(_Model):
    """One broker's load before and after the plan, over every topic of the cluster."""

    broker: int
    rack: str | None = Field(description="from the inventory; null: none there, or absent")
    status: Literal["active", "drained", "excluded", "absent"] = Field(
        description="drained (--drain: emptied), excluded (--exclude: takes no new "
        "replica), absent (holds replicas but is not in the inventory: emptied), else active"
    )
    replicas_before: int
    replicas_after: int
    bytes_before: int | None = Field(
        description="the sizes of its replicas; null: one of them has no known size"
    )
    bytes_after: int | None = Field(
        description="the same after the plan (a partition a fresh layout creates holds 0)"
    )
    leaders_before: int = Field(description="preferred leaders (first replicas) it holds")
    leaders_after: int


class RackFlow(_Model):
    """Replicas the plan adds in one rack whose data comes from another (or the same)."""

    from_rack: str | None = Field(
        description="the rack of the partition's sending broker: its current leader, which "
        "the new replica fetches from (the batches' sender; the first replica where no "
        "leader is recorded); null: that broker has no rack or is not in the inventory"
    )
    to_rack: str | None = Field(description="the rack of the broker gaining the replica")
    replicas: int = Field(description="replicas added")
    bytes: int | None = Field(description="their bytes; null: one of them has no known size")


def crosses_racks(from_rack: str | None, to_rack: str | None) -> bool:
    """Whether a new replica's data crosses racks (docs/definitions.md, movement): its
    sending broker's rack differs from the receiving broker's (two unknown racks count
    as one, as `score`'s rack codes do)."""
    return from_rack != to_rack


def cross_rack_bytes(flows: Sequence[RackFlow]) -> int | None:
    """The cross-rack bytes of ``flows``; None when one crossing flow has no known size."""
    total: int | None = 0
    for f in flows:
        if crosses_racks(f.from_rack, f.to_rack):
            total = None if total is None or f.bytes is None else total + f.bytes
    return total


def rack_to_rack(
    rack_of: Mapping[int, str | None],
    plan: Sequence[PartitionAssignment],
    before: Mapping[Key, PartitionAssignment],
    sizes: Mapping[Key, int],
    leaders: Mapping[Key, int | None] | None = None,
) -> list[RackFlow]:
    """Replicas added and their bytes from rack to rack (docs/definitions.md, movement):
    each new replica of an existing partition copies from its sending broker (`sender`:
    the recorded leader in ``leaders``, else the first replica), so its data goes from
    that broker's rack to the new broker's. Racks by name, none last."""
    from placement.plan.batches import sender

    led = leaders or {}
    replicas: dict[tuple[str | None, str | None], int] = {}
    moved: dict[tuple[str | None, str | None], int | None] = {}
    for a in plan:
        old = before.get(a.key)
        if old is None:  # created by the plan: no data to copy
            continue
        source = sender(old, led.get(a.key))
        from_rack = rack_of.get(source) if source is not None else None
        size = sizes.get(a.key)
        for b in set(a.replicas) - set(old.replicas):
            pair = (from_rack, rack_of.get(b))
            replicas[pair] = replicas.get(pair, 0) + 1
            held = moved.get(pair, 0)
            moved[pair] = None if held is None or size is None else held + size
    order = sorted(replicas, key=lambda p: ((p[0] is None, p[0] or ""), (p[1] is None, p[1] or "")))
    return [
        RackFlow(from_rack=f, to_rack=t, replicas=replicas[(f, t)], bytes=moved[(f, t)])
        for f, t in order
    ]


RuleKind = Literal["policy", "default", "rack-aware"]


class TopicFigures(_Model):
    """What the plan changes in one topic (docs/definitions.md, movement)."""

    topic: str
    rule: RuleKind = Field(
        description="the rule the topic follows: its own policy, the cluster default (or "
        "an internal topic's broker setting), or Kafka's rack-aware rule"
    )
    partitions_changed: int
    replicas_added: int
    replicas_removed: int
    bytes_to_move: int | None = Field(
        description="bytes of the replicas added; null: a partition that gains replicas "
        "has no known size"
    )
    leadership_changes: int = Field(description="partitions whose preferred leader changes")


class LeftAlone(_Model):
    """A topic with partitions that break their rule outside what the plan was asked to
    change: reported, not changed (`--repair` changes them)."""

    topic: str
    partitions: int = Field(description="partitions breaking their rule, left as they are")
    rule: RuleKind


class PolicyChange(_Model):
    """A topic whose placement policy in --topics is not the one the cluster has."""

    topic: str
    action: Literal["alter", "create"] = Field(
        description="alter: the topic exists, its confluent.placement.constraints changes "
        "(kafka-configs --alter --replica-placement); create: the topic does not exist yet "
        "(kafka-topics --create --replica-placement)"
    )
    file: str = Field(description="the policy file's name in --policy-dir")
    before: PlacementPolicy | None = Field(
        description="the policy the cluster has; null: none set, or no such topic"
    )
    after: PlacementPolicy = Field(description="the policy --topics asks for")
    partitions: int | None = Field(description="create: the partition count; null for alter")
    min_isr: int | None = Field(description="create: min.insync.replicas, when --topics sets it")

    @field_serializer("before", "after")
    def _as_confluent_writes_it(self, policy: PlacementPolicy | None) -> dict[str, Any] | None:
        return policy_document(policy) if policy is not None else None


class AssignSummary(_Model):
    """What `mrc-plan assign` reports (schema: schemas/assign-summary.schema.json)."""

    model_config = ConfigDict(
        title="mrc-plan assign summary",
        json_schema_extra={"$id": "https://mrc-plan.dev/schemas/assign-summary.schema.json"},
    )

    engine: str = Field(description="which planner ran")
    partitions_changed: int
    replicas_added: int
    replicas_removed: int
    bytes_to_move: int | None = Field(
        description="bytes of the added replicas; null: a partition that gains replicas "
        "has no known size"
    )
    leadership_changes: int = Field(description="partitions whose preferred leader changes")
    goals: list[GoalFigure]
    racks: list[RackFigures]
    topic_rules: dict[str, int] = Field(
        description="the cluster's topics per rule they follow: policy (their own), "
        "default (the cluster default or an internal topic's broker setting), rack-aware "
        "(Kafka's rule: no policy anywhere)"
    )
    scope: Literal["everything", "asked"] = Field(
        description="everything: every partition that breaks its rule may change "
        "(--repair, --rebalance, or nothing asked); asked: only partitions on drained or "
        "dead brokers and the topics --topics sets"
    )
    only_topics: str | None = Field(description="--only-topics, when given")
    replicas_left_on_drained: int = Field(
        description="replicas on drained brokers after the plan (0 unless --only-topics or "
        "an offline partition keeps some there)"
    )
    leadership_forced: int = Field(
        description="leadership changes forced: the old leader left the partition or "
        "became an observer"
    )
    leadership_chosen: int = Field(
        description="the other leadership changes (--balance-leaders, --leaders-in-first-rack)"
    )
    topics: list[TopicFigures] = Field(
        description="per topic the plan changes, largest first (bytes, then replicas added)"
    )
    left_alone: list[LeftAlone] = Field(
        description="topics with partitions outside the scope that break their rule, "
        "left alone, most first; --repair changes them"
    )
    offline_kept: int = Field(
        description="offline partitions (no leader): never moved, whatever was asked"
    )
    in_flight_kept: int = Field(
        default=0,
        description="partitions left alone because a reassignment of them is in progress "
        "(Adding/Removing Replicas in --current; an offline one counts in offline_kept): "
        "the plan starts from the layout that move leads to and plans no second move",
    )
    missing_topics: list[str] = Field(
        description="in --topics, not in the cluster: not planned (see policy_changes)"
    )
    brokers_from: Literal["inventory", "snapshot"] = Field(
        description="where the brokers and racks came from: --inventory, or the brokers "
        "table of the --current snapshot"
    )
    cluster_policies_known: bool = Field(
        description="whether --current holds the topics' policies (describe output or a "
        "snapshot); false: policy_changes cannot be told"
    )
    policy_changes: list[PolicyChange] = Field(
        description="topics whose policy must be altered (or that must be created) before "
        "the reassignment runs, by topic"
    )
    brokers: list[BrokerFigures] = Field(
        description="every broker of the inventory, and those holding replicas it lacks, by id"
    )
    rack_to_rack: list[RackFlow] = Field(
        description="replicas added and their bytes by (from_rack, to_rack), each pair "
        "that moves something; partitions a fresh layout creates copy nothing and are left out"
    )
    batches: PlanView | None = Field(
        default=None,
        description="with --out-dir: the batches, as `plan show DIR --format json` prints "
        "them; null otherwise",
    )
    degraded: Degraded | None = Field(
        default=None,
        description="the cluster before the plan: partitions under-replicated, under min "
        "ISR or offline, from the ISRs and leaders --current records; null: no --current",
    )

    @field_validator("goals")
    @classmethod
    def _in_goal_order(cls, goals: list[GoalFigure]) -> list[GoalFigure]:
        """The goals as `placement.solver.goals.summary_order` lists them (a name it lacks
        last, in the order given)."""
        return ordered_goals(goals)


def ordered_goals(goals: list[GoalFigure]) -> list[GoalFigure]:
    """``goals`` in the order of the goals' figures (`placement.solver.goals`)."""
    order = {name: i for i, name in enumerate(summary_order())}
    return sorted(goals, key=lambda g: order.get(g.name, len(order)))
