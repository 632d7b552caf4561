"""`simulate`: what a rack or broker failure does to every partition
(docs/definitions.md, rack-failure outcomes).

Per partition, after the plan when there is one, with the failed brokers down: ``s``
replicas in the ISR survive, ``o`` observers outside it survive, ``m`` is the topic's min ISR
(else the default). The ISR is the one the input records (describe `Isr:`, snapshot `isr`;
an observer listed there, i.e. promoted, counts as in sync); for a partition without one,
and for every partition with ``assume_in_sync``, it is the sync replicas. The partition is

- *offline* when ``s = 0``: automatic promotion handles partial failures only. With a
  surviving observer, or a surviving sync replica outside the ISR, it can come back through
  an unclean leader election onto that replica (``unclean``: possible loss of the writes it
  had not copied yet); with no replica left at all it is *lost* until the brokers return;
- *promoted* when ``0 < s < m`` and the policy is v2 ``under-min-isr`` or
  ``under-replicated`` and ``s + o >= m``: observers join the ISR and acks=all writes go on;
- *under min ISR* when ``0 < s < m`` otherwise: acks=all writes fail;
- *available* when ``s >= m``.

With no broker down, the state *before* the failure: a partition whose recorded ISR is
already short is counted as failing before (``offline_before``, ``under_min_isr_before``),
apart from those the failure breaks (``broken``). A recorded ISR already shows any
promotion (Confluent promotes caught-up observers as soon as the ISR falls short, and lists
them in it), so before the failure ``s < m`` is under min ISR whatever the policy, and the
observers it leaves out are not caught up: the failure does not promote them either (else
it would mend the partition). Without a recorded ISR the same rules as after the failure
apply, promotion included. A plan keeps
the ISR membership of the sync replicas it keeps and counts the sync replicas it adds as in
sync, since Kafka completes a reassignment only once they joined the ISR; replicas it
removes are gone; a partition without a leader gains no in-sync replica
(`placement.snapshot.apply.after`: the same rule as `snapshot apply`).

Topics without a policy are classified too (their replicas are all sync replicas unless
observers are listed; they never promote): `score` counts a rack failure the same way.
A broker whose rack is unknown (absent from the inventory, or listed there without a
rack) may sit in the failed rack: a rack failure takes it down too, and the report names
it (``failure.unknown_rack``). `--fail-brokers` takes down only the brokers it names.

With `kafka-replica-status` output, each partition needing an unclean election gets an
estimate of what electing its most caught-up surviving replica would truncate, and they
are listed riskiest first (`placement.simulate.risk`).

This module is the in-process engine for inputs held in memory; the Spark stage
(`placement.score.simulate`) computes the same report for snapshots, from the same
definitions (`classify` here, `failure_flags` there; a test holds them to each other).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from placement.errors import InputError, UsageError
from placement.model.assignment import PartitionAssignment
from placement.model.inventory import Inventory
from placement.model.kafka import int_problem, parse_ascii_int
from placement.rules.base import CheckContext
from placement.rules.topology import majority
from placement.simulate.judging import SAMPLE as SAMPLE
from placement.simulate.judging import BatchStep as BatchStep
from placement.simulate.judging import Counts as Counts
from placement.simulate.judging import Failure as Failure
from placement.simulate.judging import FailureSpec as FailureSpec
from placement.simulate.judging import Judged as Judged
from placement.simulate.judging import Outcome as Outcome
from placement.simulate.judging import Quorum as Quorum
from placement.simulate.judging import SimulateReport as SimulateReport
from placement.simulate.judging import TopicCounts as TopicCounts
from placement.simulate.judging import TopicInfo as TopicInfo
from placement.simulate.judging import UncleanPartition as UncleanPartition
from placement.simulate.judging import classify as classify
from placement.simulate.judging import electable as electable
from placement.simulate.judging import judge as judge
from placement.simulate.judging import outcomes as outcomes
from placement.simulate.judging import policy_label as policy_label
from placement.simulate.judging import tally as tally
from placement.simulate.judging import topic_rules as topic_rules
from placement.simulate.judging import worse_first as worse_first
from placement.simulate.risk import DataAtRisk, estimate

if TYPE_CHECKING:
    from placement.io.current import Isr
    from placement.io.inventory import LoadedInventory
    from placement.io.reassignment import PlanFile
    from placement.io.replicastatus import ReplicaStatusRead


def parse_ids(text: str, flag: str = "--fail-brokers") -> list[int]:
    """``"4,8, 12"`` -> [4, 8, 12]: broker ids as Kafka has them (ASCII digits, 0..2^31-1),
    at least one; a usage error naming ``flag`` otherwise."""
    hint = f"write e.g. {flag} 4,8,12"
    tokens = [t for t in text.replace(" ", "").split(",") if t]
    if not tokens:
        raise UsageError(f"{flag}: no broker id in {text!r}", hint)
    ids = []
    for t in tokens:
        value = parse_ascii_int(t)
        if value is None:
            raise UsageError(int_problem(t, f"{flag}: broker id"), hint)
        ids.append(value)
    return ids


def quorum(inventory: Inventory | None, failure: Failure) -> Quorum | None:
    """The controller quorum after the failure; None when the inventory lists none.

    A controller goes down with its rack, or when its id is among the brokers named (a
    combined-mode node is one process with one node.id for both roles)."""
    if inventory is None or not inventory.controllers:
        return None
    voters = len(inventory.controllers)
    down = sum(
        1
        for c in inventory.controllers
        if (c.rack == failure.rack if failure.rack is not None else c.id in failure.brokers)
    )
    need = majority(voters)
    return Quorum(
        controllers=voters, surviving=voters - down, majority=need, kept=voters - down >= need
    )


def apply_plan(
    current: Iterable[PartitionAssignment], plan: Iterable[PartitionAssignment]
) -> list[PartitionAssignment]:
    """The partitions after the plan (which `PlanFile.check` has held to ``current``)."""
    changes = {a.key: a for a in plan}
    return [changes.get(a.key, a) for a in current]


def isr_after_plan(
    current: Sequence[PartitionAssignment],
    isr: Sequence[Isr],
    leaders: Sequence[int | None],
    plan: Iterable[PartitionAssignment],
) -> list[Isr]:
    """The ISR of each partition of ``current`` (aligned with it) once ``plan`` completed:
    `snapshot apply`'s rule (`placement.snapshot.apply.after`; the module docstring says
    it). A partition the plan leaves as it is keeps its ISR."""
    from placement.snapshot.apply import after

    changes = {a.key: a for a in plan}
    out = list(isr)
    for i, a in enumerate(current):
        new = changes.get(a.key)
        if new is None or new == a or isr[i] is None:
            continue
        kept, _ = after(a, isr[i], leaders[i], new)
        out[i] = None if kept is None else tuple(kept)
    return out


def simulate(
    parts: Iterable[PartitionAssignment],
    topics: Mapping[str, TopicInfo],
    failure: Failure,
    *,
    default_min_isr: int = 1,
    inventory: Inventory | None = None,
    plan: str | None = None,
    isr: Sequence[Isr] | None = None,
    replica_status: ReplicaStatusRead | None = None,
) -> tuple[SimulateReport, list[UncleanPartition]]:
    """The report, and every partition that needs an unclean election, sorted by (topic,
    partition), or riskiest first with ``replica_status`` (`placement.simulate.risk`).
    ``isr``: the recorded ISR of each partition, aligned with ``parts``; None: every sync
    replica is assumed in the ISR (the report says ``assumed``)."""
    per_topic: dict[str, Counter[str]] = {}
    unclean: list[UncleanPartition] = []
    for a, j, recorded in outcomes(parts, topics, failure, default_min_isr, isr):
        c = per_topic.get(a.topic)
        if c is None:
            c = per_topic[a.topic] = Counter()
        tally(c, j, isr is not None and not recorded)
        if j.outcome is Outcome.OFFLINE and (j.observers or j.lagging):
            unclean.append(
                UncleanPartition(
                    topic=a.topic,
                    partition=a.partition,
                    observers=list(j.observers),
                    lagging=list(j.lagging),
                )
            )
    unclean.sort(key=lambda u: (u.topic, u.partition))
    sample = unclean[:SAMPLE]
    at_risk = None
    if replica_status is not None:
        at_risk = estimate(unclean_candidates(unclean), replica_status)
        by_key = {(u.topic, u.partition): u for u in unclean}
        unclean = [by_key[(r.topic, r.partition)] for r in at_risk.partitions]
    rows = []
    for name in sorted(per_topic):
        info = topics.get(name) or TopicInfo(None, None)
        rows.append(
            TopicCounts(
                topic=name,
                policy=policy_label(info.policy),
                min_isr=info.min_isr or default_min_isr,
                **per_topic[name],
            )
        )
    report = build_report(
        failure,
        rows,
        sample,
        plan,
        default_min_isr,
        "in-process",
        inventory,
        "assumed" if isr is None else "recorded",
        at_risk,
    )
    return report, unclean


def unclean_candidates(
    unclean: Iterable[UncleanPartition],
) -> Iterator[tuple[str, int, list[int]]]:
    """(topic, partition, the replicas an unclean election may elect, in replica order)."""
    for u in unclean:
        yield u.topic, u.partition, electable(u.lagging, u.observers)


def build_report(
    failure: Failure,
    topics: list[TopicCounts],
    sample: list[UncleanPartition],
    plan: str | None,
    default_min_isr: int,
    engine: Literal["spark", "in-process"],
    inventory: Inventory | None,
    isr: Literal["recorded", "assumed"],
    data_at_risk: DataAtRisk | None = None,
) -> SimulateReport:
    totals = Counts()
    for t in topics:
        totals = totals.add(Counts(**{k: getattr(t, k) for k in Counts.model_fields}))
    return SimulateReport(
        failure=failure.spec(),
        plan=plan,
        min_insync_replicas=default_min_isr,
        engine=engine,
        isr=isr,
        totals=totals,
        topics=topics,
        unclean_sample=sample,
        quorum=quorum(inventory, failure),
        data_at_risk=data_at_risk,
    )


def simulate_files(
    current: str | Path,
    inventory: LoadedInventory,
    *,
    topics: str | Path | None = None,
    refs_root: str | Path | None = None,
    plan: str | Path | None = None,
    fail_rack: str | None = None,
    fail_brokers: Sequence[int] | None = None,
    default_min_isr: int = 1,
    assume_in_sync: bool = False,
    replica_status: ReplicaStatusRead | None = None,
) -> tuple[SimulateReport, list[UncleanPartition]]:
    """The in-process path: the current assignment (reassignment JSON, describe output or
    a snapshot directory), the inventory, the policies and min ISR from the topics file
    (else from the describe output's or snapshot's configs), and the plan if any: a
    reassignment file, or an `assign --out-dir` directory, whose steps the report adds
    (`placement.simulate.batches`). The topics file's placement references are resolved
    inside ``refs_root`` (default: its directory), as for `assign`. The ISR is the
    recorded one (none for reassignment JSON) unless ``assume_in_sync``;
    ``replica_status`` adds the estimates of the data at risk."""
    from placement.io.current import read_current
    from placement.plan.topics import read_topics
    from placement.simulate.batches import walk

    inv = inventory.inventory
    rack_of = inv.rack_of
    failure = Failure.resolve(rack_of, fail_rack, fail_brokers)
    _present(current)
    state = read_current(current)
    infos = {
        t: TopicInfo(state.policies.get(t), state.min_isr.get(t))
        for t in {*state.policies, *state.min_isr}
    }
    if topics is not None:
        for spec in read_topics(topics, CheckContext(inventory=inv), refs_root=refs_root):
            infos[spec.name] = TopicInfo(spec.policy, spec.min_isr or state.min_isr.get(spec.name))
    parts = state.assignments
    isr: list[Isr] | None = None
    if not assume_in_sync:
        isr = state.isr if state.isr is not None else [None] * len(parts)
    leaders = state.leaders if state.leaders is not None else [None] * len(parts)
    files, batches = ([], False) if plan is None else _plan_files(plan, parts, current, inventory)
    steps = None
    if batches:
        entries = [(name, f.entries) for name, f in files]
        # one failure for every step: a broker of unknown rack that a batch drains is down
        # with the rack in the steps before it
        failure = failure.seeing(chain(parts, *(e for _, e in entries)), rack_of)
        steps, parts, isr = walk(
            parts, isr, leaders, entries, infos, failure, default_min_isr, replica_status
        )
    else:
        for _, checked in files:
            if isr is not None:
                isr = isr_after_plan(parts, isr, leaders, checked.entries)
            parts = apply_plan(parts, checked.entries)
        failure = failure.seeing(parts, rack_of)
    report, unclean = simulate(
        parts,
        infos,
        failure,
        default_min_isr=default_min_isr,
        inventory=inv,
        plan=None if plan is None else str(plan),
        isr=isr,
        replica_status=replica_status,
    )
    return report.model_copy(update={"batches": steps}), unclean


def _present(current: str | Path) -> None:
    """A ``current`` that cannot be looked up (absent, a name too long, a file standing
    for a directory) named as what it is: the reader of reassignment JSON it falls to
    would call it the plan. What it holds is its reader's to check."""
    try:
        Path(current).stat()
    except OSError as exc:
        raise InputError(
            str(current),
            f"cannot read the current assignment: {exc.strerror or exc}",
            "give --current a reassignment JSON file, kafka-topics --describe output or a "
            "snapshot directory",
        ) from None


def _plan_files(
    plan: str | Path,
    parts: Sequence[PartitionAssignment],
    current: str | Path,
    inventory: LoadedInventory,
) -> tuple[list[tuple[str, PlanFile]], bool]:
    """The files of ``plan`` by name (a reassignment file, or the steps of a batch
    directory, in the order to run them), each held to the cluster; and whether it is a
    directory."""
    from placement.io.reassignment import read_plan_file
    from placement.simulate.batches import is_directory, read_steps

    batches = is_directory(plan)
    files = read_steps(Path(plan)) if batches else [(str(plan), read_plan_file(plan))]
    keys = {a.key for a in parts}
    names = {t for t, _ in keys}
    for _, checked in files:
        checked.check(
            where=f"the current assignment {current}",
            topics=names,
            partitions=lambda t, p: (t, p) in keys,
        )
        checked.check(where=f"the inventory {inventory.path}", brokers=inventory.inventory.rack_of)
    return files, batches
