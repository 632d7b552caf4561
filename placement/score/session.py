"""The one place a SparkSession is built (STYLE: start it once per command).

Master, in order: the ``--master`` argument, ``SPARK_MASTER``, the master `spark-submit`
already set, else ``local[*]``. The UI is off and shuffle partitions follow the data size
(measured: 8 for a 5M-partition pass beat the default 200 by ~2x on 2 cores).

JVM options, when this process starts the JVM: the scoring stages compile to methods
larger than HotSpot's 8,000-byte JIT limit, which then run interpreted; lifting the limit
and using the throughput collector took a 5M-partition score with a 500k-partition plan
from 45 s to 34 s on local[2].
"""

from __future__ import annotations

import os
import warnings
from typing import Any


def resolve_master(master: str | None) -> str | None:
    """The master to set, or None to keep the one `spark-submit` configured."""
    if master:
        return master
    if os.environ.get("SPARK_MASTER"):
        return os.environ["SPARK_MASTER"]
    if os.environ.get("SPARK_ENV_LOADED") or os.environ.get("PYSPARK_SUBMIT_ARGS"):
        return None  # under spark-submit: its --master stands
    return "local[*]"


JVM_OPTIONS = "-XX:-DontCompileHugeMethods -XX:+UseParallelGC"


def shuffle_partitions(rows: int, cores: int) -> int:
    """About one shuffle partition per million rows, at least the cores, at most 200."""
    return max(cores, min(200, rows // 1_000_000 + 1))


def build_session(master: str | None = None, *, rows: int = 0, app: str = "mrc-plan") -> Any:
    warnings.filterwarnings("ignore", "PySpark does not yet fully support pandas", FutureWarning)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app)
    chosen = resolve_master(master)
    if chosen is not None:
        builder = builder.master(chosen)
    if chosen is not None:  # not under spark-submit, whose JVM is already up
        builder = builder.config("spark.driver.extraJavaOptions", JVM_OPTIONS).config(
            "spark.executor.extraJavaOptions", JVM_OPTIONS
        )
    cores = os.cpu_count() or 2
    session = (
        builder.config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions(rows, cores)))
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session
