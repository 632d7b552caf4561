"""The scoring job's one run function: reads, actions, and the numbers it returns.

Brokers and topics are small and read on the driver (pyarrow); partitions are read by
Spark and never collected: only aggregates come back.
"""

from __future__ import annotations

import contextlib
import gc
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from placement.errors import InputError, UsageError
from placement.io.columns import PARTITION, TOPIC
from placement.io.reassignment import PlanFile, read_plan_file
from placement.io.snapshot import (
    StagedPartitions,
    read_table,
    snapshot_policies,
    stage_partitions,
)
from placement.io.staging import STAGING_ENV, is_shared, staging_area
from placement.model.policy import PlacementPolicy
from placement.score.metrics import (
    MOVEMENT,
    Key,
    Packing,
    PolicyClass,
    RackCodes,
    policy_classes,
    policy_rows,
    policy_table,
    summarise,
    with_histograms,
    with_plans,
    with_policy,
    with_state_key,
)
from placement.score.report import (
    Balance,
    BrokerLoad,
    PlanScore,
    RackFailure,
    ScoreReport,
    SnapshotInfo,
    StateMetrics,
    Stats,
    ranked,
    score,
)
from placement.score.starting import Starting

DataFrame = Any  # pyspark is imported inside the functions

PARTITIONS_DDL = (
    "topic string, partition int, replicas array<int>, observers array<int>, "
    "isr array<int>, leader int, size_bytes long"
)


# (topic, its policy or None, its min.insync.replicas or None), a row per topic
Parsed = list[tuple[str, PlacementPolicy | None, int | None]]


def parsed_policies(root: Path, topics: Any) -> Parsed:
    """(topic, its policy or None, its min.insync.replicas or None) for every topic row."""
    policies = snapshot_policies(root, topics)
    return [
        (topic, policies.get(topic), min_isr)
        for topic, min_isr in zip(
            topics.column("topic").to_pylist(), topics.column("min_isr").to_pylist(), strict=True
        )
    ]


@dataclass(frozen=True)
class Context:
    """What every pass needs besides the partitions: rack codes, how racks are counted,
    the inventory's broker ids, each topic's policy as a (small, cached) DataFrame."""

    racks: RackCodes
    packing: Packing
    brokers: tuple[int, ...]
    policies: DataFrame
    default_min_isr: int
    classes: tuple[PolicyClass, ...]  # the topics' policy classes; the last: a missing topic


def broker_racks(brokers: Any) -> dict[int, str | None]:
    """Each broker of a snapshot's brokers table and its rack (None: listed without one)."""
    ids, racks = brokers.column("broker_id").to_pylist(), brokers.column("rack").to_pylist()
    return dict(zip(ids, racks, strict=True))


def prepare(
    spark: Any, brokers: Any, parsed: Parsed, default_min_isr: int, *, longest: int
) -> Context:
    """The snapshot's small tables (the brokers, and the topics' policies as
    `parsed_policies` read them) as a `Context`: on the driver, they are small. ``longest``:
    the most brokers any replicas or observers list to be scored holds."""
    by_id = broker_racks(brokers)
    racks = RackCodes.build(by_id, {r for _, p, _ in parsed if p for r in p.per_rack()})
    packing = Packing.for_lists(racks, longest)
    code = {n: i for i, n in enumerate(racks.names)}
    rows = policy_rows(parsed, default_min_isr, code, packing)
    ids, classes = policy_classes(rows, default_min_isr)
    policies = spark.createDataFrame(policy_table(rows, ids))
    return Context(racks, packing, tuple(by_id), policies, default_min_isr, classes)


_HADOOP_GLOB = re.compile(r"([\\\[\]{}*?])")


def spark_path(path: str | Path) -> str:
    """``path`` (local) as Spark must be given it: Spark reads a path as a Hadoop glob, so
    `s[1]` would read `s1` and `snap*` another directory. Absolute, with the glob
    characters escaped and the `file:` scheme (a `:` in a name is no scheme)."""
    text = str(Path(path).absolute())
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(
            str(path),
            "Spark cannot open a path whose name is not UTF-8",
            "rename it, or copy it under a UTF-8 name",
        ) from None
    return "file://" + _HADOOP_GLOB.sub(r"\\\1", text)


def read_partitions(spark: Any, staged: StagedPartitions) -> Any:
    """The partitions table as a DataFrame: Spark reads the files `stage_partitions` left
    in the private staging directory (the bytes the driver checked, under names chosen
    there), each named alone, never the user's path. Every column is Spark's type there."""
    reader = spark.read.schema(PARTITIONS_DDL)
    return reader.parquet(*(spark_path(f) for f in staged.files))


def check_reachable(master: str | None) -> None:
    """Refuse (exit 2) a Spark master on other machines unless ``MRC_PLAN_STAGING_DIR``
    names where the staged partitions go: its executors cannot read the driver's private
    temporary directory. None: the master is not known yet (spark-submit sets it)."""
    from placement.score.session import is_local, on_loopback

    if master is None or is_local(master) or on_loopback(master) or is_shared():
        return
    raise UsageError(
        f"the Spark master {master} runs executors that cannot read this machine's "
        "private staging directory",
        f"set {STAGING_ENV} to a directory every executor sees at the same path (shared "
        "storage), owned by you and not writable by others; or use --master local[*]",
    )


def plan_table(plan: PlanFile) -> Any:
    """A plan's entries as an Arrow table (topic, partition, replicas, observers): from the
    arrays the reader of `assign`'s layout made when it has them (no object per replica),
    else from the entries."""
    import numpy as np
    import pyarrow as pa

    ids = pa.list_(pa.int32())
    schema = pa.schema(
        [
            pa.field("topic", pa.string(), nullable=False),
            pa.field("partition", pa.int32(), nullable=False),
            pa.field("replicas", ids, nullable=False),
            pa.field("observers", ids, nullable=False),
        ]
    )
    e, c = plan.entries, plan.columns
    partition = pa.array(np.fromiter(map(PARTITION, e), np.int32, len(e)))
    if c is None:
        columns = [
            pa.array(list(map(TOPIC, e)), pa.string()),
            partition,
            pa.array([list(a.replicas) for a in e], ids),
            pa.array([list(a.observers) for a in e], ids),
        ]
        return pa.table(columns, schema=schema)

    def lists(counts: Any, flat: Any) -> Any:
        # broker ids are Kafka's int32 (the reader checked them)
        offsets = np.zeros(len(counts) + 1, dtype=np.int32)
        np.cumsum(counts, out=offsets[1:])
        return pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat.astype(np.int32)), ids)

    topic = pa.array(c.names, pa.string()).take(pa.array(c.topic))
    replicas, observers = lists(c.sizes, c.flat), lists(c.observers, c.observer_flat)
    return pa.table([topic, partition, replicas, observers], schema=schema)


def read_plan(spark: Any, plan: PlanFile | str | Path) -> Any:
    """A plan as a DataFrame (topic, partition, replicas, observers), read by the strict
    reader first (a path is read here): Spark never sees a file Kafka would refuse. The
    checked entries go to Spark through Arrow in one transfer (Spark parsing the file's
    JSON again took 6 s of CPU for 500,000 entries)."""
    if not isinstance(plan, PlanFile):
        plan = read_plan_file(plan)
    return spark.createDataFrame(plan_table(plan))


def read_plans(root: Path, plans: Sequence[str | Path], brokers: Any) -> list[PlanFile]:
    """Every plan, read strictly and checked against the snapshot's brokers table, before
    Spark starts (the partitions are checked by the pass that scores the plan)."""
    import numpy as np

    ids = brokers.column("broker_id").to_numpy()
    known = set(ids.tolist())
    out = []
    for path in plans:
        if not Path(path).is_file():
            raise InputError(str(path), "plan file not found", "pass reassignment JSON files")
        plan = read_plan_file(path)
        c = plan.columns
        # all brokers known, seen on the reader's arrays at once; else the entry at fault
        # is found and named one entry at a time
        if c is None or not np.isin(c.flat, ids).all():
            plan.check(where=f"the snapshot {root}", brokers=known)
        out.append(plan)
    return out


def refuse_missing(
    spark: Any, parts: DataFrame, plan: PlanFile, root: Path, topics: Any
) -> NoReturn:
    """Raise the `InputError` for the first entry (in file order) of ``plan`` whose partition
    the snapshot lacks (called when the pass found fewer partitions than entries)."""
    frame = read_plan(spark, plan).select("topic", "partition")
    rows = frame.join(parts.select("topic", "partition"), ["topic", "partition"], "left_anti")
    missing = {(r["topic"], r["partition"]) for r in rows.limit(10_000).collect()}
    present = {a.topic for a in plan.entries if a.key not in missing}
    plan.check(
        where=f"the snapshot {root}",
        topics=present | set(topics.column("topic").to_pylist()),
        partitions=lambda t, p: (t, p) not in missing,
    )
    raise InputError(plan.path, f"entries of this plan are not in the snapshot {root}")


@dataclass(frozen=True)
class Totals:
    """What `summarise` returns, on the driver: the sums, and (replicas, leaders, bytes) per
    broker. A plan's totals are a difference; the state after it is baseline + difference."""

    sums: dict[str, int]
    loads: dict[int, tuple[int, int, int]]

    def __add__(self, other: Totals) -> Totals:
        sums = {k: self.sums.get(k, 0) + other.sums.get(k, 0) for k in self.sums | other.sums}
        loads = {}
        for b in self.loads | other.loads:
            mine, theirs = self.loads.get(b, (0, 0, 0)), other.loads.get(b, (0, 0, 0))
            loads[b] = (mine[0] + theirs[0], mine[1] + theirs[1], mine[2] + theirs[2])
        return Totals(sums, loads)


def _totals(rows: DataFrame, ctx: Context, plans: int) -> list[Totals]:
    """The totals of every state the rows of `with_plans` describe, in one job: the
    snapshot's, then each plan's difference."""
    key = Key.for_states(ctx.packing, len(ctx.classes))
    missing = len(ctx.classes) - 1
    enriched = (
        rows.transform(with_policy(ctx.policies, ctx.default_min_isr, missing))
        .transform(with_histograms(ctx.racks, ctx.packing))
        .transform(with_state_key(key))
    )
    groups: list[list[tuple[list[int], int, int]]] = [[] for _ in range(plans + 1)]
    loads: list[dict[int, tuple[int, int, int]]] = [{} for _ in range(plans + 1)]
    # a row per (state, broker, leader or not) and per (state, key): the size of the
    # cluster's broker list and of the combinations of figures, never of its partitions
    for r in summarise(enriched, key).collect():
        i, n, size = r["plan"] + 1, int(r["n"]), int(r["bytes"])
        words = [int(r[name]) for name in key.names]
        if r["broker"] is None:
            groups[i].append((words, n, size))
        else:
            replicas, leaders, held = loads[i].get(r["broker"], (0, 0, 0))
            leaders += n if words[0] == 1 else 0
            loads[i][r["broker"]] = (replicas + n, leaders, held + size)
    sums = [key.totals(ctx.racks, ctx.classes, g) for g in groups]
    return [Totals(s, b) for s, b in zip(sums, loads, strict=True)]


def _metrics(totals: Totals, ctx: Context) -> StateMetrics:
    """A state's figures from its totals, over every broker of the inventory."""
    loads = [totals.loads.get(b, (0, 0, 0)) for b in ctx.brokers]
    balance = Balance(
        replicas=Stats.of([r for r, _, _ in loads]),
        leaders=Stats.of([lead for _, lead, _ in loads]),
        bytes=Stats.of([size for _, _, size in loads]),
    )
    failure = {}
    for code in ctx.racks.inventory:
        name = ctx.racks.names[code]
        counts = {
            k: totals.sums[f"{name}\x00{k}"] for k in ("offline", "under_min_isr", "promoted")
        }
        failure[name] = RackFailure(**counts)
    brokers = []
    for b, (replicas, leaders, size) in sorted(zip(ctx.brokers, loads, strict=True)):
        placed = ctx.racks.of.get(b)
        rack = None if placed is None else ctx.racks.names[placed]
        brokers.append(
            BrokerLoad(broker=b, rack=rack, replicas=replicas, leaders=leaders, bytes=size)
        )
    return StateMetrics(
        violations=totals.sums["violations"], balance=balance, rack_failure=failure, brokers=brokers
    )


def all_totals(parts: DataFrame, ctx: Context, plans: Sequence[DataFrame]) -> list[Totals]:
    """The snapshot's totals, then each plan's difference (movement included): one scan
    of the partitions and one job, however many plans."""
    return _totals(parts.transform(with_plans(plans, ctx.racks)), ctx, len(plans))


def plan_score(name: str, base: Totals, delta: Totals, ctx: Context) -> PlanScore:
    """A plan's entry in the report, from the snapshot's totals and the plan's difference."""
    after = _metrics(base + delta, ctx)
    move = {f: delta.sums[f] for f in MOVEMENT}
    return PlanScore(
        plan=name,
        **move,
        violations_before=base.sums["violations"],
        violations_after=after.violations,
        balance=after.balance,
        rack_failure=after.rack_failure,
        brokers=after.brokers,
        score=score(
            partitions=base.sums["partitions"],
            replicas=base.sums["n_replicas"],
            violations_after=after.violations,
            replicas_added=move["replicas_added"],
            balance=after.balance,
            rack_failure=after.rack_failure,
        ),
    )


def _longest_list(plan: PlanFile) -> int:
    """The most brokers an entry of ``plan`` lists: its replicas (the strict reader made
    every observer list a tail of them), from the reader's arrays when it made them."""
    if plan.columns is not None:
        return int(plan.columns.sizes.max(initial=0))
    return max((len(a.replicas) for a in plan.entries), default=0)


def snapshot_dir(snapshot: str | Path) -> Path:
    root = Path(snapshot)
    if not root.is_dir():
        raise InputError(str(root), "a snapshot is a directory holding brokers, topics, partitions")
    return root


@dataclass(frozen=True)
class Stage:
    """A Spark stage ready to run: the session, the `Context` and the partitions."""

    spark: Any
    ctx: Context
    partitions: DataFrame
    unsized: int  # partitions without a size
    # the `Context` with the policies the plans set (`staged`'s ``planned``); None: none
    planned: Context | None = None


@dataclass(frozen=True)
class Inputs:
    """What the driver read and checked before Spark reads anything."""

    root: Path
    brokers: Any
    topics: Any
    parsed: Parsed
    plans: list[PlanFile]


def give_back_memory() -> None:
    """Return to the system what the driver freed: Arrow's pool keeps freed batches, and
    glibc's heap the freed Python objects, so the driver would hold its peak while the JVM
    works (10M partitions and a 500k-entry plan: 1.1 GiB kept, 0.8 GiB after this)."""
    import ctypes
    import ctypes.util

    import pyarrow as pa

    gc.collect()
    pa.default_memory_pool().release_unused()
    libc = ctypes.util.find_library("c")
    if libc is not None:
        with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to trim
            ctypes.CDLL(libc).malloc_trim(0)


def staged(
    snapshot: str | Path,
    plans: Sequence[str | Path],
    *,
    master: str | None,
    default_min_isr: int,
    app: str,
    progress: Callable[[str], None],
    area: Path,
    check: Callable[[Inputs], None] = lambda _: None,
    planned: Mapping[str, tuple[PlacementPolicy, int | None]] | None = None,
) -> tuple[Inputs, Stage]:
    """Start Spark in the background, read and check every input meanwhile (the snapshot's
    tables, its policies and partitions, each plan; then ``check``), and once all of them
    pass, set the stage on the session. The partitions are staged in ``area`` (a private
    directory the caller removes when the command ends: `staging_area`), checked there,
    and Spark reads only those copies. Nothing reaches Spark that Kafka would refuse; an
    input that fails ends the JVM this started. ``planned``: per topic, the policy and
    min.insync.replicas (None: the snapshot's) the plans set, for `Stage.planned`."""
    from placement.score.session import resolve_master

    root = snapshot_dir(snapshot)
    check_reachable(resolve_master(master))
    starting = Starting(master, app=app)
    try:
        brokers = read_table(root, "brokers")
        topics = read_table(root, "topics")
        parsed = parsed_policies(root, topics)  # bad policies fail before Spark is used
        inputs = Inputs(root, brokers, topics, parsed, read_plans(root, plans, brokers))
        check(inputs)
        progress("checking the partitions")
        table = stage_partitions(root, area)  # 2 s on 5M partitions, and the copy
        for path in [*table.files, *(Path(pf.path) for pf in inputs.plans)]:
            spark_path(path)
        progress("starting Spark")
        spark = starting.session()
        check_reachable(spark.sparkContext.master)
    except BaseException:
        starting.cancel()
        raise
    give_back_memory()  # what the checks of millions of partitions held
    longest = max([table.facts.longest, *map(_longest_list, inputs.plans)])
    ctx = prepare(spark, brokers, parsed, default_min_isr, longest=longest)
    after = None
    if planned:
        changed = with_planned(parsed, planned)
        after = prepare(spark, brokers, changed, default_min_isr, longest=longest)
    parts = read_partitions(spark, table)
    return inputs, Stage(spark, ctx, parts, table.facts.unsized, after)


def with_planned(
    parsed: Parsed, planned: Mapping[str, tuple[PlacementPolicy, int | None]]
) -> Parsed:
    """``parsed`` with each topic ``planned`` names under the policy (and min ISR, when
    set) the plans give it; topics the snapshot lacks have no partition to score."""
    out: Parsed = []
    for topic, policy, min_isr in parsed:
        if topic in planned:
            new, new_min = planned[topic]
            out.append((topic, new, new_min if new_min is not None else min_isr))
        else:
            out.append((topic, policy, min_isr))
    return out


def run_score(
    snapshot: str | Path,
    plans: Sequence[str | Path] = (),
    *,
    master: str | None = None,
    default_min_isr: int = 1,
    progress: Callable[[str], None] = lambda _: None,
    planned: Mapping[str, tuple[PlacementPolicy, int | None]] | None = None,
) -> ScoreReport:
    """Score the snapshot as it stands and after each plan; one SparkSession for all, one
    scan of the partitions for all. ``planned``: the policies (and min ISRs) the plans
    set, per topic (a topics file's): each plan's violations before and after, and its
    rack failures, are judged against them; the snapshot as it stands against its own."""
    with staging_area() as area:  # Spark reads it until the report is made
        inputs, stage = staged(
            snapshot,
            plans,
            master=master,
            default_min_isr=default_min_isr,
            app="mrc-plan score",
            progress=progress,
            area=area,
            planned=planned,
        )
        r, brokers, topics = inputs.root, inputs.brokers, inputs.topics
        ctx, parts = stage.ctx, stage.partitions
        frames = [read_plan(stage.spark, pf) for pf in inputs.plans]
        lengths = [len(pf.entries) for pf in inputs.plans]
        # Spark has the plans now (it reads a file in assign's layout itself, and got any
        # other as Arrow): their entries and text leave the driver before the job runs
        del inputs
        give_back_memory()
        progress(
            f"scoring the snapshot and {len(plans)} plan(s)" if plans else "scoring the snapshot"
        )
        # the plans against the policies they set (before and after), the snapshot as it
        # stands against its own
        judged = stage.planned or ctx
        if stage.planned is not None and plans:
            (base,) = all_totals(parts, ctx, [])
            plan_base, *deltas = all_totals(parts, judged, frames)
        else:
            base, *deltas = all_totals(parts, ctx, frames)
            plan_base = base
        scored = []
        for plan, length, delta in zip(plans, lengths, deltas, strict=True):
            if delta.sums["in_snapshot"] != length:  # read again, to name the entries at fault
                refuse_missing(stage.spark, parts, read_plan_file(plan), r, topics)
            scored.append(plan_score(str(plan), plan_base, delta, judged))
        scored = ranked(scored)
        return ScoreReport(
            snapshot=SnapshotInfo(
                brokers=brokers.num_rows,
                topics=topics.num_rows,
                partitions=base.sums["partitions"],
                replicas=base.sums["n_replicas"],
                partitions_without_size=stage.unsized,
            ),
            baseline=_metrics(base, ctx),
            plans=scored,
        )
