"""Reassignment JSON in the very layout `render_reassignment` writes (the header line, one
entry a line, keys in its order, no space, "any" log dirs), read with byte-level tools:
no parser builds a million dicts.

A file `assign` wrote is read back by `assign --current` (a drain, then a rebalance of the
result); at a million partitions the general reader (`reassignment`) spends most of its
time making parsed objects only to take them apart. Here the file is read a window of
some MB at a time into one buffer (never all of it in memory, never decoded), and the
lines a chunk of some thousand at a time: each line must start with its topic's prefix
``{"topic":"NAME","partition":`` byte for byte; every digit deleted, what is left must be,
byte for byte, the text the layout has for the line's replica and observer counts (so
every key, bracket, comma and "any" is where it belongs, and nothing else is there); each
run of digits must stand where a number does (after a colon, bracket or comma, before a
comma or bracket), one to a place, with no leading zero. The numbers are then read at C
speed, and Kafka's rules (ids from 0 to 2^31 - 1, no broker twice, the observers the
replicas' tail and not all of them, no partition twice, legal topic names) checked a
column at a time. Whatever does not pass is read by the general reader, which says what
is wrong and where: this path only ever accepts text the general reader reads alike, and
reads it to the same entries.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from placement.io.columns import Columns
from placement.io.ownlayout_lines import LineReader, Lines
from placement.io.ownlayout_make import assignments as assignments  # re-exported
from placement.io.ownlayout_make import joined, pieces, topic_names, tuples
from placement.model.assignment import PartitionAssignment

OWN_HEADER = '{"version":1,"partitions":['
_HEAD = OWN_HEADER.encode() + b"\n"
_SHARED = 1 << 20  # broker ids below this are looked up in a table


@dataclass(frozen=True)
class OwnLayout:
    """The entries of a file in the own layout, and the same as columns."""

    entries: list[PartitionAssignment]
    columns: Columns


def read_own_layout(text: str | bytes) -> OwnLayout | None:
    """The entries of ``text`` (or of a file's bytes) when it is in the own layout and
    every rule holds; None otherwise (then the general reader reads it)."""
    if isinstance(text, str):
        try:
            text = text.encode("ascii")
        except UnicodeEncodeError:
            return None
    # the whole text one window (no copy of it made)
    begin = len(_HEAD)
    if not text.startswith(_HEAD):
        return None
    if text.endswith(b"\n]}\n"):
        end = len(text) - 4
    elif text.endswith(b"\n]}"):
        end = len(text) - 3
    else:
        return None
    lines = LineReader()
    if end <= begin or not lines.read(text, begin, end, last=True):
        return None
    return _columns(lines.parts, lines.topics.names)


def read_own_layout_file(fh: io.BufferedIOBase, size: int | None = None) -> OwnLayout | None:
    """`read_own_layout` of what ``fh`` reads (``size`` bytes, if known), read a window
    at a time into one buffer (a file of some hundred MB is never all in memory: no page
    of it is made more than once). Every byte read is ASCII: each is a digit, a byte the
    layout's text has there, or in a topic name (whose bytes
    `ownlayout_lines` decodes as ASCII)."""
    buf = bytearray(_WINDOW if size is None else min(_WINDOW, size + 1))
    view = memoryview(buf)
    lines = LineReader()
    held, begin, first = 0, len(_HEAD), True
    while True:
        size, eof = _fill(fh, view, held)
        if first and (size < begin or buf[:begin] != _HEAD):
            return None
        first = False
        if eof:
            if buf[size - 4 : size] == b"\n]}\n":
                end = size - 4
            elif buf[size - 3 : size] == b"\n]}":
                end = size - 3
            else:
                return None
            if end <= begin or not lines.read(buf, begin, end, last=True):
                return None
            del buf, view  # freed before the entries are made
            return _columns(lines.parts, lines.topics.names)
        # the window's lines but its last whole one (which may be the file's last entry,
        # read as such with the next window), and then what follows it, kept for the next
        cut = buf.rfind(b"\n", begin, size)
        cut = buf.rfind(b"\n", begin, max(cut, begin))
        if cut <= begin or not lines.read(buf, begin, cut, last=False):
            return None
        held = size - cut
        buf[:held] = buf[cut:size]
        begin = 1  # past the newline kept


_WINDOW = 1 << 22  # bytes read at a time (at least twice the longest line of the layout)


def _fill(fh: io.BufferedIOBase, view: memoryview, held: int) -> tuple[int, bool]:
    """``view`` past its first ``held`` bytes filled from ``fh``: how many bytes it then
    holds, and whether the file ended first."""
    while held < len(view):
        got = fh.readinto(view[held:])
        if not got:
            return held, True
        held += got
    return held, False


def _columns(parts: list[Lines], names: list[str]) -> OwnLayout | None:
    """The lines as entries and columns, when the rule across lines holds: no partition
    twice."""
    # as written: each chunk's keys in order, and each chunk's after the one before (so
    # none twice); else all sorted
    keys = [(p.topic << 31) | p.partitions for p in parts]
    ordered = all((k[1:] > k[:-1]).all() for k in keys) and all(
        a[-1] < b[0] for a, b in pairwise(keys)
    )
    if not ordered:
        every = np.sort(np.concatenate(keys))
        if (every[1:] == every[:-1]).any():
            return None
    del keys
    topic, sizes, observers, partitions, flat, observer_flat = (
        joined([getattr(p, name) for p in parts]) for name in _FIELDS_OF_LINES
    )
    top = max(int(flat.max()), int(partitions.max()))
    table = None
    if top < _SHARED:  # the ints up to the largest, each one object for all its uses
        table = np.empty(top + 1, dtype=object)
        table[:] = range(top + 1)
    entries = assignments(
        topic_names(names, topic),
        pieces(partitions, table),
        tuples(flat, sizes, table),
        tuples(observer_flat, observers, table),
    )
    return OwnLayout(entries, Columns(names, topic, sizes, observers, flat, observer_flat))


_FIELDS_OF_LINES = ("topic", "sizes", "observers", "partitions", "flat", "observer_flat")
