"""One session-scoped local[2] SparkSession for every Spark test (STYLE: start it once)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark")
    from placement.score.session import build_session

    session = build_session("local[2]", app="mrc-plan-tests")
    session.conf.set("spark.sql.shuffle.partitions", "2")
    yield session
    session.stop()
