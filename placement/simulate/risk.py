"""What an unclean leader election would truncate, estimated from `kafka-replica-status`
output (docs/definitions.md, rack-failure outcomes).

For each partition the failure leaves needing an unclean election, the candidates are its
surviving replicas outside the ISR, in replica order. From the replica status taken before
the failure: the most caught-up candidate is the one with the highest `LogEndOffset` (ties:
the smallest known `LastCaughtUpLagMs`, then the lowest broker id); what electing it would
truncate is the leader's `LogEndOffset` minus its own (the leader: the replica with
`IsLeader` true, else the highest `LogEndOffset` listed), and how far behind in time it
was, its `LastCaughtUpLagMs`. Kafka does not pick that replica: an unclean election makes
the first live replica in replica order the leader, whatever it holds, so its own gap is
given beside. A partition the file does not list, or whose candidates it shows without an
offset (-1), has no estimate: it is listed last.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from placement.io.replicastatus import ReplicaStatus, ReplicaStatusRead

# (topic, partition, the replicas an unclean election may elect, in replica order)
Candidates = tuple[str, int, Sequence[int]]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PartitionRisk(_Model):
    topic: str
    partition: int
    listed: bool = Field(description="the replica-status file lists the partition")
    replica: int | None = Field(
        description="the most caught-up surviving replica (null: the file shows none of the "
        "candidates with an offset)"
    )
    offsets: int | None = Field(
        description="offsets it is behind the leader's log end: what electing it would "
        "truncate (null: unknown)"
    )
    lag_ms: int | None = Field(
        description="its LastCaughtUpLagMs: how long before the status it was last caught up "
        "(null: unknown)"
    )
    kafka_elects: int = Field(
        description="the replica Kafka's unclean election makes the leader: the first "
        "surviving one in replica order"
    )
    kafka_elects_offsets: int | None = Field(
        description="offsets that replica is behind the leader's log end (null: unknown)"
    )


class RiskTotals(_Model):
    partitions: int = Field(0, description="partitions needing an unclean election")
    unknown: int = Field(0, description="of those, without an estimate of the offsets")
    not_listed: int = Field(0, description="of those, absent from the replica-status file")
    offsets: int = Field(0, description="offsets at risk, summed over the estimates")
    max_lag_ms: int | None = Field(None, description="the largest known lag of the replicas")


class TopicRisk(RiskTotals):
    topic: str


class DataAtRisk(_Model):
    replica_status: str = Field(description="the kafka-replica-status output the estimates use")
    totals: RiskTotals
    topics: list[TopicRisk] = Field(description="per topic with such partitions, by name")
    partitions: list[PartitionRisk] = Field(
        description="every partition needing an unclean election, riskiest first (most "
        "offsets at risk; those without an estimate last; then by topic and partition): the "
        "order of the --unclean-out file"
    )


def risk_order(p: PartitionRisk) -> tuple[bool, int, str, int]:
    return (p.offsets is None, -(p.offsets or 0), p.topic, p.partition)


def _lag(s: ReplicaStatus) -> int | None:
    return s.last_caught_up_lag_ms if s.last_caught_up_lag_ms >= 0 else None


def partition_risk(
    topic: str, partition: int, candidates: Sequence[int], replicas: Mapping[int, ReplicaStatus]
) -> PartitionRisk:
    """The estimate for one partition (the module docstring says how); ``replicas``: what
    the status lists for it, by broker id (empty: not listed)."""
    ends = [s.log_end_offset for s in replicas.values() if s.log_end_offset >= 0]
    leaders = [s for s in replicas.values() if s.is_leader and s.log_end_offset >= 0]
    leader_end = leaders[0].log_end_offset if leaders else max(ends, default=None)
    known = [replicas[b] for b in candidates if b in replicas and replicas[b].log_end_offset >= 0]

    def lag_key(s: ReplicaStatus) -> tuple[int, int]:
        lag = _lag(s)
        return (0, lag) if lag is not None else (1, 0)

    best = min(known, key=lambda s: (-s.log_end_offset, lag_key(s), s.replica), default=None)

    def behind(b: int) -> int | None:
        s = replicas.get(b)
        if leader_end is None or s is None or s.log_end_offset < 0:
            return None
        return max(0, leader_end - s.log_end_offset)

    elects = candidates[0]
    return PartitionRisk(
        topic=topic,
        partition=partition,
        listed=bool(replicas),
        replica=None if best is None else best.replica,
        offsets=None if best is None else behind(best.replica),
        lag_ms=None if best is None else _lag(best),
        kafka_elects=elects,
        kafka_elects_offsets=behind(elects),
    )


def estimate(unclean: Iterable[Candidates], status: ReplicaStatusRead) -> DataAtRisk:
    """The estimates for every partition of ``unclean``, riskiest first, with totals."""
    rows = sorted(
        (partition_risk(t, p, c, status.partitions.get((t, p), {})) for t, p, c in unclean),
        key=risk_order,
    )
    totals = _Sums()
    per_topic: dict[str, _Sums] = {}
    for r in rows:
        totals.add(r)
        per_topic.setdefault(r.topic, _Sums()).add(r)
    return DataAtRisk(
        replica_status=status.path,
        totals=RiskTotals(**vars(totals)),
        topics=[TopicRisk(topic=t, **vars(per_topic[t])) for t in sorted(per_topic)],
        partitions=rows,
    )


@dataclass
class _Sums:
    """`RiskTotals` as it adds up (a model per partition would cost seconds on 1M)."""

    partitions: int = 0
    unknown: int = 0
    not_listed: int = 0
    offsets: int = 0
    max_lag_ms: int | None = None

    def add(self, p: PartitionRisk, n: int = 1) -> None:
        """Count ``p`` in (``n`` 1) or take it back out (-1; the largest lag is then left
        for the caller to find again)."""
        self.partitions += n
        self.unknown += n * (p.offsets is None)
        self.not_listed += n * (not p.listed)
        self.offsets += n * (p.offsets or 0)
        if (
            n > 0
            and p.lag_ms is not None
            and (self.max_lag_ms is None or p.lag_ms > self.max_lag_ms)
        ):
            self.max_lag_ms = p.lag_ms


class RiskTally:
    """The totals of a set of estimates that changes a partition at a time, as the steps
    of a batch directory apply (`placement.simulate.batches`): each step costs what it
    changes, not a pass over every estimate."""

    def __init__(self) -> None:
        self._risks: dict[tuple[str, int], PartitionRisk] = {}
        self._sums = _Sums()
        self._stale = False  # the largest lag left with a partition taken out

    def add(self, p: PartitionRisk) -> None:
        self._risks[(p.topic, p.partition)] = p
        self._sums.add(p)

    def remove(self, topic: str, partition: int) -> None:
        p = self._risks.pop((topic, partition))
        self._sums.add(p, -1)
        self._stale = self._stale or (p.lag_ms is not None and p.lag_ms == self._sums.max_lag_ms)

    def totals(self) -> RiskTotals:
        if self._stale:
            lags = (p.lag_ms for p in self._risks.values() if p.lag_ms is not None)
            self._sums.max_lag_ms = max(lags, default=None)
            self._stale = False
        return RiskTotals(**vars(self._sums))
