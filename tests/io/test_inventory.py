"""Broker inventories: JSON, CSV, a directory of server.properties; positioned errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from placement.errors import InputError
from placement.io.inventory import LoadedInventory, Origin, load_inventory
from placement.model.inventory import Broker, Controller

INVENTORIES = Path(__file__).resolve().parent.parent / "fixtures" / "inventories"
TB4 = 4_000_000_000_000
RACKS = {"us-west": 4, "us-east": 4, "eu-central": 3}


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def load_error(path: Path) -> InputError:
    with pytest.raises(InputError) as info:
        load_inventory(path)
    return info.value


def where(err: InputError) -> tuple[str, int | None, int | None]:
    return Path(err.path).name, err.line, err.column


# -- the shared fixtures: three racks in three formats -------------------------------------


def test_json_fixture() -> None:
    loaded = load_inventory(INVENTORIES / "three-racks.json")
    inv = loaded.inventory
    assert dict(inv.brokers_per_rack()) == RACKS
    assert inv.racks() == ["eu-central", "us-east", "us-west"]
    assert inv.brokers[0] == Broker(id=101, rack="us-west", capacity_bytes=TB4)
    assert inv.controllers == [
        Controller(id=9001, rack="us-west"),
        Controller(id=9002, rack="us-east"),
        Controller(id=9003, rack="eu-central"),
    ]
    path = str(INVENTORIES / "three-racks.json")
    assert loaded.path == path
    assert loaded.origins[101] == Origin(path, 3, 5, "/brokers/0")
    assert loaded.origins[303] == Origin(path, 13, 5, "/brokers/10")


def test_csv_fixture_is_the_same_brokers() -> None:
    loaded = load_inventory(INVENTORIES / "three-racks.csv")
    from_json = load_inventory(INVENTORIES / "three-racks.json")
    assert loaded.inventory.brokers == from_json.inventory.brokers
    assert loaded.inventory.controllers == []
    assert loaded.origins[101] == Origin(str(INVENTORIES / "three-racks.csv"), 2, 1)
    assert loaded.origins[303].line == 12


def test_server_properties_directory() -> None:
    root = INVENTORIES / "three-racks-servers"
    loaded = load_inventory(root)
    inv = loaded.inventory
    assert dict(inv.brokers_per_rack()) == RACKS
    ids = [*range(101, 105), *range(201, 205), *range(301, 304)]
    assert sorted(b.id for b in inv.brokers) == ids
    assert all(b.capacity_bytes is None for b in inv.brokers)
    assert sorted((c.id, c.rack) for c in inv.controllers) == [
        (9001, "us-west"),
        (9002, "us-east"),
        (9003, "eu-central"),
    ]
    # node.id is on line 3 of every file; log4j.properties beside it is not a node
    assert loaded.origins[101] == Origin(str(root / "kafka-west-1" / "server.properties"), 3, 1)
    assert loaded.path == str(root)


@pytest.mark.parametrize("name", ["rack-missing.json", "rack-missing.csv", "rack-missing-servers"])
def test_a_broker_without_a_rack_is_loaded_without_one(name: str) -> None:
    inv = load_inventory(INVENTORIES / name).inventory
    racks = {b.id: b.rack for b in inv.brokers}
    assert racks[203] is None
    assert dict(inv.brokers_per_rack()) == {"us-west": 2, "us-east": 2}


# -- JSON ---------------------------------------------------------------------------------


def test_json_minimal(tmp_path: Path) -> None:
    path = write(tmp_path, "inv.json", '{"brokers": [{"id": 1, "rack": "dc1"}]}')
    loaded = load_inventory(path)
    assert loaded == LoadedInventory(
        loaded.inventory, str(path), {1: Origin(str(path), 1, 14, "/brokers/0")}
    )
    assert loaded.inventory.brokers == [Broker(id=1, rack="dc1")]


def test_json_with_bom_and_crlf(tmp_path: Path) -> None:
    text = b'\xef\xbb\xbf{\r\n"brokers": [\r\n  {"id": 1, "rack": "dc1"}\r\n]}'
    path = write(tmp_path, "inv.json", text)
    assert load_inventory(path).origins[1].line == 3


# (text, line, column, part of the message) of an inventory.json that is refused
JSON_ERRORS: list[tuple[str, int, int, str]] = [
    ('{"brokers": [\n  {"id": 1, "rack": "dc1"},\n]}', 2, 27, "trailing comma"),
    ('{"brokers": [\n  {"id": 1, "rack": "dc1"} // primary\n]}', 2, 28, "comments"),
    ('{"brokers": [\n  {"id": 1, "rack": "dc1"\n', 3, 1, "end of file"),
    ('{"brokers": [\n  {"id": 1, "id": 2, "rack": "dc1"}\n]}', 2, 13, 'duplicate key "id"'),
    ('{"brokers": [\n  {"id": "101", "rack": "dc1"}\n]}', 2, 10, "/brokers/0/id"),
    ('{"brokers": [\n  {"id": 1.0, "rack": "dc1"}\n]}', 2, 10, "/brokers/0/id"),
    ('{"brokers": [\n  {"id": -1, "rack": "dc1"}\n]}', 2, 10, "/brokers/0/id"),
    ('{"brokers": [\n  {"id": 1, "rack": "dc1", "zone": "a"}\n]}', 2, 28, "/brokers/0/zone"),
    ('{"brokers": [\n  {"rack": "dc1"}\n]}', 2, 3, "/brokers/0/id"),
    ('{"broker": []}', 1, 1, "/brokers"),
    ('[{"id": 1, "rack": "dc1"}]', 1, 1, "the document"),
    (
        '{"brokers": [\n  {"id": 1, "rack": "dc1"},\n  {"id": 1, "rack": "dc2"}\n]}',
        3,
        3,
        "broker id 1 is listed more than once (first on line 2)",
    ),
]


def test_json_combined_mode_node_is_a_broker_and_a_controller(tmp_path: Path) -> None:
    text = (
        '{"brokers": [\n  {"id": 1, "rack": "dc1"},\n  {"id": 2, "rack": "dc2"}\n],\n'
        ' "controllers": [\n  {"id": 1, "rack": "dc1"},\n  {"id": 9001, "rack": "dc3"}\n]}'
    )
    path = write(tmp_path, "inv.json", text)
    loaded = load_inventory(path)
    assert [c.id for c in loaded.inventory.controllers] == [1, 9001]
    assert loaded.origins[1] == Origin(str(path), 2, 3, "/brokers/0")
    assert loaded.controller_origins == {
        1: Origin(str(path), 6, 3, "/controllers/0"),
        9001: Origin(str(path), 7, 3, "/controllers/1"),
    }


@pytest.mark.parametrize(
    ("controllers", "fragment"),
    [
        (
            '{"id": 9001, "rack": "dc1"},\n  {"id": 9001, "rack": "dc2"}',
            "controller id 9001 is listed more than once (first on line 4)",
        ),
        (
            '{"id": 7, "rack": "dc3"},\n  {"id": 1, "rack": "dc2"}',
            "node 1 is a broker with rack 'dc1' (line 2) and a controller with rack 'dc2'",
        ),
        ('{"id": 7, "rack": "dc3"},\n  {"id": 1}', "and a controller with no rack"),
    ],
    ids=["controller-twice", "combined-node-two-racks", "combined-node-rack-missing"],
)
def test_json_controller_errors(tmp_path: Path, controllers: str, fragment: str) -> None:
    text = (
        f'{{"brokers": [\n  {{"id": 1, "rack": "dc1"}}],\n "controllers": [\n  {controllers}\n]}}'
    )
    err = load_error(write(tmp_path, "inv.json", text))
    assert where(err) == ("inv.json", 5, 3)
    assert fragment in err.message


def test_json_invalid_utf8(tmp_path: Path) -> None:
    text = b'{"brokers": [\n{"id": 1, "rack": "M\xfcnchen"}]}'
    err = load_error(write(tmp_path, "inv.json", text))
    assert where(err) == ("inv.json", 2, 21)


@pytest.mark.parametrize("text", ['{"brokers": []}', '{"brokers": [], "controllers": [{"id": 9}]}'])
def test_json_without_brokers(tmp_path: Path, text: str) -> None:
    err = load_error(write(tmp_path, "inv.json", text))
    assert Path(err.path).name == "inv.json"
    assert "no brokers" in err.message


def test_missing_file(tmp_path: Path) -> None:
    err = load_error(tmp_path / "nope.json")
    assert where(err) == ("nope.json", None, None)
    assert "not found" in err.message


# -- CSV ----------------------------------------------------------------------------------


def test_csv_variants(tmp_path: Path) -> None:
    text = "\ufeffID, Rack\r\n\r\n1, us-west\r\n2,us-east \r\n3,\r\n"
    loaded = load_inventory(write(tmp_path, "inv.csv", text))
    assert loaded.inventory.brokers == [
        Broker(id=1, rack="us-west"),
        Broker(id=2, rack="us-east"),
        Broker(id=3, rack=None),
    ]
    assert [loaded.origins[i].line for i in (1, 2, 3)] == [3, 4, 5]


# the same for a brokers.csv
CSV_ERRORS: list[tuple[str, int, int, str]] = [
    ("broker_id,rack\n1,us-west\n", 1, 1, "must name the columns id and rack"),
    ("id,rack\nx1,us-west\n", 2, 1, "id must be an integer, found 'x1'"),
    ("id,rack,capacity_bytes\n1,us-west,4TB\n", 2, 11, "capacity_bytes must be an integer"),
    ("id,rack\n1,us-west\n2,us-east,extra\n", 3, 1, "expected 2 fields, found 3"),
    ("id,rack\n,us-west\n", 2, 1, "id is empty"),
    ("id,rack\n1,us-west\n2,us-east\n1,eu-central\n", 4, 1, "(first on line 2)"),
    ("id,rack,capacity_bytes\n1,us-west,-5\n", 2, 1, "greater than or equal to 0"),
]


@pytest.mark.parametrize(
    ("name", "text", "line", "column", "fragment"),
    [("inventory.json", *case) for case in JSON_ERRORS]
    + [("brokers.csv", *case) for case in CSV_ERRORS],
)
def test_errors_name_file_line_and_column(
    tmp_path: Path, name: str, text: str, line: int, column: int, fragment: str
) -> None:
    err = load_error(write(tmp_path, name, text))
    assert where(err) == (name, line, column)
    assert fragment in err.message
    assert err.message.startswith(f"{tmp_path / name}:{line}:{column}: ")


def test_csv_unknown_column_is_named(tmp_path: Path) -> None:
    err = load_error(write(tmp_path, "brokers.csv", "id,rack,zone\n1,us-west,us-west-2a\n"))
    assert "unknown column 'zone'" in err.message
    assert err.line == 1


def test_csv_unknown_column_position(tmp_path: Path) -> None:
    err = load_error(write(tmp_path, "brokers.csv", "id,rack,zone\n1,us-west,us-west-2a\n"))
    assert where(err) == ("brokers.csv", 1, 9)


@pytest.mark.parametrize("text", ["", "\n \n", "id,rack\n", "id,rack\n\n"])
def test_csv_without_brokers(tmp_path: Path, text: str) -> None:
    err = load_error(write(tmp_path, "brokers.csv", text))
    assert Path(err.path).name == "brokers.csv"
    assert "empty" in err.message or "no brokers" in err.message


# -- a directory of server.properties -----------------------------------------------------


def _node(roles: str | None, node_id: str, rack: str | None, *, key: str = "node.id") -> str:
    lines = ["# generated by the provisioning playbook"]
    if roles is not None:
        lines.append(f"process.roles={roles}")
    lines.append(f"{key}={node_id}")
    if rack is not None:
        lines.append(f"broker.rack={rack}")
    lines.append("log.dirs=/var/lib/kafka/data")
    return "\n".join(lines) + "\n"


def test_roles_decide_brokers_and_controllers(tmp_path: Path) -> None:
    write(tmp_path, "broker-1/server.properties", _node("broker", "1", "dc1"))
    write(tmp_path, "ctl-9001/server.properties", _node("controller", "9001", "dc1"))
    write(tmp_path, "combined-2/server.properties", _node("broker, controller", "2", "dc2"))
    write(tmp_path, "zk-broker-3/server.properties", _node(None, "3", "dc3", key="broker.id"))
    write(tmp_path, "broker-1/log4j.properties", "log4j.rootLogger=INFO, stdout\n")
    write(tmp_path, "broker-1/client.properties", "bootstrap.servers=broker-1:9092\n")
    write(tmp_path, ".backup/server.properties", _node("broker", "1", "old"))
    inv = load_inventory(tmp_path).inventory
    assert sorted((b.id, b.rack) for b in inv.brokers) == [(1, "dc1"), (2, "dc2"), (3, "dc3")]
    assert sorted((c.id, c.rack) for c in inv.controllers) == [(2, "dc2"), (9001, "dc1")]


def test_node_id_wins_over_broker_id(tmp_path: Path) -> None:
    write(tmp_path, "a/server.properties", "broker.id=7\nnode.id=8\nbroker.rack=dc1\n")
    loaded = load_inventory(tmp_path)
    assert [b.id for b in loaded.inventory.brokers] == [8]
    assert (loaded.origins[8].line, loaded.origins[8].column) == (2, 1)


def test_blank_broker_rack_is_no_rack(tmp_path: Path) -> None:
    write(tmp_path, "a/server.properties", "node.id=1\nbroker.rack=  \n")
    assert load_inventory(tmp_path).inventory.brokers == [Broker(id=1, rack=None)]


def test_directory_errors_name_file_line_and_column(tmp_path: Path) -> None:
    write(tmp_path, "a/server.properties", "process.roles=broker\n  node.id = one\n")
    err = load_error(tmp_path)
    assert (err.path, err.line, err.column) == (str(tmp_path / "a" / "server.properties"), 2, 3)
    assert "node.id must be an integer, found 'one'" in err.message


def test_directory_duplicate_node_id(tmp_path: Path) -> None:
    write(tmp_path, "a/server.properties", _node("broker", "1", "dc1"))
    write(tmp_path, "b/server.properties", _node("broker", "1", "dc2"))
    err = load_error(tmp_path)
    assert (err.path, err.line, err.column) == (str(tmp_path / "b" / "server.properties"), 3, 1)
    assert str(tmp_path / "a" / "server.properties") in err.message


@pytest.mark.parametrize(
    ("first", "second"),
    [("controller", "controller"), ("broker", "controller"), ("controller", "broker,controller")],
)
def test_directory_node_id_is_unique_over_roles(tmp_path: Path, first: str, second: str) -> None:
    # one node.id per process: a combined-mode node is one file with both roles, not two files
    write(tmp_path, "a/server.properties", _node(first, "9001", "dc1"))
    write(tmp_path, "b/server.properties", _node(second, "9001", "dc1"))
    write(tmp_path, "c/server.properties", _node("broker", "1", "dc1"))
    err = load_error(tmp_path)
    assert (err.path, err.line, err.column) == (str(tmp_path / "b" / "server.properties"), 3, 1)
    assert f"node.id 9001 is also declared in {tmp_path / 'a' / 'server.properties'}" in err.message


def test_directory_combined_mode_fixture() -> None:
    root = INVENTORIES / "combined-two-sites-servers"
    loaded = load_inventory(root)
    inv = loaded.inventory
    assert sorted((b.id, b.rack) for b in inv.brokers) == [
        (1, "dc1"),
        (2, "dc1"),
        (3, "dc2"),
        (4, "dc2"),
    ]
    assert sorted((c.id, c.rack) for c in inv.controllers) == [(1, "dc1"), (2, "dc1"), (3, "dc2")]
    node_1 = Origin(str(root / "dc1-node-1" / "server.properties"), 3, 1)
    assert loaded.origins[1] == loaded.controller_origins[1] == node_1
    assert set(loaded.controller_origins) == {1, 2, 3}


def test_directory_node_without_an_id(tmp_path: Path) -> None:
    write(tmp_path, "a/server.properties", "process.roles=broker\nbroker.rack=dc1\n")
    err = load_error(tmp_path)
    assert err.path == str(tmp_path / "a" / "server.properties")
    assert "neither node.id nor broker.id" in err.message


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"a/log4j.properties": "log4j.rootLogger=INFO\n"},
        {"ctl/server.properties": _node("controller", "9001", "dc1")},
    ],
    ids=["empty", "no-node-files", "controllers-only"],
)
def test_directory_without_brokers(tmp_path: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        write(tmp_path, name, text)
    err = load_error(tmp_path)
    assert err.path == str(tmp_path)
    assert "no server.properties with a broker" in err.message


def test_directory_invalid_utf8(tmp_path: Path) -> None:
    write(tmp_path, "a/server.properties", b"node.id=1\nbroker.rack=eu-m\xfcnchen\n")
    err = load_error(tmp_path)
    assert (Path(err.path).name, err.line, err.column) == ("server.properties", 2, 17)


@pytest.mark.parametrize(
    ("text", "hint_words"),
    [("", "JSON document"), ("{\n  // brokers\n}\n", "JSON has none")],
)
def test_syntax_hints_outside_a_policy_say_nothing_of_policies(
    tmp_path: Path, text: str, hint_words: str
) -> None:
    """The parser's hint holds for any JSON file; what is said of placement policies (what
    one needs at least, Confluent's commented sketches) belongs to the MRC1xx rules, which
    only `validate` applies to policies."""
    path = tmp_path / "inventory.json"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_inventory(path)
    assert hint_words in caught.value.hint
    assert "placement policy" not in caught.value.hint
    assert "Confluent" not in caught.value.hint
