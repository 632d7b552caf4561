"""How degraded the cluster already is before a plan: partitions under-replicated, under
their topic's min.insync.replicas, or offline, from the ISR and leaders the --current input
records (docs/definitions.md, degraded before a plan). Reassignment JSON records neither:
nothing can be told.

One pass over the partitions with plain tuples and counters: a cluster of millions of
partitions is read in well under a second, and no object is made per partition.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:  # the summary model imports this module: keep the readers out of it
    from placement.io.current import CurrentState
    from placement.model.assignment import Key

OFFLINE_KEYS_SHOWN = 100  # offline partitions listed by key; the rest are counted


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DegradedTopic(_Model):
    """One topic with a degraded partition."""

    topic: str
    under_replicated: int
    under_min_isr: int
    offline: int


class DegradedBroker(_Model):
    """One broker that a degraded partition names."""

    broker: int
    missing_from_isr: int = Field(
        description="partitions with a leader where this broker is a sync replica not in the ISR"
    )
    offline_hosted: int = Field(
        description="offline partitions (no leader) that list this broker as a replica"
    )


class OfflinePartition(_Model):
    topic: str
    partition: int


class Degraded(_Model):
    """The cluster's state before the plan (docs/definitions.md, degraded before a plan).
    A partition counts once in each category it falls in."""

    recorded: bool = Field(
        description="whether --current records ISRs and leaders (describe output or a "
        "snapshot); false: reassignment JSON, every count is 0 and nothing can be told"
    )
    under_replicated: int = Field(
        description="partitions with a leader whose ISR has fewer members than their sync "
        "replicas (observers never count)"
    )
    under_min_isr: int = Field(
        description="partitions with a leader whose ISR is smaller than their topic's "
        "min.insync.replicas (or min_insync_replicas): producers with acks=all are refused"
    )
    offline: int = Field(description="partitions with no leader (an ISR recorded)")
    min_insync_replicas: int = Field(
        description="the cluster's min.insync.replicas, assumed for a topic whose configs "
        "do not set it (Kafka's default: 1)"
    )
    topics: list[DegradedTopic] = Field(
        description="topics with a degraded partition, most degraded partitions first, then by name"
    )
    brokers: list[DegradedBroker] = Field(
        description="brokers missing from an ISR or hosting an offline partition, most "
        "first, then by id"
    )
    offline_partitions: list[OfflinePartition] = Field(
        description=f"the first {OFFLINE_KEYS_SHOWN} offline partitions in input order "
        "(offline counts them all)"
    )

    @property
    def any(self) -> bool:
        return bool(self.under_replicated or self.under_min_isr or self.offline)


def _not_recorded(default_min_isr: int) -> Degraded:
    return Degraded(
        recorded=False,
        under_replicated=0,
        under_min_isr=0,
        offline=0,
        min_insync_replicas=default_min_isr,
        topics=[],
        brokers=[],
        offline_partitions=[],
    )


def degraded_report(current: CurrentState, default_min_isr: int = 1) -> Degraded:
    """Count the degraded partitions of ``current`` by category, by topic and by broker.

    A partition whose ISR is not recorded (a snapshot's null) is left out of every count;
    with no ISR recorded at all the report says so (``recorded`` false)."""
    isrs = current.isr
    if isrs is None:
        return _not_recorded(default_min_isr)
    leaders = current.leaders if current.leaders is not None else [None] * len(isrs)
    min_isr = current.min_isr.get
    # no topic asks for more in sync than this: an ISR at least as long skips the lookup
    most = max([default_min_isr, *current.min_isr.values()])
    under_rep: Counter[str] = Counter()
    under_min: Counter[str] = Counter()
    offline: Counter[str] = Counter()
    missing: Counter[int] = Counter()
    hosting: Counter[int] = Counter()
    offline_shown: list[OfflinePartition] = []
    recorded = False
    for a, isr, leader in zip(current.assignments, isrs, leaders, strict=True):
        if isr is None:
            continue
        recorded = True
        topic = a.topic
        replicas = a.replicas
        if leader is None:
            offline[topic] += 1
            hosting.update(replicas)
            if len(offline_shown) < OFFLINE_KEYS_SHOWN:
                offline_shown.append(OfflinePartition(topic=topic, partition=a.partition))
            continue
        # the common case, an ISR equal to the replica list (often the same tuple): healthy
        # unless the topic asks for more in-sync replicas than it has
        if isr is not replicas and isr != replicas:
            k = len(a.observers)
            sync = replicas[:-k] if k else replicas
            if isr != sync:  # with observers, the common case is an ISR of the sync replicas
                lacking = [b for b in sync if b not in isr]
                if lacking:
                    under_rep[topic] += 1
                    missing.update(lacking)
        n = len(isr)
        if n < most and n < min_isr(topic, default_min_isr):
            under_min[topic] += 1
    if not recorded:
        return _not_recorded(default_min_isr)
    names = under_rep.keys() | under_min.keys() | offline.keys()
    topics = sorted(
        (
            DegradedTopic(
                topic=t,
                under_replicated=under_rep[t],
                under_min_isr=under_min[t],
                offline=offline[t],
            )
            for t in names
        ),
        key=lambda r: (-(r.under_replicated + r.under_min_isr + r.offline), r.topic),
    )
    brokers = sorted(
        (
            DegradedBroker(broker=b, missing_from_isr=missing[b], offline_hosted=hosting[b])
            for b in missing.keys() | hosting.keys()
        ),
        key=lambda r: (-(r.missing_from_isr + r.offline_hosted), r.broker),
    )
    return Degraded(
        recorded=True,
        under_replicated=under_rep.total(),
        under_min_isr=under_min.total(),
        offline=offline.total(),
        min_insync_replicas=default_min_isr,
        topics=topics,
        brokers=brokers,
        offline_partitions=offline_shown,
    )


def offline_keys(current: CurrentState) -> set[Key]:
    """The partitions with no leader while their ISR was recorded: the planner leaves them
    where they are (moving a partition needs its leader to copy from)."""
    if current.isr is None:
        return set()
    leaders = current.leaders if current.leaders is not None else [None] * len(current.isr)
    return {
        (a.topic, a.partition)
        for a, isr, leader in zip(current.assignments, current.isr, leaders, strict=True)
        if leader is None and isr is not None
    }
