"""`assign` says what it assumed: brokers the inventory does not place, sizes it lacks.

Before: replicas on a broker missing from the inventory (or listed without a rack) were
moved off without naming it, and "bytes to move: 0" was printed when no size was known.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from placement.io.current import read_current
from placement.io.inventory import load_inventory
from placement.plan.assign import Ask, assign
from placement.plan.topics import read_topics
from placement.rules.base import CheckContext

Cli = Callable[..., Result]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _inventory(tmp_path: Path) -> Path:
    """examples/inventory.json without broker 11, and broker 10 without its rack."""
    doc = json.loads((EXAMPLES / "inventory.json").read_text())
    doc["brokers"] = [b for b in doc["brokers"] if b["id"] != 11]
    for b in doc["brokers"]:
        if b["id"] == 10:
            del b["rack"]
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps(doc))
    return path


def _assign(cli: Cli, inventory: Path, current: Path, out: Path) -> Result:
    r = cli(
        [
            "assign",
            "--inventory",
            inventory,
            "--topics",
            EXAMPLES / "topics-describe.json",
            "--current",
            current,
            "--repair",  # the topics file creates topics: only --repair mends orders-1 too
            "--out",
            out,
        ]
    )
    assert r.exit_code == 0, r.stderr
    return r


def test_assign_names_brokers_the_inventory_does_not_place(cli: Cli, tmp_path: Path) -> None:
    inventory = _inventory(tmp_path)
    r = _assign(cli, inventory, EXAMPLES / "describe.txt", tmp_path / "plan.json")
    lines = r.stderr.splitlines()
    assert any("11" in line and "not in --inventory" in line for line in lines), r.stderr
    assert any("10" in line and "no rack" in line for line in lines), r.stderr
    # and as data, for whatever renders the outcome
    loaded = load_inventory(inventory)
    specs = read_topics(EXAMPLES / "topics-describe.json", CheckContext(loaded.inventory))
    outcome = assign(loaded, specs, read_current(EXAMPLES / "describe.txt"), ask=Ask(repair=True))
    assert outcome.unknown_brokers == [11]
    assert outcome.rackless_brokers == [10]


def test_bytes_to_move_is_unknown_without_sizes(cli: Cli, tmp_path: Path) -> None:
    inventory = EXAMPLES / "inventory.json"
    r = _assign(cli, inventory, EXAMPLES / "describe.txt", tmp_path / "plan.json")
    assert "bytes to move: unknown" in r.stderr
    assert "bytes to move: 0" not in r.stderr
    loaded = load_inventory(inventory)
    specs = read_topics(EXAMPLES / "topics-describe.json", CheckContext(loaded.inventory))
    outcome = assign(loaded, specs, read_current(EXAMPLES / "describe.txt"), ask=Ask(repair=True))
    assert outcome.plan and outcome.replicas_added > 0
    assert outcome.bytes_to_move is None
    # with sizes, the number
    snap = tmp_path / "snap"
    made = cli(
        [
            "snapshot",
            "from-describe",
            EXAMPLES / "describe.txt",
            "--inventory",
            inventory,
            "--sizes",
            EXAMPLES / "sizes.csv",
            "--out",
            snap,
        ]
    )
    assert made.exit_code == 0, made.stderr
    sized = assign(loaded, specs, read_current(snap), ask=Ask(repair=True))
    assert sized.bytes_to_move is not None and sized.bytes_to_move > 0
    r = _assign(cli, inventory, snap, tmp_path / "plan2.json")
    assert f"bytes to move: {sized.bytes_to_move:,}" in r.stderr
