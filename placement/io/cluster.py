"""Read a live cluster (`--bootstrap-server`), read-only by construction.

This is the one module that talks to a cluster. It asks only what kafka-topics --describe
asks: the brokers (DescribeCluster, for their racks), the topics and partitions (Metadata)
and each topic's configs (DescribeConfigs, all of them: the effective values of
`confluent.placement.constraints` and `min.insync.replicas`, whatever their source), plus
the brokers' `confluent.log.placement.constraints` (the cluster's default policy). A test
fails if this module names any AdminClient method outside `READ_ONLY`.

The client is confluent-kafka (librdkafka). Its 2.16 AdminClient has no DescribeLogDirs,
so sizes come from `--sizes` (a CSV, or kafka-log-dirs --describe output). Observers are
not in the Apache protocol's answers: where the client does not report them, they are
derived from the topic's policy (`derive_observers`).

`read_cluster` gives a `ClusterState` (what the cluster said); `snapshot_from_cluster`
turns it into the `Snapshot` that `snapshot from-describe` writes from the same cluster's
describe output, by building that `Describe`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from placement.errors import InputError, UsageError
from placement.io.cluster_config import ClientSettings, check_bootstrap
from placement.io.describe import (
    PLACEMENT_CONFIG,
    ConfigValue,
    Describe,
    DescribedPartition,
    DescribedTopic,
)
from placement.io.limits import BROKERS, PARTITIONS_TOTAL, TOPICS, check_count
from placement.io.snapshot import Snapshot
from placement.model.inventory import Broker, Inventory

# the AdminClient methods this module may call (a test checks its source for any other)
READ_ONLY = frozenset(("describe_cluster", "list_topics", "describe_configs", "poll"))
MIN_ISR_CONFIG = "min.insync.replicas"
CLUSTER_PLACEMENT_CONFIG = "confluent.log.placement.constraints"
CONFIGS_PER_REQUEST = 500  # topics per DescribeConfigs call
EXAMPLES = 5  # names listed in a message, the rest counted
# librdkafka errors that end the attempt at once (the others it retries until the timeout)
# (no broker reachable ends it only before the first answer: a broker may close an idle
# connection later, and librdkafka connects again)
_FATAL = frozenset(("_AUTHENTICATION", "_SSL", "_INVALID_ARG"))
_UNREACHABLE = frozenset(("_ALL_BROKERS_DOWN", "_RESOLVE"))


@dataclass(frozen=True)
class ClusterConfig:
    """Where the cluster is and how to talk to it. ``timeout``: seconds for the whole read."""

    bootstrap: str
    client: ClientSettings = field(default_factory=ClientSettings)
    timeout: float = 30.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "bootstrap", check_bootstrap(self.bootstrap))
        if not 0 < self.timeout <= 3600:
            raise UsageError(f"--timeout {self.timeout:g} is not in (0, 3600] seconds")


@dataclass(frozen=True, slots=True)
class PartitionState:
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    observers: tuple[int, ...] | None = None  # None: the cluster does not report them


@dataclass
class TopicState:
    name: str
    partitions: list[PartitionState] = field(default_factory=list)
    placement: str | None = None  # the effective confluent.placement.constraints
    min_isr: str | None = None  # the effective min.insync.replicas, as the cluster says it


@dataclass
class ClusterState:
    """What the cluster said: brokers (id -> rack, None when it has none), topics."""

    address: str
    brokers: dict[int, str | None]
    topics: dict[str, TopicState]
    cluster_policy: str | None = None  # confluent.log.placement.constraints
    skipped: list[str] = field(default_factory=list)  # topics not authorized, skipped
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class FromCluster:
    snapshot: Snapshot
    describe: Describe
    notes: list[str]


class _Errors:
    """The client's error callback: librdkafka reports a refused connection or SASL
    handshake there, while the request itself only times out."""

    def __init__(self, client: ClientSettings) -> None:
        self.client = client
        self.fatal: str | None = None
        self.last: str | None = None
        self.answered = False  # a first answer came: unreachable brokers are retried

    def __call__(self, error: Any) -> None:
        text = _cause(self.client.redact(str(error.str())))
        name = str(error.name())
        if name != "_ALL_BROKERS_DOWN":
            self.last = text
        if self.fatal is None and (name in _FATAL or (name in _UNREACHABLE and not self.answered)):
            self.fatal = self.last or text


def _cause(text: str) -> str:
    """A librdkafka message without its `host:port/id: ` prefix and `(after Nms in state
    X)` suffix: one line."""
    head, sep, rest = text.partition(": ")
    if sep and "/" in head and " " not in head:
        text = rest
    cut = text.rfind(" (after ")
    if cut > 0 and text.endswith(")"):
        text = text[:cut]
    return " ".join(text.split())


def _client(config: ClusterConfig, errors: _Errors) -> Any:
    from confluent_kafka.admin import AdminClient

    ms = int(config.timeout * 1000)
    settings: dict[str, Any] = {
        "bootstrap.servers": config.bootstrap,
        "client.id": "mrc-plan",
        "log_level": 0,  # nothing of librdkafka's log on stderr: failures come from error_cb
        "socket.timeout.ms": max(ms, 10),
        "error_cb": errors,
        **config.client.settings,
    }
    try:
        return AdminClient(settings)
    except Exception as exc:  # KafkaException: a setting librdkafka refuses
        raise UsageError(
            f"{config.bootstrap}: the client refused its settings: "
            f"{config.client.redact(str(exc.args[0] if exc.args else exc))}",
            "check the --command-config file",
        ) from None


class _Reader:
    def __init__(self, config: ClusterConfig, admin: Any, errors: _Errors) -> None:
        self.config = config
        self.admin = admin
        self.errors = errors
        self.deadline = time.monotonic() + config.timeout

    def remaining(self) -> float:
        return max(self.deadline - time.monotonic(), 0.001)

    def fail(self, cause: str, hint: str = "") -> InputError:
        return InputError(self.config.bootstrap, cause, hint)

    def timed_out(self, what: str) -> InputError:
        cause = f" (last error: {self.errors.last})" if self.errors.last else ""
        return self.fail(
            f"no answer to {what} within {self.config.timeout:g} s{cause}",
            "check the address and the port, and --command-config; --timeout SECONDS waits longer",
        )

    def wait(self, futures: Iterable[Any], what: str) -> None:
        """Until every future is done, serving the error callback; a fatal error of the
        client or the deadline ends it."""
        pending = list(futures)
        while pending:
            if self.errors.fatal is not None:
                raise self.fail(
                    f"cannot read the cluster: {self.errors.fatal}", _hint(self.errors.fatal)
                )
            if time.monotonic() >= self.deadline:
                raise self.timed_out(what)
            self.admin.poll(0.05)
            pending = [f for f in pending if not f.done()]

    def error_of(self, exc: BaseException) -> tuple[str, str]:
        """(error name, message) of a failed request."""
        err: Any = exc.args[0] if exc.args else None
        if err is not None and hasattr(err, "name") and hasattr(err, "str"):
            return str(err.name()), self.config.client.redact(_cause(str(err.str())))
        return type(exc).__name__, self.config.client.redact(_cause(str(exc)))


def _hint(cause: str) -> str:
    lowered = cause.lower()
    if "sasl" in lowered or "authentication" in lowered:
        return "check security.protocol, sasl.mechanism and the credentials of --command-config"
    if "ssl" in lowered:
        return "check ssl.ca.location and the other ssl.* settings of --command-config"
    return "check the address and the port, and that the broker runs"


def read_cluster(
    config: ClusterConfig,
    *,
    skip_unauthorized: bool = False,
    admin_factory: Callable[[ClusterConfig, Callable[[Any], None]], Any] | None = None,
) -> ClusterState:
    """Read brokers, topics, partitions and the two configs of every topic from the cluster
    at ``config.bootstrap`` within ``config.timeout`` seconds, or raise InputError naming the
    address and the cause. A topic the client may not describe stops the read, naming it,
    unless ``skip_unauthorized`` (then it is listed in ``skipped``). ``admin_factory``
    stands in for the AdminClient (tests replay recorded answers)."""
    errors = _Errors(config.client)
    admin = (admin_factory or _client)(config, errors)
    reader = _Reader(config, admin, errors)
    found = admin.describe_cluster(request_timeout=reader.remaining())
    reader.wait([found], "DescribeCluster")
    try:
        cluster = found.result()
    except Exception as exc:
        name, message = reader.error_of(exc)
        if name == "_TIMED_OUT":
            raise reader.timed_out("DescribeCluster") from None
        raise reader.fail(f"DescribeCluster failed: {message}", _hint(message)) from None
    errors.answered = True
    brokers: dict[int, str | None] = {}
    for node in cluster.nodes:
        rack = node.rack if node.rack and str(node.rack).strip() else None
        brokers[int(node.id)] = rack
    try:
        metadata = admin.list_topics(timeout=reader.remaining())
    except Exception as exc:
        name, message = reader.error_of(exc)
        if name == "_TIMED_OUT":
            raise reader.timed_out("Metadata") from None
        raise reader.fail(f"Metadata failed: {message}", _hint(message)) from None
    check_count(BROKERS, len(brokers), f"{config.bootstrap}: brokers")
    check_count(TOPICS, len(metadata.topics), f"{config.bootstrap}: topics")
    total = sum(len(t.partitions) for t in metadata.topics.values())
    check_count(PARTITIONS_TOTAL, total, f"{config.bootstrap}: partitions")
    state = ClusterState(config.bootstrap, brokers, {})
    denied: list[str] = []
    for name in sorted(metadata.topics):
        meta = metadata.topics[name]
        err = meta.error
        if err is not None:
            code = str(err.name())
            if code == "TOPIC_AUTHORIZATION_FAILED":
                denied.append(name)
                continue
            if not meta.partitions:
                raise reader.fail(
                    f"topic {name}: the cluster answered {code} and no partition",
                    "describe it again once the topic is created or deleted",
                )
        topic = _topic_state(reader, name, meta)
        state.topics[name] = topic
    _read_configs(reader, state, denied)
    _read_cluster_policy(reader, state)
    if denied:
        if not skip_unauthorized:
            shown = ", ".join(denied[:EXAMPLES])
            more = f" (and {len(denied) - EXAMPLES:,} more)" if len(denied) > EXAMPLES else ""
            raise reader.fail(
                f"not authorized to describe topic {shown}{more}",
                "grant the Describe and DescribeConfigs ACLs, or --skip-unauthorized to "
                "read the other topics",
            )
        state.skipped = denied
    return state


def _topic_state(reader: _Reader, name: str, meta: Any) -> TopicState:
    """Topic ``name``'s partitions as the metadata ``meta`` lists them; a broker listed
    twice among a partition's replicas stops the read."""
    topic = TopicState(name)
    for pid in sorted(meta.partitions):
        p = meta.partitions[pid]
        leader = int(p.leader) if p.leader is not None and p.leader >= 0 else None
        observers = getattr(p, "observers", None)
        if len(set(p.replicas)) != len(p.replicas):
            raise reader.fail(
                f"topic {name} partition {p.id}: the cluster lists a broker twice among "
                "its replicas",
                "a snapshot holds each replica once: describe the topic and fix it",
            )
        topic.partitions.append(
            PartitionState(
                int(p.id),
                leader,
                tuple(int(r) for r in p.replicas),
                tuple(int(r) for r in p.isrs),
                tuple(int(o) for o in observers) if observers is not None else None,
            )
        )
    return topic


def _read_configs(reader: _Reader, state: ClusterState, denied: list[str]) -> None:
    """Every config of every topic (never named keys: a broker may drop the connection
    for those), keeping the effective values of the two this tool needs."""
    from confluent_kafka.admin._config import ConfigResource
    from confluent_kafka.admin._resource import ResourceType

    names = list(state.topics)
    for first in range(0, len(names), CONFIGS_PER_REQUEST):
        batch = names[first : first + CONFIGS_PER_REQUEST]
        resources = [ConfigResource(ResourceType.TOPIC, n) for n in batch]
        futures = reader.admin.describe_configs(resources, request_timeout=reader.remaining())
        reader.wait(futures.values(), "DescribeConfigs")
        for resource, future in futures.items():
            name = resource.name
            try:
                entries = future.result()
            except Exception as exc:
                code, message = reader.error_of(exc)
                if code == "TOPIC_AUTHORIZATION_FAILED":
                    denied.append(name)
                    del state.topics[name]
                    continue
                if code == "_TIMED_OUT":
                    raise reader.timed_out("DescribeConfigs") from None
                raise reader.fail(f"topic {name}: DescribeConfigs failed: {message}") from None
            topic = state.topics[name]
            topic.placement = _value(entries.get(PLACEMENT_CONFIG))
            topic.min_isr = _value(entries.get(MIN_ISR_CONFIG))
    denied.sort()


def _read_cluster_policy(reader: _Reader, state: ClusterState) -> None:
    """The brokers' confluent.log.placement.constraints, when the cluster answers."""
    from confluent_kafka.admin._config import ConfigResource
    from confluent_kafka.admin._resource import ResourceType

    if not state.brokers:
        return
    broker = min(state.brokers)
    futures = reader.admin.describe_configs(
        [ConfigResource(ResourceType.BROKER, str(broker))], request_timeout=reader.remaining()
    )
    try:
        reader.wait(futures.values(), "DescribeConfigs (broker)")
        (future,) = futures.values()
        entries = future.result()
    except InputError:
        raise
    except Exception as exc:
        _, message = reader.error_of(exc)
        state.notes.append(
            f"the brokers' configs could not be read ({message}): topics without a policy "
            "of their own are read as having none"
        )
        return
    state.cluster_policy = _value(entries.get(CLUSTER_PLACEMENT_CONFIG))


def _value(entry: Any) -> str | None:
    """A config's effective value (any source); empty is unset."""
    if entry is None or entry.value is None:
        return None
    value = str(entry.value)
    return value if value.strip() else None


# -- what the cluster said -> the snapshot `snapshot from-describe` writes ------------------


def derive_observers(
    replicas: tuple[int, ...], policy_text: str | None, parsed: dict[str, int | None]
) -> tuple[int, ...] | None:
    """The observers of a partition whose cluster does not report them: the tail of its
    replica list that its policy makes observers (Confluent lists observers last). None
    when the policy does not validate or asks as many observers as there are replicas."""
    if not policy_text:
        return ()
    if policy_text not in parsed:
        from pydantic import ValidationError

        from placement.model.policy import PlacementPolicy

        try:
            policy = PlacementPolicy.model_validate_json(policy_text)
        except ValidationError:
            parsed[policy_text] = None
        else:
            parsed[policy_text] = sum(o.count for o in policy.observers)
    count = parsed[policy_text]
    if count is None or count >= len(replicas):
        return None if count else ()
    return replicas[len(replicas) - count :] if count else ()


def _racks(state: ClusterState, inventory: Inventory | None) -> tuple[Inventory, list[str]]:
    """The brokers with their racks: the cluster's, else the inventory's; brokers holding
    replicas the cluster does not list (down) and the inventory's other brokers too."""
    notes: list[str] = []
    known = dict(state.brokers)
    listed = {b.id: b for b in inventory.brokers} if inventory else {}
    holding = {r for t in state.topics.values() for p in t.partitions for r in p.replicas}
    down = sorted(holding - set(known))
    for b in down:
        known[b] = None
    for b in listed:
        known.setdefault(b, None)
    from_inventory = []
    only_listed = [b for b in sorted(listed) if b not in state.brokers and b not in down]
    disagree = []
    lacking = []
    brokers = []
    for b in sorted(known):
        rack = known[b]
        entry = listed.get(b)
        if rack is None and entry is not None and entry.rack:
            rack = entry.rack
            if b in state.brokers:
                from_inventory.append(b)
        elif rack is not None and entry is not None and entry.rack and entry.rack != rack:
            disagree.append(b)
        if rack is None:
            lacking.append(b)
        brokers.append(
            Broker(id=b, rack=rack, capacity_bytes=entry.capacity_bytes if entry else None)
        )
    if lacking:
        ids = ", ".join(map(str, lacking[:20])) + (" …" if len(lacking) > 20 else "")
        raise InputError(
            state.address,
            f"{len(lacking):,} broker(s) report no rack: {ids}",
            "give their racks with --inventory (JSON, CSV, server.properties or what "
            "kafka-configs/kafka-broker-api-versions print)"
            if inventory is None
            else "add them, with their racks, to the --inventory file",
        )
    if down:
        notes.append(
            f"broker(s) {', '.join(map(str, down[:20]))} hold replicas but are not in the "
            "cluster's broker list (down?): their racks come from --inventory"
        )
    if from_inventory:
        notes.append(
            f"{len(from_inventory):,} broker(s) report no rack: racks from --inventory for "
            + ", ".join(map(str, from_inventory[:20]))
        )
    if only_listed:
        notes.append(
            f"{len(only_listed):,} broker(s) of --inventory are not in the cluster: "
            + ", ".join(map(str, only_listed[:20]))
            + " (kept, with their racks, as brokers that hold nothing yet)"
        )
    if disagree:
        notes.append(
            f"the cluster's rack wins over --inventory for broker(s) "
            f"{', '.join(map(str, disagree[:20]))}, where they differ"
        )
    return Inventory(brokers=brokers), notes


def snapshot_from_cluster(
    state: ClusterState,
    inventory: Inventory | None = None,
    sizes: dict[tuple[str, int], int] | None = None,
) -> FromCluster:
    """The snapshot of ``state``: what `snapshot from-describe` writes from the same
    cluster's describe output (with an inventory of the same racks), and the notes the
    user should read (racks from the inventory, derived observers, skipped topics)."""
    from placement.io.convert import snapshot_from_describe

    brokers, notes = _racks(state, inventory)
    notes = [*state.notes, *notes]
    describe = Describe()
    parsed: dict[str, int | None] = {}
    derived = unknown = defaulted = 0
    for name, t in state.topics.items():
        placement = t.placement
        if placement is None and state.cluster_policy:
            placement = state.cluster_policy
            defaulted += 1
        topic = DescribedTopic(name, 0, len(t.partitions))
        if placement is not None:
            topic.configs[PLACEMENT_CONFIG] = ConfigValue(placement, 0, 0)
        if t.min_isr is not None:
            topic.configs[MIN_ISR_CONFIG] = ConfigValue(t.min_isr, 0, 0)
        describe.topics[name] = topic
        for p in t.partitions:
            observers = p.observers
            if observers is None:
                observers = derive_observers(p.replicas, placement, parsed)
                if observers is None:
                    unknown += 1
                    observers = ()
                elif observers:
                    derived += 1
            describe.partitions.append(
                DescribedPartition(name, p.partition, 0, p.leader, p.replicas, p.isr, (), observers)
            )
    if defaulted:
        notes.append(
            f"{defaulted:,} topic(s) have no policy of their own: the cluster's default "
            f"({CLUSTER_PLACEMENT_CONFIG}) is theirs"
        )
    if derived:
        notes.append(
            f"the cluster does not report observers: for {derived:,} partition(s) they are "
            "the tail of the replica list that the topic's policy makes observers"
        )
    if unknown:
        notes.append(
            f"the observers of {unknown:,} partition(s) are unknown (their policy does not "
            "validate, or asks as many observers as there are replicas): read as none"
        )
    if state.skipped:
        shown = ", ".join(state.skipped[:EXAMPLES])
        more = f" (and {len(state.skipped) - EXAMPLES:,} more)" if len(state.skipped) > 5 else ""
        notes.append(f"{len(state.skipped):,} topic(s) not authorized, left out: {shown}{more}")
    snap = snapshot_from_describe(describe, brokers, sizes)
    return FromCluster(snap, describe, notes)
