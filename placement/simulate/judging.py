"""What `simulate` judges one partition by, and the records of its report: the outcomes
(`classify`, `judge`; their definitions are `placement.simulate.failure`'s docstring and
docs/definitions.md, rack-failure outcomes), the failure (`Failure`), the tally of a
report's counts (`tally`) and the report's models.

Both walks over the partitions use it: `placement.simulate.failure` (one state) and
`placement.simulate.batches` (every step of a batch directory); it imports neither, and
`placement.simulate.failure` re-exports every name, where callers import them from.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from placement.diagnostics.escape import escape
from placement.errors import UsageError
from placement.model.assignment import PartitionAssignment
from placement.model.policy import PlacementPolicy
from placement.simulate.risk import DataAtRisk, RiskTotals

if TYPE_CHECKING:
    from placement.io.current import Isr

# the unclean partitions the report lists itself; all of them go to --unclean-out
SAMPLE = 20


class Outcome(StrEnum):
    AVAILABLE = "available"
    PROMOTED = "promoted"
    UNDER_MIN_ISR = "under_min_isr"
    OFFLINE = "offline"


def policy_label(policy: PlacementPolicy | None) -> str:
    """How the report names a topic's promotion behaviour: ``v2 under-min-isr``, ``v1``…"""
    if policy is None:
        return "none"
    if policy.version == 1:
        return "v1"
    return f"v2 {policy.promotion.value}"


def classify(s: int, o: int, m: int, promoting: bool) -> Outcome:
    """One partition's outcome (docs/definitions.md, rack-failure outcomes): ``s`` sync
    replicas and ``o`` observers survive, ``m`` is its min ISR."""
    if s == 0:
        return Outcome.OFFLINE
    if s >= m:
        return Outcome.AVAILABLE
    if promoting and s + o >= m:
        return Outcome.PROMOTED
    return Outcome.UNDER_MIN_ISR


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FailureSpec(_Model):
    rack: str | None = Field(description="the failed rack; null when brokers were named")
    brokers: list[int] = Field(description="the brokers of the rack, or those named, ascending")
    unknown_rack: list[int] = Field(
        default_factory=list,
        description="brokers holding replicas whose rack is unknown (absent from the "
        "inventory or the snapshot's brokers, or listed without a rack), ascending; a rack "
        "failure counts them as down too, since they may be in that rack",
    )


class Counts(_Model):
    partitions: int = 0
    available: int = 0
    promoted: int = 0
    under_min_isr: int = 0
    offline: int = 0
    unclean: int = Field(
        0,
        description="offline, with a surviving observer or sync replica outside the ISR to "
        "elect uncleanly",
    )
    lost: int = Field(0, description="offline, with no replica left at all")
    offline_before: int = Field(
        0, description="offline already before the failure: no replica in the ISR"
    )
    under_min_isr_before: int = Field(
        0, description="under min ISR already before the failure (from the ISR, no broker down)"
    )
    broken: int = Field(
        0,
        description="offline or under min ISR after the failure but neither before it: "
        "what the failure breaks (offline + under_min_isr = offline_before + "
        "under_min_isr_before + broken)",
    )
    isr_unknown: int = Field(
        0,
        description="partitions with no recorded ISR, whose sync replicas count as in it "
        '(0 when isr is "assumed": then every partition is counted so)',
    )

    def add(self, other: Counts) -> Counts:
        return Counts(**{k: getattr(self, k) + getattr(other, k) for k in Counts.model_fields})


class TopicCounts(Counts):
    topic: str
    policy: str = Field(description='"v2 under-min-isr", "v2 under-replicated", … "v1", "none"')
    min_isr: int


class UncleanPartition(_Model):
    topic: str
    partition: int
    observers: list[int] = Field(description="the surviving observers, in replica order")
    lagging: list[int] = Field(
        default_factory=list,
        description="the surviving sync replicas outside the recorded ISR, in replica order "
        "(an unclean election may elect them too)",
    )


class Quorum(_Model):
    controllers: int
    surviving: int
    majority: int
    kept: bool


def worse_first(totals: Counts, offsets_at_risk: int = 0) -> tuple[int, int, int, int]:
    """A sort key, worst first: the most partitions offline, then under min ISR, then the
    most offsets at risk in unclean elections (with --replica-status), then promoted."""
    return (-totals.offline, -totals.under_min_isr, -offsets_at_risk, -totals.promoted)


class BatchStep(_Model):
    """The failure at one step of a batch directory (`simulate --plan DIR`)."""

    step: str = Field(
        description='"before": the cluster as it stands, no batch run; else the file of the '
        'step ("plan-0001.json", …, then "leaders.json"), completed with every step before it'
    )
    order: int = Field(
        description="its place in the order to run: 0 before any batch, k once batch k "
        "completed, the leaders step last"
    )
    reassigned: int = Field(
        description="partitions the step changes (its entries not already in place)"
    )
    worst: int = Field(
        description="its rank, 1 for the worst step: the most partitions offline, then under "
        "min ISR, then offsets at risk (with --replica-status), then promoted; ties in the "
        "order to run"
    )
    totals: Counts = Field(description="every partition's outcome in the state after the step")
    data_at_risk: RiskTotals | None = Field(
        description="with --replica-status: the estimates' totals in that state (null without it)"
    )


class SimulateReport(_Model):
    """What `mrc-plan simulate` reports (schema: schemas/simulate-report.schema.json)."""

    model_config = ConfigDict(
        title="mrc-plan simulate report",
        json_schema_extra={"$id": "https://mrc-plan.dev/schemas/simulate-report.schema.json"},
    )

    failure: FailureSpec
    plan: str | None
    min_insync_replicas: int = Field(
        description="the cluster's min.insync.replicas, for topics that set none of their "
        "own (--min-insync-replicas; Kafka's default: 1)"
    )
    engine: Literal["spark", "in-process"]
    isr: Literal["recorded", "assumed"] = Field(
        description="recorded: the ISR the input records (totals.isr_unknown partitions have "
        "none: their sync replicas count as in it); assumed: every sync replica counts as in "
        "the ISR (--assume-in-sync)"
    )
    totals: Counts
    topics: list[TopicCounts] = Field(description="every topic with partitions, by name")
    unclean_sample: list[UncleanPartition] = Field(
        description=f"the first {SAMPLE} unclean partitions by (topic, partition); "
        "--unclean-out writes all of them"
    )
    quorum: Quorum | None = Field(description="the KRaft quorum, when controllers are known")
    data_at_risk: DataAtRisk | None = Field(
        None,
        description="with --replica-status: what an unclean election of each partition "
        "needing one would truncate, estimated (null without it)",
    )
    batches: list[BatchStep] | None = Field(
        None,
        description="with --plan DIR (an assign --out-dir directory): the failure before any "
        "batch and after each step, worst first; the rest of the report is the state after "
        "the last step (null for a plan file, or none)",
    )

    @property
    def writes_fail(self) -> int:
        """Partitions where acks=all writes stop: offline or under min ISR."""
        return self.totals.offline + self.totals.under_min_isr

    @property
    def writes_failed_before(self) -> int:
        """Partitions where acks=all writes stopped already before the failure."""
        return self.totals.offline_before + self.totals.under_min_isr_before

    @property
    def failed(self) -> bool:
        """The failure stops writes somewhere: a partition offline or under min ISR (at any
        step of a batch directory), or the KRaft quorum lost (`simulate` exits 1)."""
        steps = self.batches or []
        writes = self.writes_fail + sum(s.totals.offline + s.totals.under_min_isr for s in steps)
        return writes > 0 or (self.quorum is not None and not self.quorum.kept)

    def unknown_rack_note(self) -> str | None:
        """What the report assumed about brokers of unknown rack, for stderr; None: none."""
        ids = self.failure.unknown_rack
        if not ids:
            return None
        shown = ", ".join(map(str, ids[:20])) + (
            f" and {len(ids) - 20} more" if len(ids) > 20 else ""
        )
        what = f"broker(s) {shown} hold replicas but have no known rack (not in the inventory"
        if self.failure.rack is not None:
            return (
                f"warning: {what}, or listed without a rack): counted as down with rack "
                f'"{escape(self.failure.rack)}", since they may be in it'
            )
        return f"note: {what}, or listed without a rack): up, as only the named brokers fail"


@dataclass(frozen=True)
class Failure:
    """The brokers that go down, and how the user named them."""

    brokers: frozenset[int]
    rack: str | None = None
    unknown_rack: frozenset[int] = frozenset()  # brokers in use whose rack is unknown

    @classmethod
    def resolve(
        cls, brokers: Mapping[int, str | None], rack: str | None, ids: Sequence[int] | None
    ) -> Failure:
        """``brokers``: id -> rack of every broker known; exactly one of ``rack``/``ids``."""
        if rack is not None and ids is None:
            down = frozenset(b for b, r in brokers.items() if r == rack)
            if not down:
                racks = sorted({r for r in brokers.values() if r is not None})
                raise UsageError(
                    f'--fail-rack: no broker is in rack "{rack}"',
                    f"racks with brokers: {', '.join(racks) or 'none'}",
                )
            return cls(down, rack)
        if rack is not None or ids is None:
            raise UsageError("name one failure: --fail-rack NAME or --fail-brokers IDS")
        unknown = sorted(set(ids) - set(brokers))
        if unknown:
            raise UsageError(
                f"--fail-brokers: broker(s) {', '.join(map(str, unknown))} are not in the "
                "inventory",
                "use broker ids the inventory (or the snapshot's brokers table) lists",
            )
        if not ids:
            raise UsageError("--fail-brokers: name at least one broker id")
        return cls(frozenset(ids))

    def seeing(
        self, parts: Iterable[PartitionAssignment], brokers: Mapping[int, str | None]
    ) -> Failure:
        """This failure, knowing which brokers ``parts`` use: those ``brokers`` gives no
        rack for are recorded (and go down with a rack: `down`)."""
        used = {b for a in parts for b in a.replicas}
        unknown = frozenset(b for b in used if brokers.get(b) is None)
        return Failure(self.brokers, self.rack, unknown)

    @property
    def down(self) -> frozenset[int]:
        """Every broker that goes down: a rack's take those of unknown rack with them."""
        return self.brokers | self.unknown_rack if self.rack is not None else self.brokers

    def spec(self) -> FailureSpec:
        return FailureSpec(
            rack=self.rack, brokers=sorted(self.brokers), unknown_rack=sorted(self.unknown_rack)
        )


@dataclass(frozen=True)
class TopicInfo:
    policy: PlacementPolicy | None
    min_isr: int | None


@dataclass(frozen=True, slots=True)
class Judged:
    """One partition's outcome after the failure and before it (no broker down), and the
    surviving replicas outside the ISR an unclean election could elect."""

    outcome: Outcome
    before: Outcome
    observers: tuple[int, ...]  # surviving observers outside the ISR
    lagging: tuple[int, ...]  # surviving sync replicas outside the ISR


def judge(
    a: PartitionAssignment,
    in_sync: Collection[int],
    down: Collection[int],
    m: int,
    promotes: bool,
    recorded: bool = False,
) -> Judged:
    """``a``'s outcomes (docs/definitions.md, rack-failure outcomes): ``in_sync`` is its ISR
    (the recorded one, ``recorded``, else its sync replicas), ``down`` the failed brokers.

    A recorded ISR shows any promotion already (a promoted observer is listed in it): one
    short of min ISR is under min ISR before the failure, whatever the policy, and its
    observers outside it are not caught up (else they would have been promoted), so the
    failure promotes none of them either."""
    first_observer = len(a.replicas) - len(a.observers)
    s = s0 = o0 = 0  # s0, o0: with no broker down
    observers: list[int] = []
    lagging: list[int] = []
    for i, b in enumerate(a.replicas):
        alive = b not in down
        if b in in_sync:
            s0 += 1
            s += 1 if alive else 0
        elif i >= first_observer:
            o0 += 1
            if alive:
                observers.append(b)
        elif alive:
            lagging.append(b)
    stale = recorded and promotes and 0 < s0 < m  # promotion due, and none recorded
    return Judged(
        classify(s, 0 if stale else len(observers), m, promotes),
        classify(s0, 0 if recorded else o0, m, promotes),
        tuple(observers),
        tuple(lagging),
    )


def outcomes(
    parts: Iterable[PartitionAssignment],
    topics: Mapping[str, TopicInfo],
    failure: Failure,
    default_min_isr: int,
    isr: Iterable[Isr] | None = None,
) -> Iterator[tuple[PartitionAssignment, Judged, bool]]:
    """(partition, its outcomes, whether its ISR is recorded) for every partition; ``isr``:
    the recorded ISR of each, aligned with ``parts`` (None, or a None entry: its sync
    replicas)."""
    down = failure.down
    pairs: Iterable[tuple[PartitionAssignment, Isr]] = (
        ((a, None) for a in parts) if isr is None else zip(parts, isr, strict=True)
    )
    rule = topic_rules(topics, default_min_isr)
    for a, i in pairs:
        # a tuple: replica lists are short, a set per partition costs more than it saves
        in_sync = a.replicas[: len(a.replicas) - len(a.observers)] if i is None else i
        yield a, judge(a, in_sync, down, *rule(a.topic), recorded=i is not None), i is not None


def topic_rules(
    topics: Mapping[str, TopicInfo], default_min_isr: int
) -> Callable[[str], tuple[int, bool]]:
    """A topic's (min ISR, whether its policy promotes), looked up once per topic."""
    rules: dict[str, tuple[int, bool]] = {}

    def rule(topic: str) -> tuple[int, bool]:
        found = rules.get(topic)
        if found is None:
            info = topics.get(topic) or TopicInfo(None, None)
            promotes = info.policy is not None and info.policy.promotes_observers
            found = rules[topic] = (info.min_isr or default_min_isr, promotes)
        return found

    return rule


_FAILING = (Outcome.OFFLINE, Outcome.UNDER_MIN_ISR)


def tally(c: Counter[str], j: Judged, isr_unknown: bool, n: int = 1) -> None:
    """Count one partition into the `Counts` fields of ``c`` (``n`` 1), or take it back
    out (-1); ``isr_unknown``: it has no recorded ISR, its sync replicas stand in."""
    c["partitions"] += n
    c[j.outcome.value] += n
    if j.before in _FAILING:
        c[f"{j.before.value}_before"] += n
    elif j.outcome in _FAILING:
        c["broken"] += n
    if isr_unknown:
        c["isr_unknown"] += n
    if j.outcome is Outcome.OFFLINE:
        c["unclean" if j.observers or j.lagging else "lost"] += n


def electable(lagging: Sequence[int], observers: Sequence[int]) -> list[int]:
    """The surviving replicas outside the ISR in replica order: sync replicas come before
    observers."""
    return [*lagging, *observers]
