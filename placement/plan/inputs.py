"""Where `assign` takes its brokers and policies from (README, `assign`).

A snapshot holds the brokers with their racks and every topic's policy, so with
`--current SNAPSHOT` neither `--inventory` nor `--topics` is needed: `--topics` then
carries only changes (a new policy for a topic, a new topic). Describe output holds the
policies but no racks, so it needs `--inventory`; reassignment JSON holds neither.

When a snapshot and `--inventory` both list a broker, they must agree on its rack: a
broker in the wrong rack would have replicas planned into the wrong data center, so a
disagreement is refused rather than settled by either side. Otherwise `--inventory` is the
cluster to plan for (it may add brokers the snapshot predates, or leave out brokers to be
removed), and notes say where it differs from the snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from placement.errors import InputError, UsageError
from placement.io.formats import current_format
from placement.io.inventory import LoadedInventory, load_inventory
from placement.io.limits import POLICY_BYTES, PROPERTIES_BYTES, read_capped
from placement.io.snapshot import Snapshot, snapshot_inventory
from placement.io.textfile import shown
from placement.model.diagnostic import Severity
from placement.model.policy import PlacementPolicy
from placement.plan.topics import TopicSpec, read_topics
from placement.rules.base import CheckContext
from placement.rules.validate import check_policy_text, validate_properties_bytes

CurrentKind = Literal["snapshot", "describe", "reassignment"]
SHOWN = 5  # brokers named in one message
_KINDS: dict[str, CurrentKind] = {k: k for k in ("snapshot", "describe", "reassignment")}


def current_kind(path: Path | Snapshot) -> CurrentKind:
    """What `read_current` reads ``path`` as: a directory is a snapshot, a file starting
    like `kafka-topics --describe` output is that, anything else reassignment JSON. A
    snapshot in memory (read from a live cluster) is a snapshot."""
    if isinstance(path, Snapshot):
        return "snapshot"
    # the file's first bytes are read once, however often its kind is asked for
    return _KINDS[current_format(path, quiet=True).name]  # unreadable: reading it says why


@dataclass(frozen=True)
class AssignInputs:
    loaded: LoadedInventory
    topics: list[TopicSpec]
    brokers_from: Literal["inventory", "snapshot"]
    kind: CurrentKind | None  # None: no --current (a fresh layout)
    notes: list[str] = field(default_factory=list)

    @property
    def policies_known(self) -> bool:
        """--current holds the topics' policies (describe Configs, a snapshot's topics)."""
        return self.kind in ("snapshot", "describe")


def _named(ids: Sequence[int]) -> str:
    shown = ", ".join(map(str, ids[:SHOWN]))
    return shown + (f" and {len(ids) - SHOWN} more" if len(ids) > SHOWN else "")


def _rack(rack: str | None) -> str:
    """A rack as a message names it: cut to a few characters (no more of a file)."""
    return f"rack {shown(rack)}" if rack else "no rack"


def reconcile(
    given: LoadedInventory, recorded: LoadedInventory, snapshot: Path | Snapshot
) -> list[str]:
    """Refuse brokers whose rack ``given`` (--inventory) and ``recorded`` (the snapshot)
    disagree on; notes on the other differences (``given`` is used)."""
    where = (
        f"the {snapshot.source}" if isinstance(snapshot, Snapshot) else f"the snapshot {snapshot}"
    )
    mine, theirs = given.inventory.rack_of, recorded.inventory.rack_of
    clash = sorted(b for b in mine.keys() & theirs.keys() if mine[b] != theirs[b])
    if clash:
        first = clash[0]
        raise InputError(
            given.path,
            f"broker(s) {_named(clash)} sit in other racks than in {where} "
            f"(broker {first}: {_rack(mine[first])} here, {_rack(theirs[first])} there)",
            "fix the inventory, take a new snapshot, or leave out --inventory to use the "
            "snapshot's brokers",
        )
    notes = []
    added = sorted(mine.keys() - theirs.keys())
    if added:
        notes.append(f"--inventory adds broker(s) {_named(added)}, not in {where}")
    caps = {b.id: b.capacity_bytes for b in recorded.inventory.brokers}
    other = sorted(
        b.id for b in given.inventory.brokers if b.id in caps and caps[b.id] != b.capacity_bytes
    )
    if other:
        notes.append(
            f"capacity_bytes of broker(s) {_named(other)} from --inventory, not the snapshot's"
        )
    return notes


def recorded_brokers(current: Path | Snapshot) -> LoadedInventory:
    """A snapshot's brokers as an inventory: read from its directory, or taken from the
    snapshot read from a live cluster (which lists every broker, with its rack)."""
    if not isinstance(current, Snapshot):
        return snapshot_inventory(current)
    from placement.model.inventory import Broker, Inventory

    columns = (
        current.brokers.column(c).to_pylist() for c in ("broker_id", "rack", "capacity_bytes")
    )
    brokers = [Broker(id=i, rack=r, capacity_bytes=c) for i, r, c in zip(*columns, strict=True)]
    return LoadedInventory(Inventory(brokers=brokers), current.source)


def _brokers(
    inventory: Path | None, current: Path | Snapshot | None, kind: CurrentKind | None
) -> tuple[LoadedInventory, Literal["inventory", "snapshot"], list[str]]:
    if inventory is None:
        if kind != "snapshot" or current is None:
            what = "a fresh layout" if kind is None else f"--current {current} (it has no racks)"
            raise UsageError(
                f"--inventory is needed for {what}",
                "give --inventory FILE, or a snapshot directory as --current (it lists the "
                "brokers and their racks)",
            )
        return recorded_brokers(current), "snapshot", []
    loaded = load_inventory(inventory)
    if kind != "snapshot" or current is None:
        return loaded, "inventory", []
    return loaded, "inventory", reconcile(loaded, recorded_brokers(current), current)


def read_inputs(
    inventory: Path | None,
    topics: Path | None,
    current: Path | Snapshot | None,
    root: Path | None,
) -> AssignInputs:
    """The brokers (from --inventory or the snapshot) and the topics file's specs (none
    without --topics, allowed when --current holds the policies). ``current``: the path
    of --current, or the snapshot read from a live cluster (--bootstrap-server)."""
    kind = current_kind(current) if current is not None else None
    if topics is None and kind not in ("snapshot", "describe"):
        what = "a fresh layout" if kind is None else f"--current {current} (it has no policies)"
        raise UsageError(
            f"--topics is needed for {what}",
            "give --topics FILE; with describe output or a snapshot as --current it is "
            "optional and carries only changes",
        )
    loaded, source, notes = _brokers(inventory, current, kind)
    specs = (
        read_topics(topics, CheckContext(loaded.inventory), refs_root=root)
        if topics is not None
        else []
    )
    return AssignInputs(loaded, specs, source, kind, notes)


# the broker settings that place internal topics, and the topic each one places
INTERNAL_PLACEMENT = {
    "confluent.offsets.topic.placement.constraints": "__consumer_offsets",
    "confluent.transaction.state.log.placement.constraints": "__transaction_state",
}
DEFAULT_PLACEMENT = "confluent.log.placement.constraints"


@dataclass(frozen=True)
class DefaultPolicies:
    """The cluster's default placement (`confluent.log.placement.constraints`) and the
    placements brokers give internal topics, from `--default-policy FILE`."""

    default: PlacementPolicy | None = None
    internal: dict[str, PlacementPolicy] = field(default_factory=dict)


def read_default_policy(path: Path, ctx: CheckContext) -> DefaultPolicies:
    """`--default-policy FILE`: a placement policy (JSON), or a broker's server.properties
    whose `confluent.log.placement.constraints` is the default (its internal topics'
    settings are taken too). Every policy goes through the `validate` rules: an error
    stops the run with its position. A file that is neither is refused without quoting
    it."""
    from placement.io.properties import PropertiesSyntaxError, parse_properties
    from placement.plan.topics import InvalidPoliciesError

    props = path.suffix == ".properties"
    try:
        with path.open("rb") as fh:
            data = read_capped(fh, str(path), PROPERTIES_BYTES if props else POLICY_BYTES)
    except OSError as exc:
        raise InputError(str(path), f"cannot read it ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(
            str(path),
            "not a placement policy or a .properties file (not UTF-8 text)",
            "give a policy JSON file, or a server.properties that sets " + DEFAULT_PLACEMENT,
        ) from None
    if not props:
        if not text.lstrip().startswith("{"):
            raise InputError(
                str(path),
                "not a placement policy (a JSON object) or a .properties file",
                "give a policy JSON file, or a server.properties (named *.properties) that "
                "sets " + DEFAULT_PLACEMENT,
            )
        checked = check_policy_text(text, str(path), ctx)
        if any(d.severity is Severity.ERROR for d in checked.diagnostics) or not checked.policy:
            raise InvalidPoliciesError(str(path), checked.diagnostics)
        return DefaultPolicies(checked.policy)
    diagnostics = validate_properties_bytes(data, str(path), ctx)
    if any(d.severity is Severity.ERROR for d in diagnostics):
        raise InvalidPoliciesError(str(path), diagnostics)
    try:
        values = {p.key: p.value for p in parse_properties(text)}
    except PropertiesSyntaxError as exc:  # validate reported it above
        raise InputError(str(path), exc.message, exc.hint) from None
    from placement.io.snapshot import cluster_policy

    default = None
    if values.get(DEFAULT_PLACEMENT, "").strip():
        default = cluster_policy(str(path), "(cluster default)", values[DEFAULT_PLACEMENT])
    internal = {
        topic: cluster_policy(str(path), topic, values[key])
        for key, topic in INTERNAL_PLACEMENT.items()
        if values.get(key, "").strip()
    }
    if default is None and not internal:
        raise InputError(
            str(path),
            f"sets no {DEFAULT_PLACEMENT} (nor an internal topic's placement)",
            "give the server.properties of a broker that sets the cluster's default, or a "
            "policy JSON file",
        )
    return DefaultPolicies(default, internal)
