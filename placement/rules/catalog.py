"""The rule registry as data: what `mrc-plan rules --format json` prints (schema:
schemas/rules.schema.json), for tools that map codes to documentation or filter by family."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from placement.model.diagnostic import Severity
from placement.rules.base import Rule
from placement.rules.registry import ALL_RULES


class RuleEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    code: str = Field(description="MRCnnn; never reused for another check")
    name: str = Field(description="the rule's short name, accepted wherever a code is")
    severity: Severity
    family: str = Field(description="the group its hundreds digit names (syntax, schema, …)")
    summary: str = Field(description="the first line of its documentation")
    doc: str = Field(description="what it does, why, an example and the fix")


class RuleCatalog(BaseModel):
    """Every rule mrc-plan applies, in code order (or the one asked for)."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        title="Rule catalogue",
        json_schema_extra={"$id": "https://mrc-plan.dev/schemas/rules.schema.json"},
    )

    rules: list[RuleEntry]


def catalog(rules: Iterable[type[Rule]] = ALL_RULES) -> RuleCatalog:
    return RuleCatalog(
        rules=[
            RuleEntry(
                code=r.code,
                name=r.name,
                severity=r.severity,
                family=r.family(),
                summary=r.summary(),
                doc=r.doc(),
            )
            for r in rules
        ]
    )
