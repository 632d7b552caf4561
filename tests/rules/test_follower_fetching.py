"""MRC602 follower-fetching-disabled: brokers validated together, and their placement
policies, against `replica.selector.class` (placement/rules/fetching.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import Result

from placement.io.inventory import load_inventory
from placement.model.diagnostic import Diagnostic, Severity
from placement.rules.fetching import RACK_AWARE, FollowerFetching
from placement.rules.validate import ValidateOptions, validate_paths

Cli = Callable[..., Result]

LEADER = "org.apache.kafka.common.replica.LeaderSelector"
OBSERVERS_SOUTH = json.dumps(
    {
        "version": 2,
        "replicas": [{"count": 2, "constraints": {"rack": "north"}}],
        "observers": [{"count": 1, "constraints": {"rack": "south"}}],
    }
)
REPLICAS_ONLY = json.dumps(
    {"version": 1, "replicas": [{"count": 3, "constraints": {"rack": "lake"}}]}
)


def server(
    node: int | None, rack: str | None, selector: str | None = None, placement: str | None = None
) -> str:
    lines = ["process.roles=broker"]
    if node is not None:
        lines.append(f"node.id={node}")
    if rack is not None:
        lines.append(f"broker.rack={rack}")
    if selector is not None:
        lines.append(f"replica.selector.class={selector}")
    if placement is not None:
        lines.append(f"confluent.log.placement.constraints={placement}")
    return "\n".join(lines) + "\n"


def check(files: dict[str, str]) -> list[Diagnostic]:
    fetching = FollowerFetching()
    for name, text in files.items():
        fetching.add(name, text.encode())
    return fetching.diagnostics()


def where(diags: list[Diagnostic]) -> list[tuple[str, int, int]]:
    return sorted((d.file, d.line, d.column) for d in diags)


# a single server.properties


def test_single_broker_with_observers_and_no_selector_warns() -> None:
    (d,) = check({"s.properties": server(1, "north", placement=OBSERVERS_SOUTH)})
    assert (d.code, d.name, d.severity) == (
        "MRC602",
        "follower-fetching-disabled",
        Severity.WARNING,
    )
    assert (d.file, d.line, d.column) == ("s.properties", 3, 1)  # at broker.rack
    assert "broker 1 (rack 'north')" in d.message
    assert RACK_AWARE in d.hint and "client.rack" in d.hint


def test_single_broker_with_the_selector_is_clean() -> None:
    assert check({"s.properties": server(1, "north", RACK_AWARE, OBSERVERS_SOUTH)}) == []


def test_leader_selector_counts_as_unset_and_is_pointed_at() -> None:
    (d,) = check({"s.properties": server(1, "east", LEADER, OBSERVERS_SOUTH)})
    assert d.line == 4  # the replica.selector.class line
    assert "to LeaderSelector" in d.message


def test_a_selector_of_ones_own_counts_as_set() -> None:
    assert (
        check({"s.properties": server(1, "east", "com.example.NearestZone", OBSERVERS_SOUTH)}) == []
    )


def test_single_broker_without_rack_or_observers_is_clean() -> None:
    # no broker.rack: consumers cannot be matched to it; no observers and its rack unnamed
    assert check({"s.properties": server(1, None, placement=OBSERVERS_SOUTH)}) == []
    assert check({"s.properties": server(1, "east", placement=REPLICAS_ONLY)}) == []


def test_a_policy_naming_the_brokers_own_rack_warns_without_observers() -> None:
    (d,) = check({"s.properties": server(1, "lake", placement=REPLICAS_ONLY)})
    assert "puts replicas in its rack" in d.message


def test_controller_only_node_and_client_config_are_not_brokers() -> None:
    controller = "process.roles=controller\nnode.id=9\nbroker.rack=north\n"
    client = f"client.rack=north\nconfluent.log.placement.constraints={OBSERVERS_SOUTH}\n"
    assert check({"c.properties": controller, "client.properties": client}) == []


def test_a_later_duplicate_key_wins_as_java_loads_it() -> None:
    text = server(1, "north", placement=OBSERVERS_SOUTH) + f"replica.selector.class={RACK_AWARE}\n"
    assert check({"s.properties": text}) == []
    text = server(1, "north", RACK_AWARE, OBSERVERS_SOUTH) + "replica.selector.class=\n"
    (d,) = check({"s.properties": text})
    assert d.line == 6  # an empty value is unset; the finding points at it


def test_unreadable_files_are_passed_over() -> None:
    # invalid UTF-8, a lone surrogate escape, a policy that is no JSON: other rules say why
    fetching = FollowerFetching()
    fetching.add("a.properties", b"broker.rack=\xff\n")
    fetching.add("b.properties", b"node.id=1\nbroker.rack=\\ud800\n")
    fetching.add("c.json", b"{not json")
    fetching.add("d.json", b"[" * 100_000)
    fetching.add("e.txt", b"broker.rack=north\n")
    assert fetching.diagnostics() == []


def test_an_id_that_is_no_integer_is_reported_without_it() -> None:
    (d,) = check({"s.properties": server(None, "north", placement=OBSERVERS_SOUTH)})
    assert d.message.startswith("the broker (rack 'north')")


# brokers validated together


def test_brokers_that_agree_on_the_selector_are_clean() -> None:
    files = {
        f"b{n}.properties": server(n, rack, RACK_AWARE) for n, rack in ((1, "north"), (2, "south"))
    }
    files["policy.json"] = OBSERVERS_SOUTH
    assert check(files) == []


def test_brokers_that_disagree_warn_at_those_without_it() -> None:
    files = {
        "b1.properties": server(1, "west", RACK_AWARE),
        "b2.properties": server(2, "west"),
        "b3.properties": server(3, "west", LEADER),
    }
    diags = check(files)
    assert where(diags) == [("b2.properties", 3, 1), ("b3.properties", 4, 1)]
    assert all("1 of the 3 brokers" in d.message for d in diags)


def test_brokers_of_several_clusters_are_not_compared() -> None:
    # node id 1 twice: two clusters, which may choose differently
    files = {
        "a/b1.properties": server(1, "west", RACK_AWARE),
        "b/b1.properties": server(1, "west"),
    }
    assert check(files) == []


def test_a_policy_file_puts_observers_in_a_rack_whose_brokers_lack_it() -> None:
    files = {
        "north-1.properties": server(1, "north", RACK_AWARE),
        "south-1.properties": server(2, "south"),
        "south-2.properties": server(3, "south"),
        "orders.json": OBSERVERS_SOUTH,
    }
    diags = check(files)
    assert where(diags) == [("south-1.properties", 3, 1), ("south-2.properties", 3, 1)]
    assert all("puts observers in its rack" in d.message for d in diags)


def test_policies_of_other_racks_alone_do_not_warn() -> None:
    files = {"b1.properties": server(1, "desert"), "orders.json": OBSERVERS_SOUTH}
    assert check(files) == []


def test_one_file_given_twice_is_one_broker(tmp_path: Path) -> None:
    (tmp_path / "s.properties").write_text(server(1, "north", placement=OBSERVERS_SOUTH))
    fetching = FollowerFetching()
    for name in (tmp_path / "s.properties", tmp_path / "." / "s.properties"):
        fetching.add(str(name), name.read_bytes())
    assert len(fetching.diagnostics()) == 1


def test_an_inventory_directory_of_server_properties(tmp_path: Path) -> None:
    inventory = tmp_path / "brokers"
    for n, rack, selector in ((1, "north", RACK_AWARE), (2, "south", None)):
        (inventory / f"kafka-{n}").mkdir(parents=True)
        (inventory / f"kafka-{n}" / "server.properties").write_text(server(n, rack, selector))
    fetching = FollowerFetching()
    fetching.add("orders.json", OBSERVERS_SOUTH.encode())
    fetching.add_inventory(load_inventory(inventory))
    (d,) = fetching.diagnostics()
    assert d.file == str(inventory / "kafka-2" / "server.properties")
    assert (d.line, d.column) == (3, 1)


def test_an_inventory_file_is_no_broker_set(tmp_path: Path) -> None:
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps({"brokers": [{"id": 1, "rack": "south"}]}))
    fetching = FollowerFetching()
    fetching.add("orders.json", OBSERVERS_SOUTH.encode())
    fetching.add_inventory(load_inventory(path))
    assert fetching.diagnostics() == []


# through `validate` (the files of one run are one broker set) and the CLI


def _cluster(root: Path, *selectors: str | None, placement: str | None = None) -> Path:
    """One server.properties per broker, in rack "south", under ``root``/NAME/."""
    for n, selector in enumerate(selectors, start=1):
        (root / f"kafka-{n}").mkdir(parents=True)
        (root / f"kafka-{n}" / "server.properties").write_text(
            server(n, "south", selector, placement if n == 1 else None)
        )
    return root


def _found(report: dict[str, Any]) -> list[tuple[str, str, int]]:
    return sorted(
        (Path(f["path"]).parent.name, d["code"], d["line"])
        for f in report["files"]
        for d in f["diagnostics"]
    )


def test_validate_reads_a_directory_as_one_broker_set(tmp_path: Path) -> None:
    agree = _cluster(tmp_path / "agree", RACK_AWARE, RACK_AWARE, placement=OBSERVERS_SOUTH)
    assert all(d == [] for d in validate_paths([agree], ValidateOptions()).values())
    disagree = _cluster(tmp_path / "disagree", RACK_AWARE, None, LEADER)
    found = validate_paths([disagree], ValidateOptions())
    assert sorted((Path(f).parent.name, d.line) for f, ds in found.items() for d in ds) == [
        ("kafka-2", 3),
        ("kafka-3", 4),
    ]


def test_cli_single_file_warns_and_passes(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "one" / "server.properties"
    path.parent.mkdir()
    path.write_text(server(7, "north", placement=OBSERVERS_SOUTH))
    result = cli(["validate", "--format", "json", path])
    assert result.exit_code == 0  # a warning
    assert _found(json.loads(result.stdout)) == [("one", "MRC602", 3)]
    assert cli(["validate", "--strict", path]).exit_code == 1


def test_cli_directory_that_disagrees(cli: Cli, tmp_path: Path) -> None:
    root = _cluster(tmp_path / "cluster", RACK_AWARE, None, RACK_AWARE)
    result = cli(["validate", "--format", "json", root])
    assert result.exit_code == 0
    assert _found(json.loads(result.stdout)) == [("kafka-2", "MRC602", 3)]


def test_cli_policy_with_an_inventory_directory(cli: Cli, tmp_path: Path) -> None:
    brokers = _cluster(tmp_path / "brokers", None, None)
    policy = tmp_path / "orders.json"
    policy.write_text(OBSERVERS_SOUTH)
    result = cli(["validate", "--format", "json", "--inventory", brokers, policy])
    found = [c for c in _found(json.loads(result.stdout)) if c[1] == "MRC602"]
    assert found == [("kafka-1", "MRC602", 3), ("kafka-2", "MRC602", 3)]


def test_cli_rules_documents_the_code(cli: Cli) -> None:
    result = cli(["rules", "MRC602"])
    assert result.exit_code == 0
    assert "replica.selector.class" in result.stdout and "client.rack" in result.stdout
