"""JSON Schemas generated from the pydantic models (checked into schemas/).

`SCHEMAS` is the registry: a schema's name to its model. A model is imported when it is
looked up, not when the registry is: the CLI lists the names on every start (`schema NAME`),
and the score and simulate reports pull in half the library.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import BaseModel

DRAFT = "https://json-schema.org/draft/2020-12/schema"


class _Models(Mapping[str, "type[BaseModel]"]):
    """name -> model, each imported from its "module:Class" on first use."""

    def __init__(self, where: dict[str, str]) -> None:
        self._where = where

    def __getitem__(self, name: str) -> type[BaseModel]:
        module, _, attr = self._where[name].partition(":")
        model: type[BaseModel] = getattr(importlib.import_module(module), attr)
        return model

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


SCHEMAS: Mapping[str, type[BaseModel]] = _Models(
    {
        "placement": "placement.model.policy:PlacementPolicy",
        "inventory": "placement.model.inventory:Inventory",
        "topics": "placement.model.topics:TopicsFile",
        "diagnostics": "placement.model.diagnostic_schema:ValidationReport",
        "score-report": "placement.score.report:ScoreReport",
        "simulate-report": "placement.simulate.failure:SimulateReport",
        "rules": "placement.rules.catalog:RuleCatalog",
        "plan-view": "placement.model.planview:PlanView",
        "assign-summary": "placement.plan.summary:AssignSummary",
        "snapshot-summary": "placement.snapshot.facts:SnapshotReport",
    }
)


def render_schema(name: str) -> str:
    """The schema for ``name`` as deterministic, indented JSON."""
    import json

    schema = {"$schema": DRAFT, **SCHEMAS[name].model_json_schema(mode="validation")}
    for embedded in schema.get("$defs", {}).values():
        # a model published on its own (the policy inside the topics file) keeps its $id
        # there; here it would make "#/$defs/..." inside it resolve against that $id
        embedded.pop("$id", None)
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def schema_filename(name: str) -> str:
    return f"{name}.schema.json"
