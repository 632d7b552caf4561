"""A real Spark standalone cluster (one master, one worker) on 127.0.0.1, from the pip package.

pyspark ships no start-master.sh/start-worker.sh, but its `sbin/spark-daemon.sh` starts the
real daemons. Everything listens on 127.0.0.1; the REST submission port is off; pids and
logs live in a private directory, so `stop` finds exactly what `start` started.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from placement.errors import MrcPlanError

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"


class ClusterError(MrcPlanError):
    """The local cluster did not start or stop as asked."""


@dataclass(frozen=True)
class LocalCluster:
    master_url: str
    web_url: str
    state_dir: Path


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _env(state_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(_spark_home()),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_PID_DIR=str(state_dir / "pids"),
        SPARK_LOG_DIR=str(state_dir / "logs"),
        SPARK_IDENT_STRING="mrc-plan",
        SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false",
    )
    env.pop("SPARK_NO_DAEMONIZE", None)  # set, the daemons would run in the foreground
    return env


def _daemon(state_dir: Path, action: str, cls: str, *args: str) -> None:
    script = _spark_home() / "sbin" / "spark-daemon.sh"
    proc = subprocess.run(
        ["bash", str(script), action, cls, "1", *args],
        env=_env(state_dir),
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise ClusterError(
            f"spark-daemon.sh {action} {cls.rsplit('.', 1)[-1]} failed: "
            f"{(proc.stdout + proc.stderr).strip()[-500:]}",
            f"see the logs in {state_dir / 'logs'}",
        )


def _alive_workers(web_url: str) -> int:
    try:
        with urllib.request.urlopen(f"{web_url}/json/", timeout=2) as resp:
            count: int = json.load(resp).get("aliveworkers", 0)
            return count
    except OSError:
        return 0


def start(
    state_dir: Path, *, cores: int = 1, memory: str = "1g", timeout: float = 90
) -> LocalCluster:
    """Start a master and one worker; return once the worker has registered."""
    state_dir.mkdir(parents=True, exist_ok=True)
    if (state_dir / "cluster.json").exists():
        raise ClusterError(
            f"a local cluster is already recorded in {state_dir}",
            "stop it first (mrc-plan spark-local-cluster stop)",
        )
    port, web = _free_port(), _free_port()
    master_url, web_url = f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{web}"
    _daemon(
        state_dir, "start", MASTER, "--host", "127.0.0.1", "--port", str(port),
        "--webui-port", str(web),
    )  # fmt: skip
    cluster = LocalCluster(master_url, web_url, state_dir)
    (state_dir / "cluster.json").write_text(
        json.dumps({"master": master_url, "web": web_url}) + "\n"
    )
    _daemon(
        state_dir, "start", WORKER, "--host", "127.0.0.1", "--cores", str(cores),
        "--memory", memory, "--webui-port", str(_free_port()), master_url,
    )  # fmt: skip
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _alive_workers(web_url) >= 1:
            return cluster
        time.sleep(0.5)
    stop(state_dir)
    raise ClusterError(
        f"the worker did not register with {master_url} within {timeout:g} s",
        f"see the logs in {state_dir / 'logs'}",
    )


def stop(state_dir: Path) -> None:
    """Stop the worker and the master (by spark-daemon.sh, then by pid); forget the cluster."""
    for cls in (WORKER, MASTER):
        # not running, or the script failed: the pid files below still work
        with contextlib.suppress(ClusterError):
            _daemon(state_dir, "stop", cls)
    for pid_file in (state_dir / "pids").glob("*.pid"):
        with contextlib.suppress(ValueError, ProcessLookupError, PermissionError):
            os.kill(int(pid_file.read_text().strip()), signal.SIGKILL)
        pid_file.unlink(missing_ok=True)
    (state_dir / "cluster.json").unlink(missing_ok=True)


def recorded(state_dir: Path) -> LocalCluster | None:
    path = state_dir / "cluster.json"
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    return LocalCluster(data["master"], data["web"], state_dir)
