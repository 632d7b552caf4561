"""`validate`: run every rule over placement files and return the findings (never prints)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from placement.errors import InputError, UsageError
from placement.io.formats import BY_NAME as FORMATS_BY_NAME
from placement.io.formats import json_format, validate_format
from placement.io.inventory import CheckedInventory, inventory_for_checks
from placement.io.jsonsrc import (
    QUOTE_CHARS,
    EncodingError,
    JsonSyntaxError,
    ParsedJson,
    decode_utf8,
    is_json_int,
    parse_json,
    shorten,
)
from placement.io.limits import (
    DIAGNOSTICS_PER_FILE,
    POLICY_BYTES,
    POLICY_VALUES,
    Limit,
    read_capped,
    too_large,
)
from placement.io.positions import LineIndex, Position
from placement.model.diagnostic import Diagnostic, Severity
from placement.model.kafka import ibp_hint, parse_ibp_version
from placement.model.shapes import (
    CONSTRAINT_KEYS,
    ENTRY_KEYS,
    POLICY_KEYS,
    PolicyLike,
    exact_policy,
)
from placement.rules import report, syntax
from placement.rules.base import CheckContext, Finding, Rule
from placement.rules.fetching import FollowerFetching
from placement.rules.properties import (
    BROKER_PLACEMENT_KEYS,
    PLACEMENT_KEY,
    UnknownPlacementProperty,
)
from placement.rules.registry import INVENTORY_RULES, POLICY_RULES
from placement.rules.schema import check_schema
from placement.rules.state import Audit, Unlisted
from placement.rules.suggest import did_you_mean

if TYPE_CHECKING:
    import pyarrow as pa

    from placement.io.snapshot import Snapshot
    from placement.model.inventory import Inventory
    from placement.model.policy import PlacementPolicy
    from placement.rules.audit import Hit, Locate


def parse_ibp(text: str) -> tuple[int, int]:
    """`inter.broker.protocol.version` such as 3.2, 3.3-IV3 or 2.8.1 -> (major, minor).

    Only versions Kafka itself accepts (its MetadataVersion list); a Confluent Platform
    version such as 7.2 is refused with the Kafka version it ships.
    """
    version = parse_ibp_version(text)
    if version is None:
        raise UsageError(
            f"--ibp: {text!r} is not an inter.broker.protocol.version Kafka knows",
            ibp_hint(text),
        )
    return version


# the records below are named tuples: cheaper to create than dataclasses, at every start
class ValidateOptions(NamedTuple):
    inventory: CheckedInventory | None = None
    min_insync_replicas: int | None = None
    ibp: tuple[int, int] | None = None

    def context(self) -> CheckContext:
        return CheckContext(
            self.inventory.inventory if self.inventory else None, self.min_insync_replicas, self.ibp
        )


_KEYS = frozenset((*POLICY_KEYS, *ENTRY_KEYS, *CONSTRAINT_KEYS))
_KAFKA_WORD = re.compile(r"[A-Za-z0-9._-]{1,249}")  # a legal topic name, or a key such as ours


def _shown_pointer(ptr: str) -> str:
    """``ptr`` as a finding carries it: a key of the file's own longer than a message would
    quote (a 100 KB "key" of a file that is no policy) is left out, and the pointer is
    its object's."""
    tokens = ptr.split("/")
    for i, token in enumerate(tokens):
        # the keys of our formats and topic names are Kafka's vocabulary: kept whole
        if len(token) > QUOTE_CHARS and token not in _KEYS and not _KAFKA_WORD.fullmatch(token):
            return "/".join(tokens[:i])
    return ptr


def _diag(
    rule: type[Rule],
    file: str,
    pos: Position,
    message: str,
    hint: str = "",
    pointer: str = "",
    context: str | None = None,
) -> Diagnostic:
    return Diagnostic(
        code=rule.code,
        name=rule.name,
        severity=rule.severity,
        message=message,
        file=file,
        pointer=_shown_pointer(pointer),
        line=pos.line,
        column=pos.column,
        hint=hint,
        context=context,
    )


class CheckedPolicy(NamedTuple):
    """A policy's findings, and the policy itself when it is schema-valid."""

    diagnostics: list[Diagnostic]
    policy: PlacementPolicy | None
    document: ParsedJson | None


def check_policy_text(
    text: str,
    file: str,
    ctx: CheckContext,
    *,
    index: LineIndex | None = None,
    context: str | None = None,
) -> CheckedPolicy:
    """Check one policy held in ``text``; positions come from ``index`` (default: ``text``)."""
    doc, out = _parse_policy(text, file, index or LineIndex(text), context)
    if doc is None:
        return CheckedPolicy(out, None, None)
    diags, policy = check_policy_value(doc, "", file, ctx, context=context)
    out.extend(diags)
    return CheckedPolicy(out, policy, doc)


def policy_text_diagnostics(
    text: str,
    file: str,
    ctx: CheckContext,
    *,
    index: LineIndex | None = None,
    context: str | None = None,
) -> list[Diagnostic]:
    """`check_policy_text`'s findings, for a caller that needs no model of the policy:
    a policy the model certainly accepts is checked as a plain record (no pydantic)."""
    doc, out = _parse_policy(text, file, index or LineIndex(text), context)
    if doc is not None:
        out.extend(_policy_value_diagnostics(doc, "", file, ctx, context=context))
    return out


def _parse_policy(
    text: str, file: str, index: LineIndex, context: str | None
) -> tuple[ParsedJson | None, list[Diagnostic]]:
    """The parsed document (None on a syntax error) and its syntax findings."""
    try:
        doc = parse_json(text, index)
    except JsonSyntaxError as exc:
        rule = syntax.SYNTAX_RULES[exc.kind]
        message, hint = rule.explain(exc)
        return None, [_diag(rule, file, index.position(exc.offset), message, hint, context=context)]
    return doc, [
        _diag(
            syntax.DuplicateKey,
            file,
            doc.position(d.offset),
            syntax.DuplicateKey.message(d.key, doc.position(d.first_offset)),
            syntax.DuplicateKey.hint,
            d.pointer,
            context,
        )
        for d in doc.duplicates
    ]


def _check_policy_size(value: object, doc: ParsedJson, base: str, file: str) -> None:
    """Refuse a "policy" of more than `POLICY_VALUES` JSON values before the schema check
    (whose cost, and findings, grow with every value)."""
    cap = POLICY_VALUES.value()
    count = 0
    stack = [value]
    while stack:
        node = stack.pop()
        count += 1
        if count > cap:
            pos = doc.locate(base)
            raise InputError(
                file,
                f"the placement policy holds more than {cap:,} JSON values; a placement policy "
                "has a few dozen",
                POLICY_VALUES.hint(),
                line=pos.line,
                column=pos.column,
            )
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _policy_at(doc: ParsedJson, base: str, file: str) -> object:
    value = doc.value
    for token in base.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        value = value[int(token)] if isinstance(value, list) else value[token]
    _check_policy_size(value, doc, base, file)
    return value


def _locator(
    doc: ParsedJson, base: str, file: str, context: str | None
) -> Callable[[type[Rule], Finding], Diagnostic]:
    def locate(rule: type[Rule], f: Finding) -> Diagnostic:
        ptr = base + f.pointer
        return _diag(rule, file, doc.locate(ptr, key=f.at_key), f.message, f.hint, ptr, context)

    return locate


def _rule_diagnostics(
    policy: PolicyLike, ctx: CheckContext, locate: Callable[[type[Rule], Finding], Diagnostic]
) -> list[Diagnostic]:
    """The findings of every policy rule about a schema-valid policy, in registry order."""
    return [
        locate(type(policy_rule), f)
        for policy_rule in POLICY_RULES
        for f in policy_rule.check(policy, ctx)
    ]


def check_policy_value(
    doc: ParsedJson, base: str, file: str, ctx: CheckContext, *, context: str | None = None
) -> tuple[list[Diagnostic], PlacementPolicy | None]:
    """Schema and rule checks for the policy found at pointer ``base`` of ``doc``."""
    value = _policy_at(doc, base, file)
    locate = _locator(doc, base, file, context)
    policy, findings = check_schema(value)
    out = [locate(rule, f) for rule, f in findings]
    if policy is not None:
        out.extend(_rule_diagnostics(policy, ctx, locate))
    return out, policy


def _policy_value_diagnostics(
    doc: ParsedJson, base: str, file: str, ctx: CheckContext, *, context: str | None = None
) -> list[Diagnostic]:
    """`check_policy_value`'s findings; a policy the model certainly accepts (nothing for the
    schema rules to say) goes straight to the policy rules as a plain record."""
    plain = exact_policy(_policy_at(doc, base, file))
    if plain is None:
        return check_policy_value(doc, base, file, ctx, context=context)[0]
    return _rule_diagnostics(plain, ctx, _locator(doc, base, file, context))


def _decode(data: bytes, file: str) -> tuple[str | None, list[Diagnostic]]:
    try:
        text, bom = decode_utf8(data)
    except EncodingError as exc:
        return None, [_diag(syntax.InvalidUtf8, file, exc.position, exc.message, exc.hint)]
    if bom:
        return text, [
            _diag(
                syntax.Utf8Bom,
                file,
                Position(1, 1),
                syntax.Utf8Bom.message,
                syntax.Utf8Bom.hint,
            )
        ]
    return text, []


def validate_json_bytes(data: bytes, file: str, ctx: CheckContext) -> list[Diagnostic]:
    text, out = _decode(data, file)
    if text is not None:
        out.extend(policy_text_diagnostics(text, file, ctx))
    return out


class JsonKind(NamedTuple):
    """A JSON file of mrc-plan's (or Kafka's) that is no placement policy: what `validate`
    takes it for, the top-level keys that tell it, and how to check it on its own."""

    name: str
    what: str
    keys: str
    how: str


INVENTORY_KIND = JsonKind(
    "inventory",
    "a broker inventory",
    'a top-level "brokers"',
    "its brokers were checked as --inventory checks them; pass --inventory {} "
    "to check the policies against it",
)
TOPICS_KIND = JsonKind(
    "topics",
    "a topics file",
    'a top-level "topics" or "default_placement"',
    "its inline policies were checked; the rest (names, counts, referenced files) is "
    "checked by `mrc-plan assign --topics {}`",
)
PLAN_KIND = JsonKind(
    "plan",
    "a reassignment plan",
    'a top-level "partitions"',
    "it was read as Kafka reads a reassignment file; `mrc-plan plan show {}` shows it",
)
SUMMARY_KIND = JsonKind(
    "summary",
    "the summary.json of an `assign --out-dir` directory",
    'a top-level "batches" and "total"',
    "it was read as `plan show` reads it; `mrc-plan plan show {}` shows the plan",
)
# the kinds by the io/formats.py row that tells them by their keys
_KINDS = {
    "inventory": INVENTORY_KIND,
    "topics": TOPICS_KIND,
    "reassignment": PLAN_KIND,
    "summary": SUMMARY_KIND,
}


def json_kind(value: object) -> JsonKind | None:
    """What a parsed JSON file is when it is no placement policy, by its top-level keys
    (None: a policy, or a file of no kind `validate` knows, checked as a policy).

    An object holding a policy's own keys ("replicas", "observers") is a policy, whatever
    else it holds: its unknown keys are the policy's findings (the policy row of
    io/formats.py comes first)."""
    fmt = json_format(value)
    return None if fmt is None else _KINDS.get(fmt.name)


def _kind_cap(kind: JsonKind) -> Limit:
    """Each kind's own cap (a file larger than a policy may be is held to it)."""
    name = next(n for n, k in _KINDS.items() if k is kind)
    return FORMATS_BY_NAME[name].cap


def _topics_policies(doc: ParsedJson, file: str, ctx: CheckContext) -> list[Diagnostic]:
    """The findings of the policies written inline in a topics file (a placement given as
    a file name is that file's, checked where it is)."""
    value = doc.value
    assert isinstance(value, dict)
    out: list[Diagnostic] = []
    if isinstance(value.get("default_placement"), dict):
        out.extend(
            _policy_value_diagnostics(
                doc, "/default_placement", file, ctx, context="default_placement"
            )
        )
    topics = value.get("topics")
    for i, entry in enumerate(topics if isinstance(topics, list) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("placement"), dict):
            continue
        name = entry.get("name")
        context = f"topic {shorten(name, QUOTE_CHARS)}" if isinstance(name, str) else None
        own: object = entry.get("min_isr")
        entry_ctx = topic_context(
            ctx, own if isinstance(own, int) and is_json_int(own) and own >= 1 else None
        )
        out.extend(
            _policy_value_diagnostics(
                doc, f"/topics/{i}/placement", file, entry_ctx, context=context
            )
        )
    return out


def topic_context(ctx: CheckContext, min_isr: int | None) -> CheckContext:
    """The checks of one topic's policy: with the topic's own min.insync.replicas when it
    sets one (as Kafka, a topic's config over the broker's), else the cluster's
    (`--min-insync-replicas`), else none."""
    if min_isr is None or min_isr == ctx.min_insync_replicas:
        return ctx
    return replace(ctx, min_insync_replicas=min_isr)


def _kind_note(kind: JsonKind, paths: list[Path]) -> str:
    """One note for the files of one kind: the first path, how many more (paths only)."""
    first = paths[0]
    more = f" and {len(paths) - 1:,} more" if len(paths) > 1 else ""
    where = first.parent if kind is SUMMARY_KIND else first
    return f"{first}{more}: taken for {kind.what} ({kind.keys}): {kind.how.format(where)}"


def _large_json_kind(path: Path, data: bytes) -> JsonKind:
    """The kind of a `.json` file larger than a policy may be, told from its top-level
    keys: a kind whose own cap it fits, else the `InputError` that it is too large (for a
    policy when it is of no other kind)."""
    import orjson

    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        value = None
    kind = json_kind(value)
    del value
    if kind is None:
        raise too_large(str(path), POLICY_BYTES, len(data))
    cap = _kind_cap(kind)
    if len(data) > cap.value():
        raise too_large(str(path), cap, len(data))
    return kind


def check_json_file(
    path: Path, data: bytes, options: ValidateOptions, kind: JsonKind | None = None
) -> tuple[list[Diagnostic], JsonKind | None]:
    """A `.json` file as what it is: a placement policy (its findings), or a file of
    another kind (`json_kind`) checked by that kind's reader. A reader that refuses the
    file raises its `InputError` (exit 2), as the command that reads the kind would.
    ``kind``: already known (a file too large for a policy): a plan, an inventory or a
    summary then goes to its reader without the parse that positions a policy's
    findings."""
    file = str(path)
    ctx = options.context()
    text, out = _decode(data, file)
    if text is None:
        return out, None
    doc: ParsedJson | None = None
    syntax_found: list[Diagnostic] = []
    if kind is None or kind is TOPICS_KIND:
        doc, syntax_found = _parse_policy(text, file, LineIndex(text), None)
        kind = json_kind(doc.value) if doc is not None else None
    if kind is None:
        out.extend(syntax_found)
        if doc is not None:
            out.extend(_policy_value_diagnostics(doc, "", file, ctx))
        return out, None
    if kind is INVENTORY_KIND:
        given = options.inventory
        if given is None or Path(given.path).resolve() != path.resolve():
            out.extend(inventory_diagnostics(inventory_for_checks(path)))
        # else: the --inventory's findings are added once, with the inventory's own
    elif kind is TOPICS_KIND:
        assert doc is not None
        out.extend(syntax_found)
        out.extend(_topics_policies(doc, file, ctx))
    elif kind is PLAN_KIND:
        from placement.io.reassignment import parse_plan

        parse_plan(text, file)
    else:
        from placement.io.summary import read_summary

        read_summary(path)
    return out, kind


_KEY_CHARS = 64  # the broker keys have up to 53 characters


def validate_properties_bytes(data: bytes, file: str, ctx: CheckContext) -> list[Diagnostic]:
    """Check every `confluent.*placement.constraints` value of a properties file."""
    from placement.io.properties import PropertiesSyntaxError, parse_properties

    text, out = _decode(data, file)
    if text is None:
        return out
    physical = LineIndex(text)
    try:
        props = parse_properties(text)
    except PropertiesSyntaxError as exc:
        out.append(
            _diag(syntax.InvalidUtf8, file, physical.position(exc.offset), exc.message, exc.hint)
        )
        return out
    for prop in props:
        if not PLACEMENT_KEY.match(prop.key):
            continue
        key = shorten(prop.key, _KEY_CHARS)  # as messages show it
        if prop.key not in BROKER_PLACEMENT_KEYS:
            if prop.key == "confluent.placement.constraints":
                hint = (
                    "this is the topic-level config; the broker default is "
                    "confluent.log.placement.constraints"
                )
            else:
                hint = did_you_mean(prop.key, BROKER_PLACEMENT_KEYS) or (
                    "brokers read: " + ", ".join(BROKER_PLACEMENT_KEYS)
                )
            out.append(
                _diag(
                    UnknownPlacementProperty,
                    file,
                    Position(prop.line, prop.column),
                    f'brokers do not read the property "{key}"',
                    hint,
                )
            )
        if not prop.value.strip():
            continue  # an empty value means "no default placement"
        index = LineIndex(prop.value, physical, prop.value_offsets)
        out.extend(policy_text_diagnostics(prop.value, file, ctx, index=index, context=key))
    return out


class CheckedDescribe(NamedTuple):
    """What `validate` finds in one describe output: the policies' findings and the
    audit's (MRC9xx, capped), and whether the audit went without racks."""

    audit: Audit
    racks_unknown: bool


def check_describe(data: bytes, file: str, ctx: CheckContext) -> CheckedDescribe:
    """Check the placement of every topic in `kafka-topics --describe` output, then audit
    its partitions (MRC9xx): against their topics' valid policies when ``ctx`` has the
    inventory, and their ISR against each topic's `min.insync.replicas` (else ``ctx``'s).

    For the policy checks, --min-insync-replicas wins over each topic's own
    `min.insync.replicas` (a what-if); the audit holds each partition to the value its
    topic has, the flag standing in where the output shows none (the broker default).
    """
    from placement.io.describe import parse_describe
    from placement.rules.audit import audit, describe_locator, describe_snapshot

    text, out = _decode(data, file)
    if text is None:
        return CheckedDescribe(Audit(out, None), racks_unknown=False)
    physical = LineIndex(text)
    # the describe reader numbers lines as str.splitlines() does (\r, \v, \x85, ... end lines)
    line_starts = [0]
    for line in text.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    described = parse_describe(text, file)
    policies: dict[str, PlacementPolicy] = {}
    for topic in described.topics.values():
        value = topic.placement
        if value is None or not value.value.strip():
            continue
        start = line_starts[value.line - 1] + value.column - 1
        index = LineIndex(value.value, physical, range(start, start + len(value.value)))
        topic_ctx = topic_context(ctx, topic.min_isr)
        checked = check_policy_text(
            value.value, file, topic_ctx, index=index, context=f"topic {topic.name}"
        )
        out.extend(checked.diagnostics)
        if checked.policy is not None:
            policies[topic.name] = checked.policy
    found = audit(
        describe_snapshot(described, ctx.inventory),
        policies,
        describe_locator(described, text, line_starts, file, physical),
        default_min_isr=ctx.min_insync_replicas,
        racks=ctx.inventory is not None,
        where="the inventory",
    )
    out.extend(found.diagnostics)
    racks_unknown = ctx.inventory is None and bool(policies) and bool(described.partitions)
    return CheckedDescribe(Audit(out, found.unlisted), racks_unknown)


def validate_describe_bytes(data: bytes, file: str, ctx: CheckContext) -> list[Diagnostic]:
    """`check_describe`'s findings, capped as `validate` reports them."""
    checked = check_describe(data, file, ctx).audit
    unlisted = {file: checked.unlisted} if checked.unlisted else {}
    return cap_diagnostics(checked.diagnostics, unlisted)


def _inventory_of(brokers: pa.Table) -> Inventory:
    """A snapshot's brokers table as the inventory the policy checks read."""
    from placement.model.inventory import Broker, Inventory

    ids, racks, capacities = (
        brokers.column(c).to_pylist() for c in ("broker_id", "rack", "capacity_bytes")
    )
    return Inventory(
        brokers=[
            Broker(id=b, rack=r, capacity_bytes=c)
            for b, r, c in zip(ids, racks, capacities, strict=True)
        ]
    )


class CheckedSnapshot(NamedTuple):
    """What `validate` finds in a snapshot: the findings to list, those only counted,
    and every file of its tables that was checked (listed in the report, clean or not)."""

    diagnostics: list[Diagnostic]
    unlisted: Unlisted | None
    files: list[str]


def validate_snapshot(root: Path, options: ValidateOptions) -> CheckedSnapshot:
    """Check the policies of a snapshot's topics table and audit its partitions (MRC9xx).

    The racks are the inventory's when there is one, else the snapshot's brokers table's
    (which then also stands in for the inventory of the policy checks). Findings point at
    rows, as the snapshot reader names them: the table's file, line = the row (from 1).
    """
    from placement.io.snapshot import read_snapshot
    from placement.rules.audit import snapshot_locator, table_files, table_locator

    snap = read_snapshot(root)
    topic_row, locate = table_locator(root, "topics"), snapshot_locator(root)
    files = [
        str(f) for name in ("brokers", "topics", "partitions") for f in table_files(root, name)
    ]
    return _check_snapshot(snap, options, topic_row, locate, files)


def validate_cluster(snap: Snapshot, options: ValidateOptions) -> CheckedSnapshot:
    """`validate_snapshot` of the snapshot read from a live cluster (`--bootstrap-server`):
    the same checks, every finding's file the cluster (``snap.source``, e.g. ``cluster
    HOST:PORT``) and its line the row the topic or partition has in the tables that
    `snapshot from-cluster` writes (from 1), so that a live audit and the audit of its
    snapshot differ only in that name."""

    def row(i: int) -> tuple[str, int]:
        return snap.source, i + 1

    def locate(hits: Sequence[Hit]) -> list[tuple[str, Position]]:
        return [(snap.source, Position(hit.row + 1, 1)) for hit in hits]

    return _check_snapshot(snap, options, row, locate, [snap.source])


def _check_snapshot(
    snap: Snapshot,
    options: ValidateOptions,
    topic_row: Callable[[int], tuple[str, int]],
    locate: Locate,
    files: list[str],
) -> CheckedSnapshot:
    """The policy checks and the audit of ``snap``: ``topic_row`` places a topics row,
    ``locate`` the audit's findings; ``files``: what the report lists as checked."""
    from placement.rules.audit import audit, brokers_table

    ctx = options.context()
    if options.inventory is None:
        ctx = replace(ctx, inventory=_inventory_of(snap.brokers))
    else:
        snap = replace(snap, brokers=brokers_table(options.inventory.inventory))
    where = "the inventory" if options.inventory else "the snapshot's brokers table"
    out: list[Diagnostic] = []
    policies: dict[str, PlacementPolicy] = {}
    checked: dict[tuple[str, int | None], CheckedPolicy] = {}  # topics share policies
    topics = snap.topics
    columns = (topics.column(c).to_pylist() for c in ("topic", "placement", "min_isr"))
    for row, (name, text, min_isr) in enumerate(zip(*columns, strict=True)):
        if text is None or not text.strip():
            continue
        topic_ctx = topic_context(ctx, min_isr)
        key = (text, topic_ctx.min_insync_replicas)
        if key not in checked:
            checked[key] = check_policy_text(text, "", topic_ctx)
        file, line = topic_row(row)
        out.extend(
            replace(d, file=file, line=line, column=1, context=f"topic {name}")
            for d in checked[key].diagnostics
        )
        policy = checked[key].policy
        if policy is not None:
            policies[name] = policy
    found = audit(
        snap,
        policies,
        locate,
        default_min_isr=options.min_insync_replicas,
        racks=True,
        where=where,
    )
    return CheckedSnapshot(out + found.diagnostics, found.unlisted, files)


def inventory_diagnostics(loaded: CheckedInventory) -> list[Diagnostic]:
    """Findings about the inventory itself (MRC403, MRC7xx), at the nodes' declarations."""
    origins = {"broker": loaded.origins, "controller": loaded.controller_origins}
    out = []
    for rule in INVENTORY_RULES:
        for f in rule.check(loaded.inventory):
            o = origins[f.role].get(f.node)
            file, pos, ptr = (
                (o.file, Position(o.line, o.column), o.pointer)
                if o
                else (loaded.path, Position(1, 1), "")
            )
            out.append(_diag(type(rule), file, pos, f.message, f.hint, ptr))
    return out


def is_snapshot(path: Path) -> bool:
    """A directory holding the three tables of a snapshot (each as `NAME.parquet`,
    `NAME/` or `NAME.jsonl`, as the snapshot reader looks for them)."""
    return path.is_dir() and all(
        any((path / f).exists() for f in (f"{n}.parquet", n, f"{n}.jsonl"))
        for n in ("brokers", "topics", "partitions")
    )


POLICY_SUFFIXES = (".json", ".properties")


class Skipped(NamedTuple):
    """A path of a directory walk that `validate` did not read, and why (never what it
    points at: that may be a secret of the machine running the check)."""

    path: Path
    why: str

    def note(self) -> str:
        return f"{self.path}: not read: {self.why}"


class Discovered(NamedTuple):
    """What `discover` found: the files to check, the snapshots, the paths of directory
    walks it skipped, and the identity (device, inode) each walked file had when the walk
    looked at it: the file read must be that file."""

    files: dict[str, Path]  # by name, in the order found
    snapshots: dict[str, Path]
    skipped: list[Skipped]
    walked: dict[str, tuple[int, int]]


def _special(mode: int) -> str:
    """What a file that is not a regular file is, for a note."""
    for test, what in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return "not a regular file"


class _Walk:
    """One directory given on the command line, walked without leaving it: a symbolic
    link is followed only when it resolves inside the directory, a special file (a FIFO
    would block the run) is never opened, hidden entries are passed over."""

    def __init__(self, root: Path, out: Discovered) -> None:
        self.root = root
        self.real = root.resolve()
        self.out = out

    def skip(self, path: Path, why: str) -> None:
        self.out.skipped.append(Skipped(path, why))

    def outside(self, path: Path) -> bool:
        """Whether ``path`` (a symbolic link, or holding one) resolves outside the root;
        a link that cannot be resolved (a loop) counts as outside."""
        try:
            return not path.resolve().is_relative_to(self.real)
        except (OSError, RuntimeError):
            return True

    @property
    def leads_out(self) -> str:
        return f"a symbolic link leading outside {self.root}"

    def run(self) -> None:
        self.directory(self.root)

    def directory(self, where: Path) -> None:
        try:
            entries = sorted(os.scandir(where), key=lambda e: e.name)
        except OSError as exc:
            raise InputError(str(where), f"cannot list: {exc.strerror or exc}") from None
        for entry in entries:
            if entry.name.startswith("."):
                continue
            self.entry(where / entry.name, entry)

    def entry(self, path: Path, entry: os.DirEntry[str]) -> None:
        candidate = path.suffix.lower() in POLICY_SUFFIXES
        link = entry.is_symlink()
        if link and self.outside(path):
            if candidate or entry.is_dir():
                self.skip(path, self.leads_out)
            return
        try:
            st = path.stat()  # through a link that stays inside
        except OSError:
            if link and candidate:
                self.skip(path, "a broken symbolic link")
            return
        if stat.S_ISDIR(st.st_mode):
            if is_snapshot(path):
                self.snapshot(path)
            elif not link:  # a linked directory inside is walked where it is
                self.directory(path)
        elif not candidate:
            return
        elif stat.S_ISREG(st.st_mode):
            if str(path) not in self.out.files:
                self.out.files[str(path)] = path
                self.out.walked[str(path)] = (st.st_dev, st.st_ino)
        else:
            self.skip(path, f"{_special(st.st_mode)}, not a regular file")

    def snapshot(self, root: Path) -> None:
        """Take the snapshot at ``root`` when nothing in it leads out or is special."""
        for where, dirs, files in os.walk(root):
            for name in sorted(dirs + files):
                path = Path(where) / name
                if path.is_symlink() and self.outside(path):
                    self.skip(root, f"its {path.relative_to(root)} is {self.leads_out}")
                    return
                try:
                    mode = path.lstat().st_mode
                except OSError:
                    continue
                if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                    what = _special(mode)
                    self.skip(root, f"its {path.relative_to(root)} is {what}, not a regular file")
                    return
        self.out.snapshots.setdefault(str(root), root)


def discover(paths: Sequence[str | Path]) -> Discovered:
    """Expand directories into their `*.json` / `*.properties` files (hidden entries
    skipped) and the snapshots among them (whose own files are not policies).

    A directory walk stays inside the directory: what resolves outside it (a symbolic
    link to a file of the machine, or to a directory elsewhere) and what is not a regular
    file (a FIFO, a device) is skipped and listed in ``skipped``. A path named on the
    command line is the user's choice and is taken as it is.
    """
    out = Discovered({}, {}, [], {})
    for raw in paths:
        p = Path(raw)
        if is_snapshot(p):
            out.snapshots.setdefault(str(p), p)
        elif p.is_dir():
            _Walk(p, out).run()
        elif p.exists():
            out.files.setdefault(str(p), p)
        else:
            raise UsageError(f"{p}: no such file or directory")
    if not out.files and not out.snapshots:
        skipped = ""
        if out.skipped:
            more = f" and {len(out.skipped) - 1} more" if len(out.skipped) > 1 else ""
            skipped = f"; skipped {out.skipped[0].note()}{more}"
        raise UsageError(
            "no placement files (*.json, *.properties) found in "
            + ", ".join(str(p) for p in paths)
            + skipped,
            "pass placement files, server.properties files, kafka-topics --describe output, "
            "snapshots, or directories holding them",
        )
    return out


def _read(path: Path, limit: Limit, walked: tuple[int, int] | None) -> bytes:
    """The bytes of ``path``, at most ``limit``. A file found by a directory walk is
    opened without waiting (a FIFO swapped in would block) and must still be the regular
    file the walk saw."""
    name = str(path)
    try:
        if walked is None:
            with path.open("rb") as fh:
                return read_capped(fh, name, limit)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != walked:
                raise InputError(
                    name,
                    "changed while validate read the directory: it is no longer the regular "
                    "file found there",
                    "run validate again when nothing writes to the directory",
                )
            os.set_blocking(fh.fileno(), True)
            return read_capped(fh, name, limit)
    except OSError as exc:
        raise InputError(name, f"cannot read: {exc.strerror or exc}") from None


# the format whose cap (io/formats.py) a file is read up to, by its suffix; any other
# suffix: describe output's
_READ_AS = {".properties": "properties", ".json": "reassignment"}


def validate_paths(
    paths: Iterable[str | Path],
    options: ValidateOptions,
    *,
    notes: list[str] | None = None,
    clusters: Sequence[Snapshot] = (),
) -> dict[str, list[Diagnostic]]:
    """Findings per file for every file under ``paths`` (and the inventory, if given);
    every file checked is a key, with no findings when it is clean. ``clusters``: the
    snapshots read from live clusters, each checked as a snapshot directory is
    (`validate_cluster`); with one, ``paths`` may be empty.

    What the user should know but is no finding (paths of a directory that were not
    read, and why; describe output audited without racks) is appended to ``notes``.
    """
    ctx = options.context()
    out: dict[str, list[Diagnostic]] = {}
    unlisted: dict[str, Unlisted] = {}
    without_racks: list[str] = []
    given = list(paths)
    found = discover(given) if given or not clusters else Discovered({}, {}, [], {})
    if notes is not None:
        notes.extend(s.note() for s in found.skipped)
    fetching = FollowerFetching()  # MRC602 reads the files together
    kinds: dict[JsonKind, list[Path]] = {}  # the .json files that are no policies
    for path in found.files.values():
        suffix = path.suffix.lower()
        # a .json file may be any kind `json_kind` knows: read up to the largest of their
        # caps, and hold it to its own kind's once the kind is known
        limit = FORMATS_BY_NAME[_READ_AS.get(suffix, "describe")].cap
        data = _read(path, limit, found.walked.get(str(path)))
        fetching.add(str(path), data)
        fmt = validate_format(path, data).name  # by its name, then its bytes (io/formats.py)
        if fmt == "properties":
            out[str(path)] = validate_properties_bytes(data, str(path), ctx)
        elif fmt == "describe":
            checked = check_describe(data, str(path), ctx)
            out[str(path)] = checked.audit.diagnostics
            if checked.audit.unlisted is not None:
                unlisted[str(path)] = checked.audit.unlisted
            if checked.racks_unknown:
                without_racks.append(str(path))
        else:
            large = None
            if len(data) > POLICY_BYTES.value():
                large = _large_json_kind(path, data)
            out[str(path)], kind = check_json_file(path, data, options, large)
            if kind is not None:
                kinds.setdefault(kind, []).append(path)
    audited = [validate_snapshot(root, options) for root in found.snapshots.values()]
    audited += [validate_cluster(snap, options) for snap in clusters]
    for snapshot in audited:
        for file in snapshot.files:
            out.setdefault(file, [])
        for d in snapshot.diagnostics:
            out.setdefault(d.file, []).append(d)
        if snapshot.unlisted is not None:
            first = snapshot.unlisted.first
            out.setdefault(first.file, [])
            unlisted[first.file] = snapshot.unlisted
    if options.inventory is not None:
        fetching.add_inventory(options.inventory)
        for d in inventory_diagnostics(options.inventory):
            out.setdefault(d.file, []).append(d)
    for d in fetching.diagnostics():
        out.setdefault(d.file, []).append(d)
    if notes is not None:
        notes.extend(_kind_note(kind, named) for kind, named in kinds.items())
    if without_racks and notes is not None:
        more = f" and {len(without_racks) - 1} more" if len(without_racks) > 1 else ""
        notes.append(
            f"{without_racks[0]}{more}: the partitions' replicas were not checked against "
            "their topics' placement policies (MRC901), which needs the brokers' racks: "
            "pass --inventory"
        )
    return {file: cap_diagnostics(diags, unlisted) for file, diags in out.items()}


def cap_diagnostics(
    diagnostics: list[Diagnostic], unlisted: Mapping[str, Unlisted] | None = None
) -> list[Diagnostic]:
    """At most `DIAGNOSTICS_PER_FILE` findings per file (errors first), then one MRC801
    note counting the rest, with those a file's audit counted without building them
    (``unlisted``, by file). Errors come first so a file that has one still fails."""
    cap = DIAGNOSTICS_PER_FILE.value()
    unlisted = unlisted or {}
    by_file: dict[str, list[Diagnostic]] = {}
    for d in diagnostics:
        by_file.setdefault(d.file, []).append(d)
    if all(len(ds) <= cap and file not in unlisted for file, ds in by_file.items()):
        return diagnostics
    out: list[Diagnostic] = []

    def rank(d: Diagnostic) -> tuple[bool, tuple[str, int, int, str, str]]:
        return (d.severity is not Severity.ERROR, d.sort_key())

    for file, ds in by_file.items():
        more = unlisted.get(file)
        if len(ds) <= cap and more is None:
            out.extend(ds)
            continue
        ranked = sorted(ds, key=rank)
        kept, rest = ranked[:cap], ranked[cap:]
        errors = sum(d.severity is Severity.ERROR for d in rest)
        total = len(rest)
        firsts = rest[:1]
        if more is not None:
            errors += more.errors
            total += more.errors + more.warnings
            firsts.append(more.first)
        first = min(firsts, key=rank)
        out.extend(kept)
        out.append(
            _diag(
                report.TooManyFindings,
                file,
                Position(first.line, first.column),
                f"{total:,} more finding(s) not shown ({errors:,} error(s), "
                f"{total - errors:,} warning(s)); the first {cap} are listed",
                f"fix these and validate again; raise the cap with {DIAGNOSTICS_PER_FILE.name}=N",
                first.pointer,
                first.context,
            )
        )
    return out
