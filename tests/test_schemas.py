"""The checked-in JSON Schemas (schemas/) match the models, and the examples match them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from placement.rules.base import CheckContext
from placement.rules.validate import validate_json_bytes
from placement.schemas import SCHEMAS, render_schema, schema_filename

REPO = Path(__file__).resolve().parent.parent
SCHEMAS_DIR = REPO / "schemas"
EXAMPLES = REPO / "examples"
VALID_POLICIES = sorted((EXAMPLES / "placement").glob("*.json"))


def load_schema(name: str) -> dict[str, Any]:
    return json.loads((SCHEMAS_DIR / schema_filename(name)).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_checked_in_schema_is_up_to_date(name: str) -> None:
    path = SCHEMAS_DIR / schema_filename(name)
    assert path.is_file(), f"{path} is missing: run `make schemas` and commit the result"
    assert path.read_bytes() == render_schema(name).encode("utf-8"), (
        f"{path.relative_to(REPO)} differs from the {SCHEMAS[name].__name__} model: "
        "run `make schemas` and commit the result"
    )


def test_no_stale_schema_files() -> None:
    expected = {schema_filename(n) for n in SCHEMAS}
    stale = {p.name for p in SCHEMAS_DIR.glob("*.json")} - expected
    assert not stale, f"schemas/ holds {sorted(stale)} that no model produces: delete them"


@pytest.fixture(scope="module")
def jsonschema() -> Any:
    return pytest.importorskip("jsonschema")


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_is_a_valid_draft_2020_12_schema(jsonschema: Any, name: str) -> None:
    schema = load_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("path", VALID_POLICIES, ids=lambda p: p.name)
def test_example_policies_match_the_schema(jsonschema: Any, path: Path) -> None:
    jsonschema.validate(json.loads(path.read_text()), load_schema("placement"))


def test_example_inventory_matches_the_schema(jsonschema: Any) -> None:
    jsonschema.validate(
        json.loads((EXAMPLES / "inventory.json").read_text()), load_schema("inventory")
    )


def test_broken_example_fails_the_schema(jsonschema: Any) -> None:
    doc = json.loads((EXAMPLES / "broken" / "inventory-typos.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, load_schema("placement"))


def _entry(count: Any = 1, rack: Any = "us-west") -> dict[str, Any]:
    return {"count": count, "constraints": {"rack": rack}}


# Documents on which the published schema and `mrc-plan validate` (schema rules, MRC2xx)
# must agree. Not included: 2.0 for an integer, which JSON Schema calls an integer and
# Confluent does not; the schema cannot tell them apart.
AGREEMENT = [
    ({"version": 2, "replicas": [_entry()]}, True),
    ({"version": 1, "replicas": [_entry()], "observers": []}, True),
    (
        {
            "version": 2,
            "replicas": [_entry(2**31 - 1)],
            "observerPromotionPolicy": "under-replicated",
        },
        True,
    ),
    ({"version": 2, "replicas": []}, False),
    ({"version": 3, "replicas": [_entry()]}, False),
    ({"version": "2", "replicas": [_entry()]}, False),
    ({"version": True, "replicas": [_entry()]}, False),
    ({"replicas": [_entry()]}, False),
    ({"version": 2}, False),
    ({"version": 2, "replicas": [_entry()], "observers": None}, False),
    ({"version": 2, "replicas": [_entry()], "observerPromotionPolicy": None}, False),
    ({"version": 2, "replicas": [_entry()], "observerPromotionPolicy": "always"}, False),
    ({"version": 2, "replicas": [_entry()], "observer": []}, False),
    ({"version": 2, "replicas": [_entry(0)]}, False),
    ({"version": 2, "replicas": [_entry(2**31)]}, False),
    ({"version": 2, "replicas": [_entry("1")]}, False),
    ({"version": 2, "replicas": [_entry(True)]}, False),
    ({"version": 2, "replicas": [_entry(rack="")]}, False),
    ({"version": 2, "replicas": [_entry(rack=1)]}, False),
    ({"version": 2, "replicas": [{"count": 1, "constraints": {"rack": "a", "zone": "b"}}]}, False),
    ({"version": 2, "replicas": [{"count": 1}]}, False),
    ([{"version": 2}], False),
]


@pytest.mark.parametrize(("doc", "valid"), AGREEMENT, ids=[json.dumps(d) for d, _ in AGREEMENT])
def test_schema_agrees_with_the_validator(jsonschema: Any, doc: Any, valid: bool) -> None:
    diags = validate_json_bytes(json.dumps(doc).encode(), "doc.json", CheckContext())
    shape_errors = [d.code for d in diags if d.code[:4] in ("MRC1", "MRC2")]
    assert (not shape_errors) is valid, shape_errors
    errors = list(jsonschema.Draft202012Validator(load_schema("placement")).iter_errors(doc))
    assert (not errors) is valid, [e.message for e in errors]
