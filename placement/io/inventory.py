"""Read a broker inventory from JSON, CSV, a directory of server.properties, or what a
cluster prints (inventory_sources) (docs/formats.md, inventory)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from placement.errors import InputError
from placement.io.jsonsrc import ParsedJson, parse_json_file
from placement.io.limits import BROKERS, INVENTORY_BYTES, PROPERTIES_BYTES, check_count
from placement.io.positions import LineIndex, pointer, position_in
from placement.io.textfile import fits, read_text, short, short_key, shown, starts_with
from placement.model.kafka import INT32_MAX, parse_ascii_int
from placement.model.shapes import InventoryLike, NodeLike, exact_inventory

if TYPE_CHECKING:  # pydantic is loaded when the model is built (see inventory_for_checks)
    from placement.model.inventory import Broker, Controller, Inventory


class Origin(NamedTuple):  # a named tuple: cheaper to create than a dataclass
    """Where a node was declared: file, 1-based line/column, pointer (JSON only)."""

    file: str
    line: int
    column: int
    pointer: str = ""


@dataclass(frozen=True)
class CheckedInventory:
    """An inventory as `validate` reads it: the pydantic model or a plain record of it
    (`inventory_for_checks`), and where each node was declared."""

    inventory: InventoryLike
    path: str
    origins: dict[int, Origin] = field(default_factory=dict)  # broker id -> declaration
    # a combined-mode node is both a broker and a controller: one id, two roles
    controller_origins: dict[int, Origin] = field(default_factory=dict)


@dataclass(frozen=True)
class LoadedInventory(CheckedInventory):
    """An inventory as the model (what planning reads)."""

    inventory: Inventory


def _read_text(path: Path) -> str:
    return read_text(path, "the inventory", INVENTORY_BYTES)


def _require_brokers(path: str, brokers: Sequence[NodeLike]) -> None:
    if not brokers:
        raise InputError(
            path, "the inventory lists no brokers", "list every broker with its id and rack"
        )
    check_count(BROKERS, len(brokers), f"{path}: brokers")


def _rack(rack: str | None) -> str:
    return f"rack {shown(rack)}" if rack else "no rack"


JSON_HINT = 'expected {"brokers": [{"id": 1, "rack": "us-west"}], "controllers": [...]}'


def _where(loc: Sequence[str | int]) -> str:
    """The JSON pointer of a pydantic error's location, a key of the file in it only when
    short (an unknown key may be anything, a secret too)."""
    return pointer(p if isinstance(p, int) or fits(p) else "…" for p in loc)


def _parse_json(path: Path, text: str) -> tuple[ParsedJson, str]:
    name = str(path)
    try:
        doc = parse_json_file(text, name)
    except InputError as exc:
        exc.hint = exc.hint or f"an inventory in JSON is an object: {JSON_HINT}"
        raise
    if doc.duplicates:
        dup = doc.duplicates[0]
        p = doc.position(dup.offset)
        raise InputError(
            name,
            f"duplicate key {short_key(dup.key)}",
            "keep one of them",
            line=p.line,
            column=p.column,
        )
    return doc, name


def _json_model(doc: ParsedJson, name: str) -> Inventory:
    from pydantic import ValidationError

    from placement.model.inventory import Inventory

    try:
        return Inventory.model_validate(doc.value)
    except ValidationError as exc:
        err = exc.errors()[0]
        ptr = pointer(err["loc"])
        p = doc.locate(ptr, key=err["type"] == "extra_forbidden")
        where = _where(err["loc"]) or "the document"
        raise InputError(
            name,
            f"{where}: {err['msg']}",
            JSON_HINT,
            line=p.line,
            column=p.column,
        ) from None


def _load_json(path: Path, text: str) -> LoadedInventory:
    doc, name = _parse_json(path, text)
    inv = _json_model(doc, name)
    return LoadedInventory(inv, name, *_json_origins(doc, name, inv))


def _json_origins(
    doc: ParsedJson, name: str, inv: InventoryLike
) -> tuple[dict[int, Origin], dict[int, Origin]]:
    """Where each broker and controller is declared; refuses an id listed twice, and a
    combined-mode node whose two entries give different racks."""
    origins: dict[int, Origin] = {}
    controller_origins: dict[int, Origin] = {}
    broker_racks = inv.rack_of
    members: tuple[tuple[str, Sequence[NodeLike], dict[int, Origin]], ...] = (
        ("brokers", inv.brokers, origins),
        ("controllers", inv.controllers, controller_origins),
    )
    for member, nodes, seen in members:
        role = member[:-1]
        for i, node in enumerate(nodes):
            ptr = f"/{member}/{i}"
            p = doc.locate(ptr)
            if node.id in seen:
                raise InputError(
                    name,
                    f"{role} id {node.id} is listed more than once "
                    f"(first on line {seen[node.id].line})",
                    f"each {role} id must appear once",
                    line=p.line,
                    column=p.column,
                )
            # the same id in brokers and controllers is one combined-mode node: one rack
            if role == "controller" and broker_racks.get(node.id, node.rack) != node.rack:
                raise InputError(
                    name,
                    f"node {node.id} is a broker with {_rack(broker_racks[node.id])} "
                    f"(line {origins[node.id].line}) and a controller with {_rack(node.rack)}",
                    "a combined-mode node has one broker.rack: give both entries the same",
                    line=p.line,
                    column=p.column,
                )
            seen[node.id] = Origin(name, p.line, p.column, ptr)
    _require_brokers(name, list(inv.brokers))
    return origins, controller_origins


def _load_csv(path: Path, text: str) -> LoadedInventory:
    from placement.model.inventory import Inventory

    name = str(path)
    _refuse_lone_cr(text, name)
    rows = _csv_rows(text, name)
    if not rows:
        raise InputError(name, "the inventory is empty", "write a header: id,rack,capacity_bytes")
    cols = _csv_columns(name, *rows[0])
    brokers: list[Broker] = []
    origins: dict[int, Origin] = {}
    for line_no, row in rows[1:]:
        broker = _csv_broker(name, cols, line_no, row)
        if broker.id in origins:
            raise InputError(
                name,
                f"broker id {broker.id} is listed more than once "
                f"(first on line {origins[broker.id].line})",
                line=line_no,
                column=1,
            )
        origins[broker.id] = Origin(name, line_no, 1)
        brokers.append(broker)
    _require_brokers(name, brokers)
    return LoadedInventory(Inventory(brokers=brokers), name, origins)


def _refuse_lone_cr(text: str, name: str) -> None:
    """Refuse a carriage return without a line feed (old Mac line ends), where it is."""
    cr = next((i for i, ch in enumerate(text) if ch == "\r" and text[i + 1 : i + 2] != "\n"), -1)
    if cr >= 0:
        at = position_in(text, cr)
        raise InputError(
            name,
            "a carriage return (\\r) that is not followed by a line feed",
            "save the file with \\n or \\r\\n line ends (old Mac line ends are not read)",
            line=at.line,
            column=at.column,
        )


def _csv_rows(text: str, name: str) -> list[tuple[int, list[str]]]:
    """The rows that are not blank, each with the line it starts on (a quoted field may
    span lines)."""
    import csv

    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[tuple[int, list[str]]] = []
    try:
        start = 1
        for row in reader:
            if any(c.strip() for c in row):
                rows.append((start, row))
                if len(rows) > BROKERS.value() + 1:
                    check_count(BROKERS, len(rows) - 1, f"{name}: brokers")
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputError(
            name,
            f"not a valid CSV line: {exc}",
            "an inventory CSV is the header id,rack[,capacity_bytes], then one broker a line",
            line=reader.line_num,
            column=1,
        ) from None
    return rows


def _field_column(row: list[str], index: int) -> int:
    """The 1-based column where field ``index`` of ``row`` starts."""
    return 1 + sum(len(c) + 1 for c in row[:index])


def _csv_columns(name: str, header_line: int, header: list[str]) -> list[str]:
    """The header's column names, lower-cased; id and rack are required."""
    cols = [c.strip().lower() for c in header]
    if "id" not in cols or "rack" not in cols:
        # not an inventory: nothing of the line is quoted (it may be anything, a secret too)
        lacks = " and ".join(c for c in ("id", "rack") if c not in cols)
        raise InputError(
            name,
            "not an inventory CSV: the header (its first line) must name the columns id and "
            f"rack; this one names no {lacks} (it starts with {starts_with(','.join(header))})",
            "first line: id,rack[,capacity_bytes]; an inventory in JSON needs a name not "
            "ending in .csv",
            line=header_line,
            column=1,
        )
    unknown = [c for c in cols if c not in ("id", "rack", "capacity_bytes")]
    if unknown:
        raise InputError(
            name,
            f"unknown column {short(unknown[0])}",
            "columns: id, rack, capacity_bytes",
            line=header_line,
            column=_field_column(header, cols.index(unknown[0])),
        )
    return cols


def _csv_broker(name: str, cols: list[str], line_no: int, row: list[str]) -> Broker:
    from pydantic import ValidationError

    from placement.model.inventory import Broker

    values = dict(zip(cols, (c.strip() for c in row), strict=False))
    if len(row) != len(cols):
        raise InputError(
            name, f"expected {len(cols)} fields, found {len(row)}", line=line_no, column=1
        )

    def as_int(col: str) -> int | None:
        raw = values.get(col, "")
        if raw == "":
            return None
        # ASCII digits only; the model checks the range (ids are int32, sizes int64)
        value = parse_ascii_int(raw, low=-(2**63), high=2**63 - 1)
        if value is None:
            raise InputError(
                name,
                f"{col} must be an integer, found {short(raw)}",
                "ASCII digits, at most 2^63-1",
                line=line_no,
                column=_field_column(row, cols.index(col)),
            )
        return value

    broker_id = as_int("id")
    if broker_id is None:
        raise InputError(name, "id is empty", line=line_no, column=1)
    try:
        return Broker(
            id=broker_id, rack=values.get("rack") or None, capacity_bytes=as_int("capacity_bytes")
        )
    except ValidationError as exc:
        raise InputError(name, exc.errors()[0]["msg"], line=line_no, column=1) from None


def _load_properties_dir(path: Path) -> LoadedInventory:
    from placement.io.properties import PropertiesSyntaxError, parse_properties
    from placement.model.inventory import Broker, Controller, Inventory

    brokers: list[Broker] = []
    controllers: list[Controller] = []
    origins: dict[int, Origin] = {}
    controller_origins: dict[int, Origin] = {}
    files = sorted(
        p
        for p in path.rglob("*.properties")
        if not any(part.startswith(".") for part in p.relative_to(path).parts)
    )
    for file in files:
        text = read_text(file, "the properties file", PROPERTIES_BYTES)
        try:
            parsed = parse_properties(text)
        except PropertiesSyntaxError as exc:
            pos = LineIndex(text).position(exc.offset)
            raise InputError(
                str(file), exc.message, exc.hint, line=pos.line, column=pos.column
            ) from None
        props = {p.key: p for p in parsed}
        id_prop = props.get("node.id") or props.get("broker.id")
        if id_prop is None:
            if "broker.rack" in props or "process.roles" in props:
                raise InputError(
                    str(file),
                    "neither node.id nor broker.id is set",
                    "set node.id (KRaft) or broker.id",
                )
            continue  # log4j.properties, client configs, ...
        parsed_id = parse_ascii_int(id_prop.value)
        if parsed_id is None:
            raise InputError(
                str(file),
                f"{id_prop.key} must be an integer, found {short(id_prop.value)}",
                f"node ids are ASCII digits from 0 to {INT32_MAX}",
                line=id_prop.line,
                column=id_prop.column,
            )
        node_id = parsed_id
        rack_prop = props.get("broker.rack")
        rack = rack_prop.value.strip() or None if rack_prop else None
        roles_prop = props.get("process.roles")
        roles = {r.strip() for r in roles_prop.value.split(",")} if roles_prop else {"broker"}
        # node.id is unique over the cluster: a combined-mode node is one file with both roles
        first = origins.get(node_id) or controller_origins.get(node_id)
        if first is not None:
            raise InputError(
                str(file),
                f"{id_prop.key} {node_id} is also declared in {first.file}",
                "every broker and controller needs its own node.id",
                line=id_prop.line,
                column=id_prop.column,
            )
        origin = Origin(str(file), id_prop.line, id_prop.column)
        if "controller" in roles:
            controller_origins[node_id] = origin
            controllers.append(Controller(id=node_id, rack=rack))
        if "broker" in roles:
            origins[node_id] = origin
            brokers.append(Broker(id=node_id, rack=rack))
    if not brokers:
        raise InputError(
            str(path),
            "no server.properties with a broker was found in the directory",
            "point --inventory at a directory of broker server.properties files",
        )
    return LoadedInventory(
        Inventory(brokers=brokers, controllers=controllers), str(path), origins, controller_origins
    )


FORMATS = (
    "JSON, CSV with an id,rack header, a directory of server.properties, or the saved output "
    "of kafka-broker-api-versions, of kafka-configs --entity-type brokers --describe --all, "
    "or of zookeeper-shell get /brokers/ids/N"
)


def _looks_like_csv(text: str) -> bool:
    """Whether the first line that is not blank is a CSV header naming id and rack."""
    first = next((line for line in text.lstrip("\ufeff").splitlines() if line.strip()), "")
    cols = {c.strip().lower() for c in first.split(",")}
    return "," in first and {"id", "rack"} <= cols


def _kind(p: Path, text: str) -> str:
    """The format of a file's ``text``: a source of inventory_sources, "csv" or "json"."""
    from placement.io.inventory_sources import sniff

    source = sniff(text)
    if source is not None:
        return source
    if p.suffix.lower() == ".csv" or _looks_like_csv(text):
        return "csv"
    first = text.lstrip(" \t\r\n\ufeff")[:1]
    if first in ("", "{", "["):
        return "json"
    lead = len(text) - len(text.lstrip(" \t\r\n\ufeff"))
    raise InputError(
        str(p),
        f"not an inventory: it starts with {starts_with(text)}",
        f"an inventory is {FORMATS} (README, Where an inventory comes from)",
        line=text.count("\n", 0, lead) + 1,
        column=1,
    )


def _load_source(path: Path, text: str, source: str) -> LoadedInventory:
    """An inventory from what a cluster prints: brokers only, ids unique."""
    from placement.io.inventory_sources import READERS
    from placement.model.inventory import Broker, Inventory

    name = str(path)
    brokers: list[Broker] = []
    origins: dict[int, Origin] = {}
    for row in READERS[source](text, name):
        if row.id in origins:
            raise InputError(
                name,
                f"broker id {row.id} is listed more than once "
                f"(first on line {origins[row.id].line})",
                "keep the output of one run of the command",
                line=row.line,
                column=row.column,
            )
        origins[row.id] = Origin(name, row.line, row.column)
        brokers.append(Broker(id=row.id, rack=row.rack))
        check_count(BROKERS, len(brokers), f"{name}: brokers")
    if not brokers:
        raise InputError(
            name,
            f"the inventory lists no brokers (the file is {source} without any broker)",
            "save the whole output of the command",
        )
    return LoadedInventory(Inventory(brokers=brokers), name, origins)


def load_inventory(path: str | Path) -> LoadedInventory:
    """Load an inventory: a directory of server.properties, else the format its content
    shows (what a cluster prints, CSV when the name ends in .csv or the header says so,
    else JSON)."""
    p = Path(path)
    if p.is_dir():
        return _load_properties_dir(p)
    if not p.exists():
        raise InputError(str(p), "inventory file not found")
    text = _read_text(p)
    return _load_text(p, text, _kind(p, text))


def _load_text(p: Path, text: str, kind: str) -> LoadedInventory:
    if kind == "csv":
        return _load_csv(p, text)
    if kind == "json":
        return _load_json(p, text)
    return _load_source(p, text, kind)


def inventory_for_checks(path: str | Path) -> CheckedInventory:
    """`load_inventory` for `validate`, which only checks policies against it: a JSON
    inventory the model certainly accepts is read as a plain record, without pydantic
    (shapes.exact_inventory); anything else, and every error, as `load_inventory` does."""
    p = Path(path)
    if p.is_dir() or not p.exists():
        return load_inventory(p)
    text = _read_text(p)
    kind = _kind(p, text)
    if kind != "json":
        return _load_text(p, text, kind)
    doc, name = _parse_json(p, text)
    inv: InventoryLike | None = exact_inventory(doc.value)
    if inv is None:
        inv = _json_model(doc, name)
    return CheckedInventory(inv, name, *_json_origins(doc, name, inv))
