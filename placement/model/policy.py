"""The replica placement policy, `confluent.placement.constraints`
(docs/formats.md, placement policy)."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

# the plain record validate reads instead, and what both forms compute: shapes (its
# docstring says why there are two forms)
from placement.model.shapes import (
    INT32_MAX,
    PolicyFacts,
    PromotionPolicy,
    per_rack_of,
)

__all__ = [
    "INT32_MAX",
    "PROMOTION_VALUES",
    "PlacementPolicy",
    "PromotionPolicy",
    "RackConstraint",
    "ReplicaConstraint",
    "not_null",
]


def _exact_int(value: Any) -> Any:
    # Literal[1, 2] alone accepts true and 2.0 (they compare equal); Confluent does not
    if isinstance(value, bool) or not isinstance(value, int):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


def not_null(value: Any) -> Any:
    """A validator for an optional key whose value may not be null: leaving the key out
    means the default, while an explicit null is a mistake (observerPromotionPolicy, the
    topics file's placement)."""
    if value is None:
        raise PydanticCustomError("null_value", "Input should not be null; omit the key instead")
    return value


def _no_default(schema: dict[str, Any]) -> None:
    # absent means under-min-isr in v2 and leader-is-observer in v1; null is not allowed
    schema.pop("default", None)


PromotionValue = Literal["under-min-isr", "under-replicated", "leader-is-observer"]
PROMOTION_VALUES: tuple[str, ...] = get_args(PromotionValue)
_PROMOTION_SCHEMA = {"type": "string", "enum": list(PROMOTION_VALUES)}


class _Strict(BaseModel):
    # strict: 2.0, "2" and true are not integers; forbid: typos are errors, not ignored
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class RackConstraint(_Strict):
    rack: Annotated[str, Field(min_length=1, description="a broker.rack value")]


class ReplicaConstraint(_Strict):
    count: Annotated[int, Field(ge=1, le=INT32_MAX, description="replicas in this rack")]
    constraints: RackConstraint


class PlacementPolicy(_Strict, PolicyFacts):
    """How many sync replicas and observers each rack gets."""

    model_config = ConfigDict(
        title="Replica placement policy",
        json_schema_extra={"$id": "https://mrc-plan.dev/schemas/placement.schema.json"},
    )

    version: Annotated[Literal[1, 2], BeforeValidator(_exact_int)]
    replicas: Annotated[list[ReplicaConstraint], Field(min_length=1)]
    observers: list[ReplicaConstraint] = Field(default_factory=list)
    observerPromotionPolicy: Annotated[  # noqa: N815 - Confluent spells it so
        PromotionValue | None,
        BeforeValidator(not_null),
        WithJsonSchema(_PROMOTION_SCHEMA),
        Field(json_schema_extra=_no_default),
    ] = None

    def per_rack(self) -> dict[str, tuple[int, int]]:
        """rack -> (sync replicas, observers), in the order racks first appear (a copy)."""
        return dict(self._per_rack)

    @cached_property
    def _per_rack(self) -> dict[str, tuple[int, int]]:
        # planners ask once per partition: a million times on a large cluster
        return per_rack_of(self.replicas, self.observers)
