"""The placement policy and the broker inventory as the rules read them, without pydantic.

The pydantic models (`policy.PlacementPolicy`, `inventory.Inventory`) define both formats and
word every error. Building them costs pydantic's import and model construction, about half of
a `validate` of one file, which hooks and editors run once per file. So `validate` first
asks `exact_policy` and `exact_inventory`: each returns a plain record when the model
certainly accepts the document as it is (nothing to coerce, nothing to report), and None when
in doubt, where the model decides. The rules read either form through the protocols below;
what the two forms compute (promotion, racks, per-rack counts) is written once, here.

The records are plain classes with ``__slots__``, not dataclasses: creating a dataclass costs
about a millisecond here, and `validate` would pay it for each on every start. They are
equal and shown by value, and not to be changed once made.

tests/model/test_shapes.py holds the exact checks to the models.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Protocol

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


class PromotionPolicy(StrEnum):
    UNDER_MIN_ISR = "under-min-isr"
    UNDER_REPLICATED = "under-replicated"
    LEADER_IS_OBSERVER = "leader-is-observer"


# the members of each object of a policy, in the model's order
POLICY_KEYS = ("version", "replicas", "observers", "observerPromotionPolicy")
ENTRY_KEYS = ("count", "constraints")
CONSTRAINT_KEYS = ("rack",)
PROMOTION_VALUES = ("under-min-isr", "under-replicated", "leader-is-observer")


# -- the policy --------------------------------------------------------------------------


class RackLike(Protocol):
    @property
    def rack(self) -> str: ...


class EntryLike(Protocol):
    @property
    def count(self) -> int: ...

    @property
    def constraints(self) -> RackLike: ...


class PolicyLike(Protocol):
    """A schema-valid placement policy: the pydantic model, or a `Policy` record."""

    @property
    def version(self) -> int: ...

    @property
    def replicas(self) -> Sequence[EntryLike]: ...

    @property
    def observers(self) -> Sequence[EntryLike]: ...

    @property
    def observerPromotionPolicy(self) -> str | None: ...  # noqa: N802 - Confluent's name

    @property
    def promotion(self) -> PromotionPolicy: ...

    @property
    def promotes_observers(self) -> bool: ...

    @property
    def lead_rack(self) -> str: ...

    @property
    def sync_count(self) -> int: ...

    @property
    def observer_count(self) -> int: ...

    def per_rack(self) -> dict[str, tuple[int, int]]: ...


def promotion_of(version: int, value: str | None) -> PromotionPolicy:
    """The behaviour in force: v1 never promotes; v2 defaults to under-min-isr."""
    if version == 1:
        return PromotionPolicy.LEADER_IS_OBSERVER
    return PromotionPolicy(value or PromotionPolicy.UNDER_MIN_ISR)


def per_rack_of(
    replicas: Iterable[EntryLike], observers: Iterable[EntryLike]
) -> dict[str, tuple[int, int]]:
    """rack -> (sync replicas, observers), in the order racks first appear."""
    out: dict[str, tuple[int, int]] = {}
    for c in replicas:
        s, o = out.get(c.constraints.rack, (0, 0))
        out[c.constraints.rack] = (s + c.count, o)
    for c in observers:
        s, o = out.get(c.constraints.rack, (0, 0))
        out[c.constraints.rack] = (s, o + c.count)
    return out


class PolicyFacts:
    """What a policy implies, read from its four members: one definition for the pydantic
    model and the `Policy` record, which both derive from it."""

    __slots__ = ()

    @property
    def promotion(self: PolicyLike) -> PromotionPolicy:
        """The behaviour in force: v1 never promotes; v2 defaults to under-min-isr."""
        return promotion_of(self.version, self.observerPromotionPolicy)

    @property
    def promotes_observers(self: PolicyLike) -> bool:
        """Whether observers join the ISR by themselves (v2 under-min-isr or
        under-replicated); v1 and leader-is-observer wait for an operator."""
        return self.promotion is not PromotionPolicy.LEADER_IS_OBSERVER

    @property
    def lead_rack(self: PolicyLike) -> str:
        """The rack of the first replica constraint: where the preferred leader sits."""
        return self.replicas[0].constraints.rack

    @property
    def sync_count(self: PolicyLike) -> int:
        return sum(c.count for c in self.replicas)

    @property
    def observer_count(self: PolicyLike) -> int:
        return sum(c.count for c in self.observers)

    def per_rack(self: PolicyLike) -> dict[str, tuple[int, int]]:
        """rack -> (sync replicas, observers), in the order racks first appear."""
        return per_rack_of(self.replicas, self.observers)


class _Record:
    """Equal, hashed and shown by the values of its slots."""

    __slots__: tuple[str, ...] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _Record)
            and type(other) is type(self)
            and (self._values() == other._values())
        )

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__name__}({shown})"


class Rack(_Record):
    __slots__ = ("rack",)

    def __init__(self, rack: str) -> None:
        self.rack = rack


class Entry(_Record):
    __slots__ = ("count", "constraints")  # noqa: RUF023 - in order: repr shows them so

    def __init__(self, count: int, constraints: Rack) -> None:
        self.count = count
        self.constraints = constraints


class Policy(_Record, PolicyFacts):
    """A schema-valid policy as plain data (what `exact_policy` makes)."""

    __slots__ = ("version", "replicas", "observers", "observerPromotionPolicy")  # noqa: RUF023

    def __init__(
        self,
        version: int,
        replicas: tuple[Entry, ...],
        observers: tuple[Entry, ...] = (),
        observerPromotionPolicy: str | None = None,  # noqa: N803 - Confluent's name
    ) -> None:
        self.version = version
        self.replicas = replicas
        self.observers = observers
        self.observerPromotionPolicy = observerPromotionPolicy


def _text(value: Any) -> bool:
    """A str the model takes as it is: Python's own type, and encodable (a lone surrogate
    is left to the model)."""
    if type(value) is not str:
        return False
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _entries(value: Any) -> tuple[Entry, ...] | None:
    if type(value) is not list:
        return None
    out = []
    for entry in value:
        if type(entry) is not dict or entry.keys() != {"count", "constraints"}:
            return None
        count, constraints = entry["count"], entry["constraints"]
        if type(count) is not int or not 1 <= count <= INT32_MAX:
            return None
        if type(constraints) is not dict or constraints.keys() != {"rack"}:
            return None
        rack = constraints["rack"]
        if not _text(rack) or not rack:
            return None
        out.append(Entry(count, Rack(rack)))
    return tuple(out)


def exact_policy(value: Any) -> Policy | None:
    """``value`` (parsed JSON) as a `Policy` when `PlacementPolicy` accepts it with no error
    and nothing coerced; None otherwise, or in doubt (then ask the model)."""
    if type(value) is not dict or not value.keys() <= set(POLICY_KEYS):
        return None
    if "version" not in value or "replicas" not in value:
        return None
    version = value["version"]
    if type(version) is not int or version not in (1, 2):
        return None
    replicas = _entries(value["replicas"])
    if not replicas:  # not a list of valid entries, or empty
        return None
    observers = _entries(value["observers"]) if "observers" in value else ()
    if observers is None:
        return None
    promotion = value.get("observerPromotionPolicy")
    if "observerPromotionPolicy" in value and (
        type(promotion) is not str or promotion not in PROMOTION_VALUES
    ):
        return None
    return Policy(version, replicas, observers, promotion)


# -- the inventory -----------------------------------------------------------------------


class NodeLike(Protocol):
    @property
    def id(self) -> int: ...

    @property
    def rack(self) -> str | None: ...


class BrokerLike(NodeLike, Protocol):
    @property
    def capacity_bytes(self) -> int | None: ...


class InventoryLike(Protocol):
    """The brokers and controllers: the pydantic model, or an `InventoryRecord`."""

    @property
    def brokers(self) -> Sequence[BrokerLike]: ...

    @property
    def controllers(self) -> Sequence[NodeLike]: ...

    @property
    def rack_of(self) -> Mapping[int, str | None]: ...

    def rack_members(self) -> dict[str, list[int]]: ...

    def brokers_per_rack(self) -> Counter[str]: ...

    def racks(self) -> list[str]: ...


def blank_is_none(value: object) -> object:
    """A blank rack is no rack: CSV and server.properties give "" for a missing broker.rack,
    and JSON must mean the same."""
    return None if isinstance(value, str) and not value.strip() else value


def rack_members_of(brokers: Iterable[NodeLike]) -> dict[str, list[int]]:
    """rack -> the ids of its brokers, in inventory order (brokers without a rack are in
    no rack); a new dict each call, the caller's to change."""
    out: dict[str, list[int]] = {}
    for b in brokers:
        if b.rack is not None:
            out.setdefault(b.rack, []).append(b.id)
    return out


def brokers_per_rack_of(brokers: Iterable[NodeLike]) -> Counter[str]:
    return Counter(b.rack for b in brokers if b.rack is not None)


class Node(_Record):
    """A broker or a controller as plain data."""

    __slots__ = ("id", "rack", "capacity_bytes")  # noqa: RUF023

    def __init__(self, id: int, rack: str | None = None, capacity_bytes: int | None = None) -> None:
        self.id = id
        self.rack = rack
        self.capacity_bytes = capacity_bytes


class InventoryRecord(_Record):
    """A schema-valid inventory as plain data (what `exact_inventory` makes)."""

    __slots__ = ("brokers", "controllers")

    def __init__(self, brokers: tuple[Node, ...], controllers: tuple[Node, ...] = ()) -> None:
        self.brokers = brokers
        self.controllers = controllers

    @property
    def rack_of(self) -> Mapping[int, str | None]:
        """broker id -> its rack (None: the broker has no broker.rack); made on each call."""
        return {b.id: b.rack for b in self.brokers}

    def rack_members(self) -> dict[str, list[int]]:
        return rack_members_of(self.brokers)

    def brokers_per_rack(self) -> Counter[str]:
        return brokers_per_rack_of(self.brokers)

    def racks(self) -> list[str]:
        return sorted(self.brokers_per_rack())


def _node(value: Any, keys: frozenset[str]) -> Node | None:
    if type(value) is not dict or "id" not in value or not value.keys() <= keys:
        return None
    node_id = value["id"]
    if type(node_id) is not int or not 0 <= node_id <= INT32_MAX:
        return None
    rack = value.get("rack")
    if type(rack) is str and not rack.strip():  # blank_is_none
        rack = None
    if rack is not None and not _text(rack):
        return None
    capacity = value.get("capacity_bytes")
    if capacity is not None and (type(capacity) is not int or not 0 <= capacity <= INT64_MAX):
        return None
    return Node(node_id, rack, capacity)


_BROKER_KEYS = frozenset({"id", "rack", "capacity_bytes"})
_CONTROLLER_KEYS = frozenset({"id", "rack"})


def _nodes(value: Any, keys: frozenset[str]) -> tuple[Node, ...] | None:
    if type(value) is not list:
        return None
    out = []
    for item in value:
        node = _node(item, keys)
        if node is None:
            return None
        out.append(node)
    return tuple(out)


def exact_inventory(value: Any) -> InventoryRecord | None:
    """``value`` (parsed JSON) as an `InventoryRecord` when `Inventory` accepts it with no
    error and nothing coerced but blank racks; None otherwise, or in doubt."""
    if type(value) is not dict or "brokers" not in value:
        return None
    if not value.keys() <= {"brokers", "controllers"}:
        return None
    brokers = _nodes(value["brokers"], _BROKER_KEYS)
    controllers = _nodes(value["controllers"], _CONTROLLER_KEYS) if "controllers" in value else ()
    if brokers is None or controllers is None:
        return None
    return InventoryRecord(brokers, controllers)
