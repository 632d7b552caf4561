"""A real Spark standalone cluster (one master, one or more workers) on 127.0.0.1, from the
pip package.

pyspark ships no start-master.sh/start-worker.sh, but its `sbin/spark-daemon.sh` starts the
real daemons. Only the user who started the cluster can use it or stop it:

- everything listens on 127.0.0.1 (RPC and web UIs; the UIs cannot kill); the REST
  submission port is off;
- ``spark.authenticate`` is on, with a random secret in ``secret`` and ``spark.conf``
  (mode 0600) in the state directory; the daemons read it with ``--properties-file``, a
  driver through :func:`placement.score.session.cluster_secret`, executors from their worker;
- the state directory (default ``$TMPDIR/mrc-plan-UID/cluster``) and its ``pids``,
  ``logs`` and ``work`` (the workers' application directories) are private (0700, owned
  by the user, not symbolic links: refused otherwise), and its files are opened without
  following links; nothing is written inside the pyspark package;
- `stop` signals a process only when ``/proc`` shows it runs as this user, is a Spark
  Master or Worker, and was started for this state directory (a pid file alone is not
  trusted); it signals through a pidfd, so a recycled pid is never hit.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from placement.errors import UsageError
from placement.score.session import (
    LOOPBACK,
    private_dir,
    read_private,
    runtime_dir,
    write_private,
)

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
STATE_ENV = "MRC_PLAN_SPARK_STATE"  # in each daemon's environment: whose it is


class ClusterError(UsageError):
    """The local cluster did not start or stop as asked."""


@dataclass(frozen=True)
class LocalCluster:
    master_url: str
    web_url: str
    state_dir: Path

    @property
    def secret_file(self) -> Path:
        return self.state_dir / "secret"

    def secret(self) -> str:
        return read_private(self.secret_file).strip()


def default_state_dir() -> Path:
    return private_dir(runtime_dir() / "cluster")


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        port: int = s.getsockname()[1]
        return port


def _state(state_dir: Path) -> Path:
    """The state directory and its pids/, logs/ and work/, checked private (created if
    missing)."""
    state_dir = private_dir(state_dir.absolute()).resolve()
    for name in ("pids", "logs", "work"):
        private_dir(state_dir / name)
    return state_dir


def _env(state_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(_spark_home()),
        SPARK_LOCAL_IP=LOOPBACK,
        SPARK_PID_DIR=str(state_dir / "pids"),
        SPARK_LOG_DIR=str(state_dir / "logs"),
        # the workers' application directories (executors' jars, stdout, stderr): by
        # default SPARK_HOME/work, inside the installed pyspark package
        SPARK_WORKER_DIR=str(state_dir / "work"),
        SPARK_IDENT_STRING="mrc-plan",
        **{STATE_ENV: str(state_dir)},
    )
    env.pop("SPARK_NO_DAEMONIZE", None)  # set, the daemons would run in the foreground
    return env


def _start_daemon(state_dir: Path, cls: str, *args: str, instance: int = 1) -> None:
    script = _spark_home() / "sbin" / "spark-daemon.sh"
    proc = subprocess.run(
        ["bash", str(script), "start", cls, str(instance), *args,
         "--properties-file", str(state_dir / "spark.conf")],
        env=_env(state_dir),
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise ClusterError(
            f"spark-daemon.sh start {cls.rsplit('.', 1)[-1]} failed: "
            f"{(proc.stdout + proc.stderr).strip()[-500:]}",
            f"see the logs in {state_dir / 'logs'}",
        )


def _alive_workers(web_url: str) -> int:
    """How many workers the master's web UI says are alive; 0 while it is not up, or when
    what answers on its port is not Spark's JSON (another local user may hold the port)."""
    try:
        with urllib.request.urlopen(f"{web_url}/json/", timeout=2) as resp:
            status = json.load(resp)
    except (OSError, ValueError, RecursionError):
        return 0
    count = status.get("aliveworkers") if isinstance(status, dict) else None
    return count if type(count) is int else 0


def start(
    state_dir: Path, *, cores: int = 1, memory: str = "1g", workers: int = 1, timeout: float = 90
) -> LocalCluster:
    """Start a master and ``workers`` workers of ``cores`` cores and ``memory`` each;
    return once every worker has registered."""
    if workers < 1:
        raise ClusterError(f"a cluster needs a worker (asked for {workers})")
    state_dir = _state(state_dir)
    if os.path.lexists(state_dir / "cluster.json"):
        raise ClusterError(
            f"a local cluster is already recorded in {state_dir}",
            "stop it first (mrc-plan spark-local-cluster stop)",
        )
    secret = secrets.token_hex(32)
    write_private(state_dir / "secret", secret + "\n")
    write_private(
        state_dir / "spark.conf",
        "spark.authenticate true\n"
        f"spark.authenticate.secret {secret}\n"
        "spark.master.rest.enabled false\n"
        "spark.ui.killEnabled false\n",
    )
    port, web = _free_port(), _free_port()
    master_url, web_url = f"spark://{LOOPBACK}:{port}", f"http://{LOOPBACK}:{web}"
    cluster = LocalCluster(master_url, web_url, state_dir)
    try:  # a failure or Ctrl-C on the way stops what started
        write_private(
            state_dir / "cluster.json", json.dumps({"master": master_url, "web": web_url})
        )
        _start_daemon(state_dir, MASTER, "--host", LOOPBACK, "--port", str(port),
                      "--webui-port", str(web))  # fmt: skip
        for instance in range(1, workers + 1):  # spark-daemon.sh: one pid file each
            web_port = str(_free_port())
            _start_daemon(state_dir, WORKER, "--host", LOOPBACK, "--cores", str(cores),
                          "--memory", memory, "--webui-port", web_port, master_url,
                          instance=instance)  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if _alive_workers(web_url) >= workers:
                return cluster
            time.sleep(0.5)
    except BaseException:
        stop(state_dir)
        raise
    stop(state_dir)
    raise ClusterError(
        f"the workers did not register with {master_url} within {timeout:g} s",
        f"see the logs in {state_dir / 'logs'}",
    )


def stop(state_dir: Path, *, grace: float = 10) -> list[str]:
    """Stop the worker and the master this state directory's pid files name, after checking
    each process is one of them; forget the cluster. Returns notes on what was left alone."""
    state_dir = _state(state_dir)
    notes = []
    pid_files = sorted(
        (state_dir / "pids").glob("*.pid"), key=lambda p: MASTER in p.name
    )  # the worker first
    for pid_file in pid_files:
        try:
            text = read_private(pid_file, secret=False).strip()  # spark-daemon.sh: 0644
        except UsageError as exc:
            notes.append(f"{exc.message}: left alone")
            continue
        if not text.isdecimal():
            notes.append(f"{pid_file}: not a pid ({text[:20]!r}): removed")
        elif not _kill_ours(int(text), state_dir, grace):
            notes.append(
                f"{pid_file}: process {int(text)} is not a daemon of this cluster: "
                "left alone, pid file removed"
            )
        pid_file.unlink(missing_ok=True)
    for name in ("cluster.json", "secret", "spark.conf"):
        (state_dir / name).unlink(missing_ok=True)
    return notes


def _kill_ours(pid: int, state_dir: Path, grace: float) -> bool:
    """SIGTERM (then SIGKILL after ``grace`` s) ``pid`` if it is our Master or Worker for
    ``state_dir``; False if it is not (or is gone). Through a pidfd: the process checked is
    the process signalled, even if the pid is recycled meanwhile."""
    try:
        pidfd = os.pidfd_open(pid)
    except (OSError, OverflowError):  # gone, or no pid at all (a number beyond C's int)
        return False
    try:
        if not _is_ours(pid, state_dir):
            return False
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(pidfd, sig)
            if _exited(pidfd, wait):
                break
        return True
    finally:
        os.close(pidfd)


def _exited(pidfd: int, timeout: float) -> bool:
    """Wait up to ``timeout`` s for the process to end (a pidfd turns readable then)."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(int(timeout * 1000)))


def _is_ours(pid: int, state_dir: Path) -> bool:
    """``/proc/PID`` runs as us, is a Spark Master or Worker, and carries ``state_dir``."""
    proc = Path(f"/proc/{pid}")
    try:
        if proc.stat().st_uid != os.getuid():
            return False
        argv = (proc / "cmdline").read_bytes().split(b"\0")
        environ = (proc / "environ").read_bytes().split(b"\0")
    except OSError:
        return False
    daemon = MASTER.encode() in argv or WORKER.encode() in argv
    return daemon and f"{STATE_ENV}={state_dir}".encode() in environ


def recorded(state_dir: Path) -> LocalCluster | None:
    path = state_dir / "cluster.json"
    if not os.path.lexists(path):
        return None
    try:
        data = json.loads(read_private(path))
        return LocalCluster(str(data["master"]), str(data["web"]), state_dir)
    except (ValueError, KeyError, TypeError):
        raise UsageError(
            f"{path}: not a cluster record", "stop the cluster (spark-local-cluster stop)"
        ) from None
