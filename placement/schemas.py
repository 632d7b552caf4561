"""JSON Schemas generated from the pydantic models (checked into schemas/)."""

from __future__ import annotations

import json

from pydantic import BaseModel

from placement.model.diagnostic import ValidationReport
from placement.model.inventory import Inventory
from placement.model.policy import PlacementPolicy
from placement.model.topics import TopicsFile
from placement.score.report import ScoreReport
from placement.simulate.failure import SimulateReport

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMAS: dict[str, type[BaseModel]] = {
    "placement": PlacementPolicy,
    "inventory": Inventory,
    "topics": TopicsFile,
    "diagnostics": ValidationReport,
    "score-report": ScoreReport,
    "simulate-report": SimulateReport,
}


def render_schema(name: str) -> str:
    """The schema for ``name`` as deterministic, indented JSON."""
    schema = {"$schema": DRAFT, **SCHEMAS[name].model_json_schema(mode="validation")}
    for embedded in schema.get("$defs", {}).values():
        # a model published on its own (the policy inside the topics file) keeps its $id
        # there; here it would make "#/$defs/..." inside it resolve against that $id
        embedded.pop("$id", None)
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def schema_filename(name: str) -> str:
    return f"{name}.schema.json"
