"""`simulate --plan DIR`: one failure at every step of an `assign --out-dir` directory
(docs/formats.md, batch directory).

The steps are the cluster as it stands (``before``), then the state once batches 1 to k
completed, for every k, then the state once the leaders step completed, when the
directory has one. Each step applies its file to the state the step before it left, by the
rule a single plan follows (`placement.snapshot.apply.after`: the sync replicas a batch
keeps keep their ISR membership, those it adds join the ISR, those it removes are gone),
and counts the outcomes with the definitions of the rest of the report
(`placement.simulate.judging.tally`). The steps are ranked worst first
(`placement.simulate.judging.worse_first`).

A batch in flight is no step of its own, because it is never worse than the step before
it. While Kafka copies a batch, each of its partitions holds its old replicas and the new
ones together; the old in-sync replicas stay in the ISR until the reassignment completes,
and the new replicas join only once caught up. So every in-sync replica of the step before
is still there (the outcomes only improve with more in-sync replicas or observers), and
the new replicas, not caught up yet, are none that a promotion can count on. The worst of
the steps therefore bounds every moment of the execution, the in-flight windows included.

Only the partitions a step changes are judged again: the steps of a plan over P partitions
cost P judgements, plus two per entry, not P per step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from placement.errors import InputError
from placement.model.assignment import PartitionAssignment
from placement.simulate.judging import (
    BatchStep,
    Counts,
    Failure,
    Outcome,
    TopicInfo,
    electable,
    judge,
    tally,
    topic_rules,
    worse_first,
)
from placement.simulate.risk import RiskTally, partition_risk

if TYPE_CHECKING:
    from placement.io.current import Isr
    from placement.io.reassignment import PlanFile
    from placement.io.replicastatus import ReplicaStatusRead

BEFORE = "before"
_HINT = "it is written by `assign --out-dir`: write the directory again"


def is_directory(path: str | Path) -> bool:
    """Whether ``--plan`` names a directory: read as a batch directory (`read_steps`)."""
    try:
        return Path(path).is_dir()
    except OSError:  # a name too long, a parent not searchable: the reader names it
        return False


def read_steps(directory: Path) -> list[tuple[str, PlanFile]]:
    """The steps of an `assign --out-dir` directory in the order to run them, each file
    by its name: the batches, then the leaders step. Which files, and their order, come from
    its summary.json, read as `plan show` reads it."""
    from placement.io.reassignment import read_plan_file
    from placement.io.summary import read_summary

    summary = directory / "summary.json"
    if not summary.is_file():
        raise InputError(
            str(directory), "no summary.json here", "pass an --out-dir written by `assign`"
        )
    doc = read_summary(summary)
    names = [row["file"] for row in doc["batches"]]
    if doc.get("leaders"):
        names.append(doc["leaders"]["file"])
    for name in names:
        if Path(name).name != name or name == "..":  # "../x", "/x": outside the directory
            raise InputError(str(summary), f'"{name}" is not the name of a file in it', _HINT)
    return [(name, read_plan_file(directory / name)) for name in names]


def walk(
    parts: Sequence[PartitionAssignment],
    isr: Sequence[Isr] | None,
    leaders: Sequence[int | None],
    steps: Sequence[tuple[str, Sequence[PartitionAssignment]]],
    topics: Mapping[str, TopicInfo],
    failure: Failure,
    default_min_isr: int,
    replica_status: ReplicaStatusRead | None = None,
) -> tuple[list[BatchStep], list[PartitionAssignment], list[Isr] | None]:
    """The failure before any step and after each of ``steps`` ((name, entries), in the
    order to run them), worst first; and the partitions and their ISR after the last step.
    ``isr`` and ``leaders``: each partition's recorded ISR (None: every sync replica counts
    as in it) and leader, aligned with ``parts``."""
    parts = list(parts)
    isrs = None if isr is None else list(isr)
    leaders = list(leaders)
    at = {a.key: i for i, a in enumerate(parts)}
    rule = topic_rules(topics, default_min_isr)
    down = failure.down
    counts: Counter[str] = Counter()
    risks = None if replica_status is None else RiskTally()

    def count(i: int, n: int) -> None:
        """Count partition ``i`` in (``n`` 1) or back out (-1) of the step's figures."""
        a = parts[i]
        recorded = None if isrs is None else isrs[i]
        in_sync = a.sync if recorded is None else recorded
        j = judge(a, in_sync, down, *rule(a.topic), recorded=recorded is not None)
        tally(counts, j, isrs is not None and recorded is None, n)
        if risks is None or j.outcome is not Outcome.OFFLINE or not (j.observers or j.lagging):
            return
        if n < 0:
            risks.remove(a.topic, a.partition)
            return
        assert replica_status is not None  # risks is made only with it
        listed = replica_status.partitions.get(a.key, {})
        risks.add(partition_risk(a.topic, a.partition, electable(j.lagging, j.observers), listed))

    def state(name: str, order: int, reassigned: int) -> BatchStep:
        return BatchStep(
            step=name,
            order=order,
            reassigned=reassigned,
            worst=0,  # ranked once every step is known
            totals=Counts(**counts),
            data_at_risk=None if risks is None else risks.totals(),
        )

    for i in range(len(parts)):
        count(i, 1)
    done = [state(BEFORE, 0, 0)]
    for order, (name, entries) in enumerate(steps, 1):
        changed = 0
        for new in entries:
            i = at[new.key]
            old = parts[i]
            if new == old:  # Kafka does nothing for a partition already so assigned
                continue
            count(i, -1)
            _reassign(parts, isrs, leaders, i, new)
            count(i, 1)
            changed += 1
        done.append(state(name, order, changed))
    return _ranked(done), parts, isrs


def _reassign(
    parts: list[PartitionAssignment],
    isrs: list[Isr] | None,
    leaders: list[int | None],
    i: int,
    new: PartitionAssignment,
) -> None:
    """Partition ``i`` once its reassignment to ``new`` completed, in place (the rule of
    `snapshot apply`)."""
    from placement.snapshot.apply import after

    recorded = None if isrs is None else isrs[i]
    kept, leaders[i] = after(parts[i], recorded, leaders[i], new)
    if isrs is not None:
        isrs[i] = None if kept is None else tuple(kept)
    parts[i] = new


def _ranked(steps: list[BatchStep]) -> list[BatchStep]:
    """The steps worst first, each with its rank."""

    def key(s: BatchStep) -> tuple[int, ...]:
        offsets = 0 if s.data_at_risk is None else s.data_at_risk.offsets
        return (*worse_first(s.totals, offsets), s.order)

    ranked = sorted(steps, key=key)
    return [s.model_copy(update={"worst": rank}) for rank, s in enumerate(ranked, 1)]
