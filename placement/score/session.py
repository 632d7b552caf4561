"""The one place a SparkSession is built (STYLE: start it once per command).

Master, in order: the ``--master`` argument, ``SPARK_MASTER``, the master `spark-submit`
already set, else ``local[*]``. The UI is off and shuffle partitions follow the data size
(measured: 8 for a 5M-partition pass beat the default 200 by ~2x on 2 cores).

JVM options, when this process starts the JVM: the scoring stages compile to methods
larger than HotSpot's 8,000-byte JIT limit, which then run interpreted; lifting the limit
and using the throughput collector took a 5M-partition score with a 500k-partition plan
from 45 s to 34 s on local[2].

Local means local, and only the user's:

- with a local master (``local``, ``local[N]``, ``local[*]``) or a ``spark://`` master on
  the loopback interface, the driver's RPC and block manager listen on 127.0.0.1 only;
  a local master also turns on ``spark.authenticate`` (Spark makes a secret per run);
- the secret of a cluster started by `spark-local-cluster` is read from the file named by
  ``MRC_PLAN_SPARK_SECRET_FILE``, else from the default state directory when it records
  the master asked for; it reaches the JVM through Py4J, never through a command line;
- the JVM that this process starts runs in a process group of its own, and
  :func:`stop_jvm` (called on Ctrl-C) ends that group: nothing is left behind, whether the
  JVM was starting or running;
- its stderr goes to ``spark.log`` in :func:`runtime_dir`, a private (0700) directory.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any

from placement.errors import UsageError, debug
from placement.io.cache import running
from placement.io.private import cache_dir as cache_dir
from placement.io.private import open_private as open_private
from placement.io.private import private_dir as private_dir
from placement.io.private import read_private as read_private
from placement.io.private import runtime_dir as runtime_dir
from placement.io.private import write_private as write_private
from placement.score.clusterstate import LOOPBACK as LOOPBACK
from placement.score.clusterstate import default_state_dir, recorded


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
CDS_ENV = "MRC_PLAN_SPARK_CDS"  # "0": the driver JVM starts without a class-data archive
SECRET_FILE_ENV = "MRC_PLAN_SPARK_SECRET_FILE"
DRIVER_MEMORY_ENV = "MRC_PLAN_SPARK_DRIVER_MEMORY"  # e.g. 4g: the local JVM's heap
_SPARK_URL = re.compile(r"spark://(?P<host>\[[^\]]*\]|[^:/\[]+):(?P<port>\d+)/?")


def is_local(master: str) -> bool:
    return master == "local" or master.startswith("local[")


def on_loopback(master: str) -> bool:
    """A ``spark://`` master on this host's loopback interface (one URL, not a list)."""
    match = _SPARK_URL.fullmatch(master)
    return match is not None and match["host"] in {LOOPBACK, "localhost", "[::1]"}


def build_session(master: str | None = None, *, app: str = "mrc-plan") -> Any:
    warnings.filterwarnings("ignore", "PySpark does not yet fully support pandas", FutureWarning)
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    chosen = resolve_master(master)
    loopback = chosen is not None and (is_local(chosen) or on_loopback(chosen))
    options = {"spark.app.name": app}
    if chosen is not None:  # not under spark-submit, whose JVM is already up
        driver = executor = JVM_OPTIONS
        if SparkContext._gateway is None:  # this process starts the driver's JVM
            driver = f"{JVM_OPTIONS} {_class_archive_options()}".strip()
        if on_loopback(chosen):  # executors on this machine: they may map it too
            executor = f"{JVM_OPTIONS} {_executor_archive_options()}".strip()
        options |= {
            "spark.master": chosen,
            "spark.driver.extraJavaOptions": driver,
            "spark.executor.extraJavaOptions": executor,
        }
        if loopback:
            options |= {"spark.driver.host": LOOPBACK, "spark.driver.bindAddress": LOOPBACK}
        if is_local(chosen):
            options["spark.authenticate"] = "true"  # Spark makes the secret, for this run only
            # the driver is the executor: its heap holds the broadcast plans and the
            # aggregation buffers, never the partitions (10M partitions and a 500k plan fit
            # in 1 GiB); without a cap the JVM takes a quarter of the machine's memory
            options["spark.driver.memory"] = os.environ.get(DRIVER_MEMORY_ENV) or "1g"
    options |= {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        # one shuffle partition per core: what every caller got (none sized it from the data)
        "spark.sql.shuffle.partitions": str(os.cpu_count() or 2),
        "spark.sql.session.timeZone": "UTC",
        # a file costs Spark 4 MiB in its split sizing by default: with a snapshot's few
        # part files that leaves the last task of a core short; 1 MiB keeps tasks even
        "spark.sql.files.openCostInBytes": str(1 << 20),
        # a table from Arrow (a plan's entries) stays Arrow batches that the tasks decode;
        # below this size Spark would hold it in the driver's heap as objects, one per
        # entry and list (a 500k-entry plan: 61 s of GC in a 1 GiB heap, against 2 s)
        "spark.sql.execution.arrow.localRelationThreshold": "0",
    }
    secret = cluster_secret(chosen) if chosen is not None else None
    if not debug():
        _quiet_py4j()
    interrupt = signal.getsignal(signal.SIGINT) if _main_thread() else None
    launching = SparkContext._gateway is None and chosen is not None
    try:
        if launching:
            _launch_jvm(options, loopback=loopback)
        builder = SparkSession.builder
        for key, value in options.items():
            builder = builder.config(key, value)
        if secret is not None:  # set through Py4J: on no command line
            builder = builder.config("spark.authenticate", "true").config(
                "spark.authenticate.secret", secret
            )
        session = builder.getOrCreate()
    except UsageError:  # from our own checks (the JVM log, a secret file): as it is
        if launching:
            stop_jvm()
        raise
    except Exception as exc:
        if launching:
            stop_jvm()
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UsageError(
            f"Spark did not start ({first})",
            f"check --master / SPARK_MASTER and that Java 17 or later is installed; the "
            f"JVM's own output is in {_runtime_path() / 'spark.log'}",
        ) from exc
    except BaseException:  # Ctrl-C while the JVM starts: it must not outlive us
        stop_jvm()
        raise
    finally:
        if interrupt is not None:
            # SparkContext installs a SIGINT handler that calls into the JVM before raising
            # KeyboardInterrupt; the JVM is stopped instead (stop_jvm), so keep ours
            signal.signal(signal.SIGINT, interrupt)
    session.sparkContext.setLogLevel("ERROR")
    return session


# A class-data sharing archive (JDK 13+: -XX:ArchiveClassesAtExit) holds the classes the
# driver JVM loaded, already parsed and verified: a later JVM maps it instead of reading
# and checking thousands of classes from Spark's jars. Measured on 2 cores: session ready
# 13 s -> 6 s, first job 20 s -> 8 s, JVM CPU to the first job 22 s -> 12 s. The first run
# writes it as its JVM exits (a few seconds, once per Spark and Java installation).
_DUMPS: dict[int, tuple[Path, Path]] = {}  # JVM pid -> (the archive it writes, its name)
_ARCHIVE_WAIT = 120.0  # seconds an exiting JVM may take to write its archive
_STALE_PART = 24 * 3600.0  # a part older than this is left from a run that was killed
_UNUSED_ARCHIVE = 30 * 24 * 3600.0  # another archive not used for this long is removed
_OTHER_ARCHIVES = 2  # archives of other installations kept besides this one's
_PENDING: list[tuple[Path, Path]] = []  # chosen by build_session, claimed by _launch_jvm


def _archive_path() -> Path | None:
    """Where the driver's class-data archive for this Spark, this Java and these options
    lives (its name changes when any of them does); None: no archive (turned off, no
    java found, no private cache directory, or a path the JVM's options cannot carry)."""
    import hashlib

    import pyspark

    if os.environ.get(CDS_ENV, "1") == "0":
        return None
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    try:
        real = os.path.realpath(java) if java else ""
        st = os.stat(real)
        # the JVM refuses an archive made with another class path: its jars' place counts
        folder = Path(pyspark.__file__).resolve().parent / "jars"
        jars = sorted(os.listdir(folder))
        where = cache_dir()
    except (OSError, UsageError):
        return None
    facts = (pyspark.__version__, real, st.st_mtime_ns, st.st_size, str(folder), jars, JVM_OPTIONS)
    key = hashlib.sha256(repr(facts).encode()).hexdigest()[:16]
    path = where / f"spark-classes-{key}.jsa"
    # Spark splits the options at whitespace; a quote would need escaping
    return None if re.search(r"[\s\"'\\]", str(path)) else path


def _usable(path: Path) -> bool:
    """A non-empty regular file of ours that no one else can write to, as `open_private`
    accepts one (the JVM maps it as code)."""
    try:
        fd = open_private(path, os.O_RDONLY, secret=False)
    except UsageError:
        return False
    try:
        return os.fstat(fd).st_size > 0
    finally:
        os.close(fd)


_QUIET_CDS = "-XX:+IgnoreUnrecognizedVMOptions -Xlog:cds=off -Xlog:cds+dynamic=off"


def _executor_archive_options() -> str:
    """The options of executors on this machine (a cluster on the loopback interface,
    such as `spark-local-cluster`'s): map the driver's archive once it exists. A worker
    starts its executors with the same Spark's jars, so the JVM accepts it; one that
    cannot (another class path, another user's worker that cannot read it) starts
    without. Measured at 1M partitions on 2 cores: two one-core workers 45.4 s -> 37.2 s,
    one 33.1 s -> 29.4 s."""
    path = _archive_path()
    if path is None or not _usable(path):
        return ""
    return f"{_QUIET_CDS} -XX:SharedArchiveFile={path}"


def _class_archive_options() -> str:
    """The driver JVM's options for its class-data archive: map it if it exists, else
    write it as the JVM exits (`stop_jvm` names it once complete). Unknown options are
    ignored, so a JVM other than HotSpot starts as before."""
    path = _archive_path()
    if path is None:
        return ""
    now = time.time()
    # each installation of Spark or Java had its own (150-180 MB): forget those unused for
    # a month, and keep at most `_OTHER_ARCHIVES` of the others (the most recently used)
    kept: list[tuple[float, Path]] = []
    for other in path.parent.glob("spark-classes-*.jsa*"):
        if other == path:
            continue
        with contextlib.suppress(OSError):
            used = other.lstat().st_mtime
            partial = other.name.endswith(".part")
            if partial and not _writer_running(other):
                other.unlink()  # its JVM was killed before it could finish or remove it
            elif now - used > (_STALE_PART if partial else _UNUSED_ARCHIVE):
                other.unlink()
            elif not partial:
                kept.append((used, other))
    for _, other in sorted(kept, reverse=True)[_OTHER_ARCHIVES:]:
        with contextlib.suppress(OSError):
            other.unlink()
    if _usable(path):
        with contextlib.suppress(OSError):
            os.utime(path)  # in use
        return f"{_QUIET_CDS} -XX:SharedArchiveFile={path}"
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    with contextlib.suppress(OSError):
        part.unlink()
    _PENDING[:] = [(part, path)]
    return f"{_QUIET_CDS} -XX:ArchiveClassesAtExit={part}"


def _writer_running(part: Path) -> bool:
    """Whether the process named in ``part`` (``NAME.jsa.PID.part``) still runs; a name
    without a pid counts as running (it ages out instead)."""
    pid = part.name.removesuffix(".part").rpartition(".")[2]
    return not pid.isdigit() or running(int(pid))


def _archive_written(proc: subprocess.Popen[bytes]) -> None:
    """After ``proc`` (a JVM writing an archive) has exited: name the archive if the JVM
    ended by itself or on SIGTERM (then it wrote the whole file), else remove the part."""
    part, path = _DUMPS.pop(proc.pid)
    if proc.returncode in (0, 128 + signal.SIGTERM) and _usable(part):
        with contextlib.suppress(OSError):
            os.chmod(part, 0o400)
            os.replace(part, path)
            return
    with contextlib.suppress(OSError):
        part.unlink()


def _write_archive_at_exit() -> None:
    """At interpreter exit: let a JVM that writes an archive finish it (the JVM would
    otherwise exit on its own once we are gone, with no one left to name the file)."""
    if _DUMPS and _JVMS:
        stop_jvm(archive=True)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


# The JVM processes this process started (Popen objects of launch_gateway), newest last.
_JVMS: list[subprocess.Popen[bytes]] = []


def _launch_jvm(options: dict[str, str], *, loopback: bool) -> None:
    """Start the JVM as pyspark would, but in a process group of its own (so that
    :func:`stop_jvm` ends it and whatever it started), with its stderr in :func:`jvm_log`
    and, for a loopback master, ``SPARK_LOCAL_IP`` set to 127.0.0.1."""
    import pyspark.java_gateway
    from pyspark import SparkConf, SparkContext

    java_gateway: Any = pyspark.java_gateway  # its Popen is replaced for one call

    conf = SparkConf(loadDefaults=False).setAll(list(options.items()))
    log = None if debug() else open_private(jvm_log())
    real_popen = java_gateway.Popen

    def popen(*args: Any, **kwargs: Any) -> Any:
        kwargs["start_new_session"] = True
        if log is not None:
            kwargs["stderr"] = log
        if loopback:
            kwargs["env"] = {**kwargs.get("env", os.environ), "SPARK_LOCAL_IP": LOOPBACK}
        with _sigint_deferred():  # the child is recorded before a Ctrl-C can interrupt us
            proc = real_popen(*args, **kwargs)
            _JVMS.append(proc)
            if _PENDING:
                _DUMPS[proc.pid] = _PENDING.pop()
                if len(_DUMPS) == 1:
                    atexit.register(_write_archive_at_exit)
        return proc

    java_gateway.Popen = popen
    try:
        SparkContext._ensure_initialized(gateway=java_gateway.launch_gateway(conf))
    finally:
        java_gateway.Popen = real_popen
        if log is not None:
            os.close(log)


_HELD = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _sigint_deferred() -> Any:
    """Hold a SIGINT or SIGTERM that arrives inside the block and deliver it at the end,
    to whatever handler was installed before (the CLI's turns it into its clean exit). A
    signal the parent set to be ignored (nohup, a background job) stays ignored."""
    if not _main_thread():
        yield
        return
    pending: list[int] = []
    held = [sig for sig in _HELD if signal.getsignal(sig) is not signal.SIG_IGN]
    previous = {sig: signal.signal(sig, lambda signum, _f: pending.append(signum)) for sig in held}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if pending:
        if signal.getsignal(pending[0]) in (signal.SIG_DFL, signal.SIG_IGN, None):
            raise KeyboardInterrupt
        signal.raise_signal(pending[0])


def stop_jvm(grace: float = 5.0, *, archive: bool = False) -> None:
    """End every JVM this process started, with its process group: SIGTERM (Spark's
    shutdown hooks remove its temporary directories), then SIGKILL after ``grace`` seconds
    (with ``archive``, a JVM writing its class-data archive gets up to `_ARCHIVE_WAIT`).
    A second Ctrl-C or SIGTERM meanwhile is ignored. Safe to call at any time, more than once."""
    if not _JVMS:
        return
    _quiet_py4j()
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in _HELD} if _main_thread() else {}
    try:
        while _JVMS:
            proc = _JVMS.pop()
            if proc.returncode is not None:
                continue  # reaped: its pid may belong to someone else by now
            # not reaped: the pid, and the group it leads, are still ours
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            dumping = archive and proc.pid in _DUMPS
            try:
                proc.wait(max(grace, _ARCHIVE_WAIT) if dumping else grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            if proc.pid in _DUMPS:
                _archive_written(proc)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    SparkContext._gateway = None  # gone: a later build_session starts a new one
    SparkContext._jvm = None
    SparkContext._active_spark_context = None
    SparkSession._instantiatedSession = None  # else getOrCreate returns the dead session
    SparkSession._activeSession = None


class _Py4JRootRecords(logging.Filter):
    """py4j logs some failures (a KeyboardInterrupt inside a call, a dead JVM) with
    ``logging.exception`` on the root logger: a traceback on the terminal."""

    def filter(self, record: logging.LogRecord) -> bool:
        return f"{os.sep}py4j{os.sep}" not in record.pathname


def _quiet_py4j() -> None:
    root = logging.getLogger()
    if not any(isinstance(f, _Py4JRootRecords) for f in root.filters):
        root.addFilter(_Py4JRootRecords())
    logging.getLogger("py4j").propagate = False  # it has a NullHandler of its own


def _runtime_path() -> Path:
    """Where `runtime_dir` is, without making it (for messages)."""
    return Path(tempfile.gettempdir()) / f"mrc-plan-{os.getuid()}"


def jvm_log() -> Path:
    """Where the JVM's own stderr goes (overwritten by each run): its start-up warnings
    and log lines are not for the terminal; errors reach us as exceptions anyway."""
    return runtime_dir() / "spark.log"


def cluster_secret(master: str) -> str | None:
    """The ``spark.authenticate`` secret for ``master``: the file ``MRC_PLAN_SPARK_SECRET_FILE``
    names, else that of the cluster `spark-local-cluster start` recorded in its default
    state directory if it is this master, else None (no authentication asked)."""
    named = os.environ.get(SECRET_FILE_ENV)
    if named:
        secret = read_private(Path(named)).strip()
        if not secret:
            raise UsageError(f"{named}: the secret file is empty", f"set by {SECRET_FILE_ENV}")
        return secret
    if not on_loopback(master):
        return None
    state = default_state_dir()
    cluster = recorded(state)
    if cluster is None or cluster.master_url != master.rstrip("/"):
        return None
    return cluster.secret()
