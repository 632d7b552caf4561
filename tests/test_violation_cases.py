"""Both implementations of a policy violation against the one table of cases in
`_violation_cases`: numpy (`snapshot show`) and Spark (`score`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _violation_cases import CASES, Case, case_snapshot

from placement.rules.partitions import violation_mask

BY_ID = pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])


def test_cases_have_distinct_names_and_both_outcomes() -> None:
    assert len({c.id for c in CASES}) == len(CASES)
    assert {c.violates for c in CASES} == {True, False}


@BY_ID
def test_numpy_violation_mask(case: Case) -> None:
    mask = violation_mask(case_snapshot(case))
    assert mask.tolist() == [case.violates]


@pytest.mark.spark
@BY_ID
def test_spark_violation_column(spark: Any, case: Case) -> None:
    from placement.score.metrics import violation, with_histograms, with_policy
    from placement.score.run import parsed_policies, prepare

    snap = case_snapshot(case)
    lists = [snap.partitions.column(c).to_pylist() for c in ("replicas", "observers")]
    longest = max(len(x or ()) for column in lists for x in column)
    parsed = parsed_policies(Path("cases"), snap.topics)
    ctx = prepare(spark, snap.brokers, parsed, 1, longest=longest)
    rows = (
        spark.createDataFrame(snap.partitions)
        .transform(with_policy(ctx.policies, 1))
        .transform(with_histograms(ctx.racks, ctx.packing))
        .select(violation(ctx.packing).alias("violates"))
        .collect()
    )
    # null for a topic without a policy (`with_state_counts` counts it as 0)
    want = case.violates if case.policy is not None and case.listed else None
    assert [r["violates"] for r in rows] == [want]
