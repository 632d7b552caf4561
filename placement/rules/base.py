"""Rule declarations. A rule's docstring is its documentation (`mrc-plan rules CODE`)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal, NamedTuple

from placement.model.diagnostic import Severity

if TYPE_CHECKING:  # the pydantic models or the plain records: rules read either
    from placement.model.shapes import InventoryLike, PolicyLike

FAMILIES = {
    1: "syntax",
    2: "schema",
    3: "semantics",
    4: "inventory",
    5: "resilience",
    6: "properties",
    7: "topology",
    8: "report",
    9: "state",
}


# Finding and NodeFinding are named tuples: cheaper to create than a dataclass, at every start
class Finding(NamedTuple):
    """What a rule found, before it is located in a file."""

    pointer: str
    message: str
    hint: str = ""
    at_key: bool = False  # point at the member's key rather than its value


class NodeFinding(NamedTuple):
    """What an inventory rule found, reported where the node is declared in the inventory."""

    role: Literal["broker", "controller"]
    node: int
    message: str
    hint: str = ""


@dataclass(frozen=True, slots=True)
class CheckContext:
    inventory: InventoryLike | None = None
    min_insync_replicas: int | None = None
    ibp: tuple[int, int] | None = None


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        return cls.doc().splitlines()[0] if cls.__doc__ else ""

    @classmethod
    def family(cls) -> str:
        return FAMILIES[int(cls.code[3])]


class PolicyRule(Rule):
    """A rule that inspects one schema-valid policy."""

    def check(self, policy: PolicyLike, ctx: CheckContext) -> Iterator[Finding]:
        raise NotImplementedError


class InventoryRule(Rule):
    """A rule that inspects the inventory once (`--inventory`), whatever the policies."""

    def check(self, inventory: InventoryLike) -> Iterator[NodeFinding]:
        raise NotImplementedError
