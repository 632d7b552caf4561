"""`simulate` on the Spark stage: a failure applied to every partition of a snapshot.

The same transforms as `score` (`with_policy`, `failure_flags`, the plan read by
`read_plan`); this is the one run function, with the reads and the actions. Only
aggregates per topic and the unclean partitions come back to the driver, the latter
streamed straight into the `--unclean-out` file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from placement.errors import InputError
from placement.io.reassignment import write_election_stream
from placement.io.snapshot import read_table, table_path, verify_partitions
from placement.model.inventory import Inventory
from placement.score.metrics import applied, with_failure, with_policy
from placement.score.run import (
    parsed_policies,
    prepare,
    read_partitions,
    read_plan,
    read_plans,
    refuse_missing,
    spark_path,
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

COUNTS = [k for k in Counts.model_fields if k != "partitions"]


def snapshot_brokers(root: Path) -> dict[int, str | None]:
    brokers = read_table(root, "brokers")
    return dict(
        zip(
            brokers.column("broker_id").to_pylist(),
            brokers.column("rack").to_pylist(),
            strict=True,
        )
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
    progress: Callable[[str], None] = lambda _: None,
) -> tuple[SimulateReport, int | None]:
    """The report, and how many partitions went to ``unclean_out`` (None: not asked)."""
    from pyspark.sql import functions as F  # noqa: N812

    from placement.score.session import build_session

    root = Path(snapshot)
    if not root.is_dir():
        raise InputError(str(root), "a snapshot is a directory holding brokers, topics, partitions")
    failure = Failure.resolve(snapshot_brokers(root), fail_rack, fail_brokers)
    brokers, topics = read_table(root, "brokers"), read_table(root, "topics")
    (checked,) = read_plans(root, [plan], brokers) if plan is not None else (None,)
    progress("checking the partitions")
    verify_partitions(root)  # rows Kafka would refuse fail before Spark starts
    for path in [table_path(root, "partitions"), *([Path(checked.path)] if checked else [])]:
        spark_path(path)  # and paths Spark cannot open
    progress("starting Spark")
    spark = build_session(master, app="mrc-plan simulate")
    ctx = prepare(spark, root, brokers, topics, default_min_isr)
    source = read_partitions(spark, root, verified=True)
    if checked is not None:
        parts = source.transform(applied(read_plan(spark, checked)))
    else:
        parts = source.withColumn("listed", F.lit(0))
    judged = parts.transform(with_policy(ctx.policies, default_min_isr)).transform(
        with_failure(failure.brokers, ctx.racks, failure.rack)
    )
    progress("applying the failure to every partition")
    labels = {t: policy_label(p) for t, p, _ in parsed_policies(root, topics)}
    # one pass: a row per topic with its counts and its unclean partitions, sorted, streamed
    # to the driver topic by topic (two more passes, to sort and to stream the unclean
    # partitions alone, cost 30 s more on 5M partitions)
    unclean = F.when(F.col("unclean") == 1, F.struct("partition", "survivors"))
    grouped = (
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
    per_topic: list[TopicCounts] = []
    sample: list[UncleanPartition] = []
    unknown: set[int] = set()

    def unclean_keys() -> Iterator[tuple[str, int]]:
        found = 0
        for r in grouped.toLocalIterator():
            found += int(r["listed"])
            unknown.update(r["unknown_rack"])
            per_topic.append(
                TopicCounts(
                    topic=r["topic"],
                    policy=labels.get(r["topic"], "none"),
                    min_isr=int(r["min_isr"]),
                    partitions=int(r["partitions"]),
                    **{c: int(r[c]) for c in COUNTS},
                )
            )
            for u in r["unclean_partitions"]:
                if len(sample) < SAMPLE:
                    sample.append(
                        UncleanPartition(
                            topic=r["topic"], partition=u["partition"], observers=u["survivors"]
                        )
                    )
                yield r["topic"], u["partition"]
        if checked is not None and found != len(checked.entries):
            # raised inside the stream: the --unclean-out file is not written
            refuse_missing(spark, source, checked, root, topics)

    written = None
    if unclean_out is not None:
        written = write_election_stream(unclean_out, unclean_keys())
    else:
        for _ in unclean_keys():
            pass
    report = build_report(
        Failure(failure.brokers, failure.rack, frozenset(unknown)),
        per_topic,
        sample,
        None if plan is None else str(plan),
        default_min_isr,
        "spark",
        inventory,
    )
    return report, written
