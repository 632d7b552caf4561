"""Inventories from what a cluster prints: kafka-broker-api-versions, kafka-configs
--describe --all, zookeeper-shell's broker registrations; recognised by content."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from placement.errors import InputError
from placement.io.inventory import inventory_for_checks, load_inventory
from placement.model.inventory import Broker

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DESCRIBE = EXAMPLES / "describe.txt"
SOURCES = ["inventory-api-versions.txt", "inventory-configs.txt", "inventory-zookeeper.txt"]
SECRET = "https://x-access-token:ghs_SECRETSECRET0123456789@github.com"

Cli = Callable[..., Result]


def diagnostics(r: Result) -> list[dict[str, str]]:
    return [d for f in json.loads(r.stdout)["files"] for d in f["diagnostics"]]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def refused(path: Path) -> InputError:
    with pytest.raises(InputError) as info:
        load_inventory(path)
    return info.value


def racks(path: Path) -> dict[int, str | None]:
    return {b.id: b.rack for b in load_inventory(path).inventory.brokers}


def api_line(broker_id: int, rack: str, extra: str = "") -> str:
    return f"kafka-{broker_id}.internal:9092 (id: {broker_id} rack: {rack}{extra}) -> (\n"


API_BODY = "\tProduce(0): 0 to 11 [usable: 11],\n\tFetch(1): 0 to 16 [usable: 16]\n)\n"


def registration(rack: str | None = None) -> str:
    doc: dict[str, object] = {
        "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
        "endpoints": ["PLAINTEXT://kafka.internal:9092"],
        "jmx_port": -1,
        "port": 9092,
        "host": "kafka.internal",
        "version": 5,
        "timestamp": "1764300000000",
    }
    if rack is not None:
        doc["rack"] = rack
    return json.dumps(doc, separators=(",", ":"))


# -- the examples: the brokers and racks of examples/inventory.json ------------------------


@pytest.mark.parametrize("name", SOURCES)
def test_each_source_gives_the_example_racks(name: str) -> None:
    expected = racks(EXAMPLES / "inventory.json")
    assert racks(EXAMPLES / name) == expected
    checked = inventory_for_checks(EXAMPLES / name)
    assert {b.id: b.rack for b in checked.inventory.brokers} == expected
    assert set(checked.origins) == set(expected)


@pytest.mark.parametrize("name", SOURCES)
def test_validate_reads_each_source(cli: Cli, name: str) -> None:
    with_json = cli(["validate", DESCRIBE, "--inventory", EXAMPLES / "inventory.json"])
    r = cli(["validate", DESCRIBE, "--inventory", EXAMPLES / name, "--format", "json"])
    assert r.exit_code == with_json.exit_code == 1, r.stderr
    codes = {d["code"] for d in diagnostics(r)}
    assert "MRC401" not in codes and "MRC403" not in codes  # every rack is known


@pytest.mark.parametrize("name", SOURCES)
def test_assign_reads_each_source(cli: Cli, tmp_path: Path, name: str) -> None:
    out = tmp_path / "plan.json"
    r = cli(["assign", "--inventory", EXAMPLES / name, "--current", DESCRIBE, "--out", out])
    assert r.exit_code == 0, r.stderr
    assert json.loads(out.read_text())["partitions"]


# -- kafka-broker-api-versions -----------------------------------------------------------


def test_api_versions_null_rack_fenced_and_unanswered_brokers(tmp_path: Path) -> None:
    text = (
        api_line(1, "null")
        + API_BODY
        + api_line(2, "eu-west-1b", " isFenced: false")
        + API_BODY
        + "kafka-3.internal:9092 (id: 3 rack: eu-west-1c) -> ERROR: "
        "org.apache.kafka.common.errors.DisconnectException\n"
    )
    loaded = load_inventory(write(tmp_path, "brokers.json", text))
    assert loaded.inventory.brokers == [
        Broker(id=1, rack=None),
        Broker(id=2, rack="eu-west-1b"),
        Broker(id=3, rack="eu-west-1c"),
    ]
    assert [loaded.origins[i].line for i in (1, 2, 3)] == [1, 5, 9]


def test_api_versions_broker_twice_is_refused(tmp_path: Path) -> None:
    text = api_line(1, "a") + API_BODY + api_line(1, "b") + API_BODY
    err = refused(write(tmp_path, "b.txt", text))
    assert (err.line, err.column) == (5, 1)
    assert "broker id 1 is listed more than once (first on line 1)" in err.message


# -- kafka-configs --describe --all ---------------------------------------------------------


def configs_block(broker_id: int, rack_line: str | None) -> str:
    lines = [f"All configs for broker {broker_id} are:"]
    lines.append(
        "  background.threads=10 sensitive=false synonyms={DEFAULT_CONFIG:background.threads=10}"
    )
    if rack_line is not None:
        lines.append(f"  {rack_line}")
    lines.append("  ssl.key.password=null sensitive=true synonyms={}")
    return "\n".join(lines) + "\n"


def test_configs_racks_and_brokers_without_one(tmp_path: Path) -> None:
    text = (
        configs_block(
            1,
            "broker.rack=eu-west-1a sensitive=false "
            "synonyms={STATIC_BROKER_CONFIG:broker.rack=eu-west-1a}",
        )
        + configs_block(2, "broker.rack=null sensitive=false synonyms={}")
        + configs_block(
            3, "broker.rack= sensitive=false synonyms={STATIC_BROKER_CONFIG:broker.rack=}"
        )
        + configs_block(4, None)
        + configs_block(5, "broker.rack=New York sensitive=false synonyms={}")
        + "Default configs for brokers in the cluster are:\n"
        "  broker.rack=elsewhere sensitive=false synonyms={}\n"
    )
    assert racks(write(tmp_path, "configs.txt", text)) == {
        1: "eu-west-1a",
        2: None,
        3: None,
        4: None,
        5: "New York",
    }


def test_dynamic_configs_are_refused_asking_for_all(tmp_path: Path) -> None:
    text = (
        "Dynamic configs for broker 1 are:\n  log.cleaner.threads=2 sensitive=false synonyms={}\n"
    )
    err = refused(write(tmp_path, "configs.txt", text))
    assert err.line == 1
    assert "only the dynamic configs" in err.message
    assert "--all" in err.hint


def test_configs_of_a_topic_are_refused(tmp_path: Path) -> None:
    text = (
        "All configs for topic orders are:\n  cleanup.policy=delete sensitive=false synonyms={}\n"
    )
    err = refused(write(tmp_path, "configs.txt", text))
    assert err.line == 1
    assert "not a broker's" in err.message
    assert "--entity-type brokers" in err.hint


# -- zookeeper-shell get /brokers/ids/N -----------------------------------------------------


def test_zookeeper_markers_banner_and_inline_form(tmp_path: Path) -> None:
    text = (
        "broker 1\nConnecting to zk:2181\n\nWATCHER::\n\n"
        "WatchedEvent state:SyncConnected type:None path:null\n"
        f"{registration('dc-a')}\n"
        "[zk: zk:2181(CONNECTED) 0] get /brokers/ids/2\n"
        f"{registration()}\n"
        "cZxid = 0x1a\nctime = Fri Nov 27 10:00:00 UTC 2026\nnumChildren = 0\n"
        f"3 {registration('dc-b')}\n"
        f"4 {registration('')}\n"
    )
    loaded = load_inventory(write(tmp_path, "zk.txt", text))
    assert {b.id: b.rack for b in loaded.inventory.brokers} == {
        1: "dc-a",
        2: None,
        3: "dc-b",
        4: None,
    }
    assert [loaded.origins[i].line for i in (1, 2, 3, 4)] == [1, 8, 13, 14]


def test_zookeeper_registration_without_an_id_is_refused(tmp_path: Path) -> None:
    err = refused(write(tmp_path, "zk.txt", f"{registration('dc-a')}\n"))
    assert err.line == 1
    assert "without its broker id" in err.message
    assert 'echo "broker $id"' in err.hint


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("broker 1\nNode does not exist: /brokers/ids/1\nbroker 2\n{reg}\n", 1),
        ("broker 1\n{reg}\nbroker 2\n", 3),
        ("broker 1\nbroker 2\n{reg}\n", 1),
    ],
    ids=["node-missing", "last-has-none", "two-names-in-a-row"],
)
def test_zookeeper_broker_without_registration_is_refused(
    tmp_path: Path, text: str, line: int
) -> None:
    err = refused(write(tmp_path, "zk.txt", text.format(reg=registration("r"))))
    assert err.line == line
    assert "has no registration" in err.message


# -- recognised by content; anything else refused, unquoted -------------------------------


@pytest.mark.parametrize("name", ["brokers.json", "brokers.csv", "brokers"])
def test_the_format_follows_the_content_not_the_name(tmp_path: Path, name: str) -> None:
    text = (EXAMPLES / "inventory-configs.txt").read_text()
    assert racks(write(tmp_path, name, text)) == racks(EXAMPLES / "inventory.json")


def test_a_csv_header_is_recognised_whatever_the_name(tmp_path: Path) -> None:
    assert racks(write(tmp_path, "racks.txt", "id,rack\n1,a\n2,\n")) == {1: "a", 2: None}


@pytest.mark.parametrize(
    "text",
    [
        f"{SECRET}\nsecond line\n",
        f"All the {SECRET}\n",
        f"  \n\nmachine github.com login {SECRET}\n",
    ],
)
def test_a_foreign_file_is_refused_naming_the_formats(tmp_path: Path, text: str) -> None:
    err = refused(write(tmp_path, "inv.txt", text))
    said = f"{err.message}\n{err.hint}"
    assert "not an inventory" in err.message
    for source in ("kafka-broker-api-versions", "kafka-configs", "zookeeper-shell", "CSV"):
        assert source in err.hint
    assert "ghs_" not in said and "github" not in said and "expected a value" not in said
    assert err.line == text.count("\n", 0, len(text) - len(text.lstrip())) + 1


@pytest.mark.parametrize(
    "text",
    [
        api_line(1, "a") + API_BODY + "{secret}\n",
        "broker 1\n{reg}\n{secret}\n",
        "Dynamic configs for {secret} are:\n",
    ],
    ids=["api-versions", "zookeeper", "configs"],
)
def test_a_foreign_line_after_a_recognised_start_is_not_quoted(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, "inv.txt", text.format(secret=SECRET, reg=registration("r")))
    err = refused(path)
    assert err.line is not None
    assert "ghs_" not in f"{err.message}\n{err.hint}"


def test_the_cli_refuses_a_foreign_file_and_names_brokers_without_rack(
    cli: Cli, tmp_path: Path
) -> None:
    foreign = write(tmp_path, "inv.txt", f"{SECRET}\n")
    r = cli(["validate", DESCRIBE, "--inventory", foreign])
    assert r.exit_code == 2
    assert "not an inventory" in r.stderr and "ghs_" not in r.stderr + r.stdout

    text = (EXAMPLES / "inventory-api-versions.txt").read_text()
    no_rack = write(
        tmp_path, "versions.txt", text.replace("(id: 5 rack: us-east)", "(id: 5 rack: null)")
    )
    assert racks(no_rack)[5] is None
    r = cli(["validate", DESCRIBE, "--inventory", no_rack, "--format", "json"])
    found = [d for d in diagnostics(r) if d["code"] == "MRC403"]
    assert any("broker 5 " in d["message"] for d in found), r.stdout
