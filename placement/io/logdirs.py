"""Partition sizes from `kafka-log-dirs --describe` output
(docs/formats.md, kafka-log-dirs output).

Kafka's tool prints `Querying brokers for log directories information`, then `Received log
directory information from brokers 1,2,3`, then one JSON document on one line: per broker,
its log dirs; per log dir, an error (an exception's class name, or null) and the replicas it
holds, each with `partition` (`<topic>-<number>`), `size` (bytes), `offsetLag` and
`isFuture` (the copy a log-dir move is writing). The banners are optional here, so the bare
JSON (e.g. piped through jq) reads too.

A partition's size is its largest replica's: a replica still catching up after a move is
smaller, and the bytes a move copies are the leader's. Future replicas are left out, log
dirs with an error are reported, and so are replicas of one partition that disagree by
more than DISAGREE_FRACTION and DISAGREE_BYTES: all as notes for the caller to print.

A cluster of a million partitions prints a few hundred MB on one line, too much for the
position-tracking parser (jsonsrc). So the standard library decodes one broker entry at a
time (duplicate keys, NaN and Infinity refused as in jsonsrc), and only on a problem is the
entry at fault (or, for broken syntax, the text up to it) parsed again by jsonsrc, to name
the line and column.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from placement.errors import InputError
from placement.io.formats import QUERYING, RECEIVED
from placement.io.formats import looks_like_logdirs as looks_like_logdirs  # re-exported
from placement.io.jsonsrc import JsonSyntaxError, ShapeError, SyntaxKind, is_json_int, parse_json
from placement.io.limits import BROKERS, PARTITIONS_TOTAL, MiB, check_count
from placement.io.positions import LineIndex, Position, position_in
from placement.io.textfile import char_kind, cut, fits, short, short_key, topic_name_problem
from placement.model.assignment import Key
from placement.model.kafka import INT32_MAX, INT64_MAX, TOPIC_NAME_HINT, topic_name_error

# replicas of one partition disagree when the smallest is below the largest by more than
# both of these: a follower a few segments behind is normal, a tenth of the data is not
DISAGREE_FRACTION = 0.10
DISAGREE_BYTES = 1 * MiB
EXAMPLES = 3  # how many cases a note names

SHAPE_HINT = (
    'kafka-log-dirs prints {"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/data",'
    '"error":null,"partitions":[{"partition":"orders-0","size":123,"offsetLag":0,'
    '"isFuture":false}]}]}]}'
)
BROKER_ID = f"broker ids are integers from 0 to {INT32_MAX}"

_WS = re.compile(r"[ \t\n\r]*")
_BLANK = re.compile(r"[ \t\r]*")
_PARTITION_NUMBER = r"0|[1-9][0-9]{0,9}"  # as Java prints an int: no sign, no leading zero
_BANNER_IDS = re.compile(r"[ \t]*([0-9]{1,10})[ \t]*")


@dataclass(frozen=True)
class SizesRead:
    """Bytes per partition, and what the operator should know about where they came from
    (moves in flight, log dirs with errors, disagreeing replicas): one sentence each."""

    sizes: dict[Key, int]
    notes: list[str] = field(default_factory=list)


class _Lines(LineIndex):
    """Positions in the whole file for offsets into text pieced together from it.
    ``pieces``: (offset in the pieced text, offset in the file) where each piece starts.
    LineIndex.__init__ is not called: it lists every line start of its text, far too slow
    for a file of hundreds of MB when one position is wanted."""

    def __init__(self, text: str, pieces: Sequence[tuple[int, int]]) -> None:
        self._text = text
        self._at = [p[0] for p in pieces]
        self._to = [p[1] for p in pieces]

    def position(self, offset: int) -> Position:
        i = max(bisect.bisect_right(self._at, offset) - 1, 0)
        return position_in(self._text, self._to[i] + offset - self._at[i])


class _DuplicateKeyError(Exception):
    pass


class _SyntaxError(Exception):
    """The fast path met text it does not take; jsonsrc says what and where."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _DuplicateKeyError
    return out


def _constant(name: str) -> Any:
    raise _SyntaxError(name)  # NaN, Infinity: not JSON


def _split_name(name: str) -> tuple[str, int] | str:
    """``orders-events-12`` -> ("orders-events", 12): Kafka joins topic and partition
    with '-', and a topic name may hold '-' too, so the number follows the last one.
    A message when the name is not a legal topic and a partition number."""
    topic, dash, number = name.rpartition("-")
    # the name is quoted only when short: it may be anything, a secret too
    if not dash:
        return f"{short(name)} is not <topic>-<partition>"
    if re.fullmatch(_PARTITION_NUMBER, number) is None or int(number) > INT32_MAX:
        return (
            f"{short(name)} does not end in a partition number (0 to {INT32_MAX}, "
            "without leading zeros)"
        )
    problem = topic_name_problem(topic)
    return (topic, int(number)) if problem is None else problem


_REPLICA_REQUIRED = ("partition", "size", "isFuture")


def _replica_problem(parts: list[Any], ptr: str) -> ShapeError:
    """The first replica of a log dir that the fast checks refused, named."""
    for k, r in enumerate(parts):
        at = f"{ptr}/{k}"
        if type(r) is not dict:
            return ShapeError(at, "a replica entry must be an object", SHAPE_HINT)
        missing = [key for key in _REPLICA_REQUIRED if key not in r]
        if missing:
            return ShapeError(at, f'a replica entry lacks "{missing[0]}"', SHAPE_HINT)
        if type(r["partition"]) is not str:
            return ShapeError(f"{at}/partition", '"partition" must be a string: <topic>-<n>')
        size = r["size"]
        if not is_json_int(size) or not 0 <= size <= INT64_MAX:
            return ShapeError(
                f"{at}/size",
                f'"size" must be an integer from 0 to {INT64_MAX} (bytes)',
                "sizes are Java longs, as Kafka prints them",
            )
        if type(r["isFuture"]) is not bool:
            return ShapeError(f"{at}/isFuture", '"isFuture" must be true or false')
        lag = r.get("offsetLag", 0)
        if not is_json_int(lag) or not -INT64_MAX - 1 <= lag <= INT64_MAX:
            return ShapeError(f"{at}/offsetLag", '"offsetLag" must be an integer')
    raise AssertionError("the fast checks refused a log dir whose replicas are all well formed")


_DICT: frozenset[type] = frozenset({dict})
_STR: frozenset[type] = frozenset({str})
_INT: frozenset[type] = frozenset({int})
_BOOL: frozenset[type] = frozenset({bool})


@dataclass
class _Future:
    broker: int
    log_dir: str
    name: str
    element: int  # which broker entry
    pointer: str  # its "partition" there


class _Reader:
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.decoder = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_constant)
        # for the broker entries: a hook per object costs a third of the reading time, so
        # duplicate keys are looked for only where the members decoded are fewer than the
        # colons in the text (see `brokers`)
        self.fast = json.JSONDecoder(parse_constant=_constant)
        self.members = 0  # members of the objects in the broker entry being read
        self.spans: list[tuple[int, int]] = []  # each broker entry's text
        self.first_name: list[int] = []  # per broker entry: its first index in names
        self.names: list[str] = []  # every replica that counts (not future), in file order
        self.sizes: list[int] = []
        self.broker_at: dict[int, int] = {}  # broker id -> its entry
        self.futures: list[_Future] = []
        self.dir_errors: list[tuple[int, str, str]] = []  # broker, log dir, error
        self.banner: tuple[list[int], int] | None = None  # ids and line of `Received ...`
        self.json_start = 0

    # -- errors -------------------------------------------------------------

    def fail(self, offset: int, message: str, hint: str = "") -> InputError:
        pos = position_in(self.text, offset)
        return InputError(self.path, message, hint, line=pos.line, column=pos.column)

    def at(self, pos: Position, message: str, hint: str = "") -> InputError:
        return InputError(self.path, message, hint, line=pos.line, column=pos.column)

    def reparse(self, element: int) -> Any:
        """Broker entry ``element`` parsed by jsonsrc, its positions in the file."""
        s, e = self.spans[element]
        return parse_json(self.text[s:e], _Lines(self.text, [(0, s)]))

    def strict(self, start: int, end: int) -> None:
        """The standard library takes lone surrogate escapes (\\ud800) that jsonsrc refuses.
        A value with any \\u escape (rare: Kafka writes text as UTF-8) is read again by
        jsonsrc, so that the fast path refuses what jsonsrc refuses."""
        if self.text.find("\\u", start, end) < 0:
            return
        index = _Lines(self.text, [(0, start)])
        try:
            parse_json(self.text[start:end], index)
        except JsonSyntaxError as exc:
            raise self.at(index.position(exc.offset), exc.message, exc.hint) from None

    def problem(self, element: int, p: ShapeError) -> InputError:
        doc = self.reparse(element)
        return self.at(doc.locate(p.pointer, key=p.key), p.message, p.hint)

    def syntax(self, fallback: int, message: str) -> InputError:
        """The first syntax error, in jsonsrc's words: the broker entries read so far stand
        as one character each, the rest of the text is parsed as it is (jsonsrc stops at
        the first error, within the entry that the fast path stopped in)."""
        start = self.json_start
        pieces: list[tuple[int, int]] = []
        chunks: list[str] = []
        length = 0
        for s, e in self.spans:
            for chunk, origin in ((self.text[start:s], start), ("0", s)):
                pieces.append((length, origin))
                chunks.append(chunk)
                length += len(chunk)
            start = e
        pieces.append((length, start))
        chunks.append(self.text[start:])
        index = _Lines(self.text, pieces)
        try:
            parse_json("".join(chunks), index)
        except JsonSyntaxError as exc:
            hint = exc.hint or "kafka-log-dirs prints valid JSON: was the file edited or cut?"
            if exc.kind in (SyntaxKind.EMPTY, SyntaxKind.TOO_DEEP):
                hint = SHAPE_HINT
            return self.at(index.position(exc.offset), exc.message, hint)
        return self.fail(fallback, f"not valid JSON: {message}", SHAPE_HINT)

    # -- the text ------------------------------------------------------------

    def region(self) -> int:
        """Skip the banners; where the JSON starts."""
        text, pos, line = self.text, 0, 1
        while True:
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            first = _BLANK.match(text, pos)
            at = first.end() if first else pos
            if text.startswith(RECEIVED, at):
                self.banner = (self.banner_ids(text[pos:end], line), line)
            elif not self.querying(at, end) and (at < end or end == len(text)):
                break  # neither a banner nor a blank line: the document
            pos, line = end + 1, line + 1
        pos = self.ws(pos)
        if pos >= len(text):
            raise self.fail(
                pos,
                "no JSON document follows the kafka-log-dirs banners",
                "the tool prints the document on the line after them: was its output cut off?",
            )
        if text[pos] != "{":
            # not the tool's output: nothing of the line is quoted (it may be a secret)
            raise self.fail(
                pos,
                f"expected the JSON document kafka-log-dirs prints, found {char_kind(text[pos])}",
                "keep only the tool's standard output: two banner lines, then one JSON "
                "object (warnings captured with 2>&1 do not belong)",
            )
        return pos

    def querying(self, at: int, end: int) -> bool:
        text = self.text
        return text.startswith(QUERYING, at) and not text[at + len(QUERYING) : end].strip()

    def banner_ids(self, line_text: str, line: int) -> list[int]:
        """The broker ids of `Received ... from brokers 1,2,3`."""
        head = line_text.index(RECEIVED) + len(RECEIVED)
        rest = line_text[head:].rstrip("\r")
        ids: list[int] = []
        if not rest.strip():
            return ids
        column = head
        for raw in rest.split(","):
            m = _BANNER_IDS.fullmatch(raw)
            if m is None or int(m[1]) > INT32_MAX:
                raise self.at(
                    Position(line, column + 1 + len(raw) - len(raw.lstrip())),
                    f"the banner lists {short(raw.strip())} among the brokers, not a broker id",
                    BROKER_ID,
                )
            ids.append(int(m[1]))
            column += len(raw) + 1
        return ids

    # -- the document --------------------------------------------------------

    def ws(self, pos: int) -> int:
        m = _WS.match(self.text, pos)
        return m.end() if m else pos

    def decode(self, pos: int, decoder: json.JSONDecoder | None = None) -> tuple[Any, int]:
        """One JSON value at ``pos`` (after whitespace), by the standard library."""
        try:
            value, end = (decoder or self.decoder).raw_decode(self.text, pos)
        except _DuplicateKeyError:
            raise self.duplicate(pos) from None
        except _SyntaxError as exc:
            raise self.syntax(pos, f"{exc} is not a JSON value") from None
        except (ValueError, RecursionError) as exc:  # ValueError: JSON's, or too many digits
            where = getattr(exc, "pos", pos)
            raise self.syntax(where, str(exc)) from None
        self.strict(pos, end)
        return value, end

    def duplicate(self, pos: int) -> InputError:
        """A key repeated inside the value at ``pos``: where, by jsonsrc."""
        try:
            _, end = json.JSONDecoder().raw_decode(self.text, pos)
        except (ValueError, RecursionError) as exc:
            raise self.syntax(getattr(exc, "pos", pos), str(exc)) from None
        doc = parse_json(self.text[pos:end], _Lines(self.text, [(0, pos)]))
        d = doc.duplicates[0]
        return self.at(
            doc.position(d.offset),
            f"duplicate key {short_key(d.key)}",
            "Kafka prints each key once: this file was edited or pieced together",
        )

    def read(self) -> SizesRead:
        text = self.text
        self.json_start = start = self.region()
        pos = self.ws(start + 1)
        seen: dict[str, int] = {}
        values: dict[str, tuple[Any, int]] = {}
        if text.startswith("}", pos):
            pos += 1
        else:
            while True:
                if not text.startswith('"', pos):
                    raise self.syntax(pos, "expected a key")
                key, after = self.decode(pos)
                if key in seen:
                    raise self.fail(
                        pos,
                        f"duplicate key {short_key(key)}",
                        "Kafka prints each key once: this file was edited or pieced together",
                    )
                seen[key] = pos
                after = self.ws(after)
                if not text.startswith(":", after):
                    raise self.syntax(after, "expected ':'")
                value_at = self.ws(after + 1)
                if key == "brokers" and text.startswith("[", value_at):
                    values[key], pos = ([], value_at), self.brokers(value_at)
                else:
                    value, pos = self.decode(value_at)
                    values[key] = (value, value_at)
                    self.top_value(key, value, value_at)
                pos = self.ws(pos)
                if text.startswith(",", pos):
                    pos = self.ws(pos + 1)
                    continue
                if text.startswith("}", pos):
                    pos += 1
                    break
                raise self.syntax(pos, "expected ',' or '}'")
        if self.ws(pos) < len(text):
            raise self.syntax(self.ws(pos), "expected the end of the document")
        self.top(values, start)
        return self.finish()

    def top_value(self, key: str, value: Any, at: int) -> None:
        """Check a member of the document as soon as it is read (`version` often comes
        first: a document of another version is not read as version 1)."""
        if key == "version" and (not is_json_int(value) or value != 1):
            raise self.fail(
                at, f"unsupported version {_version(value)}: kafka-log-dirs prints 1", SHAPE_HINT
            )
        if key == "brokers":
            raise self.fail(at, '"brokers" must be an array of broker entries', SHAPE_HINT)

    def top(self, values: dict[str, tuple[Any, int]], start: int) -> None:
        for key in ("version", "brokers"):
            if key not in values:
                raise self.fail(start, f'the document lacks "{key}"', SHAPE_HINT)

    def brokers(self, pos: int) -> int:
        """The broker entries of the array at ``pos``, one at a time; where it ends."""
        text = self.text
        pos = self.ws(pos + 1)
        if text.startswith("]", pos):
            return pos + 1
        while True:
            value, end = self.decode(pos, self.fast)
            self.spans.append((pos, end))
            element = len(self.spans) - 1
            self.members = 0
            try:
                self.broker(value, element)
            except ShapeError as p:
                self.decode(pos)  # a duplicate key, if any, comes first
                raise self.problem(element, p) from None
            # every member has a colon; fewer members than colons: a colon in a string
            # (rare: Kafka's names have none), or a key that came twice (the decoder kept
            # only its last value). Then the checking decoder says which.
            if self.members != text.count(":", pos, end):
                self.decode(pos)
            pos = self.ws(end)
            if text.startswith(",", pos):
                pos = self.ws(pos + 1)
                if text.startswith("]", pos):
                    raise self.syntax(pos, "trailing comma")
                continue
            if text.startswith("]", pos):
                return pos + 1
            raise self.syntax(pos, "expected ',' or ']'")

    def broker(self, value: Any, element: int) -> None:
        """Check one broker entry and keep its replicas."""
        if type(value) is not dict:
            raise ShapeError("", "a broker entry must be an object", SHAPE_HINT)
        for key in ("broker", "logDirs"):
            if key not in value:
                raise ShapeError("", f'a broker entry lacks "{key}"', SHAPE_HINT)
        self.members += len(value)
        broker = value["broker"]
        if not is_json_int(broker) or not 0 <= broker <= INT32_MAX:
            raise ShapeError("/broker", '"broker" must be a broker id', BROKER_ID)
        if broker in self.broker_at:
            first = position_in(self.text, self.spans[self.broker_at[broker]][0])
            raise ShapeError(
                "/broker",
                f"broker {broker} is listed twice (first at line {first.line}, "
                f"column {first.column})",
                "Kafka prints each broker once: this file was edited or pieced together",
            )
        self.broker_at[broker] = element
        check_count(BROKERS, len(self.broker_at), f"{self.path}: brokers")
        dirs = value["logDirs"]
        if type(dirs) is not list:
            raise ShapeError("/logDirs", '"logDirs" must be an array', SHAPE_HINT)
        self.first_name.append(len(self.names))
        seen: dict[str, int] = {}
        for j, entry in enumerate(dirs):
            self.log_dir(entry, broker, element, f"/logDirs/{j}", seen)
        kept = self.names[self.first_name[-1] :]
        if len(set(kept)) != len(kept):
            raise self.twice(element, broker, kept)

    def log_dir(
        self, entry: Any, broker: int, element: int, ptr: str, seen: dict[str, int]
    ) -> None:
        if type(entry) is not dict:
            raise ShapeError(ptr, "a log dir entry must be an object", SHAPE_HINT)
        for key in ("logDir", "partitions"):
            if key not in entry:
                raise ShapeError(ptr, f'a log dir entry lacks "{key}"', SHAPE_HINT)
        name, error, parts = entry["logDir"], entry.get("error"), entry["partitions"]
        if type(name) is not str or not name:
            raise ShapeError(f"{ptr}/logDir", '"logDir" must be a non-empty string')
        if name in seen:
            raise ShapeError(
                f"{ptr}/logDir", f"broker {broker} lists log dir {cut(name)} twice", SHAPE_HINT
            )
        seen[name] = 1
        if error is not None and type(error) is not str:
            raise ShapeError(f"{ptr}/error", '"error" must be null or a string')
        if error is not None:
            self.dir_errors.append((broker, name, error))
        if type(parts) is not list:
            raise ShapeError(f"{ptr}/partitions", '"partitions" must be an array', SHAPE_HINT)
        # the common case at C speed (a log dir may hold thousands of replicas); the loop
        # in _replica_problem runs only to name what is wrong
        if not set(map(type, parts)) <= _DICT:
            raise _replica_problem(parts, f"{ptr}/partitions")
        self.members += len(entry) + sum(map(len, parts))
        try:
            names = [r["partition"] for r in parts]
            sizes = [r["size"] for r in parts]
            futures = [r["isFuture"] for r in parts]
        except KeyError:
            raise _replica_problem(parts, f"{ptr}/partitions") from None
        lags = [r.get("offsetLag", 0) for r in parts]
        if not (
            set(map(type, names)) <= _STR
            and set(map(type, sizes)) <= _INT
            and (not sizes or (min(sizes) >= 0 and max(sizes) <= INT64_MAX))
            and set(map(type, futures)) <= _BOOL
            and set(map(type, lags)) <= _INT
            and (not lags or (min(lags) >= -INT64_MAX - 1 and max(lags) <= INT64_MAX))
        ):
            raise _replica_problem(parts, f"{ptr}/partitions")
        if True in futures:
            for k, future in enumerate(futures):
                if future:
                    where = f"{ptr}/partitions/{k}/partition"
                    self.futures.append(_Future(broker, name, names[k], element, where))
            names = [n for n, f in zip(names, futures, strict=True) if not f]
            sizes = [s for s, f in zip(sizes, futures, strict=True) if not f]
        self.names += names
        self.sizes += sizes

    def twice(self, element: int, broker: int, kept: list[str]) -> InputError:
        """A partition held twice by one broker (outside a log-dir move): the second."""
        seen: set[str] = set()
        for name in kept:
            if name in seen:
                break
            seen.add(name)
        return self.problem(
            element,
            ShapeError(
                self.locate_name(element, name, nth=2),
                f"broker {broker} holds partition {cut(name)} twice",
                "a broker has one current replica of a partition (and at most one future "
                "replica, isFuture: true): this file was edited or pieced together",
            ),
        )

    def locate_name(self, element: int, name: str, nth: int = 1) -> str:
        """The pointer of the ``nth`` current (not future) replica called ``name`` in broker
        entry ``element``."""
        doc = self.reparse(element)
        for j, entry in enumerate(doc.value["logDirs"]):
            for k, r in enumerate(entry["partitions"]):
                if r["partition"] == name and not r["isFuture"]:
                    nth -= 1
                    if not nth:
                        return f"/logDirs/{j}/partitions/{k}/partition"
        return ""

    # -- the sizes -----------------------------------------------------------

    def bad_name(self, name: str, problem: str, element: int, ptr: str = "") -> InputError:
        return self.problem(
            element,
            ShapeError(
                ptr or self.locate_name(element, name),
                f"replica {problem}",
                f"Kafka prints a replica as <topic>-<partition>; {TOPIC_NAME_HINT}",
            ),
        )

    def first_bad_name(self, bad: set[str]) -> InputError:
        """The first replica in the file whose name is in ``bad``."""
        i = next(i for i, n in enumerate(self.names) if n in bad)
        # the entry holding it: the last one starting at or before i (an entry without
        # replicas starts where the next one does)
        element = bisect.bisect_right(self.first_name, i) - 1
        name = self.names[i]
        problem = _split_name(name)
        assert isinstance(problem, str)
        return self.bad_name(name, problem, element)

    def finish(self) -> SizesRead:
        for f in self.futures:
            problem = _split_name(f.name)
            if isinstance(problem, str):
                raise self.bad_name(f.name, problem, f.element, f.pointer)
        table = pa.table(
            {"name": pa.array(self.names, pa.string()), "size": pa.array(self.sizes, pa.int64())}
        )
        # one thread: faster on string keys than the default pool (measured)
        grouped = table.group_by("name", use_threads=False).aggregate(
            [("size", "max"), ("size", "min")]
        )
        names = grouped.column("name")
        check_count(PARTITIONS_TOTAL, len(names), f"{self.path}: partitions")
        # the split of _split_name, over every distinct name at once
        split = pc.split_pattern(names, "-", max_splits=1, reverse=True)
        whole = pc.not_equal(pc.list_value_length(split), 2)
        if pc.any(whole).as_py():
            raise self.first_bad_name(set(pc.filter(names, whole).to_pylist()))
        topic = pc.list_element(split, 0)
        number = pc.list_element(split, 1)
        bad = pc.invert(pc.match_substring_regex(number, f"^({_PARTITION_NUMBER})$"))
        if not pc.any(bad).as_py():
            partition = pc.cast(number, pa.int64())
            bad = pc.greater(partition, INT32_MAX)
        illegal = {t for t in pc.unique(topic).to_pylist() if topic_name_error(t) is not None}
        if illegal:
            bad = pc.or_(bad, pc.is_in(topic, pa.array(sorted(illegal), pa.string())))
        if pc.any(bad).as_py():
            raise self.first_bad_name(set(pc.filter(names, bad).to_pylist()))
        largest = grouped.column("size_max")
        keys = zip(topic.to_pylist(), partition.to_pylist(), strict=True)
        sizes = dict(zip(keys, largest.to_pylist(), strict=True))
        keyed = pa.table(
            {
                "topic": topic,
                "partition": partition,
                "min": grouped.column("size_min"),
                "max": largest,
            }
        )
        return SizesRead(sizes, self.notes(keyed))

    def notes(self, keyed: pa.Table) -> list[str]:
        notes: list[str] = []
        if not self.names and not self.futures:
            notes.append(
                f"{self.path} lists no replica: no partition gets a size (was --topic-list "
                "or --broker-list narrower than the cluster?)"
            )
        if self.banner is not None:
            ids, line = self.banner
            missing = sorted(set(ids) - set(self.broker_at))
            extra = sorted(set(self.broker_at) - set(ids))
            if missing or extra:
                notes.append(
                    f"{self.path}: the banner on line {line} and the document name different "
                    f"brokers ({_brokers_differ(missing, extra)}): was the file edited or "
                    "pieced together?"
                )
        if self.dir_errors:
            shown = "; ".join(
                f"broker {b} {d}: {e.rpartition('.')[2]}" for b, d, e in self.dir_errors[:EXAMPLES]
            )
            n = len(self.dir_errors)
            notes.append(
                f"{self.path}: {_count(n, 'log dir')} {'reports' if n == 1 else 'report'} an "
                f"error (offline?), so replicas may be missing: {shown}" + _more(n)
            )
        if self.futures:
            shown = "; ".join(
                f"{f.name} on broker {f.broker} {f.log_dir}" for f in self.futures[:EXAMPLES]
            )
            notes.append(
                f"{self.path}: {_count(len(self.futures), 'future replica')} (isFuture: true, "
                f"a move between log dirs in flight) left out of the sizes: {shown}"
                + _more(len(self.futures))
            )
        notes.extend(_disagreeing(keyed, self.path))
        return notes


def _version(value: Any) -> str:
    """A "version" that is not 1, as a message may show it: a short number or string."""
    if isinstance(value, (dict, list)):
        return "(an object)" if isinstance(value, dict) else "(an array)"
    text = json.dumps(value)
    return text if fits(text) else short(str(value))


def _count(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")


def _more(n: int) -> str:
    return f" (and {n - EXAMPLES:,} more)" if n > EXAMPLES else ""


def _brokers_differ(missing: list[int], extra: list[int]) -> str:
    parts = []
    for ids, where in ((missing, "only in the banner"), (extra, "only in the document")):
        if ids:
            shown = ", ".join(map(str, ids[:EXAMPLES])) + _more(len(ids))
            parts.append(f"{where}: {shown}")
    return "; ".join(parts)


def _disagreeing(keyed: pa.Table, path: str) -> list[str]:
    """Partitions whose replicas differ by more than both thresholds, sorted, a few named."""
    low, high = keyed.column("min"), keyed.column("max")
    gap = pc.subtract(high, low)

    def real(col: Any) -> Any:
        # sizes past 2^53 lose their last bits as floats: fine for a 10 % comparison, but
        # the checked (default) cast refuses them
        return pc.cast(col, pa.float64(), safe=False)

    mask = pc.and_(
        pc.greater(gap, DISAGREE_BYTES),
        pc.greater(real(gap), pc.multiply(real(high), DISAGREE_FRACTION)),
    )
    found = keyed.filter(mask)
    if not found.num_rows:
        return []
    first = found.take(
        pc.sort_indices(found, [("topic", "ascending"), ("partition", "ascending")])[:EXAMPLES]
    )
    shown = "; ".join(
        f"{r['topic']}-{r['partition']}: {r['min']:,} to {r['max']:,} bytes"
        for r in first.to_pylist()
    )
    return [
        f"{path}: replicas of {_count(found.num_rows, 'partition')} differ in size by more "
        f"than {DISAGREE_FRACTION:.0%} and {DISAGREE_BYTES // MiB} MiB (a replica catching "
        f"up, or a failed disk?); the largest is used: {shown}" + _more(found.num_rows)
    ]


def parse_logdirs(text: str, path: str = "<kafka-log-dirs>") -> SizesRead:
    """`kafka-log-dirs --describe` output (the banners optional) -> the largest replica's
    size per partition, and notes; every problem is an InputError with line and column."""
    return _Reader(text, path).read()
