"""A real standalone cluster: `score --master spark://...` gives the local-mode report, and
only its owner can use it or have it stop something."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _sockets import is_loopback, listening_addresses

pytestmark = [pytest.mark.spark, pytest.mark.slow]

MRC_PLAN = str(Path(sys.executable).parent / "mrc-plan")


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`mrc-plan ARGS` in a process of its own; no traceback may reach its stderr."""
    done = subprocess.run(
        [MRC_PLAN, *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env=None if env is None else {**os.environ, **env},
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def daemon_pids(state: Path) -> list[int]:
    return [int(p.read_text()) for p in (state / "pids").glob("*.pid")]


def running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def package_files() -> set[Path]:
    """Every path under the installed pyspark package, but Python's byte-code caches (an
    import may write them)."""
    import pyspark

    home = Path(pyspark.__file__).parent
    return {p for p in home.rglob("*") if "__pycache__" not in p.parts}


def test_cluster_mode_report_equals_local_mode(tmp_path: Path) -> None:
    snap, plan, state = tmp_path / "snap", tmp_path / "plan.json", tmp_path / "cluster"
    assert run("snapshot", "synth", "--brokers", "9", "--racks", "3", "--topics", "3",
               "--partitions-per-topic", "30", "--violations", "0.1", "--seed", "7",
               "--out", str(snap)).returncode == 0  # fmt: skip
    assert run("snapshot", "export", str(snap), "--out", str(plan)).returncode == 0
    local = run("score", "--snapshot", str(snap), "--plan", str(plan), "--master", "local[2]",
                "--format", "json")  # fmt: skip
    assert local.returncode == 0, local.stderr
    pids: list[int] = []
    before = package_files()
    try:
        started = run("spark-local-cluster", "start", "--dir", str(state))
        assert started.returncode == 0, started.stderr
        master = started.stdout.strip()
        assert master.startswith("spark://127.0.0.1:")
        # the state: private directory, secret only the owner can read
        assert stat.S_IMODE(state.stat().st_mode) == 0o700
        assert stat.S_IMODE((state / "secret").stat().st_mode) == 0o600
        secret = (state / "secret").read_text().strip()
        assert len(secret) >= 32
        # every daemon listens on loopback only, and no command line shows the secret
        pids = daemon_pids(state)
        assert len(pids) == 2
        for pid in pids:
            addresses = listening_addresses(pid)
            assert addresses and all(is_loopback(a) for a in addresses), addresses
            assert secret.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes()
        # without the secret the cluster refuses the application
        port = int(master.rsplit(":", 1)[1])
        assert not _registers_without_secret(port)
        remote = run("score", "--snapshot", str(snap), "--plan", str(plan), "--master", master,
                     "--format", "json",
                     env={"MRC_PLAN_SPARK_SECRET_FILE": str(state / "secret")})  # fmt: skip
        assert remote.returncode == 0, remote.stderr
        assert remote.stdout == local.stdout
    finally:
        stopped = run("spark-local-cluster", "stop", "--dir", str(state))
        assert stopped.returncode == 0, stopped.stderr
    assert not list((state / "pids").glob("*.pid"))
    assert not [pid for pid in pids if running(pid)]
    assert not (state / "secret").exists()
    # the executors ran in the state directory; nothing was written into the package
    assert package_files() - before == set()
    assert list((state / "work").glob("app-*/*/stderr"))


def test_start_several_workers(tmp_path: Path) -> None:
    """`start(workers=2)`: two workers registered, each with its pid file; `stop` ends
    all three daemons."""
    from placement.score.localcluster import _alive_workers, start, stop

    state = tmp_path / "cluster"
    cluster = start(state, workers=2)
    try:
        pids = daemon_pids(state)
        assert len(pids) == 3
        assert _alive_workers(cluster.web_url, cluster.ui_token()) == 2
        assert _alive_workers(cluster.web_url) == 0  # the UI answers no one without the key
    finally:
        assert stop(state) == []
    assert not (state / "ui-key").exists()
    assert not [pid for pid in pids if running(pid)]


def _registers_without_secret(port: int) -> bool:
    """Send the master an RPC without authenticating. Without spark.authenticate it decodes
    the (junk) message and answers with its failure; with it, the answer is that a SASL
    handshake was expected (or the connection is closed)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        # a Netty frame: its length (8 bytes), type RpcRequest (3), request id, body length
        body = b"\x00" * 16
        frame = (21 + len(body)).to_bytes(8, "big") + b"\x03" + (1).to_bytes(8, "big")
        frame += len(body).to_bytes(4, "big") + body
        conn.sendall(frame)
        reply = b""
        with contextlib.suppress(OSError):
            while len(reply) < 4096 and (chunk := conn.recv(4096)):
                reply += chunk
    return reply != b"" and b"Sasl" not in reply


@pytest.fixture
def sleeper() -> object:
    """An unrelated process of ours, as a pid file planted by someone else would name."""
    proc = subprocess.Popen(["sleep", "1000"])
    yield proc
    proc.kill()
    proc.wait()


def test_stop_kills_only_the_daemons_it_started(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    state = tmp_path / "cluster"
    state.mkdir(mode=0o700)
    (state / "pids").mkdir(mode=0o700)
    (state / "logs").mkdir(mode=0o700)
    pid_file = state / "pids" / "spark-mrc-plan-org.apache.spark.deploy.master.Master-1.pid"
    fd = os.open(pid_file, os.O_WRONLY | os.O_CREAT, 0o644)  # as spark-daemon.sh writes it
    os.write(fd, f"{sleeper.pid}\n".encode())
    os.close(fd)
    (state / "cluster.json").write_text(json.dumps({"master": "spark://127.0.0.1:1", "web": "x"}))
    stopped = run("spark-local-cluster", "stop", "--dir", str(state))
    assert stopped.returncode == 0, stopped.stderr
    time.sleep(0.2)
    assert sleeper.poll() is None, "stop killed a process it did not start"
    assert str(sleeper.pid) in stopped.stderr  # says what it left alone
    assert not pid_file.exists()


def test_stop_leaves_a_pid_file_beyond_any_pid(tmp_path: Path) -> None:
    state = tmp_path / "cluster"
    for d in (state, state / "pids", state / "logs"):
        d.mkdir(mode=0o700)
    pid_file = state / "pids" / "spark-mrc-plan-org.apache.spark.deploy.master.Master-1.pid"
    fd = os.open(pid_file, os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"99999999999999999999\n")  # was an OverflowError: exit 101
    os.close(fd)
    worker = state / "pids" / "spark-mrc-plan-org.apache.spark.deploy.worker.Worker-1.pid"
    fd = os.open(worker, os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"\xff\xfe1\n")  # not text: was a UnicodeDecodeError, exit 101
    os.close(fd)
    stopped = run("spark-local-cluster", "stop", "--dir", str(state))
    assert stopped.returncode == 0, stopped.stderr
    assert "99999999999999999999" in stopped.stderr  # says what it left alone
    assert str(worker) in stopped.stderr
    assert not pid_file.exists()


def test_start_counts_workers_only_from_sparks_answer() -> None:
    """What answers on the master's web port may not be Spark (another local user can take
    the port): an answer that is not its JSON counts no worker (was a crash, exit 101)."""
    import http.server
    import threading

    from placement.score.localcluster import _alive_workers

    bodies = [b"<html>", b"[1]", b'{"aliveworkers": "2"}', b"[" * 100_000, b'{"aliveworkers": 1}']

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = bodies.pop(0)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    with http.server.HTTPServer(("127.0.0.1", 0), Handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}"
        try:
            assert [_alive_workers(url) for _ in range(5)] == [0, 0, 0, 0, 1]
        finally:
            server.shutdown()


def hostile_states(tmp_path: Path) -> dict[str, Path]:
    """State directories someone else could have prepared, each with a link to ``victim``."""
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    os.chmod(victim, 0o600)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for name in ("pids", "logs"):
        (elsewhere / name).mkdir()
        (
            elsewhere / name / "spark-mrc-plan-org.apache.spark.deploy.master.Master-1.pid"
        ).symlink_to(victim)
        (
            elsewhere / name / "spark-mrc-plan-org.apache.spark.deploy.master.Master-1.out"
        ).symlink_to(victim)
    (elsewhere / "secret").symlink_to(victim)
    (elsewhere / "spark.conf").symlink_to(victim)
    states = {"symlink": tmp_path / "link"}
    states["symlink"].symlink_to(elsewhere)
    writable = tmp_path / "writable"
    writable.mkdir()
    for name in ("pids", "logs", "secret", "spark.conf"):
        (writable / name).symlink_to(elsewhere / name)
    os.chmod(writable, 0o777)
    states["group/other-writable"] = writable
    links_inside = tmp_path / "links-inside"
    links_inside.mkdir(mode=0o700)
    for name in ("pids", "logs"):
        (links_inside / name).symlink_to(elsewhere / name)
    states["pids and logs are links"] = links_inside
    if os.getuid() == 0:  # only root can give a directory to another user
        foreign = tmp_path / "foreign"
        foreign.mkdir(mode=0o700)
        os.chown(foreign, 65534, 65534)
        states["owned by another user"] = foreign
    return states


@pytest.mark.parametrize("command", ["start", "stop"])
def test_a_hostile_state_directory_is_refused_untouched(tmp_path: Path, command: str) -> None:
    for what, state in hostile_states(tmp_path).items():
        before = sorted(str(p) for p in state.rglob("*")) if not state.is_symlink() else None
        result = run("spark-local-cluster", command, "--dir", str(state))
        assert result.returncode == 2, (what, result.stderr)
        assert "Traceback" not in result.stderr
        assert str(state) in result.stderr, what
        assert (tmp_path / "victim").read_text() == "precious\n", what
        if before is not None:
            assert sorted(str(p) for p in state.rglob("*")) == before, what
