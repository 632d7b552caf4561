"""`validate` reads a document the models certainly accept as a plain record, without pydantic
(placement/model/shapes.py). Held here: a record only for what the model accepts,
with the model's values; the rules find the same in both; the key lists are the models'."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from placement.model import shapes
from placement.model.inventory import Inventory
from placement.model.policy import (
    PROMOTION_VALUES,
    PlacementPolicy,
    RackConstraint,
    ReplicaConstraint,
)
from placement.rules.base import CheckContext
from placement.rules.registry import INVENTORY_RULES, POLICY_RULES

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# values a policy or an inventory may hold, and values of the wrong type or range, or right
# in all but type (what strict mode turns on)
ODD = [None, True, False, 0, 1, 2, -1, 1.0, 2.0, "", "1", "2", [], {}, "\udcff", "\ud800"]
RACKS = ["us-west", "us-east", "eu", "é"]
ODD_RACKS = ["", " ", "\t", "\u3000", "us-west\udcff", "\ud800"]
PLAIN = [*RACKS, "", " ", "\u3000"]  # an inventory's blank rack is no rack
COUNTS = [1, 2, 3, 2**31 - 1]
ODD_COUNTS = [0, -1, 2**31, True, 3.0, "3"]
PROMOTIONS = list(PROMOTION_VALUES)
ODD_PROMOTIONS = ["under-min-isrs", "UNDER-MIN-ISR"]


ENTRY = {"count": 1, "constraints": {"rack": "eu"}}
# what a mutation writes: any of the values above, and objects and lists of every member
VALUES = [
    *ODD,
    *RACKS,
    *ODD_RACKS,
    *COUNTS,
    *ODD_COUNTS,
    *PROMOTIONS,
    *ODD_PROMOTIONS,
    {"rack": "eu"},
    ENTRY,
    [ENTRY],
    {"id": 3},
    {"id": 3, "rack": "eu"},
    [{"id": 3}],
]
KEYS = [
    *shapes.POLICY_KEYS,
    *shapes.ENTRY_KEYS,
    *shapes.CONSTRAINT_KEYS,
    "brokers",
    "controllers",
    "id",
    "capacity_bytes",
    "observer",
    "zone",
    "Rack",
]


def _slots(value: Any) -> list[tuple[Any, Any]]:
    """(container, key or index) of every value inside ``value``, and the containers."""
    out: list[tuple[Any, Any]] = []
    stack = [value]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        out.append((node, None))
        for key, child in items:
            out.append((node, key))
            if isinstance(child, dict | list):
                stack.append(child)
    return out


@st.composite
def mutated(draw: st.DrawFn, valid: st.SearchStrategy[Any]) -> Any:
    """A valid document with up to three changes: a value replaced, a member or an item
    removed or added (so most results sit next to the line between valid and not)."""
    value = copy.deepcopy(draw(valid))
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.integers(0, 30)) == 0:
            return draw(st.sampled_from(VALUES))
        node, key = draw(st.sampled_from(_slots(value)))
        new = copy.deepcopy(draw(st.sampled_from(VALUES)))
        if key is None:  # add a member or an item
            if isinstance(node, dict):
                node[draw(st.sampled_from(KEYS))] = new
            else:
                node.append(new)
        elif draw(st.booleans()):
            node[key] = new
        else:
            del node[key]
    return value


def policies(odd: bool) -> st.SearchStrategy[Any]:
    rack = st.builds(dict, rack=st.sampled_from(RACKS))
    entry = st.builds(dict, count=st.sampled_from(COUNTS), constraints=rack)
    entries = st.lists(entry, max_size=3)
    members = {"observers": entries, "observerPromotionPolicy": st.sampled_from(PROMOTIONS)}
    valid = st.fixed_dictionaries(
        {"version": st.sampled_from([1, 2]), "replicas": st.lists(entry, min_size=1, max_size=3)},
        optional=members,
    )
    return mutated(valid) if odd else valid


def inventories(odd: bool) -> st.SearchStrategy[Any]:
    ids = st.sampled_from([0, 1, 7, 2**31 - 1])
    racks = st.sampled_from(PLAIN)
    capacity = st.sampled_from([None, 0, 10**12, 2**63 - 1])
    broker = st.fixed_dictionaries(
        {"id": ids}, optional={"rack": racks, "capacity_bytes": capacity}
    )
    controller = st.fixed_dictionaries({"id": ids}, optional={"rack": racks})
    valid = st.fixed_dictionaries(
        {"brokers": st.lists(broker, max_size=4)},
        optional={"controllers": st.lists(controller, max_size=3)},
    )
    return mutated(valid) if odd else valid


def _policy_values(p: shapes.PolicyLike) -> tuple[Any, ...]:
    return (
        p.version,
        [(e.count, e.constraints.rack) for e in p.replicas],
        [(e.count, e.constraints.rack) for e in p.observers],
        p.observerPromotionPolicy,
        p.promotion,
        p.promotes_observers,
        p.lead_rack,
        p.sync_count,
        p.observer_count,
        p.per_rack(),
    )


def _inventory_values(inv: shapes.InventoryLike) -> tuple[Any, ...]:
    return (
        [(b.id, b.rack, b.capacity_bytes) for b in inv.brokers],
        [(c.id, c.rack) for c in inv.controllers],
        dict(inv.rack_of),
        inv.rack_members(),
        inv.brokers_per_rack(),
        inv.racks(),
    )


def _model(model: type[PlacementPolicy] | type[Inventory], value: Any) -> Any:
    try:
        return model.model_validate(value)
    except ValidationError:
        return None


@settings(max_examples=1000)
@given(st.one_of(policies(odd=True), policies(odd=False)))
@pytest.mark.slow  # the fast tier leaves it to make test
def test_a_policy_record_only_for_what_the_model_accepts(value: Any) -> None:
    record = shapes.exact_policy(value)
    if record is not None:
        model = _model(PlacementPolicy, value)
        assert model is not None, value
        assert _policy_values(record) == _policy_values(model)


@settings(max_examples=300)
@given(policies(odd=False), st.sampled_from([None, 1, 2, 3, 4]), st.sampled_from([None, (3, 2)]))
def test_a_plain_policy_gets_a_record_and_the_same_findings(
    value: Any, min_isr: int | None, ibp: tuple[int, int] | None
) -> None:
    record = shapes.exact_policy(value)
    model = _model(PlacementPolicy, value)
    assert record is not None and model is not None
    inventory = Inventory.model_validate(json.loads((EXAMPLES / "inventory.json").read_text()))
    for ctx in (CheckContext(None, min_isr, ibp), CheckContext(inventory, min_isr, ibp)):
        for rule in POLICY_RULES:
            assert list(rule.check(record, ctx)) == list(rule.check(model, ctx))


@settings(max_examples=1000)
@given(st.one_of(inventories(odd=True), inventories(odd=False)))
@pytest.mark.slow  # the fast tier leaves it to make test
def test_an_inventory_record_only_for_what_the_model_accepts(value: Any) -> None:
    record = shapes.exact_inventory(value)
    if record is not None:
        model = _model(Inventory, value)
        assert model is not None, value
        assert _inventory_values(record) == _inventory_values(model)
        for rule in INVENTORY_RULES:
            assert list(rule.check(record)) == list(rule.check(model))


@settings(max_examples=300)
@given(inventories(odd=False))
def test_a_plain_inventory_gets_a_record(value: Any) -> None:
    assert shapes.exact_inventory(value) is not None


@pytest.mark.parametrize("path", sorted((EXAMPLES / "placement").glob("*.json")), ids=str)
def test_the_examples_get_records(path: Path) -> None:
    assert shapes.exact_policy(json.loads(path.read_text())) is not None


def test_the_example_inventory_gets_a_record() -> None:
    assert shapes.exact_inventory(json.loads((EXAMPLES / "inventory.json").read_text()))


def test_the_key_lists_are_the_models() -> None:
    assert tuple(PlacementPolicy.model_fields) == shapes.POLICY_KEYS
    assert tuple(ReplicaConstraint.model_fields) == shapes.ENTRY_KEYS
    assert tuple(RackConstraint.model_fields) == shapes.CONSTRAINT_KEYS
    assert shapes.PROMOTION_VALUES == PROMOTION_VALUES
