"""`kafka-topics --describe` output, Confluent's variant (SPEC §4).

Topic lines carry PartitionCount, ReplicationFactor and Configs (where
`confluent.placement.constraints={...}` holds JSON with commas of its own);
partition lines carry Leader, Replicas (sync first, observers last), Isr, Offline and
Observers. Fields are separated by tabs or runs of spaces depending on the version,
and old versions print `Topic:name` without a space.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from placement.errors import InputError
from placement.io.textfile import read_text
from placement.model.assignment import PartitionAssignment

_LABEL = re.compile(
    r"(?:^|(?<=\s))(Topic|TopicId|PartitionCount|ReplicationFactor|Partition|Leader|Replicas|"
    r"Isr|Offline|Observers|Elr|LastKnownElr|AddingReplicas|RemovingReplicas|"
    r"TargetReplicas|TargetObservers):[ \t]*"
)
_CONFIGS = re.compile(r"(?:^|(?<=\s))Configs:[ \t]*")
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
        return int(v.value) if v is not None and v.value.strip().isdigit() else None


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

    def assignment(self) -> PartitionAssignment:
        return PartitionAssignment(self.topic, self.partition, self.replicas, self.observers)


@dataclass
class Describe:
    topics: dict[str, DescribedTopic] = field(default_factory=dict)
    partitions: list[DescribedPartition] = field(default_factory=list)


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
                if in_str:
                    esc = not esc and ch == "\\"
                    if ch == '"' and not esc:
                        in_str = False
                    if ch != "\\":
                        esc = False
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


def _ints(raw: str, path: str, line: int, label: str) -> tuple[int, ...]:
    raw = raw.strip()
    if not raw or raw.lower() == "none":
        return ()
    try:
        return tuple(int(x) for x in raw.split(",") if x.strip())
    except ValueError:
        raise InputError(
            path, f"{label}: expected broker ids separated by commas, found {raw!r}", line=line
        ) from None


def parse_describe(text: str, path: str = "<describe>") -> Describe:
    """Parse the output of `kafka-topics --describe` (several topics allowed)."""
    out = Describe()
    seen: set[tuple[str, int]] = set()
    for line_no, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        configs_m = _CONFIGS.search(raw)
        head = raw[: configs_m.start()] if configs_m else raw
        fields: dict[str, str] = {}
        labels = list(_LABEL.finditer(head))
        for i, m in enumerate(labels):
            end = labels[i + 1].start() if i + 1 < len(labels) else len(head)
            fields[m.group(1)] = head[m.end() : end].strip()
        if "Topic" not in fields:
            continue  # warnings and banners printed around the output
        topic = fields["Topic"]
        if "Partition" in fields:
            try:
                partition = int(fields["Partition"])
            except ValueError:
                raise InputError(
                    path, f"Partition: {fields['Partition']!r} is not a number", line=line_no
                ) from None
            if "Replicas" not in fields:
                raise InputError(path, "partition line without Replicas", line=line_no)
            replicas = _ints(fields["Replicas"], path, line_no, "Replicas")
            observers = _ints(fields.get("Observers", ""), path, line_no, "Observers")
            tail = replicas[len(replicas) - len(observers) :]
            if observers and (set(tail) != set(observers) or len(observers) >= len(replicas)):
                raise InputError(
                    path,
                    f"Observers {list(observers)} are not the last Replicas {list(replicas)}",
                    line=line_no,
                )
            # the replica list fixes the order; Observers repeats it
            observers = tail if observers else ()
            leader_raw = fields.get("Leader", "").strip()
            leader = int(leader_raw) if leader_raw.lstrip("-").isdigit() else None
            if leader is not None and leader < 0:
                leader = None
            key = (topic, partition)
            if key in seen:
                raise InputError(path, f"{topic}-{partition} is described twice", line=line_no)
            seen.add(key)
            out.partitions.append(
                DescribedPartition(
                    topic,
                    partition,
                    line_no,
                    leader,
                    replicas,
                    _ints(fields.get("Isr", ""), path, line_no, "Isr"),
                    _ints(fields.get("Offline", ""), path, line_no, "Offline"),
                    observers,
                )
            )
            out.topics.setdefault(topic, DescribedTopic(topic, line_no))
        else:
            t = DescribedTopic(topic, line_no)
            for label, attr in (
                ("PartitionCount", "partition_count"),
                ("ReplicationFactor", "replication_factor"),
            ):
                if fields.get(label, "").isdigit():
                    setattr(t, attr, int(fields[label]))
            if configs_m:
                t.configs = _split_configs(raw[configs_m.end() :], line_no, configs_m.end() + 1)
            out.topics[topic] = t
    if not out.topics:
        raise InputError(
            path, "no 'Topic:' lines found", "pass the output of kafka-topics --describe"
        )
    return out


def read_describe(path: str | Path) -> Describe:
    return parse_describe(read_text(path), str(path))
