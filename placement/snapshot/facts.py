"""Vectorized facts about a snapshot: load per broker, policy violations and the state of
each partition's ISR (docs/definitions.md, policy violations), and what `snapshot show`
prints as JSON (schemas/snapshot-summary.schema.json).

Violations and the ISR state are counted by the MRC9xx rules' own checks
(placement/rules/partitions.py), the ones `validate` audits a cluster with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import BaseModel, ConfigDict, Field

from placement.io.snapshot import IN_FLIGHT, Snapshot, list_arrays, snapshot_policies
from placement.plan.balance import rack_minmax
from placement.rules.partitions import (
    Violation,
    explain_rows,
    isr_state,
    lookup_ids,
    topic_policies,
    violation_mask,
)


@dataclass(frozen=True)
class ClusterSummary:
    brokers: int
    brokers_per_rack: dict[str, int]
    topics: int
    partitions: int
    replicas: int
    total_bytes: int
    replicas_per_broker: dict[str, tuple[int, int]]  # rack -> (min, max) over its brokers
    leaders_per_broker: tuple[int, int]
    topics_without_policy: int
    violations: int
    offline: int  # the IsrState counts, over the whole table
    under_min_isr: int
    under_replicated: int
    reassigning: int = 0  # partitions with a reassignment in flight (adding/removing)


def summarize(snap: Snapshot) -> ClusterSummary:
    b = snap.brokers
    ids = b.column("broker_id").to_numpy().astype(np.int64)
    racks = b.column("rack").to_pylist()
    per_rack: dict[str, int] = {}
    for r in racks:
        per_rack[r or "(no rack)"] = per_rack.get(r or "(no rack)", 0) + 1
    offsets, values = list_arrays(snap.partitions.column("replicas"))
    # counts per inventory broker, by its position in ``ids`` (replicas on brokers the
    # inventory lacks fall in the extra last slot)
    where = lookup_ids(ids, np.arange(ids.size), values, missing=ids.size)
    load = np.bincount(where, minlength=ids.size + 1)[: ids.size]
    leaders = np.bincount(where[offsets[:-1][np.diff(offsets) > 0]], minlength=ids.size + 1)
    leaders = leaders[: ids.size]
    members: dict[str, list[int]] = {}
    for i, r in enumerate(racks):  # by position in ``ids``: an id may repeat in a snapshot
        members.setdefault(r or "(no rack)", []).append(i)
    by_rack = rack_minmax(dict(enumerate(load.tolist())), dict(sorted(members.items())))
    sizes = snap.partitions.column("size_bytes")
    lengths = pc.list_value_length(snap.partitions.column("replicas"))
    total = pc.sum(pc.multiply(pc.fill_null(sizes, 0), pc.cast(lengths, pa.int64()))).as_py()
    row_policy, _ = topic_policies(snap)
    placement = snap.topics.column("placement")
    state = isr_state(snap)
    return ClusterSummary(
        brokers=len(ids),
        brokers_per_rack=dict(sorted(per_rack.items())),
        topics=snap.topics.num_rows,
        partitions=snap.partitions.num_rows,
        replicas=int(values.size),
        total_bytes=int(total or 0),
        replicas_per_broker=by_rack,
        leaders_per_broker=_leader_range(leaders, load),
        topics_without_policy=int(snap.topics.num_rows - pc.sum(pc.is_valid(placement)).as_py()),
        violations=int(violation_mask(snap).sum()) if row_policy.size else 0,
        offline=int(state.offline.sum()),
        under_min_isr=int(state.under_min_isr.sum()),
        under_replicated=int(state.under_replicated.sum()),
        reassigning=_reassigning(snap.partitions),
    )


def _reassigning(partitions: pa.Table) -> int:
    """Rows with a reassignment in flight: an `adding` or `removing` list not empty (a
    table built without those columns has none)."""
    moving = [
        pc.greater(pc.fill_null(pc.list_value_length(partitions.column(c)), 0), 0)
        for c in IN_FLIGHT
        if c in partitions.column_names
    ]
    if not moving:
        return 0
    return int(pc.sum(pc.or_(*moving) if len(moving) > 1 else moving[0]).as_py() or 0)


def _leader_range(leaders: np.ndarray, load: np.ndarray) -> tuple[int, int]:
    """(min, max) preferred leaders per broker, over the brokers holding replicas: an
    inventory broker without any (new, or drained) leads nothing by design, and would
    pin the minimum at 0. A broker holding replicas and leading none counts (0)."""
    holding = leaders[load > 0]
    if holding.size == 0:
        return 0, 0
    return int(holding.min()), int(holding.max())


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RackLoad(_Model):
    rack: str = Field(description='a broker.rack; "(no rack)" gathers brokers without one')
    brokers: int
    replicas_per_broker_min: int
    replicas_per_broker_max: int


class PartitionViolation(_Model):
    topic: str
    partition: int
    replicas: list[int] = Field(description="sync replicas first, observers last")
    observers: list[int]
    problems: list[str] = Field(description="what breaks the policy, one phrase each")


class SnapshotReport(_Model):
    """What `mrc-plan snapshot show --format json` prints."""

    model_config = ConfigDict(
        title="mrc-plan snapshot show report",
        json_schema_extra={"$id": "https://mrc-plan.dev/schemas/snapshot-summary.schema.json"},
    )

    version: Literal[1] = 1
    snapshot: str = Field(description="the snapshot directory, as given")
    brokers: int
    topics: int
    topics_without_policy: int
    partitions: int
    replicas: int
    total_bytes: int = Field(description="size_bytes times the replica count, summed; null as 0")
    leaders_per_broker_min: int = Field(description="preferred leaders (first replicas)")
    leaders_per_broker_max: int
    violations: int = Field(description="partitions breaking their topic's placement policy")
    offline: int = Field(description="partitions with an ISR recorded and no leader")
    under_min_isr: int = Field(
        description="partitions with a leader and fewer in the ISR than the topic's min_isr "
        "(1 when the snapshot has none)"
    )
    under_replicated: int = Field(description="other partitions with a sync replica out of the ISR")
    reassigning: int = Field(
        default=0,
        description="partitions with a reassignment in flight (a non-empty adding or "
        "removing list): their replicas are the old and the new brokers together",
    )
    racks: list[RackLoad]
    violations_listed: list[PartitionViolation] | None = Field(
        default=None,
        description="with --violations: the first partitions breaking their policy, in the "
        "order of the partitions table; null without --violations",
    )
    violations_not_listed: int = Field(
        default=0, description="with --violations: how many more break their policy"
    )

    @classmethod
    def of(
        cls, snapshot: str, s: ClusterSummary, listed: Sequence[Violation] | None = None
    ) -> SnapshotReport:
        return cls(
            snapshot=snapshot,
            brokers=s.brokers,
            topics=s.topics,
            topics_without_policy=s.topics_without_policy,
            partitions=s.partitions,
            replicas=s.replicas,
            total_bytes=s.total_bytes,
            leaders_per_broker_min=s.leaders_per_broker[0],
            leaders_per_broker_max=s.leaders_per_broker[1],
            violations=s.violations,
            offline=s.offline,
            under_min_isr=s.under_min_isr,
            under_replicated=s.under_replicated,
            reassigning=s.reassigning,
            racks=[
                RackLoad(
                    rack=rack,
                    brokers=count,
                    replicas_per_broker_min=s.replicas_per_broker[rack][0],
                    replicas_per_broker_max=s.replicas_per_broker[rack][1],
                )
                for rack, count in s.brokers_per_rack.items()
            ],
            violations_listed=None
            if listed is None
            else [
                PartitionViolation(
                    topic=v.topic,
                    partition=v.partition,
                    replicas=v.replicas,
                    observers=v.observers,
                    problems=v.problems,
                )
                for v in listed
            ],
            violations_not_listed=0 if listed is None else s.violations - len(listed),
        )


def first_violations(snap: Snapshot, limit: int) -> list[Violation]:
    """The first ``limit`` partitions (in table order) breaking their topic's policy, with
    what breaks it; the snapshot's own brokers table gives the racks."""
    policies = snapshot_policies(snap.source, snap.topics)
    rows = np.flatnonzero(violation_mask(snap, policies))[:limit]
    return explain_rows(snap, rows, policies, "the brokers table")
