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
import sys
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from placement.errors import UsageError


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
    if chosen is not None:  # not under spark-submit, whose JVM is already up
        builder = (
            builder.master(chosen)
            .config("spark.driver.extraJavaOptions", JVM_OPTIONS)
            .config("spark.executor.extraJavaOptions", JVM_OPTIONS)
        )
    cores = os.cpu_count() or 2
    builder = (
        builder.config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions(rows, cores)))
        .config("spark.sql.session.timeZone", "UTC")
    )
    from pyspark import SparkContext

    try:
        if SparkContext._gateway is not None or os.environ.get("MRC_PLAN_DEBUG") == "1":
            session = builder.getOrCreate()  # the JVM is up already, or its chatter is wanted
        else:
            with jvm_stderr_to(jvm_log()):
                session = builder.getOrCreate()
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UsageError(
            f"Spark did not start ({first})",
            f"check --master / SPARK_MASTER and that Java 17 or later is installed; the "
            f"JVM's own output is in {jvm_log()}",
        ) from exc
    session.sparkContext.setLogLevel("ERROR")
    return session


def jvm_log() -> Path:
    """Where the JVM's own stderr goes (overwritten by each run): its start-up warnings
    and log lines are not for the terminal; errors reach us as exceptions anyway."""
    return Path(tempfile.gettempdir()) / f"mrc-plan-spark-{os.getuid()}.log"


@contextmanager
def jvm_stderr_to(path: Path) -> Iterator[None]:
    """Launch the JVM with ``path`` as its stderr (it inherits file descriptor 2 when it
    starts); this process keeps writing to the terminal through a duplicate of it."""
    sys.stderr.flush()
    terminal = os.dup(2)
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    saved = sys.stderr
    try:
        os.dup2(log, 2)
        sys.stderr = open(terminal, "w", closefd=False)  # noqa: SIM115 - restored below
        yield
    finally:
        sys.stderr.flush()
        sys.stderr = saved
        os.dup2(terminal, 2)
        os.close(terminal)
        os.close(log)
