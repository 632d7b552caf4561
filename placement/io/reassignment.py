"""Kafka reassignment JSON (docs/formats.md, reassignment JSON): read with Kafka's rules,
write deterministic bytes.

Plans hold up to millions of partitions, so reading is in tiers. A file in the very
layout `render_reassignment` writes (what `assign --current` reads back) is read as
bytes, with no parser, by `ownlayout`, which leaves anything else, and any rule broken,
to the tiers below. orjson parses (the standard library what orjson refuses and JSON
allows); every rule is then checked a column at a time (all topics, all partition
numbers, all replica lists at once, at C speed), which is all a valid plan costs. A plan
laid out as Kafka's tool and `assign` write it is parsed and checked a run of some
thousand entries at a time (`_in_runs`), each run's parsed objects freed before the
next: a million partitions never stand as one parsed document, and each run's columns
are checked while they are in the cache. Only when a rule fails does the entry-by-entry
check run, to find the first problem in file order, and only then is the text scanned
for where it is: the one entry at fault is re-parsed with the position-tracking parser,
or, for what the standard library cannot tell apart (a syntax error, a duplicate key),
the whole document (that parser is iterative: a 100,000-deep document is refused with a
position, never a RecursionError).
Every plan a command reads goes through `read_plan_file` (or `read_plan_entries`, which
keeps no text: `read_current`, for `assign --current`); what only the cluster knows
(does the topic, the partition, the broker exist) is checked by `PlanFile.check` where
the cluster is known, and named by the entry's line too.
"""

from __future__ import annotations

import gc
import json
import os
import re
import stat
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from itertools import chain, compress, repeat
from operator import contains, is_, itemgetter, lt
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from placement.errors import InputError
from placement.io.columns import Columns
from placement.io.jsonsrc import (
    MAX_DEPTH,
    EncodingError,
    JsonSyntaxError,
    ParsedJson,
    ShapeError,
    SyntaxKind,
    decode_utf8,
    is_json_int,
    parse_json,
)
from placement.io.limits import PLAN_BYTES, read_bytes_capped
from placement.io.ownlayout import (
    OWN_HEADER,
    OwnLayout,
    assignments,
    read_own_layout,
    read_own_layout_file,
)
from placement.io.positions import LineIndex, Position, escape_token, parent_pointers, position_in
from placement.io.textfile import cut, fits, short, short_key, topic_name_problem
from placement.model.assignment import PartitionAssignment
from placement.model.kafka import INT32_MAX, TOPIC_NAME_HINT, topic_name_error

CURRENT_TITLE = "Current partition replica assignment"
CURRENT_BLOCK = re.compile(rf"^\s*{CURRENT_TITLE}\s*$", re.MULTILINE)
PROPOSED_BLOCK = re.compile(r"^\s*Proposed partition reassignment configuration\s*$", re.MULTILINE)
# --execute prints the current assignment (to roll back with), then this line; Kafka 0.9-era
# tools then printed the new assignment as a second JSON document: the block ends here
ROLLBACK_LINE = re.compile(
    r"^\s*Save this to use as the --reassignment-json-file option during rollback\s*$",
    re.MULTILINE,
)
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


def _partition(topic: str, partition: int) -> str:
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
            f"{ptr}/replicas", f"{_partition(topic, partition)} has an empty replica list"
        )
    observers = _broker_list(entry, "observers", ptr) if "observers" in entry else ()
    if observers and replicas[len(replicas) - len(observers) :] != observers:
        raise ShapeError(
            f"{ptr}/observers",
            f"observers {list(observers)} of {_partition(topic, partition)} are not the last "
            f"entries of replicas {list(replicas)}",
            "list sync replicas first and observers last, in the same order",
        )
    if len(observers) == len(replicas):
        raise ShapeError(f"{ptr}/observers", f"{_partition(topic, partition)} has no sync replica")
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


def _entries(value: Any) -> list[PartitionAssignment]:
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
                f"{_partition(a.topic, a.partition)} is listed twice (first at "
                f"/partitions/{first})",
                "Kafka rejects such a reassignment: keep one entry per partition",
            )
        out.append(a)
    return out


_LIST: frozenset[type] = frozenset({list})
_DICT: frozenset[type] = frozenset({dict})
_CONTAINERS: frozenset[type] = frozenset({dict, list})
_ABSENT: list[Any] = []  # what a missing "observers" reads as (never changed)


def _columns(value: Any, body: str) -> list[PartitionAssignment] | None:
    """The entries of ``value`` (``body`` parsed without a duplicate-key hook) when every
    rule `_entries` enforces holds, checked a column at a time; None when any does not, or
    when ``body`` may repeat a key: then `_entries` finds the first problem in file order.

    Each test maps a builtin over a whole column (no Python code runs per entry) and only
    decides "all good": whatever passes here, `_entries` accepts, and reads the same."""
    parts = _partition_list(value)
    if parts is None:
        return None
    batches = _Batches()
    entries = batches.add(parts, body, len(value))
    return entries if entries is not None and batches.distinct() else None


class _Batches:
    """The column checks of `_columns`, a run of entries at a time (the whole document's,
    or each of the runs `_in_runs` parses alone), and what holds across runs: the topic
    names found legal, and each run's (topic, partition) pairs, none twice in all."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}  # each legal topic name, numbered
        self.pairs: list[np.ndarray] = []

    def add(
        self, parts: list[dict[str, Any]], text: str, members: int
    ) -> list[PartitionAssignment] | None:
        """The entries ``parts``, objects parsed from ``text`` (without a duplicate-key
        hook; ``members``: the keys of its other objects), when every rule of `_entry`
        holds for each and ``text`` repeats no key; else None."""
        try:  # a required key missing
            topics, numbers, replicas = (list(map(itemgetter(k), parts)) for k in _ORDER)
        except KeyError:
            return None
        keys = sum(map(len, parts))
        optional = _optional(parts, keys)
        if optional is None:
            return None
        observers, dirs, has_dirs = optional
        if set(map(type, topics)) != _STR or not _ids_ok(numbers) or not self._legal(topics):
            return None
        lengths = _replica_lengths(replicas, observers)
        if lengths is None:
            return None
        dir_lengths = lengths if has_dirs is None else list(compress(lengths, has_dirs))
        if not _dirs_ok(dirs, dir_lengths):
            return None
        if not _keys_once(text, members + keys, dirs):
            return None
        count = len(topics)
        pairs = np.fromiter(map(self.index.__getitem__, topics), np.int64, count) << 31
        pairs |= np.fromiter(numbers, np.int64, count)
        self.pairs.append(pairs)
        return assignments(topics, numbers, list(map(tuple, replicas)), list(map(tuple, observers)))

    def _legal(self, topics: list[str]) -> bool:
        """Whether every name in ``topics`` is a legal topic name (each new one numbered)."""
        new = set(topics).difference(self.index)
        if any(topic_name_error(t) is not None for t in new):
            return False
        for name in new:
            self.index[name] = len(self.index)
        return True

    def distinct(self) -> bool:
        """No (topic, partition) twice: each pair as one 64-bit number (the topic's
        number, then the partition's 31 bits), sorted, no two alike."""
        keys = np.concatenate(self.pairs) if len(self.pairs) > 1 else self.pairs[0]
        keys.sort()
        return not bool((keys[1:] == keys[:-1]).any())


_ORDER = ("topic", "partition", "replicas")
_OPTIONAL = ("observers", "log_dirs")


def _optional(
    parts: list[dict[str, Any]], keys: int
) -> tuple[list[Any], list[Any], list[bool] | None] | None:
    """The observers column (an empty list where there are none), the log_dirs column
    (of the entries that have one) and which entries have one (None: all) when no entry
    holds a key besides the three required (which each holds) and the two optional ones,
    which add up to ``keys``; else None."""
    count = len(parts)
    if keys == len(_ORDER) * count:  # the required keys only
        return [_ABSENT] * count, [], [False] * count
    if keys == (len(_ORDER) + len(_OPTIONAL)) * count:  # each has both, or another key
        try:
            observers, dirs = (list(map(itemgetter(k), parts)) for k in _OPTIONAL)
        except KeyError:
            return None
        return observers, dirs, None
    has_dirs = list(map(contains, parts, repeat("log_dirs")))
    # the key counts add up only when there is no other key
    with_observers = sum(map(contains, parts, repeat("observers")))
    if keys != len(_ORDER) * count + with_observers + sum(has_dirs):
        return None
    return (
        list(map(dict.get, parts, repeat("observers"), repeat(_ABSENT))),
        list(compress(map(dict.get, parts, repeat("log_dirs")), has_dirs)),
        has_dirs,
    )


def _partition_list(value: Any) -> list[dict[str, Any]] | None:
    """The partition entries of a reassignment document that is right at the top (an
    object of "version" 1 and a non-empty "partitions" array of objects); else None."""
    if type(value) is not dict or not value.keys() <= {"version", "partitions"}:
        return None
    if "version" in value and (type(value["version"]) is not int or value["version"] != 1):
        return None
    parts = value.get("partitions")
    if type(parts) is not list or not parts or set(map(type, parts)) != _DICT:
        return None
    return parts


def _ids_ok(values: list[Any]) -> bool:
    """All integers from 0 to INT32_MAX (not 2.0, not true): broker ids, partition numbers."""
    return set(map(type, values)) == _INT and min(values) >= 0 and max(values) <= INT32_MAX


def _replica_lengths(replicas: list[Any], observers: list[Any]) -> list[int] | None:
    """Each partition's replica count when every replica list is a non-empty array of
    broker ids, none twice, and every observer list is its tail, short of all of it;
    else None. Typed first (2.0 == 2 and True == 1), then checked as 64-bit arrays."""
    if set(map(type, replicas)) != _LIST or set(map(type, observers)) != _LIST:
        return None
    lengths = list(map(len, replicas))
    counts = list(map(len, observers))
    if min(lengths) < 1 or not all(map(lt, counts, lengths)):  # a sync replica each
        return None
    flat = list(chain.from_iterable(replicas))
    tails = list(chain.from_iterable(observers))
    if set(map(type, flat)) != _INT or set(map(type, tails)) - _INT:
        return None
    try:
        brokers = np.fromiter(flat, np.int64, len(flat))
        tail = np.fromiter(tails, np.int64, len(tails))
    except OverflowError:  # past 64 bits: no broker id either
        return None
    if brokers.min() < 0 or brokers.max() > INT32_MAX:
        return None
    size = np.array(lengths)
    # no broker twice in a list: each id with its list's number above it, sorted, none alike
    tagged = np.repeat(np.arange(size.size, dtype=np.int64) << 31, size) | brokers
    tagged.sort()
    if (tagged[1:] == tagged[:-1]).any():
        return None
    if not tails:
        return lengths
    # observers: the replicas' tails (so broker ids, none twice)
    k = np.array(counts)
    ends = np.cumsum(size)
    at = np.repeat(ends - k, k) + np.arange(tail.size) - np.repeat(np.cumsum(k) - k, k)
    return lengths if np.array_equal(brokers[at], tail) else None


# "log_dirs" as `render_reassignment` writes them: "any" for each replica
_ANY_DIRS = [["any"] * n for n in range(64)]


def _dirs_ok(dirs: list[Any], lengths: list[int]) -> bool:
    """Whether each of ``dirs`` is an array of strings, as long as its ``lengths``. All
    "any" (as `assign` writes them) is told by comparing the lists at once (only a
    string is equal to "any")."""
    try:
        if list(map(_ANY_DIRS.__getitem__, lengths)) == dirs:
            return True
    except IndexError:  # 64 replicas or more
        pass
    if set(map(type, dirs)) - _LIST or set(map(type, chain.from_iterable(dirs))) - _STR:
        return False
    return list(map(len, dirs)) == lengths


def _keys_once(body: str, members: int, dirs: list[list[str]]) -> bool:
    """Whether no object of ``body`` repeats a key: ``body`` is valid JSON whose objects
    hold ``members`` distinct keys in all, and whose strings hold no colon but those of
    the log dirs ``dirs``.

    A colon in JSON text is a key's separator or a character of a string: when the
    document's colons number its distinct keys plus the colons in its strings, no key was
    written twice (the parser keeps one of two, and the count says so). Keys and topic
    names hold no colon, paths may; a \\u escape could write one the text does not show,
    so a document with a colon to spare and an escape is left to the hook."""
    colons = body.count(":")
    if colons == members:
        return True
    in_dirs = sum(map(str.count, chain.from_iterable(dirs), repeat(":")))
    return colons == members + in_dirs and "\\u" not in body


# the start and end of a reassignment document as Kafka's tool and `render_reassignment`
# write it: "version" 1 first, then the partitions array, and nothing after it
_HEAD = re.compile(
    r'[ \t\n\r]*\{[ \t\n\r]*"version"[ \t\n\r]*:[ \t\n\r]*1[ \t\n\r]*,'
    r'[ \t\n\r]*"partitions"[ \t\n\r]*:[ \t\n\r]*\['
)
_TAIL = re.compile(r"\][ \t\n\r]*\}[ \t\n\r]*\Z")
_RUN = 1 << 17  # characters of entries parsed at a time (some 1,000 entries)


class _RuleBrokenError(Exception):
    """`_in_runs` parsed entries that break a rule (or may repeat a key)."""


def _in_runs(body: str) -> list[PartitionAssignment] | None:
    """The entries of a document laid out as `_HEAD` and `_TAIL` say, each run of them
    (some _RUN characters, cut at a comma that ends an entry: ``},``) parsed alone and
    checked by `_Batches`, its objects freed before the next is parsed: a million entries
    never stand as one parsed document. None when the document is not so laid out, or a
    run is not JSON alone; `_RuleBrokenError` when a rule is broken.

    Each run starts where an entry of the array starts, and a run that parses as an
    array alone (``[`` run ``]``) ends where one ends: a parser reads the same text from
    the same state either way, and the ``]`` closes only the array; so the runs parsed
    are the array's entries, and a run cut inside an entry (at a ``},`` in a string, or
    in a nested value) is no JSON alone."""
    head = _HEAD.match(body)
    if head is None:
        return None
    tail = _TAIL.search(body, max(head.end(), len(body) - 4096))
    if tail is None:
        return None
    batches, out = _Batches(), []
    pos, end = head.end(), tail.start()
    while pos < end:
        cut = body.find("},", min(pos + _RUN, end), end)
        stop = end if cut < 0 else cut + 1
        text = "[" + body[pos:stop] + "]"
        pos = stop + 1
        try:
            parts = orjson.loads(text)
        except orjson.JSONDecodeError:
            return None
        if not parts or set(map(type, parts)) != _DICT:
            raise _RuleBrokenError
        entries = batches.add(parts, text, 0)
        del parts
        if entries is None:
            raise _RuleBrokenError
        out += entries
    if not out or not batches.distinct():
        raise _RuleBrokenError
    return out


def _json_region(text: str, path: str) -> tuple[int, int]:
    """Where the assignment JSON sits: the whole file, or the block Kafka's tool printed."""
    # the plain search first: the regular expression tries every line of a large file
    m = CURRENT_BLOCK.search(text) if CURRENT_TITLE in text else None
    if m is None:
        return 0, len(text)
    start = text.find("{", m.end())
    if start < 0:
        raise InputError(path, "no JSON follows 'Current partition replica assignment'")
    ends = [
        m.start()
        for m in (PROPOSED_BLOCK.search(text, start), ROLLBACK_LINE.search(text, start))
        if m
    ]
    stop = min(ends, default=len(text))
    close = text.rfind("}", start, stop)
    return start, (close + 1 if close >= 0 else stop)  # unclosed: the parser says where


@dataclass(frozen=True)
class PlanFile:
    """A reassignment file read with Kafka's rules: its entries, and where each one is.

    ``one_per_line``: the layout `render_reassignment` writes (the header line, then exactly
    one entry per line, then ``]}``), which Spark can read line by line in parallel."""

    path: str
    entries: list[PartitionAssignment]
    text: str
    start: int
    whole: bool  # the text is the JSON document, nothing around it
    columns: Columns | None = None  # the entries as arrays, when read in the own layout

    @cached_property
    def one_per_line(self) -> bool:
        """(Counted when asked: two scans of the text, which may be a few hundred MB.)"""
        return self.whole and _one_per_line(self.text, len(self.entries))

    def position(self, i: int) -> Position:
        """Where entry ``i`` starts in the file."""
        if self.one_per_line:
            return Position(i + 2, 1)
        try:  # the text is one the standard library parsed (the only way to a PlanFile)
            offset = _locate(self.text, self.start, f"/partitions/{i}", key=False)
        except (ValueError, StopIteration):
            return Position(1, 1)
        return position_in(self.text, offset)

    def error(self, i: int, message: str, hint: str = "") -> InputError:
        pos = self.position(i)
        return InputError(self.path, message, hint, line=pos.line, column=pos.column)

    def check(
        self,
        *,
        where: str,
        topics: Collection[str] | None = None,
        partitions: Callable[[str, int], bool] | None = None,
        brokers: Collection[int] | None = None,
    ) -> None:
        """Refuse the first entry (in file order) for a topic not in ``topics``, a partition
        ``partitions`` does not know, or a broker not in ``brokers``; ``where`` names the
        cluster's source (\"the snapshot\", \"the inventory\") in the message."""
        for i, a in enumerate(self.entries):
            if topics is not None and a.topic not in topics:
                raise self.error(
                    i,
                    f"topic {cut(a.topic)} is not in {where}",
                    "a plan for another cluster, or a topic created since the snapshot",
                )
            if partitions is not None and not partitions(a.topic, a.partition):
                raise self.error(
                    i,
                    f"partition {a.partition} of topic {cut(a.topic)} is not in {where}",
                    "Kafka rejects a reassignment of a partition that does not exist",
                )
            if brokers is not None:
                unknown = [b for b in a.replicas if b not in brokers]
                if unknown:
                    raise self.error(
                        i,
                        f"{_partition(a.topic, a.partition)}: broker(s) "
                        f"{', '.join(map(str, unknown))} are not in {where}",
                        "Kafka rejects a reassignment onto a broker that does not exist",
                    )


def _one_per_line(text: str, count: int) -> bool:
    """The header line, ``count`` lines that each start an entry, a ``]}`` line, and at
    most a final newline (counted, not split: the text may be a few hundred MB)."""
    if "\r" in text or not text.startswith(OWN_HEADER + "\n"):
        return False
    if text.endswith("\n]}\n"):
        lines = count + 2
    elif text.endswith("\n]}"):
        lines = count + 1
    else:
        return False
    # every line after the header that starts an entry follows a newline
    return text.count("\n") == lines and text.count('\n{"topic"') == count


def parse_plan(text: str, path: str = "<reassignment>") -> PlanFile:
    """Parse reassignment JSON (or `kafka-reassign-partitions` output) the way Kafka does;
    every problem is an `InputError` with the file's line and column."""
    return _parse_plan(text, path, own_layout=True)


def _parse_plan(text: str, path: str, *, own_layout: bool) -> PlanFile:
    """`parse_plan`; ``own_layout``: try `read_own_layout` first (False: already tried)."""
    start, end = _json_region(text, path)
    if own_layout and start == 0 and end == len(text):
        with collector_paused():
            own = read_own_layout(text)
        if own is not None:
            return PlanFile(path, own.entries, text, 0, whole=True, columns=own.columns)
    body = text[start:end]
    try:
        with collector_paused():
            entries = _read(body)
    except _PlacedError as found:
        p, pos = found.problem, position_in(text, start + found.offset)
        raise InputError(path, p.message, p.hint, line=pos.line, column=pos.column) from None
    except _UnplacedError:
        pass  # re-read with positions to say what is wrong, and where
    else:
        whole = start == 0 and end == len(text)
        return PlanFile(path, entries, text, start, whole)
    index = LineIndex(body, LineIndex(text), range(start, end)) if start else LineIndex(body)
    try:
        doc: ParsedJson = parse_json(body, index)
    except JsonSyntaxError as exc:
        pos = index.position(exc.offset)
        hint = exc.hint or f"a reassignment file is JSON: {SHAPE_HINT}"
        if exc.kind in (SyntaxKind.EMPTY, SyntaxKind.TOO_DEEP):
            hint = f"a reassignment file is {SHAPE_HINT}"
        raise InputError(path, exc.message, hint, line=pos.line, column=pos.column) from None
    if doc.duplicates:
        d = doc.duplicates[0]
        pos = doc.position(d.offset)
        raise InputError(
            path,
            f"duplicate key {short_key(d.key)}",
            "Kafka's tool and `assign` write each key once: keep one of them",
            line=pos.line,
            column=pos.column,
        )
    try:
        entries = _entries(doc.value)
    except ShapeError as p:
        pos = doc.locate(p.pointer, key=p.key)
        raise InputError(path, p.message, p.hint, line=pos.line, column=pos.column) from None
    return PlanFile(path, entries, text, start, whole=False)


class _UnplacedError(Exception):
    """A problem only a parse of the whole document with positions can place (and name:
    a syntax error, a key twice)."""


class _PlacedError(Exception):
    """A rule broken, and where: ``offset`` in the JSON text."""

    def __init__(self, problem: ShapeError, offset: int) -> None:
        super().__init__(problem.message)
        self.problem = problem
        self.offset = offset


def _read(body: str) -> list[PartitionAssignment]:
    """The entries of ``body``; else `_PlacedError` or `_UnplacedError`."""
    try:
        entries = _in_runs(body)
    except _RuleBrokenError:
        pass  # the whole array was parsed: a rule broken, or perhaps a key twice
    else:
        if entries is not None:
            return entries
        entries = _columns(_loads(body), body)
        if entries is not None:
            return entries
    # a rule broken, or perhaps a key twice: read again with the hook, then entry by entry
    try:
        value = json.loads(body, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except (_DuplicateKeyError, ValueError, RecursionError):
        raise _UnplacedError from None
    try:
        return _entries(value)
    except ShapeError as problem:
        found = ShapeError(problem.pointer, problem.message, problem.hint, key=problem.key)
        alike = _parsed_alike(value, body)
    del value  # the document is not needed to say where: free it
    if not alike:
        raise _UnplacedError  # the positioned parser refuses it first
    raise _PlacedError(found, _locate(body, 0, found.pointer, key=found.key))


def _loads(body: str) -> Any:
    """``body`` parsed (without a duplicate-key hook), by orjson, else by the standard
    library (which reads what orjson refuses but JSON allows: an escaped lone surrogate);
    `_UnplacedError` when neither can. Whatever both read, they read alike (a number
    orjson makes a float, past 64 bits, is no id anyway)."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(body, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # not JSON, or a number of too many digits
        raise _UnplacedError from None


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a plan's objects are made (here, and in
    `assign`, which uses it as a decorator): they are millions, next to none in a cycle,
    and each collection on the way would walk every one made so far (most of the time
    json.loads takes on a million partitions). Any cycle made meanwhile is collected
    after, by a full collection: what the region made is moved to the oldest generation
    (frozen, then unfrozen: no object walked), else the first young collection after it
    would walk them all (~0.4 s at a million partitions), and the next ones again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()  # every object tracked so far, out of the young generations
            gc.unfreeze()  # and into the oldest
            gc.enable()


def _no_constant(name: str) -> Any:
    """NaN and Infinity, which the standard library reads and JSON has not: a syntax
    error (the positioned parser then says where)."""
    raise ValueError(name)


# an escaped UTF-16 surrogate: the positioned parser refuses a lone one, the standard
# library reads it
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _parsed_alike(value: Any, body: str) -> bool:
    """Whether the positioned parser reads ``body`` as the standard library read it
    (``value``; with no key twice, no NaN): all it refuses besides is an escaped surrogate
    and nesting deeper than MAX_DEPTH. Then the part of the document a problem is in,
    parsed alone, locates the problem as a parse of the whole would."""
    if _SURROGATE.search(body):
        return False
    level = [value] if type(value) in _CONTAINERS else []
    for _ in range(MAX_DEPTH):  # a level of containers at a time, at C speed
        if not level:
            return True
        kinds = list(map(type, level))
        objects = compress(level, map(is_, kinds, repeat(dict)))
        arrays = compress(level, map(is_, kinds, repeat(list)))
        inside = list(chain(chain.from_iterable(map(dict.values, objects)), *arrays))
        level = list(compress(inside, map(_CONTAINERS.__contains__, map(type, inside))))
    return not level


_WS = re.compile(r"[ \t\n\r]*")
_INDEX = re.compile(r"0|[1-9][0-9]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, pos: int) -> int:
    """Past the whitespace at ``pos``."""
    m = _WS.match(text, pos)
    assert m is not None  # it matches the empty string
    return m.end()


def _end(text: str, pos: int) -> int:
    """Where the JSON value at ``pos`` ends (read at C speed)."""
    return _DECODER.raw_decode(text, pos)[1]


def _locate(text: str, begin: int, pointer: str, *, key: bool) -> int:
    """Where `ParsedJson.locate` puts ``pointer`` in the JSON document at ``begin`` of
    ``text``, for a document the positioned parser reads alike (`_parsed_alike`): the
    way to the root member it names is walked at C speed, and only that member (in
    "partitions", only the one entry) is parsed with positions."""
    root = _skip(text, begin)
    if not pointer or text[root] != "{":
        return root  # only "" names a part of a document that is not an object
    first, _, rest = pointer[1:].partition("/")
    pos = _skip(text, root + 1)
    while text[pos] == '"':  # each member: its key, a colon, its value
        name, after = _DECODER.raw_decode(text, pos)
        value_at = _skip(text, _skip(text, after) + 1)
        if escape_token(name) == first:
            break
        pos = _skip(text, _end(text, value_at))
        if text[pos] != ",":
            return root  # no such member
        pos = _skip(text, pos + 1)
    else:
        return root
    if not rest:
        return pos if key else value_at
    span, prefix = None, "/" + first
    number = rest.partition("/")[0]
    if name == "partitions" and text[value_at] == "[" and _INDEX.fullmatch(number):
        span = _element(text, value_at, int(number))  # the one entry at fault
    if span is None:
        unit_at, unit_end = value_at, _end(text, value_at)
    else:
        (unit_at, unit_end), prefix = span, f"{prefix}/{number}"
    inner = pointer[len(prefix) :]
    if not inner:
        return unit_at  # an entry: where it starts, no parse needed
    doc = parse_json(text[unit_at:unit_end])
    for candidate in parent_pointers(inner):
        if key and candidate == inner and candidate in doc.key_starts:
            return unit_at + doc.key_starts[candidate]
        if candidate in doc.starts:
            return unit_at + doc.starts[candidate]
    return unit_at


def _element(text: str, pos: int, i: int) -> tuple[int, int] | None:
    """Where element ``i`` of the array at ``pos`` starts and ends; None past its end."""
    pos = _skip(text, pos + 1)
    if text[pos] == "]":
        return None
    for _ in range(i):
        pos = _skip(text, _end(text, pos))
        if text[pos] != ",":
            return None
        pos = _skip(text, pos + 1)
    return pos, _end(text, pos)


def parse_reassignment(text: str, path: str = "<reassignment>") -> list[PartitionAssignment]:
    """Parse reassignment JSON (or `kafka-reassign-partitions` output) the way Kafka does."""
    return parse_plan(text, path).entries


class _DuplicateKeyError(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKeyError
    return out


def read_plan_file(path: str | Path) -> PlanFile:
    """A plan file, read strictly (see `parse_plan`)."""
    data = read_bytes_capped(path, PLAN_BYTES, _WHAT)
    own = _own_layout(data)
    if own is not None:  # ASCII: the text as `read_text` decodes it
        return PlanFile(str(path), own.entries, data.decode("ascii"), 0, True, own.columns)
    return _parse_plan(_decoded(data, path), str(path), own_layout=False)


def read_plan_entries(
    path: str | Path, what: str = "the plan"
) -> tuple[list[PartitionAssignment], Columns | None]:
    """The entries of a plan file, read as `read_plan_file` reads them, and their columns
    when the reader made them; no text kept (to place an error, none is needed after):
    a file in the own layout is read from its bytes a window at a time, never all in
    memory, never decoded (anything else: the whole file read again, and decoded)."""
    own = _own_layout_file(path)
    if own is not None:
        return own.entries, own.columns
    data = read_bytes_capped(path, PLAN_BYTES, what)
    plan = _parse_plan(_decoded(data, path), str(path), own_layout=False)
    return plan.entries, plan.columns


def _own_layout_file(path: str | Path) -> OwnLayout | None:
    """`read_own_layout_file` of the regular file at ``path`` no larger than the plan's
    limit; None for any other (the capped reader reads it, or says why not)."""
    try:
        with Path(path).open("rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > PLAN_BYTES.value():
                return None
            with collector_paused():
                return read_own_layout_file(fh, st.st_size)
    except OSError:
        return None


_WHAT = "the plan"


def _own_layout(data: bytes) -> OwnLayout | None:
    """`read_own_layout` of a file's bytes (a BOM, or any byte not ASCII: not the layout)."""
    with collector_paused():
        return read_own_layout(data)


def _decoded(data: bytes, path: str | Path) -> str:
    """A plan file's bytes as text, as `read_text` decodes them (and refuses them)."""
    try:
        text, _ = decode_utf8(data)
    except EncodingError as exc:
        pos = exc.position
        where = str(Path(path))
        raise InputError(where, exc.message, exc.hint, line=pos.line, column=pos.column) from None
    return text


def read_reassignment(path: str | Path) -> list[PartitionAssignment]:
    return read_plan_file(path).entries


def render_reassignment(assignments: Iterable[PartitionAssignment]) -> str:
    """Deterministic reassignment JSON: sorted, one partition per line, "any" log dirs."""
    rows = sorted(assignments, key=lambda a: (a.topic, a.partition))
    if not rows:
        raise ValueError("Kafka rejects an empty reassignment; nothing to write")
    lines = []
    for a in rows:
        entry = {
            "topic": a.topic,
            "partition": a.partition,
            "replicas": list(a.replicas),
            "observers": list(a.observers),
            "log_dirs": ["any"] * len(a.replicas),
        }
        lines.append(json.dumps(entry, separators=(",", ":"), ensure_ascii=False))
    return '{"version":1,"partitions":[\n' + ",\n".join(lines) + "\n]}\n"


def _election_lines(keys: Iterable[tuple[str, int]]) -> Iterator[str]:
    """The `kafka-leader-election --path-to-json-file` layout Kafka documents,
    ``{"partitions":[{"topic":...,"partition":...},...]}``, one partition a line, as text
    chunks; nothing at all for no partition (Kafka rejects an empty list)."""
    first = True
    for topic, partition in keys:
        yield '{"partitions":[\n' if first else ",\n"
        first = False
        entry = {"topic": topic, "partition": partition}
        yield json.dumps(entry, separators=(",", ":"), ensure_ascii=False)
    if not first:
        yield "\n]}\n"


def render_election(keys: Iterable[tuple[str, int]]) -> str:
    """The election file for these partitions, sorted (`assign --election`)."""
    text = "".join(_election_lines(sorted(set(keys))))
    if not text:
        raise ValueError("no partition to elect a leader for; nothing to write")
    return text


def write_election_stream(path: str | Path, keys: Iterable[tuple[str, int]]) -> int:
    """Stream ``keys`` (sorted, distinct: a Spark result too big to hold) into an election
    file at ``path``, in the same layout as `render_election`, atomically
    (`simulate --unclean-out`). Returns how many were written; with none, nothing is
    written and the result is 0."""
    count = 0

    def counted() -> Iterator[tuple[str, int]]:
        nonlocal count
        for key in keys:
            count += 1
            yield key

    from placement.io.atomic import open_atomic  # (writers only: readers go without)

    try:
        with open_atomic(path) as fh:
            for chunk in _election_lines(counted()):
                fh.write(chunk.encode("utf-8"))
            if not count:
                raise _NothingToWriteError
    except _NothingToWriteError:
        return 0
    return count


class _NothingToWriteError(Exception):
    pass
