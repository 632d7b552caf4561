"""Follower fetching (MRC602): brokers whose placement puts replicas or observers near
consumers, but which never send those consumers to them.

`validate` feeds every `.properties` and `.json` file it reads to one `FollowerFetching`
(``add``), and the broker files of a `--inventory` directory (``add_inventory``); the
findings come out once every file is in (``diagnostics``), each at the broker file that
lacks the selector. Only what the check needs is kept of each file, not its text.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from placement.io.jsonsrc import EncodingError, decode_utf8
from placement.io.limits import PROPERTIES_BYTES
from placement.io.textfile import read_text, shown
from placement.model.diagnostic import Diagnostic
from placement.rules.properties import BROKER_PLACEMENT_KEYS, FollowerFetchingDisabled

if TYPE_CHECKING:
    from placement.io.inventory import CheckedInventory
    from placement.io.properties import Property

SELECTOR_KEY = "replica.selector.class"
RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
# Kafka's default (an unset key means it): every consumer reads from the leader
LEADER_SELECTOR = "org.apache.kafka.common.replica.LeaderSelector"
_SET_IT = (
    f"set {SELECTOR_KEY}={RACK_AWARE} in the server.properties of every broker, and "
    "client.rack on the consumers"
)


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    """What the check needs of one broker's server.properties."""

    file: str
    node: int | None  # node.id or broker.id, when it is an integer
    rack: str | None  # broker.rack, trimmed as Kafka trims it
    selector: str | None  # replica.selector.class, trimmed; None when unset or empty
    line: int  # where a finding points: the selector key, else broker.rack, else the id
    column: int
    has_observers: bool  # one of its own placement properties places observers

    @property
    def rack_aware(self) -> bool:
        """Whether consumers may be sent to a follower or observer when this broker leads.
        A selector class of the operator's own is taken as meant for that."""
        return self.selector is not None and self.selector != LEADER_SELECTOR

    @property
    def who(self) -> str:
        node = f"broker {self.node}" if self.node is not None else "the broker"
        return f"{node} (rack {shown(self.rack)})" if self.rack else node


@dataclass(frozen=True, slots=True)
class PolicyRacks:
    """The racks one placement policy names, and where it was found."""

    file: str
    replicas: frozenset[str]
    observers: frozenset[str]


def _text(data: bytes) -> str | None:
    try:
        return decode_utf8(data)[0]
    except EncodingError:
        return None  # MRC106 is reported by validate


def policy_racks(text: str, file: str) -> PolicyRacks | None:
    """The racks of the policy in ``text``; None when it is no readable policy (the policy
    rules report why) or names no rack."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None

    def racks(key: str) -> frozenset[str]:
        entries = value.get(key)
        if not isinstance(entries, list):
            return frozenset()
        out = set()
        for entry in entries:
            constraints = entry.get("constraints") if isinstance(entry, dict) else None
            rack = constraints.get("rack") if isinstance(constraints, dict) else None
            if isinstance(rack, str) and rack:
                out.add(rack)
        return frozenset(out)

    replicas, observers = racks("replicas"), racks("observers")
    if not replicas and not observers:
        return None
    return PolicyRacks(file, replicas, observers)


def _last(props: Iterable[Property]) -> dict[str, Property]:
    """The properties by key; a later duplicate wins, as `java.util.Properties` loads."""
    return {p.key: p for p in props}


def _node(prop: Property | None) -> int | None:
    raw = prop.value.strip() if prop else ""
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 10 else None


def broker_config(
    props: list[Property], file: str, policies: list[PolicyRacks]
) -> BrokerConfig | None:
    """The broker a server.properties configures; None for a file that configures none
    (a client config, a controller-only node, log4j.properties)."""
    by_key = _last(props)
    id_prop = by_key.get("node.id") or by_key.get("broker.id")
    rack_prop = by_key.get("broker.rack")
    roles_prop = by_key.get("process.roles")
    if id_prop is None and rack_prop is None:
        return None
    if roles_prop is not None and "broker" not in {r.strip() for r in roles_prop.value.split(",")}:
        return None
    selector_prop = by_key.get(SELECTOR_KEY)
    at = selector_prop or rack_prop or id_prop
    assert at is not None
    return BrokerConfig(
        file=file,
        node=_node(id_prop),
        rack=(rack_prop.value.strip() or None) if rack_prop else None,
        selector=(selector_prop.value.strip() or None) if selector_prop else None,
        line=at.line,
        column=at.column,
        has_observers=any(p.observers for p in policies),
    )


@dataclass
class FollowerFetching:
    """The files `validate` reads together, reduced to their brokers and policies."""

    brokers: dict[str, BrokerConfig] = field(default_factory=dict)  # by real path
    replica_racks: set[str] = field(default_factory=set)  # named by any policy
    observer_racks: set[str] = field(default_factory=set)

    def _policy(self, found: PolicyRacks) -> None:
        self.replica_racks |= found.replicas
        self.observer_racks |= found.observers

    def add(self, file: str, data: bytes) -> None:
        """A file `validate` read: `.properties` (a broker, its placement properties) or
        `.json` (a policy); anything else is passed over."""
        suffix = Path(file).suffix.lower()
        if suffix not in (".properties", ".json"):
            return
        text = _text(data)
        if text is None:
            return
        if suffix == ".json":
            found = policy_racks(text, file)
            if found is not None:
                self._policy(found)
            return
        self._properties(file, text)

    def _properties(self, file: str, text: str) -> None:
        from placement.io.properties import PropertiesSyntaxError, parse_properties

        try:
            props = parse_properties(text)
        except PropertiesSyntaxError:
            return  # validate reports it
        own = [
            found
            for p in _last(props).values()
            if p.key in BROKER_PLACEMENT_KEYS and (found := policy_racks(p.value, file)) is not None
        ]
        for found in own:
            self._policy(found)
        broker = broker_config(props, file, own)
        if broker is not None:
            self.brokers.setdefault(os.path.realpath(file), broker)

    def add_inventory(self, inventory: CheckedInventory) -> None:
        """The broker files of a `--inventory` directory of server.properties (they were
        read and checked when the inventory was loaded)."""
        if not Path(inventory.path).is_dir():
            return
        for origin in sorted({o.file for o in inventory.origins.values()}):
            if origin.lower().endswith(".properties") and (
                os.path.realpath(origin) not in self.brokers
            ):
                self._properties(origin, read_text(origin, "the properties file", PROPERTIES_BYTES))

    def diagnostics(self) -> list[Diagnostic]:
        return [
            Diagnostic(
                code=FollowerFetchingDisabled.code,
                name=FollowerFetchingDisabled.name,
                severity=FollowerFetchingDisabled.severity,
                message=message,
                file=broker.file,
                pointer="",
                line=broker.line,
                column=broker.column,
                hint=_SET_IT,
            )
            for broker, message in self._findings()
        ]

    def _findings(self) -> Iterator[tuple[BrokerConfig, str]]:
        brokers = list(self.brokers.values())
        ids = [b.node for b in brokers if b.node is not None]
        # a node id twice: the files come from more than one cluster, which may differ
        aware = [b for b in brokers if b.rack_aware] if len(ids) == len(set(ids)) else []
        named = self.replica_racks | self.observer_racks
        for broker in brokers:
            if broker.rack_aware:
                continue
            unset = (
                f"{broker.who} leaves {SELECTOR_KEY} unset"
                if broker.selector is None
                else f"{broker.who} sets {SELECTOR_KEY} to LeaderSelector, Kafka's default"
            )
            if broker.rack is not None and broker.rack in named:
                kind = "replicas" if broker.rack in self.replica_racks else "observers"
                yield (
                    broker,
                    f"{unset}, but a placement policy puts {kind} in its rack: "
                    "partitions it leads are read from it alone, even by consumers whose "
                    "client.rack names another rack",
                )
            elif aware:
                yield (
                    broker,
                    f"{unset}, but {len(aware)} of the {len(brokers)} brokers validated with "
                    f"it set it (first: {aware[0].file}): consumers read from followers "
                    "only when the leader is one of those",
                )
            elif broker.rack is not None and broker.has_observers:
                yield (
                    broker,
                    f"{unset}, but its placement policy places observers: consumers with "
                    "client.rack cannot read from the observers of their rack while this "
                    "broker leads",
                )
