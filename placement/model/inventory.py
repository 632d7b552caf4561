"""The broker inventory (docs/formats.md, inventory): which broker sits in which rack."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from functools import cached_property
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

# the plain record validate reads instead, and what both forms compute: shapes (its
# docstring says why there are two forms)
from placement.model.shapes import blank_is_none, brokers_per_rack_of, rack_members_of

NodeId = Annotated[int, Field(ge=0, le=2**31 - 1)]

Rack = Annotated[
    str | None,
    BeforeValidator(blank_is_none),
    Field(description="broker.rack; a missing or blank rack is reported (MRC403)"),
]


class Broker(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    id: NodeId
    rack: Rack = None
    capacity_bytes: Annotated[int | None, Field(ge=0, le=2**63 - 1)] = None


class Controller(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    id: NodeId
    rack: Rack = None


class Inventory(BaseModel):
    """Brokers (and optionally KRaft controllers) with their racks."""

    model_config = ConfigDict(
        strict=True,
        extra="forbid",
        frozen=True,
        title="Broker inventory",
        json_schema_extra={"$id": "https://mrc-plan.dev/schemas/inventory.schema.json"},
    )

    brokers: list[Broker]
    controllers: list[Controller] = Field(default_factory=list)

    @cached_property
    def rack_of(self) -> Mapping[int, str | None]:
        """broker id -> its rack (None: the broker has no broker.rack)."""
        return {b.id: b.rack for b in self.brokers}

    def rack_members(self) -> dict[str, list[int]]:
        """rack -> the ids of its brokers, in inventory order (brokers without a rack are in
        no rack); a new dict each call, the caller's to change."""
        return rack_members_of(self.brokers)

    def brokers_per_rack(self) -> Counter[str]:
        return brokers_per_rack_of(self.brokers)

    def racks(self) -> list[str]:
        return sorted(self.brokers_per_rack())
