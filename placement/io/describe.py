"""`kafka-topics --describe` output, Confluent's variant
(docs/formats.md, kafka-topics --describe output).

Topic lines carry PartitionCount, ReplicationFactor and Configs (where
`confluent.placement.constraints={...}` holds JSON with commas of its own);
partition lines carry Leader, Replicas (sync first, observers last), Isr, Offline and
Observers, and while a reassignment runs `Adding Replicas` and `Removing Replicas`
(Replicas then lists the old and the new brokers). Fields are separated by tabs or runs
of spaces depending on the version, and old versions print `Topic:name` without a space.
A column this reader does not know is refused by name, except the few that say nothing
about where replicas are (`_SKIPPED`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from placement.errors import InputError
from placement.io.formats import SNIFF_BYTES as SNIFF_BYTES  # re-exported
from placement.io.formats import looks_like_describe as looks_like_describe
from placement.io.jsonsrc import QUOTE_CHARS, shorten
from placement.io.limits import DESCRIBE_BYTES, PARTITIONS_TOTAL, check_count
from placement.io.textfile import read_text
from placement.model.assignment import PartitionAssignment
from placement.model.kafka import TOPIC_NAME_HINT, int_problem, parse_ascii_int, topic_name_error

# Any `Label:` after a blank: Kafka's two-word labels first (TopicCommand prints
# `\tAdding Replicas: 3\tRemoving Replicas: 1` since Kafka 2.5, and `Replicas:` must not
# match inside them), then one capitalised word, so that a column this reader does not
# know ends the field before it instead of being read as its value.
_LABEL = re.compile(r"(?:^|(?<=\s))(Adding Replicas|Removing Replicas|[A-Z][A-Za-z]*):[ \t]*")
# the labels whose values are read, by the name a field is stored under
_READ = frozenset(
    (
        "Topic",
        "PartitionCount",
        "ReplicationFactor",
        "Partition",
        "Leader",
        "Replicas",
        "Isr",
        "Offline",
        "Observers",
        "AddingReplicas",
        "RemovingReplicas",
    )
)
# labels that say nothing about where replicas are: their values are skipped. TopicId
# (Kafka 2.8+), Elr and LastKnownElr (3.7+, `N/A` when off), MarkedForDeletion (a topic
# being deleted), and Confluent's TargetReplicas/TargetObservers.
_SKIPPED = frozenset(
    ("TopicId", "Elr", "LastKnownElr", "MarkedForDeletion", "TargetReplicas", "TargetObservers")
)
_UNKNOWN_HINTS = {
    "LiveObservers": "LiveObservers is a column of Confluent Platform 5.4 previews whose "
    "name says it may leave out observers that are down: describe the topics with a "
    "released kafka-topics, which prints Observers",
}
_CONFIGS = re.compile(r"(?:^|(?<=\s))Configs:[ \t]*")
_MARKED_FOR_DELETION = re.compile(r"\s+MarkedForDeletion:[ \t]*true[ \t]*$")
_CONFIG_KEY = re.compile(r"([A-Za-z0-9_.\-]+)=")
PLACEMENT_CONFIG = "confluent.placement.constraints"


@dataclass(frozen=True, slots=True)
class ConfigValue:
    value: str
    line: int
    column: int  # 1-based column of the value's first character


@dataclass
class DescribedTopic:
    name: str
    line: int
    partition_count: int | None = None
    replication_factor: int | None = None
    configs: dict[str, ConfigValue] = field(default_factory=dict)

    @property
    def placement(self) -> ConfigValue | None:
        return self.configs.get(PLACEMENT_CONFIG)

    @property
    def min_isr(self) -> int | None:
        v = self.configs.get("min.insync.replicas")
        return parse_ascii_int(v.value, low=1) if v is not None else None


@dataclass(frozen=True, slots=True)
class DescribedPartition:
    topic: str
    partition: int
    line: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline: tuple[int, ...]
    observers: tuple[int, ...]
    # a reassignment in progress (`Adding Replicas:`/`Removing Replicas:`, Kafka 2.5+):
    # the brokers being added and removed, all of them among `replicas`; empty otherwise
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()

    @property
    def reassigning(self) -> bool:
        """Whether a reassignment of this partition is in progress: its replicas are the
        old ones and the new ones together until the new ones catch up."""
        return bool(self.adding or self.removing)

    def assignment(self) -> PartitionAssignment:
        return PartitionAssignment(self.topic, self.partition, self.replicas, self.observers)


@dataclass
class Describe:
    topics: dict[str, DescribedTopic] = field(default_factory=dict)
    partitions: list[DescribedPartition] = field(default_factory=list)

    @property
    def reassigning(self) -> list[DescribedPartition]:
        """The partitions whose reassignment is in progress, in the file's order."""
        return [p for p in self.partitions if p.reassigning]


def _split_configs(text: str, line: int, column: int) -> dict[str, ConfigValue]:
    """Split `k=v,k2={"json":[1,2]},k3=v` where values may hold commas inside JSON."""
    out: dict[str, ConfigValue] = {}
    pos = 0
    n = len(text)
    while pos < n:
        m = _CONFIG_KEY.match(text, pos)
        if m is None:
            break
        start = m.end()
        end = start
        if start < n and text[start] in "{[":
            depth = 0
            in_str = esc = False
            while end < n:
                ch = text[end]
                if in_str:  # a backslash escapes the next character, a quote included
                    if esc:
                        esc = False
                    elif ch == "\\":
                        esc = True
                    elif ch == '"':
                        in_str = False
                elif ch == '"':
                    in_str = True
                elif ch in "{[":
                    depth += 1
                elif ch in "}]":
                    depth -= 1
                    if depth == 0:
                        end += 1
                        break
                end += 1
        # a plain value runs to the next ",key=" (values such as lists hold commas)
        nxt = end
        while True:
            comma = text.find(",", nxt)
            if comma < 0:
                end = n
                break
            if _CONFIG_KEY.match(text, comma + 1):
                end = max(end, comma)
                break
            nxt = comma + 1
        out[m.group(1)] = ConfigValue(text[start:end].rstrip(), line, column + start)
        pos = end + 1
    return out


def _int_problem(text: str, what: str) -> str:
    """`int_problem`, quoting a few characters of ``text`` at most: the file may be
    another one that happens to hold a `Topic:` label."""
    s = text.strip()
    if len(s) <= QUOTE_CHARS:
        return int_problem(s, what)
    if s.isascii() and s.isdigit():
        return f"{what}: a number of {len(s):,} digits is out of range"
    return f"{what}: {shorten(s)!r} is not an integer (ASCII digits only)"


def _ints(raw: str, path: str, line: int, label: str, column: int | None = None) -> tuple[int, ...]:
    """A comma-separated list of broker ids (ASCII digits, 0..2^31-1, no repeats)."""
    raw = raw.strip()
    if not raw or raw.lower() == "none":
        return ()
    out: list[int] = []
    for item in raw.split(","):
        if not item.strip():
            continue
        value = parse_ascii_int(item)
        if value is None:
            raise InputError(
                path,
                f"{label}: expected broker ids separated by commas; "
                + _int_problem(item, "broker id"),
                "broker ids are integers from 0 to 2147483647",
                line=line,
                column=column,
            )
        if value in out:
            raise InputError(
                path,
                f"{label}: broker {value} is listed twice",
                "a partition holds at most one replica per broker",
                line=line,
                column=column,
            )
        out.append(value)
    return tuple(out)


def _topic(fields: dict[str, str], path: str, line: int, column: int) -> str:
    topic = fields["Topic"]
    problem = topic_name_error(topic)
    if problem is not None:
        if len(topic) > QUOTE_CHARS:  # the message would quote it: a few characters at most
            problem = f"the topic name is not a legal Kafka topic name ({len(topic):,} characters)"
        raise InputError(path, problem, TOPIC_NAME_HINT, line=line, column=column)
    return topic


def _leader(raw: str, path: str, line: int, column: int | None) -> int | None:
    raw = raw.strip()
    if not raw or raw.lower() == "none" or raw == "-1":
        return None  # no leader (offline partition)
    leader = parse_ascii_int(raw)
    if leader is None:
        raise InputError(
            path,
            _int_problem(raw, "Leader"),
            'expected a broker id or "none"',
            line=line,
            column=column,
        )
    return leader


def parse_describe(text: str, path: str = "<describe>") -> Describe:
    """Parse the output of `kafka-topics --describe` (several topics allowed)."""
    return _DescribeReader(path).read(text)


class _DescribeReader:
    """One pass over describe output, holding what spans lines: the topics and
    partitions seen so far, and the partitions in the middle of a reassignment."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.out = Describe()
        self.seen: set[tuple[str, int]] = set()
        self.headers: dict[str, int] = {}  # topic -> line of its `Topic:` header
        self.cap = PARTITIONS_TOTAL.value()

    def read(self, text: str) -> Describe:
        # the label split stays inline: it runs once for each of up to millions of lines
        for line_no, raw in enumerate(text.splitlines(), start=1):
            if not raw.strip():
                continue
            configs_m = _CONFIGS.search(raw)
            head = raw[: configs_m.start()] if configs_m else raw
            fields: dict[str, str] = {}
            col: dict[str, int] = {}  # label -> 1-based column of its value
            labels = list(_LABEL.finditer(head))
            unknown: re.Match[str] | None = None
            for i, m in enumerate(labels):
                label = m.group(1).replace(" ", "")
                if label not in _READ:
                    if label not in _SKIPPED and unknown is None:
                        unknown = m
                    continue
                end = labels[i + 1].start() if i + 1 < len(labels) else len(head)
                fields[label] = head[m.end() : end].strip()
                col[label] = m.end() + 1
            if "Topic" not in fields:
                continue  # warnings and banners printed around the output
            if unknown is not None:
                self.unknown_label(unknown, line_no)
            topic = _topic(fields, self.path, line_no, col["Topic"])
            if "Partition" in fields:
                self.partition_line(topic, fields, col, line_no)
            else:
                self.topic_line(topic, fields, col, line_no, raw, configs_m)
        if not self.out.topics:
            raise InputError(
                self.path, "no 'Topic:' lines found", "pass the output of kafka-topics --describe"
            )
        _check_replication_factors(self.out, self.path)
        return self.out

    def unknown_label(self, m: re.Match[str], line_no: int) -> None:
        """Refuse a column this reader does not know: it may say where replicas are (as
        LiveObservers did), so reading the line without it could be wrong."""
        label = m.group(1)
        raise InputError(
            self.path,
            f"unknown column {shorten(label)!r}: this reader does not know what it holds",
            _UNKNOWN_HINTS.get(
                label,
                "the columns read are Topic, PartitionCount, ReplicationFactor, Configs, "
                "Partition, Leader, Replicas, Isr, Offline, Observers, Adding Replicas and "
                "Removing Replicas (TopicId, Elr, LastKnownElr and MarkedForDeletion are "
                "skipped); pass the output of kafka-topics --describe as it printed it",
            ),
            line=line_no,
            column=m.start() + 1,
        )

    def partition_line(
        self, topic: str, fields: dict[str, str], col: dict[str, int], line_no: int
    ) -> None:
        path = self.path
        partition = parse_ascii_int(fields["Partition"])
        if partition is None:
            raise InputError(
                path,
                _int_problem(fields["Partition"], "Partition"),
                "a partition number is an integer from 0 to 2147483647",
                line=line_no,
                column=col["Partition"],
            )
        replicas, observers = _replicas(topic, partition, fields, col, path, line_no)
        leader = _leader(fields.get("Leader", ""), path, line_no, col.get("Leader"))
        key = (topic, partition)
        if key in self.seen:
            raise InputError(path, f"{topic}-{partition} is described twice", line=line_no)
        self.seen.add(key)
        if len(self.seen) > self.cap:
            check_count(PARTITIONS_TOTAL, len(self.seen), f"{path}: partitions")
        adding = _ints(
            fields.get("AddingReplicas", ""),
            path,
            line_no,
            "Adding Replicas",
            col.get("AddingReplicas"),
        )
        removing = _ints(
            fields.get("RemovingReplicas", ""),
            path,
            line_no,
            "Removing Replicas",
            col.get("RemovingReplicas"),
        )
        # in progress as long as a replica is being added or removed (Kafka's own test in
        # TopicCommand.isReassignmentInProgress): a reassignment that completed between
        # the tool's two requests leaves neither list among the replicas
        if not set(replicas).intersection((*adding, *removing)):
            adding = removing = ()
        self.out.partitions.append(
            DescribedPartition(
                topic,
                partition,
                line_no,
                leader,
                replicas,
                _ints(fields.get("Isr", ""), path, line_no, "Isr", col.get("Isr")),
                _ints(fields.get("Offline", ""), path, line_no, "Offline", col.get("Offline")),
                observers,
                adding,
                removing,
            )
        )
        self.out.topics.setdefault(topic, DescribedTopic(topic, line_no))

    def topic_line(
        self,
        topic: str,
        fields: dict[str, str],
        col: dict[str, int],
        line_no: int,
        raw: str,
        configs_m: re.Match[str] | None,
    ) -> None:
        if topic in self.headers:
            raise InputError(
                self.path,
                f"topic {topic} is described twice (first on line {self.headers[topic]})",
                "concatenated describe outputs? keep one block per topic",
                line=line_no,
                column=col["Topic"],
            )
        self.headers[topic] = line_no
        t = DescribedTopic(topic, line_no)
        for label, attr in (
            ("PartitionCount", "partition_count"),
            ("ReplicationFactor", "replication_factor"),
        ):
            if label in fields:
                value = parse_ascii_int(fields[label])
                if value is None:
                    raise InputError(
                        self.path,
                        _int_problem(fields[label], label),
                        line=line_no,
                        column=col[label],
                    )
                setattr(t, attr, value)
        if configs_m:
            text = raw[configs_m.end() :]
            deleted = _MARKED_FOR_DELETION.search(text)  # printed after the configs
            if deleted:
                text = text[: deleted.start()]
            t.configs = _split_configs(text, line_no, configs_m.end() + 1)
        self.out.topics[topic] = t


def _replicas(
    topic: str, partition: int, fields: dict[str, str], col: dict[str, int], path: str, line_no: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A partition line's Replicas, and its observers: the last Replicas, as Observers says."""
    if "Replicas" not in fields:
        raise InputError(path, "partition line without Replicas", line=line_no)
    replicas = _ints(fields["Replicas"], path, line_no, "Replicas", col["Replicas"])
    if not replicas:
        raise InputError(
            path,
            f"{topic}-{partition}: Replicas is empty",
            "every Kafka partition has at least one replica; the output is cut or edited",
            line=line_no,
            column=col["Replicas"],
        )
    observers = _ints(fields.get("Observers", ""), path, line_no, "Observers", col.get("Observers"))
    tail = replicas[len(replicas) - len(observers) :]
    if observers and (set(tail) != set(observers) or len(observers) >= len(replicas)):
        raise InputError(
            path,
            f"Observers {list(observers)} are not the last Replicas {list(replicas)}",
            line=line_no,
        )
    # the replica list fixes the order; Observers repeats it
    return replicas, tail if observers else ()


def _check_replication_factors(out: Describe, path: str) -> None:
    """A partition whose replica count is not its topic's ReplicationFactor is reported.
    A partition being reassigned lists its old and new replicas together: Kafka prints
    the topic's ReplicationFactor as the count before the move (replicas less those
    being added), and the count after it is the replicas less those being removed."""
    for p in out.partitions:
        rf = out.topics[p.topic].replication_factor
        if rf is None or rf == len(p.replicas):
            continue
        if p.reassigning and rf in (
            len(p.replicas) - len(p.adding),
            len(p.replicas) - len(p.removing),
        ):
            continue
        counts = f"{len(p.replicas)} replicas"
        if p.reassigning:
            counts += f" ({len(p.adding)} being added, {len(p.removing)} being removed)"
        raise InputError(
            path,
            f"{p.topic}-{p.partition} has {counts} but topic {p.topic} has "
            f"ReplicationFactor {rf} (line {out.topics[p.topic].line})",
            "partitions of one topic with different replica counts: the output is edited, "
            "or a past reassignment changed them; describe the topic again, or make the "
            "counts equal first",
            line=p.line,
            column=1,
        )


def read_describe(path: str | Path, *, in_flight: bool = False) -> Describe:
    """Read describe output from ``path``. Unless ``in_flight``, output showing a
    reassignment in progress is refused: its Replicas list the old and the new brokers
    together. The callers that know what to do with such partitions pass ``in_flight``:
    `assign`/`simulate --current` (placement.io.current: they start from the move's
    target and leave the partition alone), `snapshot from-describe` (it keeps the adding
    and removing brokers); `validate` reports them (MRC905)."""
    out = parse_describe(read_text(path, "the describe output", DESCRIBE_BYTES), str(path))
    moving = out.reassigning
    if moving and not in_flight:
        first = moving[0]
        what = "1 partition is" if len(moving) == 1 else f"{len(moving):,} partitions are"
        raise InputError(
            str(path),
            f"{what} being reassigned (the first: {first.topic}-{first.partition}): "
            "their Replicas list the old and the new brokers together, not a layout to "
            "start from",
            "wait until kafka-reassign-partitions --verify says the reassignment is "
            "complete, then describe the topics again; mrc-plan validate reads this "
            "output and counts the partitions in flight",
            line=first.line,
            column=1,
        )
    return out
