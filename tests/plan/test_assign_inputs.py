"""Where `assign` takes brokers and policies from: a snapshot's brokers table, an inventory,
or both when they agree on every rack."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from placement.errors import InputError, UsageError
from placement.io.inventory import load_inventory
from placement.io.snapshot import snapshot_inventory
from placement.plan.inputs import current_kind, read_inputs, reconcile

REPO = Path(__file__).resolve().parent.parent.parent
EXAMPLES = REPO / "examples"
INVENTORY = EXAMPLES / "inventory.json"
DESCRIBE = EXAMPLES / "describe.txt"
TOPICS = EXAMPLES / "topics.json"


@pytest.fixture
def snap(tmp_path: Path, example_snapshot: Callable[[Path], Path]) -> Path:
    return example_snapshot(tmp_path / "snap")


def test_a_snapshot_lists_the_brokers_an_inventory_would(snap: Path) -> None:
    from_snapshot = snapshot_inventory(snap).inventory
    given = load_inventory(INVENTORY).inventory
    assert from_snapshot.brokers == given.brokers  # ids, racks, capacities, in order
    assert from_snapshot.controllers == []  # a snapshot records none


def test_an_empty_brokers_table_is_refused(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from placement.io.snapshot import BROKERS

    empty = tmp_path / "empty"
    empty.mkdir()
    pq.write_table(BROKERS.empty_table(), empty / "brokers.parquet")
    with pytest.raises(InputError, match="brokers table is empty"):
        snapshot_inventory(empty)


def test_current_kinds(tmp_path: Path, snap: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[]}')
    assert current_kind(snap) == "snapshot"
    assert current_kind(DESCRIBE) == "describe"
    assert current_kind(plan) == "reassignment"
    assert current_kind(tmp_path / "missing") == "reassignment"  # reading it says why


def _inventory(tmp_path: Path, **racks: str | None) -> Path:
    """The example inventory with brokers re-racked or added (``b12="us-west"``)."""
    doc = json.loads(INVENTORY.read_text())
    by_id = {b["id"]: b for b in doc["brokers"]}
    for key, rack in racks.items():
        by_id.setdefault(int(key[1:]), {"id": int(key[1:])})["rack"] = rack
    doc["brokers"] = list(by_id.values())
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps(doc))
    return path


def test_racks_that_disagree_with_the_snapshot_are_refused(tmp_path: Path, snap: Path) -> None:
    moved = load_inventory(_inventory(tmp_path, b4="us-east", b9=None))
    with pytest.raises(InputError) as err:
        reconcile(moved, snapshot_inventory(snap), snap)
    assert "broker(s) 4, 9" in err.value.message and "'us-west' there" in err.value.message


def test_what_the_inventory_adds_is_noted(tmp_path: Path, snap: Path) -> None:
    grown = load_inventory(EXAMPLES / "inventory-expanded.json")
    notes = reconcile(grown, snapshot_inventory(snap), snap)
    assert notes and "adds broker(s) 12, 13" in notes[0]
    assert reconcile(load_inventory(INVENTORY), snapshot_inventory(snap), snap) == []


def test_a_snapshot_alone_is_enough(snap: Path) -> None:
    inputs = read_inputs(None, None, snap, None)
    assert inputs.brokers_from == "snapshot" and inputs.topics == []
    assert inputs.policies_known and inputs.kind == "snapshot"
    both = read_inputs(INVENTORY, TOPICS, snap, None)
    assert both.brokers_from == "inventory" and len(both.topics) == 5


@pytest.mark.parametrize(
    ("inventory", "topics", "current", "needed"),
    [
        (None, TOPICS, DESCRIBE, "--inventory"),  # describe output has no racks
        (None, TOPICS, None, "--inventory"),
        (INVENTORY, None, None, "--topics"),  # a fresh layout needs the topics
    ],
)
def test_what_each_current_still_needs(
    inventory: Path | None, topics: Path | None, current: Path | None, needed: str
) -> None:
    with pytest.raises(UsageError, match=f"^{needed} is needed"):
        read_inputs(inventory, topics, current, None)


def test_reassignment_json_holds_no_policies(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1]}]}')
    with pytest.raises(UsageError, match="it has no policies"):
        read_inputs(INVENTORY, None, plan, None)
    assert not read_inputs(INVENTORY, TOPICS, plan, None).policies_known
    assert read_inputs(INVENTORY, None, DESCRIBE, None).policies_known
