"""`spark-local-cluster start` hands out only ports its own daemons bound, and their web
UIs answer no one who lacks the cluster's key.

Another local user can listen on a port a moment after we learn it is free, so the URL the
command prints must come from the daemon that holds it, checked through /proc; what
answers on a port we did not bind must never hear from us (nor get our credentials)."""

from __future__ import annotations

import http.client
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _sockets import listening_ports

from placement.score import localcluster
from placement.score.localcluster import MASTER, STATE_ENV, WORKER, ClusterError, start, stop


class Impostor:
    """What another local user could run on a port we picked: an HTTP server answering
    every GET as a Spark master with registered workers would. Records what it was sent."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str | None]] = []  # (path, Authorization header)
        requests = self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                requests.append((self.path, self.headers.get("Authorization")))
                port = self.server.server_address[1]
                body = json.dumps(
                    {"url": f"spark://127.0.0.1:{port}", "aliveworkers": 8, "status": "ALIVE"}
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port: int = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def impostor() -> Iterator[Impostor]:
    server = Impostor()
    yield server
    server.close()


def http_status(port: int, path: str = "/") -> int | None:
    """The HTTP status a GET without credentials gets on ``port``; None if what answers
    is not HTTP (an RPC port closes the connection) or nothing listens."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def pid_of(state: Path, cls: str, instance: int = 1) -> int:
    return int((state / "pids" / f"spark-mrc-plan-{cls}-{instance}.pid").read_text())


@pytest.mark.spark
@pytest.mark.slow
def test_start_hands_out_only_ports_its_daemons_hold_and_no_ui_answers(
    tmp_path: Path, impostor: Impostor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(a) Someone listens on the port a probe found free: the master URL is still the
    master's own port, and the impostor is never contacted. (b) No web UI answers a
    request without the cluster's key on any port the daemons opened."""
    monkeypatch.setattr(localcluster, "_free_port", lambda: impostor.port, raising=False)
    state = tmp_path / "cluster"
    cluster = start(state)
    try:
        master, worker = pid_of(state, MASTER), pid_of(state, WORKER)
        port = int(cluster.master_url.rsplit(":", 1)[1])
        assert cluster.master_url == f"spark://127.0.0.1:{port}"
        assert port != impostor.port
        assert port in listening_ports(master), "the URL names a port the master does not hold"
        web = int(cluster.web_url.rsplit(":", 1)[1])
        assert web in listening_ports(master) and web != impostor.port
        assert impostor.requests == [], "start talked to a listener that is not ours"
        recorded = localcluster.recorded(state)
        assert recorded is not None and recorded.master_url == cluster.master_url
        # every other port of the master and the worker: no UI for whoever asks
        others = (listening_ports(master) | listening_ports(worker)) - {port}
        assert len(others) >= 3, others  # master UI, worker RPC, worker UI
        for other in sorted(others):
            for path in ("/", "/json/", "/logPage/?self=true&logType=out"):
                assert http_status(other, path) in (None, 401, 403), (other, path)
    finally:
        assert stop(state) == []


# --- the same checks without a JVM: daemons that report a port they do not hold -------


def _fake_daemon(
    state_dir: Path, cls: str, *args: str, instance: int = 1, report: dict[str, int]
) -> None:
    """What `spark-daemon.sh start` leaves behind (a pid file, a log) for a process that
    looks like our daemon in /proc (its class on its command line, our state in its
    environment), but whose log names ports it does not hold."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", cls, *args],
        env={**os.environ, STATE_ENV: str(state_dir)},
    )
    _FAKES.append(proc)
    (state_dir / "pids" / f"spark-mrc-plan-{cls}-{instance}.pid").write_text(f"{proc.pid}\n")
    services = ("sparkMaster", "MasterUI") if cls == MASTER else ("sparkWorker", "WorkerUI")
    lines = [
        f"26/01/01 00:00:00 INFO Utils: Successfully started service '{name}' on port "
        f"{report[name]}."
        for name in services
    ]
    log = state_dir / "logs" / f"spark-mrc-plan-{cls}-{instance}-host.out"
    log.write_text("\n".join(lines) + "\n")


_FAKES: list[subprocess.Popen[bytes]] = []


@pytest.fixture
def fakes() -> Iterator[list[subprocess.Popen[bytes]]]:
    yield _FAKES
    for proc in _FAKES:
        proc.kill()
        proc.wait()
    _FAKES.clear()


def test_start_refuses_a_port_its_daemon_does_not_hold(
    tmp_path: Path,
    impostor: Impostor,
    monkeypatch: pytest.MonkeyPatch,
    fakes: list[subprocess.Popen[bytes]],
) -> None:
    """The master "reports" the impostor's port: start fails (exit 2: a UsageError) with
    no URL recorded, stops what it started, and never sends the impostor a request."""
    report = dict.fromkeys(("sparkMaster", "MasterUI", "sparkWorker", "WorkerUI"), impostor.port)

    def fake(state_dir: Path, cls: str, *args: str, instance: int = 1) -> None:
        _fake_daemon(state_dir, cls, *args, instance=instance, report=report)

    monkeypatch.setattr(localcluster, "_start_daemon", fake)
    monkeypatch.setattr(localcluster, "_free_port", lambda: impostor.port, raising=False)
    state = tmp_path / "cluster"
    with pytest.raises(ClusterError) as err:
        start(state, timeout=20)
    message = f"{err.value.message} {err.value.hint or ''}"
    assert str(impostor.port) in message and "not" in message
    assert "spark://" not in message
    assert impostor.requests == []
    assert localcluster.recorded(state) is None
    assert not (state / "secret").exists()
    for proc in fakes:  # stopped by start: it checked them as ours
        assert proc.wait(timeout=15) is not None


def test_start_leaves_a_cluster_whose_start_was_cut_short_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fakes: list[subprocess.Popen[bytes]]
) -> None:
    """The URL is recorded last, so a start that was killed on the way leaves daemons and
    their pid files but no record: a new start must not trample them (or overwrite the
    secret they use), it says to stop first."""
    state = tmp_path / "cluster"
    localcluster._state(state)
    _fake_daemon(state, MASTER, instance=1, report=dict.fromkeys(("sparkMaster", "MasterUI"), 1))
    started: list[str] = []
    monkeypatch.setattr(
        localcluster, "_start_daemon", lambda _s, cls, *_a, **_k: started.append(cls)
    )
    with pytest.raises(ClusterError, match="already recorded") as err:
        start(state, timeout=5)
    assert "stop it first" in (err.value.hint or "")
    assert started == []
    assert fakes[0].poll() is None, "start stopped a daemon it did not start"
    assert not (state / "secret").exists()


def test_a_listener_of_another_process_is_not_the_daemons(
    impostor: Impostor, fakes: list[subprocess.Popen[bytes]]
) -> None:
    """The ownership check itself: this process holds the impostor's port, a sleeping
    child does not."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    fakes.append(child)
    held_by: Any = getattr(localcluster, "_held_by", None)
    assert held_by is not None, "no ownership check"
    assert held_by(os.getpid(), impostor.port)
    assert not held_by(child.pid, impostor.port)
    assert not held_by(os.getpid(), _unused_port())


def _unused_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port
