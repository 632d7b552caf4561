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
def test_spark_violation_count(spark: Any, case: Case) -> None:
    from placement.score.run import all_totals, parsed_policies, prepare

    snap = case_snapshot(case)
    lists = [snap.partitions.column(c).to_pylist() for c in ("replicas", "observers")]
    longest = max(len(x or ()) for column in lists for x in column)
    parsed = parsed_policies(Path("cases"), snap.topics)
    ctx = prepare(spark, snap.brokers, parsed, 1, longest=longest)
    (totals,) = all_totals(spark.createDataFrame(snap.partitions), ctx, [])
    # a topic without a policy, or missing from the topics table, breaks nothing
    want = case.violates and case.policy is not None and case.listed
    assert totals.sums["violations"] == int(want)
    assert totals.sums["partitions"] == 1
