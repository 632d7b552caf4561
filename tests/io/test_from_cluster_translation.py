"""What the cluster reader makes of the client library's answers, where the test broker
cannot show them (racks, observers, the cluster's default policy, authorization errors),
from recorded confluent-kafka result objects; the --command-config translation; and that
the module talking to the cluster only reads."""

from __future__ import annotations

import ast
import json
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

ck = pytest.importorskip("confluent_kafka", reason="the kafka extra is not installed")

from _base_install import BASE_INSTALL  # noqa: E402
from confluent_kafka import KafkaError, KafkaException, Node  # noqa: E402
from confluent_kafka.admin import (  # noqa: E402
    AdminClient,
    ClusterMetadata,
    ConfigEntry,
    ConfigSource,
    DescribeClusterResult,
    PartitionMetadata,
    TopicMetadata,
)

from placement.errors import InputError  # noqa: E402
from placement.io import cluster  # noqa: E402
from placement.io.cluster import (  # noqa: E402
    ClusterConfig,
    read_cluster,
    snapshot_from_cluster,
)
from placement.io.cluster_config import load_command_config  # noqa: E402
from placement.model.inventory import Broker, Inventory  # noqa: E402

STRETCHED = json.dumps(
    {
        "version": 2,
        "replicas": [
            {"count": 2, "constraints": {"rack": "east"}},
            {"count": 1, "constraints": {"rack": "west"}},
        ],
        "observers": [{"count": 2, "constraints": {"rack": "west"}}],
    }
)
DEFAULT_POLICY = json.dumps(
    {"version": 1, "replicas": [{"count": 3, "constraints": {"rack": "east"}}]}
)


def _done(value: Any = None, error: BaseException | None = None) -> Future[Any]:
    f: Future[Any] = Future()
    if error is not None:
        f.set_exception(error)
    else:
        f.set_result(value)
    return f


def _partition(pid: int, replicas: list[int], leader: int, isr: list[int]) -> PartitionMetadata:
    p = PartitionMetadata()
    p.id, p.leader, p.replicas, p.isrs = pid, leader, replicas, isr
    return p


class Recorded:
    """An AdminClient replaying recorded answers (only the read-only calls exist)."""

    def __init__(
        self,
        nodes: list[Node],
        topics: dict[str, list[PartitionMetadata]],
        configs: dict[str, dict[str, str] | BaseException],
        broker_configs: dict[str, str] | BaseException | None = None,
        topic_errors: dict[str, KafkaError] | None = None,
    ) -> None:
        self.nodes = nodes
        self.topics = topics
        self.configs = configs
        self.broker_configs = broker_configs or {}
        self.topic_errors = topic_errors or {}

    def describe_cluster(self, **_: Any) -> Future[Any]:
        return _done(DescribeClusterResult(self.nodes[0], self.nodes, "c1"))

    def list_topics(self, **_: Any) -> ClusterMetadata:
        md = ClusterMetadata()
        for name, parts in self.topics.items():
            t = TopicMetadata()
            t.topic, t.partitions = name, {p.id: p for p in parts}
            t.error = self.topic_errors.get(name)
            md.topics[name] = t
        return md

    def describe_configs(self, resources: list[Any], **_: Any) -> dict[Any, Future[Any]]:
        out = {}
        for r in resources:
            broker = r.restype_int == 4
            got = self.broker_configs if broker else self.configs[r.name]
            if isinstance(got, BaseException):
                out[r] = _done(error=got)
            else:
                entries = {
                    k: ConfigEntry(k, v, source=ConfigSource.DEFAULT_CONFIG) for k, v in got.items()
                }
                out[r] = _done(entries)
        return out

    def poll(self, timeout: float) -> int:
        return 0


def _read(admin: Recorded, **options: Any) -> cluster.ClusterState:
    return read_cluster(
        ClusterConfig("kafka-1:9092"), admin_factory=lambda config, errors: admin, **options
    )


def _stretched_cluster(**extra: Any) -> Recorded:
    nodes = [Node(i, f"b{i}", 9092, "east" if i <= 3 else "west") for i in range(1, 7)]
    return Recorded(
        nodes,
        {
            "orders": [
                _partition(0, [1, 2, 4, 5, 6], 1, [1, 2, 4]),
                _partition(1, [2, 3, 5, 4, 6], -1, []),
            ],
            "logs": [_partition(0, [1, 2, 3], 2, [2, 3])],
        },
        {
            "orders": {
                "confluent.placement.constraints": STRETCHED,
                "min.insync.replicas": "2",
            },
            "logs": {"confluent.placement.constraints": "", "min.insync.replicas": "1"},
        },
        **extra,
    )


def test_racks_observers_leader_and_isr_from_the_recorded_answers() -> None:
    state = _read(_stretched_cluster())
    made = snapshot_from_cluster(state)
    brokers = {b["broker_id"]: b["rack"] for b in made.snapshot.brokers.to_pylist()}
    assert brokers == {1: "east", 2: "east", 3: "east", 4: "west", 5: "west", 6: "west"}
    rows = {(p["topic"], p["partition"]): p for p in made.snapshot.partitions.to_pylist()}
    # the policy makes two observers: the tail of the replica list
    assert rows[("orders", 0)]["observers"] == [5, 6]
    assert rows[("orders", 1)]["observers"] == [4, 6]
    assert rows[("orders", 1)]["leader"] is None  # -1: no leader
    assert rows[("orders", 0)]["isr"] == [1, 2, 4]
    assert rows[("logs", 0)]["observers"] == []
    topics = {t["topic"]: t for t in made.snapshot.topics.to_pylist()}
    assert topics["orders"]["min_isr"] == 2 and topics["orders"]["placement"] == STRETCHED
    assert topics["logs"]["placement"] is None  # an empty value is unset
    assert any("tail of the replica list" in n and "2 partition(s)" in n for n in made.notes)


def test_observers_the_cluster_reports_are_kept() -> None:
    admin = _stretched_cluster()
    p = admin.topics["orders"][0]
    p.observers = [6]  # a client that reports them (Confluent Server's answer)
    made = snapshot_from_cluster(_read(admin))
    rows = {(r["topic"], r["partition"]): r for r in made.snapshot.partitions.to_pylist()}
    assert rows[("orders", 0)]["observers"] == [6]


def test_the_cluster_default_policy_applies_to_topics_without_their_own() -> None:
    admin = _stretched_cluster(
        broker_configs={"confluent.log.placement.constraints": DEFAULT_POLICY}
    )
    made = snapshot_from_cluster(_read(admin))
    topics = {t["topic"]: t for t in made.snapshot.topics.to_pylist()}
    assert topics["logs"]["placement"] == DEFAULT_POLICY
    assert topics["orders"]["placement"] == STRETCHED
    assert any("cluster's default" in n for n in made.notes)


def test_the_brokers_configs_refused_is_a_note() -> None:
    denied = KafkaException(KafkaError(KafkaError.CLUSTER_AUTHORIZATION_FAILED))
    made = snapshot_from_cluster(_read(_stretched_cluster(broker_configs=denied)))
    assert any("brokers' configs could not be read" in n for n in made.notes)


def test_a_rack_missing_comes_from_the_inventory_else_exit_2() -> None:
    admin = _stretched_cluster()
    admin.nodes[5] = Node(6, "b6", 9092, None)
    state = _read(admin)
    with pytest.raises(InputError, match=r"kafka-1:9092: 1 broker\(s\) report no rack: 6"):
        snapshot_from_cluster(state)
    inv = Inventory(brokers=[Broker(id=6, rack="west", capacity_bytes=10**12)])
    made = snapshot_from_cluster(state, inv)
    six = [b for b in made.snapshot.brokers.to_pylist() if b["broker_id"] == 6]
    assert six == [{"broker_id": 6, "rack": "west", "capacity_bytes": 10**12}]


def test_brokers_only_in_the_inventory_are_not_said_to_report_no_rack() -> None:
    admin = _stretched_cluster()
    admin.nodes[5] = Node(6, "b6", 9092, None)
    inv = Inventory(brokers=[Broker(id=6, rack="west"), Broker(id=7, rack="east")])
    made = snapshot_from_cluster(_read(admin), inv)
    assert any(n.startswith("1 broker(s) report no rack") and "7" not in n for n in made.notes)
    assert any("of --inventory are not in the cluster: 7" in n for n in made.notes)


def test_a_broker_that_is_down_takes_its_rack_from_the_inventory() -> None:
    admin = _stretched_cluster()
    del admin.nodes[5]  # broker 6 holds replicas but is not listed
    with pytest.raises(InputError, match="report no rack: 6"):
        snapshot_from_cluster(_read(admin))
    made = snapshot_from_cluster(_read(admin), Inventory(brokers=[Broker(id=6, rack="west")]))
    assert any("not in the cluster's broker list" in n for n in made.notes)


def test_a_topic_not_authorized_stops_the_read_or_is_skipped() -> None:
    denied = KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))
    admin = _stretched_cluster()
    admin.configs["logs"] = denied
    with pytest.raises(InputError, match="not authorized to describe topic logs"):
        _read(admin)
    state = _read(admin, skip_unauthorized=True)
    assert state.skipped == ["logs"] and set(state.topics) == {"orders"}
    made = snapshot_from_cluster(state)
    assert any("not authorized, left out: logs" in n for n in made.notes)
    # refused in the metadata answer too
    admin = _stretched_cluster(
        topic_errors={"orders": KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED)}
    )
    with pytest.raises(InputError, match="not authorized to describe topic orders"):
        _read(admin)


def test_a_replica_listed_twice_is_refused() -> None:
    admin = _stretched_cluster()
    admin.topics["logs"] = [_partition(0, [1, 1, 2], 1, [1])]
    with pytest.raises(InputError, match="topic logs partition 0: the cluster lists a broker"):
        _read(admin)


# -- --command-config ----------------------------------------------------------------------

SECRET = "s3cr3t-Pa55word-never-shown"


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "client.properties"
    path.write_text(text)
    return path


def test_sasl_plain_and_scram_are_translated(tmp_path: Path) -> None:
    got = load_command_config(
        _config(
            tmp_path,
            "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule "
            f'required \\\n    username="ops" password="{SECRET}";\n'
            "ssl.ca.location=/etc/ca.pem\nrequest.timeout.ms=5000\n",
        )
    )
    assert got.settings == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "ops",
        "sasl.password": SECRET,
        "ssl.ca.location": "/etc/ca.pem",
    }
    assert got.ignored == ("request.timeout.ms",)
    assert SECRET not in repr(got)
    assert got.redact(f"failed for {SECRET}") == "failed for ***"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ssl.truststore.location=/x/trust.jks\n", "ssl.ca.location"),
        ("ssl.keystore.location=/x/key.jks\n", "ssl.certificate.location"),
        ("security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n", "no user name"),
        (f"sasl.jaas.config=com.example.Secret required token={SECRET};\n", "not translated"),
        (f"sasl.jaas.config={SECRET}\n", "not a JAAS login line"),
        (f"{SECRET}=1\n", "not a Kafka client setting"),
        (f"{SECRET}\n", "not a Kafka client properties file"),
        ("hunter2\n", "not a Kafka client properties file"),
        (f"-----BEGIN PRIVATE KEY-----\n{SECRET}\n", "it starts with '-'"),
        (f'{{"password": "{SECRET}"}}\n', "not a Kafka client properties file"),
        (f"security.protocol={SECRET}\n", "is not one of"),
        ("", "no Kafka client setting"),
    ],
)
def test_a_config_not_translated_is_refused_without_its_values(
    tmp_path: Path, text: str, expected: str
) -> None:
    with pytest.raises(InputError) as exc:
        load_command_config(_config(tmp_path, text))
    shown = f"{exc.value.message} {exc.value.hint}"
    assert expected in shown
    assert SECRET not in shown and "hunter2" not in shown


def test_the_command_config_refusal_reaches_the_cli_without_the_secret(
    tmp_path: Path, cli: Any
) -> None:
    config = _config(tmp_path, f"sasl.jaas.config={SECRET}\n")
    r = cli(
        [
            *("snapshot", "from-cluster", "--bootstrap-server", "127.0.0.1:1"),
            *("--command-config", config, "--out", tmp_path / "s"),
        ]
    )
    assert r.exit_code == 2
    assert str(config) in r.stderr and SECRET not in r.stderr + r.stdout


def test_a_bootstrap_that_is_not_host_port_is_a_usage_error(tmp_path: Path, cli: Any) -> None:
    r = cli(["snapshot", "from-cluster", "--bootstrap-server", "kafka", "--out", tmp_path / "s"])
    assert r.exit_code == 2 and "is not HOST:PORT" in r.stderr


# -- read-only by construction -------------------------------------------------------------


def _admin_calls(source: str) -> set[str]:
    """The AdminClient method names the source names (attributes, and strings for getattr)."""
    methods = {m for m in dir(AdminClient) if not m.startswith("_")}
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in methods:
            found.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found |= {m for m in methods if m == node.value}
    return found


def test_the_cluster_module_only_reads() -> None:
    root = Path(cluster.__file__).parent
    for module in sorted(root.glob("cluster*.py")):
        used = _admin_calls(module.read_text(encoding="utf-8"))
        assert used <= cluster.READ_ONLY, f"{module.name}: {sorted(used - cluster.READ_ONLY)}"
    assert not cluster.READ_ONLY & {
        m
        for m in dir(AdminClient)
        if m.split("_")[0] in ("create", "alter", "delete", "elect", "incremental", "set")
    }


def test_the_read_only_check_catches_a_write() -> None:
    assert _admin_calls("admin.alter_configs([r])\nadmin.describe_configs([r])") == {
        "alter_configs",
        "describe_configs",
    }
    assert _admin_calls("getattr(admin, 'delete_topics')(['t'])") == {"delete_topics"}


# -- the extra ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("missing", "named"),
    [
        ("confluent_kafka,numpy,pyarrow", "confluent_kafka, numpy and pyarrow"),
        ("confluent_kafka", "confluent_kafka"),
    ],
)
def test_without_the_client_the_extra_is_named(
    tmp_path: Path, process: Any, missing: str, named: str
) -> None:
    import sys

    r = process(
        [
            *(sys.executable, "-c", BASE_INSTALL, missing),
            *("snapshot", "from-cluster", "--bootstrap-server", "127.0.0.1:1"),
            *("--out", tmp_path / "s"),
        ]
    )
    assert r.returncode == 2
    assert r.stderr.strip() == (
        f"error: `mrc-plan snapshot from-cluster` needs {named}: pip install 'mrc-plan[kafka]'"
    )


def test_a_cluster_beyond_the_partition_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from placement.errors import UsageError

    monkeypatch.setenv("MRC_PLAN_MAX_PARTITIONS", "2")
    with pytest.raises(UsageError, match=r"kafka-1:9092: partitions: 3 is above the cap of 2"):
        _read(_stretched_cluster())


def test_the_same_snapshot_as_from_describe_of_the_recorded_cluster(
    tmp_path: Path, cli: Any
) -> None:
    """What kafka-topics --describe prints of the recorded cluster (Confluent Server's
    Observers column), through from-describe, equals what from-cluster makes of it."""
    from placement.io.convert import snapshot_from_describe
    from placement.io.describe import read_describe

    made = snapshot_from_cluster(_read(_stretched_cluster()))
    describe = tmp_path / "describe.txt"
    describe.write_text(
        "Topic: logs\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: min.insync.replicas=1\n"
        "\tTopic: logs\tPartition: 0\tLeader: 2\tReplicas: 1,2,3\tIsr: 2,3\tOffline: \n"
        "Topic: orders\tPartitionCount: 2\tReplicationFactor: 5\tConfigs: "
        f"min.insync.replicas=2,confluent.placement.constraints={STRETCHED}\n"
        "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2,4,5,6\tIsr: 1,2,4\t"
        "Offline: \tObservers: 5,6\n"
        "\tTopic: orders\tPartition: 1\tLeader: none\tReplicas: 2,3,5,4,6\tIsr: \t"
        "Offline: 2,3,5,4,6\tObservers: 4,6\n"
    )
    inventory = Inventory(
        brokers=[Broker(id=i, rack="east" if i <= 3 else "west") for i in range(1, 7)]
    )
    offline = snapshot_from_describe(read_describe(describe, in_flight=True), inventory)
    for name in ("brokers", "topics", "partitions"):
        assert getattr(made.snapshot, name).to_pylist() == getattr(offline, name).to_pylist()
