"""What `assign` reports about a plan, as JSON (`--summary FILE`, `--format json`): the
model behind schemas/assign-summary.schema.json (docs/formats.md, assign summary).

The same figures the text summary prints, and the policy changes that must reach the
cluster before the plan runs (docs/formats.md, policy changes).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from placement.model.policy import PlacementPolicy


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
    unmanaged_topics: list[str] = Field(
        description="in the cluster, with no policy in --topics or the cluster: left alone"
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
