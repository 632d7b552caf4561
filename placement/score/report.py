"""The `score` report (JSON, schema in schemas/score-report.schema.json) and the score.

Score of a plan, higher is better, at most 100:

    100 - 50 * violations_after / partitions
        - 20 * replicas_added / replicas
        - 20 * min(1, stddev / mean of replicas per broker)
        - 10 * (offline + under_min_isr over every rack failure) / (partitions * racks)

Correctness first (a plan that leaves policy breaches loses most), then data moved,
then balance, then what a rack failure would take offline or make unwritable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Stats(_Model):
    min: float
    max: float
    mean: float
    stddev: float  # population

    @classmethod
    def of(cls, values: Sequence[int]) -> Stats:
        """The statistics of ``values`` (all 0 for none)."""
        if not values:
            return cls(min=0, max=0, mean=0.0, stddev=0.0)
        mean = sum(values) / len(values)
        var = sum((v - mean) ** 2 for v in values) / len(values)
        return cls(min=min(values), max=max(values), mean=mean, stddev=math.sqrt(var))


class Balance(_Model):
    replicas: Stats
    leaders: Stats
    bytes: Stats


class RackFailure(_Model):
    offline: int
    under_min_isr: int
    promoted: int


class SnapshotInfo(_Model):
    brokers: int
    topics: int
    partitions: int
    replicas: int
    partitions_without_size: int = Field(
        description="partitions whose size_bytes is null: when not 0, bytes per broker "
        "count only the partitions with a size"
    )


class BrokerLoad(_Model):
    broker: int
    rack: str | None
    replicas: int
    leaders: int
    bytes: int


class StateMetrics(_Model):
    violations: int
    balance: Balance
    rack_failure: dict[str, RackFailure]
    brokers: list[BrokerLoad]  # every broker of the inventory, by id


class PlanScore(_Model):
    plan: str
    partitions_changed: int
    replicas_added: int
    replicas_removed: int
    bytes_to_move: int = Field(
        description="bytes of the replicas the plan adds, over the partitions whose size is "
        "known: a lower bound when bytes_unknown_partitions is not 0"
    )
    cross_rack_bytes: int = Field(
        description="of bytes_to_move, the replicas added in another rack than their "
        "sending broker's (the partition's recorded leader, else its first replica); "
        "partitions of unknown size left out likewise"
    )
    bytes_unknown_partitions: int = Field(
        description="partitions the plan adds replicas to whose size the snapshot does not "
        "know (null size_bytes): when not 0, the bytes to move are unknown"
    )
    violations_before: int
    violations_after: int
    balance: Balance
    rack_failure: dict[str, RackFailure]
    brokers: list[BrokerLoad]  # after the plan: every broker of the inventory, by id
    score: float


class ScoreReport(_Model):
    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        title="mrc-plan score report",
        json_schema_extra={"$id": "https://mrc-plan.dev/schemas/score-report.schema.json"},
    )

    snapshot: SnapshotInfo
    baseline: StateMetrics
    plans: list[PlanScore]


def score(
    *,
    partitions: int,
    replicas: int,
    violations_after: int,
    replicas_added: int,
    balance: Balance,
    rack_failure: dict[str, RackFailure],
) -> float:
    """The formula in the module docstring, rounded to 3 decimals."""
    mean = balance.replicas.mean
    spread = min(1.0, balance.replicas.stddev / mean) if mean else 0.0
    lost = sum(f.offline + f.under_min_isr for f in rack_failure.values())
    value = (
        100
        - 50 * violations_after / max(1, partitions)
        - 20 * replicas_added / max(1, replicas)
        - 20 * spread
        - 10 * lost / max(1, partitions * max(1, len(rack_failure)))
    )
    return round(value, 3)


def ranked(plans: Sequence[PlanScore]) -> list[PlanScore]:
    """Best plan first: fewest violations left after it, then the highest score, then by
    name. A plan leaving more partitions breaking their policy never ranks above one
    leaving fewer, however much less it moves (docs/definitions.md, score)."""
    return sorted(plans, key=lambda p: (p.violations_after, -p.score, p.plan))
