"""The rules of Kafka's reassignment JSON, checked an entry at a time in file order
(docs/formats.md, reassignment JSON): the reader's last tier, which names the first
problem of a plan and where it is (a JSON pointer); `reassignment_columns` checks the
same rules a column at a time for a plan that keeps them."""

from __future__ import annotations

import json
from typing import Any

from placement.io.jsonsrc import (
    ShapeError,
    is_json_int,
)
from placement.io.positions import escape_token
from placement.io.textfile import cut, fits, short, short_key, topic_name_problem
from placement.model.assignment import PartitionAssignment
from placement.model.kafka import INT32_MAX, TOPIC_NAME_HINT

# the first line of the files `render_reassignment` writes: then one entry per line
SHAPE_HINT = '{"version": 1, "partitions": [{"topic": ..., "partition": ..., "replicas": [...]}]}'


def _broker_list(entry: dict[str, Any], field: str, ptr: str) -> tuple[int, ...]:
    value = entry[field]
    # the common case at C speed (plans hold up to millions of these); the loop below
    # only runs to name a problem
    if (
        type(value) is list
        and set(map(type, value)) <= _INT
        and (not value or (min(value) >= 0 and max(value) <= INT32_MAX))
        and len(set(value)) == len(value)
    ):
        return tuple(value)
    if not isinstance(value, list):
        raise ShapeError(f"{ptr}/{field}", f'"{field}" must be an array of broker ids')
    for j, b in enumerate(value):
        if not is_json_int(b) or b < 0 or b > INT32_MAX:
            raise ShapeError(
                f"{ptr}/{field}/{j}",
                f'"{field}" holds {_value(b)}, not a broker id',
                f"broker ids are integers from 0 to {INT32_MAX} (Java ints)",
            )
    dup = next(b for j, b in enumerate(value) if b in value[:j])
    raise ShapeError(
        f"{ptr}/{field}",
        f'broker {dup} appears twice in "{field}"',
        "Kafka rejects duplicate brokers in a replica list",
    )


def partition_name(topic: str, partition: int) -> str:
    """A partition as a message names it, `<topic>-<partition>`: its topic cut to a few
    characters (a message quotes no more of a file)."""
    return f"{cut(topic)}-{partition}"


def _value(value: Any) -> str:
    """A JSON value that is not what its place needs, as a message may show it: a short
    number or string, else its kind."""
    if isinstance(value, (dict, list)):
        return "(an object)" if isinstance(value, dict) else "(an array)"
    text = json.dumps(value)
    return text if fits(text) else short(str(value))


_INT: frozenset[type] = frozenset({int})
_STR: frozenset[type] = frozenset({str})
_ALLOWED = frozenset({"topic", "partition", "replicas", "observers", "log_dirs"})
_REQUIRED = frozenset({"topic", "partition", "replicas"})


def _entry(entry: Any, ptr: str, names: set[str]) -> PartitionAssignment:
    """One partition entry; ``names``: topic names already found legal."""
    if not isinstance(entry, dict):
        raise ShapeError(ptr, "a partition entry must be an object")
    if not entry.keys() <= _ALLOWED:
        key = next(k for k in entry if k not in _ALLOWED)
        raise ShapeError(
            f"{ptr}/{escape_token(key)}",
            f"unknown key {short_key(key)} in a partition entry",
            "allowed: " + ", ".join(sorted(_ALLOWED)),
            key=True,
        )
    if not entry.keys() >= _REQUIRED:
        key = next(k for k in ("topic", "partition", "replicas") if k not in entry)
        if key == "replicas" and entry.keys() == {"topic", "partition"}:
            # kafka-leader-election's --path-to-json-file: partitions, no replicas
            raise ShapeError(
                ptr,
                'partition entry lacks "replicas": this looks like a kafka-leader-election '
                "--path-to-json-file (topic and partition only), not a reassignment",
                "give a reassignment: each entry names its replicas, as "
                "kafka-reassign-partitions --reassignment-json-file takes it",
            )
        raise ShapeError(ptr, f'partition entry lacks "{key}"')
    topic, partition = entry["topic"], entry["partition"]
    if type(topic) is not str or topic not in names:  # a list is not hashable: type first
        if not isinstance(topic, str) or not topic:
            raise ShapeError(f"{ptr}/topic", '"topic" must be a non-empty string')
        bad_name = topic_name_problem(topic)
        if bad_name is not None:
            raise ShapeError(f"{ptr}/topic", bad_name, TOPIC_NAME_HINT)
        names.add(topic)
    if not is_json_int(partition) or partition < 0 or partition > INT32_MAX:
        raise ShapeError(
            f"{ptr}/partition", f'"partition" must be an integer from 0 to {INT32_MAX}'
        )
    replicas = _broker_list(entry, "replicas", ptr)
    if not replicas:
        raise ShapeError(
            f"{ptr}/replicas", f"{partition_name(topic, partition)} has an empty replica list"
        )
    observers = _broker_list(entry, "observers", ptr) if "observers" in entry else ()
    if observers and replicas[len(replicas) - len(observers) :] != observers:
        raise ShapeError(
            f"{ptr}/observers",
            f"observers {list(observers)} of {partition_name(topic, partition)} are not the last "
            f"entries of replicas {list(replicas)}",
            "list sync replicas first and observers last, in the same order",
        )
    if len(observers) == len(replicas):
        raise ShapeError(
            f"{ptr}/observers", f"{partition_name(topic, partition)} has no sync replica"
        )
    if "log_dirs" in entry:
        dirs = entry["log_dirs"]
        if type(dirs) is not list or not set(map(type, dirs)) <= _STR:
            raise ShapeError(f"{ptr}/log_dirs", '"log_dirs" must be an array of strings')
        if len(dirs) != len(replicas):
            raise ShapeError(
                f"{ptr}/log_dirs",
                f'"log_dirs" has {len(dirs)} entries but "replicas" has {len(replicas)}',
                'use "any" for each replica',
            )
    return PartitionAssignment(topic, partition, replicas, observers)


def entries_of(value: Any) -> list[PartitionAssignment]:
    if not isinstance(value, dict):
        raise ShapeError("", "a reassignment file must be a JSON object", SHAPE_HINT)
    unknown = sorted(set(value) - {"version", "partitions"})
    if unknown == ["topics"] and "partitions" not in value:
        raise ShapeError(
            "/topics",
            'unknown key "topics": this looks like a kafka-reassign-partitions '
            "--topics-to-move-json-file (the topics to move), not a reassignment",
            "give the reassignment itself: --generate prints one as 'Proposed partition "
            "reassignment configuration', or `mrc-plan assign` writes one",
            key=True,
        )
    if unknown:
        raise ShapeError(
            f"/{escape_token(unknown[0])}",
            f"unknown key {short_key(unknown[0])}",
            'a reassignment file has the keys "version" and "partitions"',
            key=True,
        )
    if "version" in value and (not is_json_int(value["version"]) or value["version"] != 1):
        raise ShapeError(
            "/version",
            f"unsupported version {_value(value['version'])}: Kafka knows only 1",
            SHAPE_HINT,
        )
    parts = value.get("partitions")
    if not isinstance(parts, list):
        raise ShapeError(
            "/partitions" if "partitions" in value else "",
            '"partitions" must be an array of partition entries',
            SHAPE_HINT,
        )
    if not parts:
        raise ShapeError(
            "/partitions", "the partition list is empty", "Kafka rejects an empty reassignment"
        )
    out = []
    seen: dict[tuple[str, int], int] = {}
    names: set[str] = set()
    for i, raw in enumerate(parts):
        a = _entry(raw, f"/partitions/{i}", names)
        key = (a.topic, a.partition)
        first = seen.setdefault(key, i)
        if first != i:
            raise ShapeError(
                f"/partitions/{i}",
                f"{partition_name(a.topic, a.partition)} is listed twice (first at "
                f"/partitions/{first})",
                "Kafka rejects such a reassignment: keep one entry per partition",
            )
        out.append(a)
    return out
