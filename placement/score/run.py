"""The scoring job's one run function: reads, actions, and the numbers it returns.

Brokers and topics are small and read on the driver (pyarrow); partitions are read by
Spark and never collected: only aggregates come back.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from placement.errors import InputError
from placement.io.snapshot import read_table, table_path
from placement.model.policy import PlacementPolicy
from placement.score.metrics import (
    POLICY_SCHEMA,
    broker_loads,
    movement_columns,
    policy_rows,
    rack_failure_columns,
    rack_lookup,
    with_plan,
    with_policy,
    with_racks,
    with_violation,
)
from placement.score.report import (
    Balance,
    PlanScore,
    RackFailure,
    ScoreReport,
    SnapshotInfo,
    StateMetrics,
    score,
)
from placement.score.report import Stats as ReportStats

PARTITIONS_DDL = (
    "topic string, partition int, replicas array<int>, observers array<int>, "
    "isr array<int>, leader int, size_bytes long"
)


@dataclass(frozen=True)
class Stats:
    min: float
    max: float
    mean: float
    stddev: float

    @classmethod
    def of(cls, values: list[int]) -> Stats:
        if not values:
            return cls(0, 0, 0.0, 0.0)
        mean = sum(values) / len(values)
        var = sum((v - mean) ** 2 for v in values) / len(values)
        return cls(min(values), max(values), mean, math.sqrt(var))


@dataclass(frozen=True)
class StateScore:
    partitions: int
    replicas: int
    violations: int
    balance: dict[str, Stats]  # replicas, leaders, bytes over every broker of the inventory
    rack_failure: dict[str, dict[str, int]]  # rack -> offline, under_min_isr, promoted


def _policies(root: Path, topics: Any, default_min_isr: int) -> list[Any]:
    rows = []
    for topic, text, min_isr in zip(
        topics.column("topic").to_pylist(),
        topics.column("placement").to_pylist(),
        topics.column("min_isr").to_pylist(),
        strict=True,
    ):
        policy = None
        if text:
            try:
                policy = PlacementPolicy.model_validate_json(text)
            except ValidationError as exc:
                raise InputError(
                    str(root),
                    f"topic {topic}: its placement is not a valid policy "
                    f"({exc.errors()[0]['msg']})",
                    "run `mrc-plan validate` on the policy",
                ) from None
        rows.append((topic, policy, min_isr))
    return policy_rows(rows, default_min_isr)


def read_partitions(spark: Any, root: Path) -> Any:
    path = table_path(root, "partitions")
    reader = spark.read.schema(PARTITIONS_DDL)
    return reader.json(str(path)) if path.suffix == ".jsonl" else reader.parquet(str(path))


@dataclass(frozen=True)
class Movement:
    partitions_changed: int
    replicas_added: int
    replicas_removed: int
    bytes_to_move: int
    cross_rack_bytes: int


PLAN_ENTRY = "topic string, partition int, replicas array<int>, observers array<int>"
OWN_HEADER = '{"version":1,"partitions":['


def read_plan(spark: Any, path: str | Path) -> Any:
    """A reassignment JSON file as a DataFrame (topic, partition, replicas, observers).

    Files in the layout `assign` writes (one partition per line) are read line by line, in
    parallel; any other layout as one multi-line document.
    """
    from pyspark.sql import functions as F  # noqa: N812

    p = Path(path)
    try:
        with p.open("rb") as fh:
            head = fh.readline().strip()
    except OSError as exc:
        raise InputError(str(p), f"cannot read the plan: {exc.strerror}") from None
    if head == OWN_HEADER.encode():
        lines = spark.read.text(str(p))
        entry = F.from_json(F.regexp_replace("value", r",\s*$", ""), PLAN_ENTRY)
        return (
            lines.where(F.col("value").startswith('{"topic"'))
            .select(entry.alias("e"))
            .select("e.*")
        )
    doc = spark.read.option("multiLine", True).schema(
        "version int, partitions array<struct<topic: string, partition: int, "
        "replicas: array<int>, observers: array<int>>>"
    )
    return doc.json(str(p)).select(F.explode("partitions").alias("e")).select("e.*")


def score_state(
    spark: Any,
    parts: Any,
    racks: Mapping[int, str | None],
    policies: Any,
    plan: Any = None,
) -> tuple[StateScore, Movement | None]:
    """Violations, balance and rack failure of one state of the cluster (after ``plan``,
    when given, with what the plan moves), in one pass over the partitions plus the
    per-broker shuffle."""
    from pyspark.sql import functions as F  # noqa: N812

    lookup = rack_lookup(racks)
    if plan is not None:
        parts = parts.transform(with_plan(plan))
    enriched = (
        parts.transform(with_policy(policies))
        .transform(with_racks(lookup))
        .transform(with_violation)
    )
    rack_names = sorted({r for r in racks.values() if r is not None})
    row = enriched.agg(
        F.count("*").alias("partitions"),
        F.sum(F.size("replicas")).alias("replicas"),
        F.sum(F.when(F.col("violates"), 1).otherwise(0)).alias("violations"),
        *rack_failure_columns(rack_names),
        *(movement_columns(lookup) if plan is not None else []),
    ).first()
    loads = {r["broker"]: r for r in broker_loads(parts).collect()}  # one row per broker
    balance = {}
    for metric in ("replicas", "leaders", "bytes"):
        balance[metric] = Stats.of([int(loads[b][metric]) if b in loads else 0 for b in racks])
    failure = {
        rack: {k: int(row[f"{rack}\x00{k}"] or 0) for k in ("offline", "under_min_isr", "promoted")}
        for rack in rack_names
    }
    state = StateScore(
        partitions=int(row["partitions"]),
        replicas=int(row["replicas"] or 0),
        violations=int(row["violations"] or 0),
        balance=balance,
        rack_failure=failure,
    )
    movement = None
    if plan is not None:
        movement = Movement(*(int(row[f] or 0) for f in Movement.__dataclass_fields__))
    return state, movement


def score_snapshot(spark: Any, root: str | Path, default_min_isr: int = 1) -> StateScore:
    r = Path(root)
    brokers = read_table(r, "brokers")
    topics = read_table(r, "topics")
    racks = dict(
        zip(
            brokers.column("broker_id").to_pylist(),
            brokers.column("rack").to_pylist(),
            strict=True,
        )
    )
    policies = spark.createDataFrame(_policies(r, topics, default_min_isr), POLICY_SCHEMA)
    return score_state(spark, read_partitions(spark, r), racks, policies)[0]


def _balance(state: StateScore) -> Balance:
    return Balance(**{k: ReportStats(**vars(v)) for k, v in state.balance.items()})


def _failure(state: StateScore) -> dict[str, RackFailure]:
    return {r: RackFailure(**c) for r, c in state.rack_failure.items()}


def run_score(
    snapshot: str | Path,
    plans: Sequence[str | Path] = (),
    *,
    master: str | None = None,
    default_min_isr: int = 1,
    progress: Callable[[str], None] = lambda _: None,
) -> ScoreReport:
    """Score the snapshot as it stands and after each plan; one SparkSession for all."""
    from placement.score.session import build_session

    r = Path(snapshot)
    if not r.is_dir():
        raise InputError(str(r), "a snapshot is a directory holding brokers, topics, partitions")
    brokers = read_table(r, "brokers")
    topics = read_table(r, "topics")
    racks = dict(
        zip(
            brokers.column("broker_id").to_pylist(),
            brokers.column("rack").to_pylist(),
            strict=True,
        )
    )
    rows = _policies(r, topics, default_min_isr)
    for plan in plans:
        if not Path(plan).is_file():
            raise InputError(str(plan), "plan file not found", "pass reassignment JSON files")
    progress("starting Spark")
    spark = build_session(master, app="mrc-plan score")
    policies = spark.createDataFrame(rows, POLICY_SCHEMA).cache()
    parts = read_partitions(spark, r).cache()
    progress("scoring the snapshot as it stands")
    base, _ = score_state(spark, parts, racks, policies)
    scored = []
    for plan in plans:
        progress(f"scoring {plan}")
        state, move = score_state(spark, parts, racks, policies, read_plan(spark, plan))
        assert move is not None
        balance, failure = _balance(state), _failure(state)
        scored.append(
            PlanScore(
                plan=str(plan),
                **vars(move),
                violations_before=base.violations,
                violations_after=state.violations,
                balance=balance,
                rack_failure=failure,
                score=score(
                    partitions=base.partitions,
                    replicas=base.replicas,
                    violations_after=state.violations,
                    replicas_added=move.replicas_added,
                    balance=balance,
                    rack_failure=failure,
                ),
            )
        )
    scored.sort(key=lambda p: (-p.score, p.plan))
    return ScoreReport(
        snapshot=SnapshotInfo(
            brokers=brokers.num_rows,
            topics=topics.num_rows,
            partitions=base.partitions,
            replicas=base.replicas,
        ),
        baseline=StateMetrics(
            violations=base.violations, balance=_balance(base), rack_failure=_failure(base)
        ),
        plans=scored,
    )
