"""The checked-in JSON Schemas (schemas/) match the models, and the examples match them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from placement.errors import InputError
from placement.model.topics import TopicsFile
from placement.plan.topics import read_topics
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


# -- the topics file ----------------------------------------------------------------------

TOPICS_FILES = sorted(
    p for d in (EXAMPLES, REPO / "tests" / "fixtures") for p in d.rglob("*topics*.json")
)
POLICY = {"version": 2, "replicas": [_entry(2)]}


def _topic(**members: Any) -> dict[str, Any]:
    """A topic entry; a member given as ... is left out."""
    entry: dict[str, Any] = {"name": "orders", "partitions": 3, "placement": POLICY}
    entry.update(members)
    return {k: v for k, v in entry.items() if v is not ...}


def test_there_are_topics_files_to_check() -> None:
    assert EXAMPLES / "topics.json" in TOPICS_FILES


@pytest.mark.parametrize("path", TOPICS_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_topics_files_match_the_schema_and_the_model(jsonschema: Any, path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(doc, load_schema("topics"))
    assert [t.name for t in TopicsFile.model_validate(doc).topics] == [
        t["name"] for t in doc["topics"]
    ]


# Topics files on which the schema, the model and read_topics agree. A reference names
# p.json, which holds POLICY, next to the topics file. Not included: a name ending in a
# newline, which the jsonschema package lets through (it matches "pattern" with Python's
# re, where $ also matches before a final newline; ECMA-262, as the draft asks, does not).
TOPICS_AGREEMENT = [
    ({"topics": [_topic()]}, True),
    ({"topics": [_topic(placement="p.json", min_isr=1)]}, True),
    ({"topics": [_topic(min_isr=None)]}, True),
    ({"topics": [_topic(partitions=...)]}, True),  # a topic the cluster has (plan/honest.py)
    (
        {"default_placement": POLICY, "topics": [_topic(placement=...), _topic(name="a.b_c-1")]},
        True,
    ),
    ({"default_placement": "p.json", "topics": [_topic(placement=..., name="x" * 249)]}, True),
    ([], False),
    ({}, False),
    ({"topics": None}, False),
    ({"topics": []}, False),
    ({"topics": {}}, False),
    ({"topics": [1]}, False),
    ({"topics": [_topic()], "default": POLICY}, False),
    ({"topics": [_topic(partition=3)]}, False),
    ({"topics": [_topic(name=...)]}, False),
    ({"topics": [_topic(name="")]}, False),
    ({"topics": [_topic(name=5)]}, False),
    ({"topics": [_topic(name=".")]}, False),
    ({"topics": [_topic(name="..")]}, False),
    ({"topics": [_topic(name="orders eu")]}, False),
    ({"topics": [_topic(name="zürich")]}, False),
    ({"topics": [_topic(name="x" * 250)]}, False),
    ({"topics": [_topic(partitions=None)]}, False),
    ({"topics": [_topic(partitions=0)]}, False),
    ({"topics": [_topic(partitions=-1)]}, False),
    ({"topics": [_topic(partitions="3")]}, False),
    ({"topics": [_topic(partitions=True)]}, False),
    ({"topics": [_topic(partitions=1.5)]}, False),
    ({"topics": [_topic(min_isr=0)]}, False),
    ({"topics": [_topic(min_isr="2")]}, False),
    ({"topics": [_topic(min_isr=True)]}, False),
    ({"topics": [_topic(placement=...)]}, False),
    ({"topics": [_topic(placement=None)]}, False),
    ({"topics": [_topic(placement="")]}, False),
    ({"topics": [_topic(placement=3)]}, False),
    ({"topics": [_topic(placement={"version": 3, "replicas": [_entry()]})]}, False),
    ({"topics": [_topic(placement={**POLICY, "observer": []})]}, False),
    ({"default_placement": None, "topics": [_topic(placement=...)]}, False),
]


def _write_topics(directory: Path, doc: Any) -> Path:
    (directory / "p.json").write_text(json.dumps(POLICY), encoding="utf-8")
    path = directory / "topics.json"
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return path


def _read_topics_accepts(directory: Path, doc: Any) -> bool:
    try:
        read_topics(_write_topics(directory, doc))
    except InputError:
        return False
    return True


def _model_accepts(doc: Any) -> bool:
    try:
        TopicsFile.model_validate(doc)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize(
    ("doc", "valid"), TOPICS_AGREEMENT, ids=[json.dumps(d)[:80] for d, _ in TOPICS_AGREEMENT]
)
def test_topics_schema_model_and_reader_agree(
    jsonschema: Any, tmp_path: Path, doc: Any, valid: bool
) -> None:
    errors = list(jsonschema.Draft202012Validator(load_schema("topics")).iter_errors(doc))
    assert (not errors) is valid, [e.message for e in errors]
    assert _model_accepts(doc) is valid
    assert _read_topics_accepts(tmp_path, doc) is valid


# What only the reader (or the reader and the model) can tell, as the model's docstring
# lists: (document, the model accepts it, message read_topics gives)
READER_ONLY = [
    ({"topics": [_topic(), _topic()]}, False, "listed twice"),
    ({"topics": [_topic(partitions=2.0)]}, False, "a positive integer"),
    ({"topics": [_topic(placement="/etc/passwd")]}, True, "is absolute"),
    ({"topics": [_topic(placement="../p.json")]}, True, "leads outside"),
    ({"topics": [_topic(placement="missing.json")]}, True, "not found"),
    ({"topics": [_topic(partitions=1_000_001)]}, True, "above the cap"),
    ({"topics": [_topic(min_isr=3)]}, True, "placement error"),  # MRC501: 2 sync replicas
]


@pytest.mark.parametrize(
    ("doc", "model", "message"), READER_ONLY, ids=[m for _, _, m in READER_ONLY]
)
def test_what_only_the_reader_refuses(
    jsonschema: Any, tmp_path: Path, doc: Any, model: bool, message: str
) -> None:
    jsonschema.validate(doc, load_schema("topics"))
    assert _model_accepts(doc) is model
    with pytest.raises(InputError, match=message):
        read_topics(_write_topics(tmp_path, doc))
