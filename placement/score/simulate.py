"""`simulate` on the Spark stage: a failure applied to every partition of a snapshot.

The same transforms as `score` (`with_policy`, `failure_flags`, the plan read by
`read_plan`); this is the one run function, with the reads and the actions. Only
aggregates per topic and the unclean partitions come back to the driver, the latter
streamed straight into the `--unclean-out` file.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from placement.io.reassignment import PlanFile, write_election_stream
from placement.io.replicastatus import ReplicaStatusRead
from placement.io.staging import staging_area
from placement.model.inventory import Inventory
from placement.score.metrics import applied, with_failure, with_policy
from placement.score.run import (
    DataFrame,
    Inputs,
    Stage,
    broker_racks,
    read_plan,
    refuse_missing,
    staged,
)
from placement.simulate.failure import (
    SAMPLE,
    Counts,
    Failure,
    SimulateReport,
    TopicCounts,
    UncleanPartition,
    build_report,
    policy_label,
)
from placement.simulate.risk import DataAtRisk, estimate

COUNTS = [k for k in Counts.model_fields if k != "partitions"]


def per_topic(judged: DataFrame) -> DataFrame:
    """A row per topic, in topic order: its counts, how many plan entries found one of its
    partitions, its brokers of unknown rack and its unclean partitions (sorted)."""
    from pyspark.sql import functions as F  # noqa: N812

    unclean = F.when(F.col("unclean") == 1, F.struct("partition", "survivors", "lagging"))
    return (
        judged.groupBy("topic")
        .agg(
            F.count("*").alias("partitions"),
            F.first("min_isr").alias("min_isr"),
            F.sum("listed").alias("listed"),
            F.array_distinct(F.flatten(F.collect_set("unknown_rack"))).alias("unknown_rack"),
            *(F.sum(c).alias(c) for c in COUNTS),
            F.sort_array(F.collect_list(unclean)).alias("unclean_partitions"),
        )
        .orderBy("topic")
    )


@dataclass
class Tally:
    """What the rows of `per_topic` add up to on the driver, as they stream by."""

    labels: dict[str, str]  # topic -> its policy's label
    topics: list[TopicCounts] = field(default_factory=list)
    sample: list[UncleanPartition] = field(default_factory=list)
    unknown: set[int] = field(default_factory=set)
    listed: int = 0  # plan entries that found their partition

    def unclean(self, rows: Iterable[Any]) -> Iterator[tuple[str, int, list[int]]]:
        """Take in ``rows``; yield every unclean partition, in order, with the replicas an
        unclean election may elect (`placement.simulate.failure.unclean_candidates`)."""
        for r in rows:
            self.listed += int(r["listed"])
            self.unknown.update(r["unknown_rack"])
            self.topics.append(
                TopicCounts(
                    topic=r["topic"],
                    policy=self.labels.get(r["topic"], "none"),
                    min_isr=int(r["min_isr"]),
                    partitions=int(r["partitions"]),
                    **{c: int(r[c]) for c in COUNTS},
                )
            )
            for u in r["unclean_partitions"]:
                if len(self.sample) < SAMPLE:
                    self.sample.append(
                        UncleanPartition(
                            topic=r["topic"],
                            partition=u["partition"],
                            observers=u["survivors"],
                            lagging=u["lagging"],
                        )
                    )
                yield r["topic"], u["partition"], [*u["lagging"], *u["survivors"]]


def _judged(
    stage: Stage,
    checked: PlanFile | None,
    failure: Failure,
    default_min_isr: int,
    assume_in_sync: bool,
) -> DataFrame:
    """Every partition of the stage, after the plan if any (``listed``: whether an entry
    found it), judged under ``failure``."""
    from pyspark.sql import functions as F  # noqa: N812

    source = stage.partitions
    if checked is not None:
        parts = source.transform(applied(read_plan(stage.spark, checked)))
    else:
        parts = source.withColumn("listed", F.lit(0))
    return parts.transform(with_policy(stage.ctx.policies, default_min_isr)).transform(
        with_failure(failure.brokers, stage.ctx.racks, failure.rack, assume_in_sync)
    )


def run_simulate(
    snapshot: str | Path,
    *,
    fail_rack: str | None = None,
    fail_brokers: list[int] | None = None,
    plan: str | Path | None = None,
    master: str | None = None,
    default_min_isr: int = 1,
    inventory: Inventory | None = None,
    unclean_out: str | Path | None = None,
    assume_in_sync: bool = False,
    replica_status: ReplicaStatusRead | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> tuple[SimulateReport, int | None]:
    """The report, and how many partitions went to ``unclean_out`` (None: not asked). The
    ISR is the snapshot's `isr` column (a null one: the sync replicas) unless
    ``assume_in_sync``. With ``replica_status`` the report estimates the data at risk and
    the unclean partitions go to ``unclean_out`` riskiest first (held on the driver to be
    sorted), else in (topic, partition) order as they stream in."""
    failures: list[Failure] = []

    def resolve(inputs: Inputs) -> None:  # an unknown rack or broker: before Spark is used
        failures.append(Failure.resolve(broker_racks(inputs.brokers), fail_rack, fail_brokers))

    with staging_area() as area:  # Spark reads it until the report is made
        inputs, stage = staged(
            snapshot,
            [plan] if plan is not None else [],
            master=master,
            default_min_isr=default_min_isr,
            app="mrc-plan simulate",
            progress=progress,
            check=resolve,
            area=area,
        )
        (failure,) = failures
        root, topics = inputs.root, inputs.topics
        checked = inputs.plans[0] if inputs.plans else None
        source = stage.partitions
        judged = _judged(stage, checked, failure, default_min_isr, assume_in_sync)
        progress("applying the failure to every partition")
        tally = Tally({t: policy_label(p) for t, p, _ in inputs.parsed})

        at_risk: list[DataAtRisk] = []  # the estimates, once the stream has run

        def unclean_keys() -> Iterator[tuple[str, int]]:
            # one pass: a row per topic with its counts and its unclean partitions, sorted,
            # streamed to the driver topic by topic (two more passes, to sort and to stream the
            # unclean partitions alone, cost 30 s more on 5M partitions)
            stream = tally.unclean(per_topic(judged).toLocalIterator())
            held = []
            for topic, partition, candidates in stream:
                if replica_status is None:
                    yield topic, partition
                else:
                    held.append((topic, partition, candidates))
            if checked is not None and tally.listed != len(checked.entries):
                # raised inside the stream: the --unclean-out file is not written
                refuse_missing(stage.spark, source, checked, root, topics)
            if replica_status is not None:
                at_risk.append(estimate(held, replica_status))
                yield from ((r.topic, r.partition) for r in at_risk[0].partitions)

        written = None
        if unclean_out is not None:
            written = write_election_stream(unclean_out, unclean_keys())
        else:
            deque(unclean_keys(), maxlen=0)
        report = build_report(
            Failure(failure.brokers, failure.rack, frozenset(tally.unknown)),
            tally.topics,
            tally.sample,
            None if plan is None else str(plan),
            default_min_isr,
            "spark",
            inventory,
            "assumed" if assume_in_sync else "recorded",
            at_risk[0] if at_risk else None,
        )
        return report, written
