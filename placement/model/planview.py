"""What `plan show --format json` prints: the facts of a batch directory (from its
`summary.json`), of one batch of it, or of a lone reassignment file.

One model for the three cases, told apart by ``kind``, so a script reads one shape. The
batch fields are those `assign --out-dir` writes (docs/formats.md, batch directory);
fields a hand-edited summary lacks and `plan show` does not need come out as null.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from placement.model.kafka import INT64_MAX

PLAN_VIEW_VERSION: Literal[1] = 1

Count = Annotated[int, Field(ge=0, le=INT64_MAX)]
Bytes = Annotated[int | None, Field(ge=0, le=INT64_MAX, description="null: unknown")]
Eta = Annotated[float | None, Field(ge=0, description="seconds; null: no throttle or no size")]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class BrokerBytes(_Model):
    broker: Count
    bytes: Bytes = None


class BatchView(_Model):
    batch: Count | None = None
    file: str
    rollback: str | None
    partitions: Count
    replicas_added: Count
    bytes: Bytes
    senders: list[BrokerBytes]
    receivers: list[BrokerBytes]
    max_moves_per_broker: Count
    eta_seconds: Eta
    oversized: bool | None = Field(
        default=None,
        description="one partition that copies more than caps.batch_bytes on its own, so "
        "a batch alone",
    )


class TotalView(_Model):
    batches: Count
    batches_lower_bound: Count | None = None
    partitions: Count
    replicas_added: Count
    bytes: Bytes
    eta_seconds: Eta
    oversized: Count | None = Field(
        default=None, description="batches holding one oversized partition each"
    )


class CapsView(_Model):
    """The caps the split was made under (null: not given); every one given holds in each
    batch, except that an oversized partition is a batch alone."""

    batch_size: Count | None = Field(default=None, description="partitions per batch")
    max_moves_per_broker: Count | None = Field(
        default=None, description="replicas a broker receives plus gives up, per batch"
    )
    batch_bytes: Count | None = Field(default=None, description="bytes a batch copies")


class LeadersView(_Model):
    file: str
    rollback: str | None = None
    partitions: Count
    election: str | None
    elections: Count | None = None


class ReassignmentView(_Model):
    """A reassignment file on its own: what it lists, not what it moves (that needs the
    current assignment)."""

    partitions: Count
    topics: Count
    replicas: Count
    brokers: Count


class PlanView(_Model):
    """``kind``: ``batches`` (an --out-dir: every batch, the leaders step, the order),
    ``batch`` (one file of an --out-dir: its row only) or ``reassignment`` (a file with no
    summary beside it: only what it lists)."""

    version: Literal[1] = PLAN_VIEW_VERSION
    path: str
    kind: Literal["batches", "batch", "reassignment"]
    throttle_bytes_per_s: Bytes = None
    caps: CapsView | None = None
    total: TotalView | None = None
    order: list[str] = Field(default_factory=list, description="the files, in the order to apply")
    batches: list[BatchView] = Field(default_factory=list)
    leaders: LeadersView | None = None
    reassignment: ReassignmentView | None = None
