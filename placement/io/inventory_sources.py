"""Racks from what a cluster prints (docs/formats.md, inventory): the output of
kafka-broker-api-versions, of kafka-configs --entity-type brokers --describe --all, and
ZooKeeper's broker registrations as zookeeper-shell prints them. Each reader gives the
brokers as plain rows; inventory.py makes the model of them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import NamedTuple

from placement.errors import InputError
from placement.io.textfile import int_problem_short
from placement.model.kafka import parse_ascii_int

API_VERSIONS = "kafka-broker-api-versions output"
CONFIGS = "kafka-configs output"
ZOOKEEPER = "ZooKeeper broker registrations"

ZK_LOOP = (
    'for id in 1 2 3; do echo "broker $id"; zookeeper-shell ZK:2181 get /brokers/ids/$id; '
    "done > brokers-zk.txt"
)


class SourceBroker(NamedTuple):
    """One broker read from a source: its id, rack (None: no rack) and where it is said."""

    id: int
    rack: str | None
    line: int
    column: int = 1


# `host:port (id: 1 rack: us-east-1a) -> (` (Node.toString, then " -> "); newer clients
# add " isFenced: false" inside the parentheses; a broker that did not answer: "-> ERROR: ..."
_API_HEAD = re.compile(
    r"(?P<host>\S[^\t]*?) \(id: (?P<id>-?[0-9]+) rack: (?P<rack>.*?)"
    r"(?: isFenced: (?:true|false))?\) -> (?P<rest>\(|ERROR: .*)"
)
# ConfigCommand: "All configs for broker 1 are:", "Dynamic configs for ...",
# "Default configs for brokers in the cluster are:"
_CONFIGS_HEAD = re.compile(r"(?P<source>All|Dynamic|Default) configs for (?P<entity>.+) are:")
_CONFIGS_BROKER = re.compile(r"broker (?P<id>\S+)")
_CONFIGS_RACK = re.compile(r"\s+broker\.rack=(?P<value>.*?) sensitive=(?:true|false) synonyms=\{")
_ZK_MARKER = re.compile(r"broker (?P<id>\S+)")
_ZK_GET = re.compile(r"(?:.*\s)?get\s+(?:-s\s+|-w\s+)*/brokers/ids/(?P<id>\S+)")
_ZK_MISSING = re.compile(
    r"(?:org\.apache\.zookeeper\.KeeperException\$NoNodeException: .*)?"
    r"Node does not exist: /brokers/ids/.*"
)
_ZK_INLINE = re.compile(r"(?P<id>[0-9]+)\s+(?P<json>\{.*)")
_ZK_BANNER = re.compile(
    r"Connecting to .*|WATCHER::|WatchedEvent .*|log4j:.*|SLF4J: .*"
    r"|\[[0-9, ]*\]"  # `ls /brokers/ids`
    r"|[A-Za-z]+ = .*"  # the node's stat (cZxid = 0x1a, ...)
    r"|[0-9]{4}-[0-9]{2}-[0-9]{2}[ T].*"  # a log line
    r"|\[zk: [^\]]*\]\s*(?:ls .*|quit|exit)?"  # the interactive prompt
)
_REGISTRATION_KEYS = ("endpoints", "listener_security_protocol_map")


def _nulls(value: str) -> str | None:
    """A rack as the tools print it: `null` (Java's null) and blank are no rack."""
    value = value.strip()
    return None if value in ("", "null") else value


def _first_line(text: str) -> tuple[int, str]:
    """The first line that is not blank (1-based) and its text; (0, "") when none."""
    for number, line in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        if line.strip():
            return number, line.rstrip()
    return 0, ""


def _is_registration(line: str) -> bool:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: nested too deep
        return False
    return (
        isinstance(value, dict)
        and "brokers" not in value
        and any(k in value for k in _REGISTRATION_KEYS)
    )


def sniff(text: str) -> str | None:
    """Which of the three sources ``text`` is, from its first line that is not blank; None
    when none of them."""
    _, line = _first_line(text)
    stripped = line.strip()
    if _API_HEAD.fullmatch(line):
        return API_VERSIONS
    if _CONFIGS_HEAD.fullmatch(line):
        return CONFIGS
    if _ZK_MARKER.fullmatch(stripped) or _ZK_GET.fullmatch(stripped):
        return ZOOKEEPER
    if stripped.startswith(("Connecting to ", "WATCHER::")) or _ZK_INLINE.fullmatch(stripped):
        return ZOOKEEPER
    if stripped.startswith("{") and len(stripped) < 65536 and _is_registration(stripped):
        return ZOOKEEPER
    return None


def _broker_id(name: str, raw: str, line: int, column: int, what: str) -> int:
    value = parse_ascii_int(raw)
    if value is None:
        raise InputError(
            name,
            int_problem_short(raw, f"the broker id of {what}"),
            "broker ids are ASCII digits from 0 to 2147483647",
            line=line,
            column=column,
        )
    return value


def _foreign_line(name: str, source: str, line: int, expected: str) -> InputError:
    """A line that is not of ``source``: named by its number, never quoted."""
    return InputError(
        name,
        f"this line is not part of {source} (the file started as one)",
        f"expected {expected}; keep only what the command printed",
        line=line,
        column=1,
    )


def read_api_versions(text: str, name: str) -> list[SourceBroker]:
    """`kafka-broker-api-versions --bootstrap-server X`: a line per broker
    `host:port (id: N rack: R) -> (`, its API versions indented, then `)`."""
    brokers: list[SourceBroker] = []
    inside = False  # within a broker's `-> (` ... `)`
    for number, raw in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        head = _API_HEAD.fullmatch(line)
        if head is not None:
            column = head.start("id") + 1
            broker_id = _broker_id(name, head["id"], number, column, "a broker line")
            brokers.append(SourceBroker(broker_id, _nulls(head["rack"]), number, 1))
            inside = head["rest"] == "("
        elif inside:
            inside = line != ")"
        elif not line[0].isspace():
            raise _foreign_line(
                name, API_VERSIONS, number, "`host:port (id: N rack: R) -> (` lines"
            )
    return brokers


def read_configs(text: str, name: str) -> list[SourceBroker]:
    """`kafka-configs --bootstrap-server X --entity-type brokers --describe --all`: blocks
    `All configs for broker N are:`, each config indented as `key=value sensitive=...
    synonyms={...}`; broker.rack is the rack."""
    brokers: list[SourceBroker] = []
    current: SourceBroker | None = None  # the broker whose configs are being read
    in_default = False
    for number, raw in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            continue
        head = _CONFIGS_HEAD.fullmatch(line)
        if head is None:
            if current is None and not in_default:
                raise _foreign_line(name, CONFIGS, number, "`All configs for broker N are:`")
            rack = _CONFIGS_RACK.match(line)
            if current is not None and rack is not None:
                current = current._replace(rack=_nulls(rack["value"]))
                brokers[-1] = current
            continue
        source, entity = head["source"], head["entity"]
        if source == "Default":  # the cluster-wide dynamic defaults: no broker's rack
            current, in_default = None, True
            continue
        broker = _CONFIGS_BROKER.fullmatch(entity)
        if broker is None:
            raise InputError(
                name,
                "these configs are not a broker's (kafka-configs was run for another entity type)",
                "run kafka-configs --bootstrap-server HOST:9092 --entity-type brokers "
                "--describe --all",
                line=number,
                column=1,
            )
        if source == "Dynamic":
            raise InputError(
                name,
                "this is kafka-configs --describe without --all: it lists only the dynamic "
                "configs, never the static broker.rack",
                "run it again with --all: kafka-configs --bootstrap-server HOST:9092 "
                "--entity-type brokers --describe --all",
                line=number,
                column=1,
            )
        column = head.start("entity") + len("broker ") + 1
        broker_id = _broker_id(name, broker["id"], number, column, "a configs block")
        current, in_default = SourceBroker(broker_id, None, number, 1), False
        brokers.append(current)
    return brokers


class _ZkState:
    """The broker id a zookeeper-shell transcript has named and not yet registered."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.pending: SourceBroker | None = None

    def unregistered(self) -> InputError:
        assert self.pending is not None
        return InputError(
            self.name,
            f"broker {self.pending.id} has no registration after this line (ZooKeeper "
            "registers running brokers only)",
            "start the broker, or remove its lines and list its rack another way",
            line=self.pending.line,
            column=1,
        )

    def name_id(self, raw: str, line: int, column: int) -> None:
        if self.pending is not None:
            raise self.unregistered()
        broker_id = _broker_id(self.name, raw, line, column, "the registration")
        self.pending = SourceBroker(broker_id, None, line, 1)


def _registration_rack(name: str, text: str, line: int, column: int) -> str | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested too deep
        value = None
    if not isinstance(value, dict) or not any(k in value for k in _REGISTRATION_KEYS):
        raise InputError(
            name,
            "not a ZooKeeper broker registration (a JSON object with endpoints)",
            "keep the lines zookeeper-shell printed for get /brokers/ids/N",
            line=line,
            column=column,
        )
    rack = value.get("rack")
    if rack is not None and not isinstance(rack, str):
        raise InputError(name, "the registration's rack is not a string", line=line, column=column)
    return _nulls(rack) if rack is not None else None


def read_zookeeper(text: str, name: str) -> list[SourceBroker]:
    """zookeeper-shell transcripts of `get /brokers/ids/N`: each registration (a JSON
    object on one line) after a line naming its id (`broker N`, or the `get` command
    itself), or on one line as `N {...}`; the shell's banner lines are skipped."""
    brokers: list[SourceBroker] = []
    state = _ZkState(name)
    for number, raw in enumerate(text.lstrip("\ufeff").splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        indent = len(raw) - len(raw.lstrip())
        marker = _ZK_MARKER.fullmatch(line) or _ZK_GET.fullmatch(line)
        inline = _ZK_INLINE.fullmatch(line)
        if marker is not None:
            state.name_id(marker["id"], number, indent + marker.start("id") + 1)
        elif inline is not None:
            state.name_id(inline["id"], number, indent + 1)
            column = indent + inline.start("json") + 1
            rack = _registration_rack(name, inline["json"], number, column)
            brokers.append(state.pending._replace(rack=rack))  # type: ignore[union-attr]
            state.pending = None
        elif line.startswith("{"):
            if state.pending is None:
                raise InputError(
                    name,
                    "a broker registration without its broker id (a registration does not hold it)",
                    f"put `broker N` on the line before each one, as this loop does: {ZK_LOOP}",
                    line=number,
                    column=indent + 1,
                )
            rack = _registration_rack(name, line, number, indent + 1)
            brokers.append(state.pending._replace(rack=rack))
            state.pending = None
        elif _ZK_MISSING.fullmatch(line):
            if state.pending is not None:
                raise state.unregistered()
        elif not _ZK_BANNER.fullmatch(line):
            raise _foreign_line(
                name, ZOOKEEPER, number, "`broker N` lines each followed by a registration"
            )
    if state.pending is not None:
        raise state.unregistered()
    return brokers


READERS: dict[str, Callable[[str, str], list[SourceBroker]]] = {
    API_VERSIONS: read_api_versions,
    CONFIGS: read_configs,
    ZOOKEEPER: read_zookeeper,
}
