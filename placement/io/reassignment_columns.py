"""The rules of `reassignment_rules`, checked a column at a time (all topics, all
partition numbers, all replica lists at once, at C speed): what a valid plan costs.
`in_runs` parses and checks a plan laid out as Kafka's tool and `assign` write it a run
of some thousand entries at a time; `column_entries` checks a whole parsed document.
Either only decides "all good": whatever passes here, `reassignment_rules.entries_of`
accepts, and reads the same."""

from __future__ import annotations

import re
from itertools import chain, compress, repeat
from operator import contains, itemgetter, lt
from typing import Any

import numpy as np
import orjson

from placement.io.ownlayout_make import assignments
from placement.model.assignment import PartitionAssignment
from placement.model.kafka import INT32_MAX, topic_name_error

_INT: frozenset[type] = frozenset({int})
_STR: frozenset[type] = frozenset({str})
_LIST: frozenset[type] = frozenset({list})
_DICT: frozenset[type] = frozenset({dict})
_ABSENT: list[Any] = []  # what a missing "observers" reads as (never changed)


def column_entries(value: Any, body: str) -> list[PartitionAssignment] | None:
    """The entries of ``value`` (``body`` parsed without a duplicate-key hook) when every
    rule `entries_of` enforces holds, checked a column at a time; None when any does not, or
    when ``body`` may repeat a key: then `entries_of` finds the first problem in file order.

    Each test maps a builtin over a whole column (no Python code runs per entry) and only
    decides "all good": whatever passes here, `entries_of` accepts, and reads the same."""
    parts = _partition_list(value)
    if parts is None:
        return None
    batches = _Batches()
    entries = batches.add(parts, body, len(value))
    return entries if entries is not None and batches.distinct() else None


class _Batches:
    """The column checks of `column_entries`, a run of entries at a time (the whole document's,
    or each of the runs `in_runs` parses alone), and what holds across runs: the topic
    names found legal, and each run's (topic, partition) pairs, none twice in all."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}  # each legal topic name, numbered
        self.pairs: list[np.ndarray] = []

    def add(
        self, parts: list[dict[str, Any]], text: str, members: int
    ) -> list[PartitionAssignment] | None:
        """The entries ``parts``, objects parsed from ``text`` (without a duplicate-key
        hook; ``members``: the keys of its other objects), when every rule of `reassignment_rules`
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


class RuleBrokenError(Exception):
    """`in_runs` parsed entries that break a rule (or may repeat a key)."""


def in_runs(body: str) -> list[PartitionAssignment] | None:
    """The entries of a document laid out as `_HEAD` and `_TAIL` say, each run of them
    (some _RUN characters, cut at a comma that ends an entry: ``},``) parsed alone and
    checked by `_Batches`, its objects freed before the next is parsed: a million entries
    never stand as one parsed document. None when the document is not so laid out, or a
    run is not JSON alone; `RuleBrokenError` when a rule is broken.

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
            raise RuleBrokenError
        entries = batches.add(parts, text, 0)
        del parts
        if entries is None:
            raise RuleBrokenError
        out += entries
    if not out or not batches.distinct():
        raise RuleBrokenError
    return out
