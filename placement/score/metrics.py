"""Scoring transforms (SPEC §7): pure ``DataFrame -> DataFrame`` functions and column
expressions; no action, no I/O (those are in `run.py`).

Per partition everything is computed with higher-order array functions over a literal
broker -> rack map (a few thousand entries, shipped with the plan, no join): the rack of
every replica, per-rack sync/observer counts against the policy, survivors of each rack's
failure. Only the per-broker balance needs a shuffle (explode + group by broker).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from placement.model.policy import PlacementPolicy, PromotionPolicy

# pyspark is imported inside the functions: `mrc-plan --help` must not pay for it
DataFrame = Any
Column = Any


def rack_lookup(racks: Mapping[int, str | None]) -> Column:
    """A literal map<int, string> column: broker id -> rack (brokers without a rack left out)."""
    from pyspark.sql import functions as F  # noqa: N812

    pairs: list[Column] = []
    for broker, rack in sorted(racks.items()):
        if rack is not None:
            pairs += [F.lit(broker), F.lit(rack)]
    return F.create_map(*pairs) if pairs else F.create_map().cast("map<int,string>")


def policy_rows(
    topics: Iterable[tuple[str, PlacementPolicy | None, int | None]], default_min_isr: int
) -> list[tuple[str, dict[str, list[int]] | None, int, bool]]:
    """(topic, {rack: [sync, observers]} or None, min ISR, promotes observers)."""
    rows = []
    for topic, policy, min_isr in topics:
        expected = None
        promotes = False
        if policy is not None:
            expected = {r: [s, o] for r, (s, o) in policy.per_rack().items()}
            promotes = policy.promotion in (
                PromotionPolicy.UNDER_MIN_ISR,
                PromotionPolicy.UNDER_REPLICATED,
            )
        rows.append((topic, expected, min_isr or default_min_isr, promotes))
    return rows


POLICY_SCHEMA = "topic string, expected map<string, array<int>>, min_isr int, promotes boolean"


def with_policy(policies: DataFrame) -> Any:
    """Attach each partition's policy (a broadcast join: topics are few)."""
    from pyspark.sql import functions as F  # noqa: N812

    def transform(parts: DataFrame) -> DataFrame:
        return parts.join(F.broadcast(policies), "topic", "left")

    return transform


def with_racks(lookup: Column) -> Any:
    """Add ``sync_racks`` and ``obs_racks``: the rack of every sync replica and observer."""
    from pyspark.sql import functions as F  # noqa: N812

    def transform(parts: DataFrame) -> DataFrame:
        n_obs = F.coalesce(F.size("observers"), F.lit(0))
        n_obs = F.when(n_obs < 0, 0).otherwise(n_obs)  # size(null) is -1
        n_sync = F.size("replicas") - n_obs
        return parts.withColumn(
            "sync_ids", F.slice("replicas", 1, F.greatest(n_sync, F.lit(0)))
        ).withColumns(
            {
                "obs_ids": F.coalesce("observers", F.array().cast("array<int>")),
                "sync_racks": F.transform("sync_ids", lambda b: F.element_at(lookup, b)),
                "obs_racks": F.transform(
                    F.coalesce("observers", F.array().cast("array<int>")),
                    lambda b: F.element_at(lookup, b),
                ),
            }
        )

    return transform


def with_violation(parts: DataFrame) -> DataFrame:
    """``violates``: the partition breaks its topic's policy (null: the topic has none).

    A broker listed twice, a broker with no known rack, or any rack whose sync/observer
    counts differ from the policy's.
    """
    from pyspark.sql import functions as F  # noqa: N812

    def count(col: str, rack: Column) -> Column:
        return F.size(F.filter(col, lambda x: x == rack))

    def wanted(rack: Column, i: int) -> Column:
        return F.coalesce(F.element_at(F.element_at("expected", rack), i), F.lit(0))

    racks = F.array_distinct(F.concat(F.map_keys("expected"), "sync_racks", "obs_racks"))
    mismatch = F.exists(
        F.filter(racks, lambda r: r.isNotNull()),
        lambda r: (
            (count("sync_racks", r) != wanted(r, 1)) | (count("obs_racks", r) != wanted(r, 2))
        ),
    )
    broken = (
        (F.size(F.array_distinct("replicas")) != F.size("replicas"))
        | F.exists("sync_racks", lambda r: r.isNull())
        | F.exists("obs_racks", lambda r: r.isNull())
        | mismatch
    )
    return parts.withColumn("violates", F.when(F.col("expected").isNull(), None).otherwise(broken))


def rack_failure_columns(racks: Sequence[str]) -> list[Column]:
    """Per rack R, sums over partitions with a policy: offline, under_min_isr, promoted when
    every broker of R is down (every sync replica assumed in the ISR)."""
    from pyspark.sql import functions as F  # noqa: N812

    def elsewhere(rack: str) -> Any:
        # a closure, not a default argument: Spark reads a second parameter as the index
        return lambda r: r.isNull() | (r != F.lit(rack))

    out = []
    for rack in racks:
        s = F.size(F.filter("sync_racks", elsewhere(rack)))
        o = F.size(F.filter("obs_racks", elsewhere(rack)))
        m = F.col("min_isr")
        has = F.col("expected").isNotNull()
        short = has & (s > 0) & (s < m)
        promoted = short & F.col("promotes") & (s + o >= m)
        out += [
            F.sum(F.when(has & (s == 0), 1).otherwise(0)).alias(f"{rack}\x00offline"),
            F.sum(F.when(short & ~promoted, 1).otherwise(0)).alias(f"{rack}\x00under_min_isr"),
            F.sum(F.when(promoted, 1).otherwise(0)).alias(f"{rack}\x00promoted"),
        ]
    return out


def broker_loads(parts: DataFrame) -> DataFrame:
    """(broker, replicas, leaders, bytes) for every broker holding something."""
    from pyspark.sql import functions as F  # noqa: N812

    size = F.coalesce("size_bytes", F.lit(0))
    return (
        parts.select(F.posexplode("replicas").alias("pos", "broker"), size.alias("size"))
        .groupBy("broker")
        .agg(
            F.count("*").alias("replicas"),
            F.sum(F.when(F.col("pos") == 0, 1).otherwise(0)).alias("leaders"),
            F.sum("size").alias("bytes"),
        )
    )


def with_plan(plan: DataFrame) -> Any:
    """Apply a plan: ``old_replicas`` keeps the state before, ``replicas``/``observers``
    become the plan's where it has the partition (partitions not in the plan keep theirs)."""
    from pyspark.sql import functions as F  # noqa: N812

    renamed = plan.select(
        "topic",
        "partition",
        F.col("replicas").alias("plan_replicas"),
        F.col("observers").alias("plan_observers"),
    )

    def transform(parts: DataFrame) -> DataFrame:
        joined = parts.join(renamed, ["topic", "partition"], "left")
        changed = F.col("plan_replicas").isNotNull()
        return joined.select(
            *[c for c in parts.columns if c not in ("replicas", "observers")],
            F.col("replicas").alias("old_replicas"),
            F.coalesce("observers", F.array().cast("array<int>")).alias("old_observers"),
            F.when(changed, F.col("plan_replicas")).otherwise(F.col("replicas")).alias("replicas"),
            F.when(changed, F.coalesce("plan_observers", F.array().cast("array<int>")))
            .otherwise(F.col("observers"))
            .alias("observers"),
            changed.alias("in_plan"),
        )

    return transform


def movement_columns(lookup: Column) -> list[Column]:
    """SPEC §7 sums over a state made by `with_plan`: partitions changed, replicas added and
    removed, bytes to move, and cross-rack bytes (added replicas whose rack held none of the
    partition's old replicas)."""
    from pyspark.sql import functions as F  # noqa: N812

    added = F.array_except("replicas", "old_replicas")
    removed = F.array_except("old_replicas", "replicas")
    old_racks = F.transform("old_replicas", lambda b: F.element_at(lookup, b))
    far = F.size(F.filter(added, lambda b: ~F.array_contains(old_racks, F.element_at(lookup, b))))
    size = F.coalesce("size_bytes", F.lit(0))
    differs = F.col("in_plan") & (
        (F.col("replicas") != F.col("old_replicas"))
        | (F.coalesce("observers", F.array().cast("array<int>")) != F.col("old_observers"))
    )
    return [
        F.sum(F.when(differs, 1).otherwise(0)).alias("partitions_changed"),
        F.sum(F.size(added)).alias("replicas_added"),
        F.sum(F.size(removed)).alias("replicas_removed"),
        F.sum(size * F.size(added)).alias("bytes_to_move"),
        F.sum(size * far).alias("cross_rack_bytes"),
    ]
