"""The lines of the own layout (`ownlayout`), checked and read with byte-level tools a
chunk of some thousand at a time: each line's topic prefix byte for byte, the text left
when its digits are deleted against the layout's text for its replica and observer
counts, each run of digits where a number stands, and then the numbers read at C speed
and the rules of one line checked a column at a time."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from placement.model.kafka import INT32_MAX, topic_name_error

_DIGITS = b"0123456789"
_TOPIC_AT = b'{"topic":"'
_CHUNK = 1 << 21  # bytes searched for line ends at a time (arrays below the 4 MB
# from which numpy asks for huge pages: see
# `ownlayout_make.joined`)
_LONGEST = 64  # the longest replica list read here (longer: the general reader)


def _template(prefix: bytes, r: int, o: int) -> bytes:
    """A line of the layout with its digits deleted: ``prefix`` (the topic's part up to
    the partition number, digits deleted), then ``r`` replicas, ``o`` observers and ``r``
    log dirs, and the comma that ends all lines but the file's last."""
    return (
        prefix
        + b',"replicas":['
        + b"," * (r - 1)
        + b'],"observers":['
        + b"," * max(o - 1, 0)
        + b'],"log_dirs":['
        + b",".join([b'"any"'] * r)
        + b"]},"
    )


def _line_ends(data: bytes | bytearray, begin: int, end: int) -> np.ndarray:
    """Where each newline in ``data[begin:end]`` is, a chunk at a time."""
    found = [np.zeros(0, dtype=np.int64)]
    for lo in range(begin, end, _CHUNK):
        hi = min(lo + _CHUNK, end)
        chunk = np.frombuffer(data, dtype=np.uint8, count=hi - lo, offset=lo)
        found.append(np.flatnonzero(chunk == 10) + lo)
    return np.concatenate(found)


class _Topics:
    """The topics met, numbered, with how each line of one starts: its prefix
    ``{"topic":"NAME","partition":`` (as bytes, and without its digits), its length, how
    many runs of digits it holds and where its digits are; and the text of its lines,
    digits deleted, by counts (`line`)."""

    def __init__(self) -> None:
        self.number: dict[bytes, int] = {}
        self.names: list[str] = []
        self.bare: list[bytes] = []
        self.lines: dict[tuple[int, int, int], bytes] = {}
        self.counts: list[tuple[int, int, int, int]] = []  # `_Shape`'s first four
        self.places: list[list[int]] = []
        self.values: list[list[int]] = []
        self.shape: _Shape | None = None  # `arrays`, while no topic is added

    def line(self, t: int, r: int, o: int) -> bytes:
        """A line of topic ``t`` with ``r`` replicas and ``o`` observers, its digits
        deleted, and its newline (`_template`)."""
        key = (t, r, o)
        out = self.lines.get(key)
        if out is None:
            out = self.lines[key] = _template(self.bare[t], r, o) + b"\n"
        return out

    def add(self, prefix: bytes) -> int | None:
        """The number of the topic whose lines start with ``prefix`` (None: not a legal
        topic name)."""
        t = self.number.get(prefix)
        if t is not None:
            return t
        try:
            name = prefix[len(_TOPIC_AT) : -len(_AFTER_NAME)].decode("ascii")
        except UnicodeDecodeError:
            return None
        if topic_name_error(name) is not None:
            return None
        t = self.number[prefix] = len(self.names)
        self.names.append(name)
        bare = prefix.translate(None, _DIGITS)
        self.bare.append(bare)
        places = [i for i, c in enumerate(prefix) if c in _DIGITS]
        self.places.append(places)
        self.values.append([prefix[i] for i in places])
        runs = len(_NUMBER_RUN.findall(prefix))
        self.counts.append((len(prefix), runs, len(bare), len(places)))
        self.shape = None
        return t

    def arrays(self) -> _Shape:
        """The prefixes as arrays (`_Shape`)."""
        if self.shape is None:
            wide = max(map(len, self.places))
            # each topic's row: its prefix's places of digits, then 0s (a line's "{")
            at = [row + [0] * (wide - len(row)) for row in self.places]
            values = [row + [ord("{")] * (wide - len(row)) for row in self.values]
            length, named, bare, digits = np.array(self.counts, dtype=np.int64).reshape(-1, 4).T
            self.shape = _Shape(
                length,
                named,
                bare,
                digits,
                np.array(at, dtype=np.int64).reshape(len(at), wide),
                np.array(values, dtype=np.uint8).reshape(len(at), wide),
            )
        return self.shape


@dataclass(frozen=True)
class _Shape:
    """Per topic (by number): its prefix's length, runs of digits, length without digits
    and digits; the places of its digits in it (``places[t]``, as long as the most any
    prefix has: the rest 0, the place of a line's "{"), and the bytes there
    (``values[t]``)."""

    length: np.ndarray
    named: np.ndarray
    bare: np.ndarray
    digits: np.ndarray
    places: np.ndarray
    values: np.ndarray


_AFTER_NAME = b'","partition":'
_NUMBER_RUN = re.compile(rb"[0-9]+")
_OPENS = np.zeros(256, dtype=bool)
_OPENS[list(b":[,")] = True
_CLOSES = np.zeros(256, dtype=bool)
_CLOSES[list(b",]")] = True


def _ranges(begins: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The positions ``begins[i] .. begins[i] + counts[i] - 1`` of each i, one after
    another."""
    out: np.ndarray = np.repeat(begins - (np.cumsum(counts) - counts), counts)
    out += np.arange(out.size, dtype=np.int64)
    return out


@dataclass
class Lines:
    """Lines read: per line its topic, replica and observer counts and partition; the
    replica and observer lists one after another."""

    topic: np.ndarray
    sizes: np.ndarray
    observers: np.ndarray
    partitions: np.ndarray
    flat: np.ndarray
    observer_flat: np.ndarray


def _chunk(
    data: bytes | bytearray,
    starts: np.ndarray,
    stop: int,
    topic: np.ndarray,
    topics: _Topics,
    shape: _Shape,
    last: bool,
) -> Lines | None:
    """The lines starting at ``starts`` (the last one ending at ``stop``), of the topics
    ``topic`` (``shape``: `_Topics.arrays`); ``last``: they end the file (no comma after
    the last). None when they are not the layout's text, or break a rule of one line."""
    length, named = shape.length, shape.named
    begin = int(starts[0])
    block = data[begin:stop]
    a = np.frombuffer(block, dtype=np.uint8)
    local = starts - begin
    value = a - 48  # each byte's value as a digit (uint8: what is below "0" wraps past 10)
    digit = value < 10
    if digit[0] or digit[-1]:
        return None
    # runs of digits: each opens and closes where a byte and the next differ in kind
    # (the first and last bytes no digit: changes alternate, an opening first)
    edges = np.flatnonzero(digit[1:] != digit[:-1])
    at_open, at_close = edges[0::2] + 1, edges[1::2]
    bounds = np.append(local, a.size)
    if (np.diff(bounds) <= length[topic]).any():
        return None
    first = np.searchsorted(at_open, bounds)
    runs = np.diff(first)  # runs of digits per line
    count = np.append(0, np.cumsum(at_close - at_open + 1))  # digits before each run
    # each line starts with its topic's prefix, byte for byte: there are as many digits
    # before the prefix's end as it has, its digits are in their places (so no other
    # byte there is a digit), and the other bytes are the prefix's, digits deleted (the
    # lines' text, digits deleted, is compared below)
    held = count[first]  # digits before each line
    if not np.array_equal(
        count[np.searchsorted(at_open, local + length[topic])] - held[:-1], shape.digits[topic]
    ):
        return None
    if not np.array_equal(a[local[:, None] + shape.places[topic]], shape.values[topic]):
        return None
    counted = _counts(block, bounds, held, runs, topic, topics, shape, last)
    if counted is None:
        return None
    sizes, observers = counted
    values = _numbers(a, value, local, runs, first, at_open, at_close, topic, shape, observers)
    if values is None:
        return None
    at = np.cumsum(runs - named[topic]) - (runs - named[topic])  # each line's partition
    # no broker twice in a list, the observers the replicas' tail (checked here, on
    # arrays still in the cache)
    if not _distinct(values, sizes, at + 1):
        return None
    tails = _ranges(at + 1 + sizes, observers)
    observer_flat = values[tails]
    if not np.array_equal(observer_flat, values[tails - np.repeat(observers, observers)]):
        return None
    return Lines(topic, sizes, observers, values[at], values[_ranges(at + 1, sizes)], observer_flat)


def _counts(
    block: bytes | bytearray,
    bounds: np.ndarray,
    held: np.ndarray,
    runs: np.ndarray,
    topic: np.ndarray,
    topics: _Topics,
    shape: _Shape,
    last: bool,
) -> tuple[np.ndarray, np.ndarray] | None:
    """`_chunk`'s lines' replica and observer counts, each line then held to the layout's
    text for its topic and counts (digits deleted); None when one is not."""
    named, bare = shape.named, shape.bare
    # a line of r replicas and o observers is, its digits deleted, its topic's prefix
    # (digits deleted), 43 bytes of keys and brackets, 7 a replica (its comma and "any")
    # and 1 an observer past the first (its comma), and its newline; it holds r + o
    # numbers past its partition: as many bytes as 6 r past the numbers with no
    # observers, 6 r - 1 with some (the lines' counts as read; each line is then
    # compared, byte for byte, with the text of the counts)
    kept = np.diff(bounds) - np.diff(held)  # each line's bytes but its digits
    kept[-1] += 2 if last else 1  # (the block's last line has no newline; the file's, no comma)
    numbers = runs - named[topic] - 1
    sizes = (kept - bare[topic] - 44 - numbers + 5) // 6
    observers = numbers - sizes
    if sizes.min() < 1 or observers.min() < 0 or (observers >= sizes).any():
        return None
    if sizes.max() > _LONGEST:
        return None
    # the digits deleted, what is left is the layout's text for these topics and counts
    # (made a run of lines alike at a time)
    code = (topic * (_LONGEST + 1) + sizes) * (_LONGEST + 1) + observers
    firsts = np.flatnonzero(np.append(True, code[1:] != code[:-1]))
    alike = np.diff(np.append(firsts, code.size)).tolist()
    shapes = map(
        topics.line,
        topic[firsts].tolist(),
        sizes[firsts].tolist(),
        observers[firsts].tolist(),
    )
    expected = b"".join(map(bytes.__mul__, shapes, alike))
    if block.translate(None, _DIGITS) != expected[: -2 if last else -1]:
        return None
    return sizes, observers


def _numbers(
    a: np.ndarray,
    value: np.ndarray,
    local: np.ndarray,
    runs: np.ndarray,
    first: np.ndarray,
    at_open: np.ndarray,
    at_close: np.ndarray,
    topic: np.ndarray,
    shape: _Shape,
    observers: np.ndarray,
) -> np.ndarray | None:
    """`_chunk`'s numbers past each line's prefix, one after another; None when a run of
    digits is out of place, or not a number Kafka has."""
    # and past the prefix, digits only in the places of numbers: each run follows a
    # colon, a bracket or a comma, and is followed by a comma or a bracket (in the text
    # left, that is such a place, and each holds one run at most). The runs fill every
    # place but one where a line has no observers: that one is the observers' (its
    # last number is its last replica's, 4 bytes before the "o" of "observers"; with
    # observers, the last observer's, before the "l" of "log_dirs")
    line = np.repeat(np.arange(local.size, dtype=np.int64), runs)
    slot = at_open >= (local + shape.length[topic])[line]
    opened, closed = at_open[slot], at_close[slot]
    if not (_OPENS[a[opened - 1]].all() and _CLOSES[a[closed + 1]].all()):
        return None
    ends = a[at_close[first[1:] - 1] + 4]
    if not np.array_equal(ends == ord("o"), observers == 0):
        return None
    # the numbers, a digit at a time from the last; none has a leading zero (so past 10
    # digits, none is an id), none is above 2^31 - 1
    digits = closed - opened + 1
    if digits.max() > 10 or (a[opened[digits > 1]] == ord("0")).any():
        return None
    values: np.ndarray = value[closed].astype(np.int64)
    for j in range(1, int(digits.max())):
        values += value[closed - j] * ((digits > j) * 10**j)
    if values.max() > INT32_MAX:
        return None
    return values


class LineReader:
    """The lines read so far: their topics, and the lines as arrays, a chunk at a time."""

    def __init__(self) -> None:
        self.topics = _Topics()
        self.parts: list[Lines] = []

    def read(self, data: bytes | bytearray, begin: int, end: int, last: bool) -> bool:
        """Read the lines of ``data[begin:end]`` (``last``: they end the file); False
        when they are not the layout's text, or break a rule of one line."""
        newlines = _line_ends(data, begin, end)
        starts = np.concatenate([[begin], newlines + 1])
        stops = np.concatenate([newlines, [end]])
        n = starts.size
        # each line's topic: the topic of a run of lines is read off its first line, and
        # the run goes on to the last line starting alike (searched as if the topic's
        # lines were together, as the layout has them; `_chunk` checks every line)
        topics = self.topics
        line_topic = np.zeros(n, dtype=np.int64)
        i = 0
        while i < n:
            s = int(starts[i])
            close = data.find(b'"', s + len(_TOPIC_AT), int(stops[i]))
            if not data.startswith(_TOPIC_AT, s) or close < 0:
                return False
            prefix = bytes(data[s:close]) + _AFTER_NAME
            t = topics.add(prefix)
            if t is None:
                return False
            lo, hi = i, n - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if data.startswith(prefix, int(starts[mid])):
                    lo = mid
                else:
                    hi = mid - 1
            line_topic[i : lo + 1] = t
            i = lo + 1
        shape = topics.arrays()
        for lo in range(0, n, _LINES):
            hi = min(lo + _LINES, n)
            ours = line_topic[lo:hi]
            stop = int(stops[hi - 1])
            got = _chunk(data, starts[lo:hi], stop, ours, topics, shape, last and hi == n)
            if got is None:
                return False
            self.parts.append(got)
        return True


_LINES = 1 << 12  # lines checked at a time


def _distinct(flat: np.ndarray, sizes: np.ndarray, starts: np.ndarray) -> bool:
    """No id twice in any of the lists ``sizes`` long, one after another in ``flat``
    (``starts``: where each starts): the lists of a length at a time, as the rows of a
    table (its places as rows, its lists as columns), each row against those after it."""
    for k in np.unique(sizes).tolist():
        if k < 2:
            continue
        cells = flat[starts[sizes == k] + np.arange(k)[:, None]]
        for d in range(1, k):
            if (cells[d:] == cells[:-d]).any():
                return False
    return True
