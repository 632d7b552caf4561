"""A real Spark standalone cluster (one master, one or more workers) on 127.0.0.1, from the
pip package.

pyspark ships no start-master.sh/start-worker.sh, but its `sbin/spark-daemon.sh` starts the
real daemons. Only the user who started the cluster can use it or stop it:

- everything listens on 127.0.0.1; the REST submission port is off;
- each daemon binds its own ports (``--port 0 --webui-port 0``: the JVM picks a free port
  as it binds it), and a port is handed out (printed, recorded, connected to) only once
  the daemon's log names it and ``/proc`` shows that this daemon's process holds every
  listening socket on it: a port probed free and bound later could be taken meanwhile by
  another local user, who would then get the secret's handshake and our jobs;
- Spark 4's master and worker always start their web UIs (``spark.ui.enabled`` is the
  application's, not theirs): ``spark.ui.filters`` puts Spark's ``JWSFilter`` before
  every page, which answers 403 unless the request carries a JWS (HS256) signed with the
  random key in ``ui-key`` (0600); the UIs cannot kill anything either;
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

import base64
import contextlib
import json
import os
import re
import secrets
import select
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

from placement.errors import UsageError
from placement.io.private import private_dir, read_private, write_private
from placement.score.clusterstate import LOOPBACK as LOOPBACK
from placement.score.clusterstate import LocalCluster as LocalCluster
from placement.score.clusterstate import default_state_dir as default_state_dir
from placement.score.clusterstate import recorded as recorded

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
STATE_ENV = "MRC_PLAN_SPARK_STATE"  # in each daemon's environment: whose it is
UI_FILTER = "org.apache.spark.ui.JWSFilter"  # Spark 4: a UI request needs a signed token
# the ports a daemon binds, as Spark's Utils.startServiceOnPort logs them
SERVICES = {MASTER: ("sparkMaster", "MasterUI"), WORKER: ("sparkWorker", "WorkerUI")}
_STARTED = re.compile(r"Successfully started service '(\w+)' on port (\d+)\.")


class ClusterError(UsageError):
    """The local cluster did not start or stop as asked."""


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


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


def _alive_workers(web_url: str, token: str | None = None) -> int:
    """How many workers the master's web UI says are alive; 0 while it is not up, or when
    what answers on its port is not Spark's JSON. ``token``: the UI filter's (see
    :meth:`LocalCluster.ui_token`); without it Spark's UI answers 403, counted as 0."""
    request = urllib.request.Request(f"{web_url}/json/")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=2) as resp:
            status = json.load(resp)
    except (OSError, ValueError, RecursionError):
        return 0
    count = status.get("aliveworkers") if isinstance(status, dict) else None
    return count if type(count) is int else 0


def _daemon_name(cls: str) -> str:
    return cls.rsplit(".", 1)[-1]


def _reported_ports(state_dir: Path, cls: str, instance: int) -> dict[str, int]:
    """The ports the daemon's log says it bound, by Spark's service name (first line for
    each); {} while the log is not there yet. spark-daemon.sh moves an older log aside
    before it starts the daemon, so what is read is this daemon's."""
    logs = list((state_dir / "logs").glob(f"spark-mrc-plan-{cls}-{instance}-*.out"))
    if not logs:
        return {}
    log = max(logs, key=lambda p: p.lstat().st_mtime_ns)
    ports: dict[str, int] = {}
    for name, port in _STARTED.findall(read_private(log, secret=False)):
        if 0 < int(port) < 65536:
            ports.setdefault(name, int(port))
    return ports


def _daemon_ports(
    state_dir: Path, cls: str, instance: int, deadline: float
) -> tuple[int, dict[str, int]]:
    """Wait for the daemon spark-daemon.sh started to report the ports of its services
    (``SERVICES[cls]``); its pid and those ports, each checked to be held by it."""
    name = _daemon_name(cls)
    hint = f"see the logs in {state_dir / 'logs'}"
    pid_file = state_dir / "pids" / f"spark-mrc-plan-{cls}-{instance}.pid"
    while True:
        text = read_private(pid_file, secret=False).strip()  # spark-daemon.sh: 0644
        if not text.isdecimal():
            raise ClusterError(f"{pid_file}: not a pid", hint)
        pid = int(text)
        if _is_ours(pid, state_dir):
            reported = _reported_ports(state_dir, cls, instance)
            if all(service in reported for service in SERVICES[cls]):
                break
        elif not os.path.exists(f"/proc/{pid}"):
            raise ClusterError(f"the {name} (process {pid}) exited", hint)
        # else between two execs (spark-class becomes java): no command line in /proc yet
        if time.monotonic() > deadline:
            raise ClusterError(
                f"the {name} (process {pid}) did not report the ports it listens on", hint
            )
        time.sleep(0.2)
    ports = {service: reported[service] for service in SERVICES[cls]}
    _check_held(state_dir, pid, cls, ports)
    return pid, ports


def _check_held(state_dir: Path, pid: int, cls: str, ports: dict[str, int]) -> None:
    for service, port in ports.items():
        if not _held_by(pid, port):
            raise ClusterError(
                f"port {port}, which the {_daemon_name(cls)} (process {pid}) reported for "
                f"its {service}, is not held by that process alone: another process "
                "listens on it, or it is no longer listening; the cluster was stopped",
                "start it again; if this repeats, another local user may be taking the "
                f"ports Spark picks (see the logs in {state_dir / 'logs'})",
            )


# The local addresses of /proc/net/tcp{,6} a connection to 127.0.0.1 may reach: 127.0.0.1
# and the wildcard, as IPv4 and as IPv6 (::ffff:127.0.0.1, ::ffff:0.0.0.0, ::).
_REACHING = {
    "0100007F",
    "00000000",
    "0000000000000000FFFF00000100007F",
    "0000000000000000FFFF000000000000",
    "00000000000000000000000000000000",
}


def _held_by(pid: int, port: int) -> bool:
    """A connection to 127.0.0.1:``port`` reaches process ``pid`` and nothing else: some
    socket listens there, and every one that does is an open file of ``pid`` (its inode,
    /proc/net/tcp{,6}, is among /proc/PID/fd's sockets; readable for our own processes)."""
    inodes = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        with contextlib.suppress(OSError):  # closed meanwhile
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    listeners = []
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/self/net/{table}").read_text().splitlines()[1:]
        except OSError:  # no IPv6
            continue
        for line in lines:
            fields = line.split()
            address, _, hex_port = fields[1].rpartition(":")
            if fields[3] == "0A" and int(hex_port, 16) == port and address in _REACHING:
                listeners.append(fields[9])
    return bool(listeners) and all(inode in inodes for inode in listeners)


def start(
    state_dir: Path, *, cores: int = 1, memory: str = "1g", workers: int = 1, timeout: float = 90
) -> LocalCluster:
    """Start a master and ``workers`` workers of ``cores`` cores and ``memory`` each;
    return once every worker has registered (within ``timeout`` s of the start)."""
    if workers < 1:
        raise ClusterError(f"a cluster needs a worker (asked for {workers})")
    state_dir = _state(state_dir)
    # the record is written last: a pid file is a cluster starting, or one whose start
    # was cut short (its daemons may run)
    if os.path.lexists(state_dir / "cluster.json") or any((state_dir / "pids").glob("*.pid")):
        raise ClusterError(
            f"a local cluster is already recorded in {state_dir}",
            "stop it first (mrc-plan spark-local-cluster stop)",
        )
    deadline = time.monotonic() + timeout
    secret = secrets.token_hex(32)
    ui_key = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    write_private(state_dir / "secret", secret + "\n")
    write_private(state_dir / "ui-key", ui_key + "\n")
    write_private(
        state_dir / "spark.conf",
        "spark.authenticate true\n"
        f"spark.authenticate.secret {secret}\n"
        "spark.master.rest.enabled false\n"
        "spark.ui.killEnabled false\n"
        f"spark.ui.filters {UI_FILTER}\n"
        f"spark.{UI_FILTER}.param.secretKey {ui_key}\n"
        f"spark.{UI_FILTER}.param.requireExpiration true\n",
    )
    try:  # a failure or Ctrl-C on the way stops what started
        # port 0: each daemon's JVM picks a free port as it binds it, then logs it
        _start_daemon(state_dir, MASTER, "--host", LOOPBACK, "--port", "0",
                      "--webui-port", "0")  # fmt: skip
        master_pid, ports = _daemon_ports(state_dir, MASTER, 1, deadline)
        held = [(master_pid, MASTER, ports)]
        port, web = ports["sparkMaster"], ports["MasterUI"]
        cluster = LocalCluster(f"spark://{LOOPBACK}:{port}", f"http://{LOOPBACK}:{web}", state_dir)
        for instance in range(1, workers + 1):  # spark-daemon.sh: one pid file each
            _start_daemon(state_dir, WORKER, "--host", LOOPBACK, "--port", "0",
                          "--webui-port", "0", "--cores", str(cores), "--memory", memory,
                          cluster.master_url, instance=instance)  # fmt: skip
            worker_pid, worker_ports = _daemon_ports(state_dir, WORKER, instance, deadline)
            held.append((worker_pid, WORKER, worker_ports))
        while time.monotonic() < deadline:
            # the token goes only to the master's own UI port
            _check_held(state_dir, master_pid, MASTER, {"MasterUI": web})
            if _alive_workers(cluster.web_url, cluster.ui_token()) >= workers:
                for pid, cls, bound in held:  # still theirs: now the URL is handed out
                    _check_held(state_dir, pid, cls, bound)
                write_private(
                    state_dir / "cluster.json",
                    json.dumps({"master": cluster.master_url, "web": cluster.web_url}),
                )
                return cluster
            time.sleep(0.5)
    except BaseException:
        stop(state_dir)
        raise
    stop(state_dir)
    raise ClusterError(
        f"the workers did not register with the master within {timeout:g} s",
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
    for name in ("cluster.json", "secret", "ui-key", "spark.conf"):
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
