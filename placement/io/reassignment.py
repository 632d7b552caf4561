"""Kafka reassignment JSON (docs/formats.md, reassignment JSON): read with Kafka's rules,
write deterministic bytes.

Plans hold up to millions of partitions, so reading is in tiers. A file in the very
layout `render_reassignment` writes (what `assign --current` reads back) is read as
bytes, with no parser, by `ownlayout`, which leaves anything else, and any rule broken,
to the tiers below. orjson parses (the standard library what orjson refuses and JSON
allows); every rule is then checked a column at a time (all topics, all partition
numbers, all replica lists at once, at C speed), which is all a valid plan costs. A plan
laid out as Kafka's tool and `assign` write it is parsed and checked a run of some
thousand entries at a time (`in_runs`), each run's parsed objects freed before the
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

The tiers by module: `ownlayout` (the own layout, as bytes), `reassignment_columns` (a
column at a time), `reassignment_rules` (an entry at a time), `reassignment_locate`
(where a problem is); writing is `reassignment_write`'s (re-exported here).
"""

from __future__ import annotations

import gc
import json
import os
import re
import stat
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import orjson

from placement.errors import InputError
from placement.io.columns import Columns
from placement.io.jsonsrc import (
    EncodingError,
    JsonSyntaxError,
    ParsedJson,
    ShapeError,
    SyntaxKind,
    decode_utf8,
    parse_json,
)
from placement.io.limits import PLAN_BYTES, read_bytes_capped
from placement.io.ownlayout import (
    OWN_HEADER,
    OwnLayout,
    read_own_layout,
    read_own_layout_file,
)
from placement.io.positions import LineIndex, Position, position_in
from placement.io.reassignment_columns import RuleBrokenError, column_entries, in_runs
from placement.io.reassignment_locate import locate, parsed_alike
from placement.io.reassignment_rules import SHAPE_HINT, entries_of, partition_name
from placement.io.reassignment_write import render_election as render_election
from placement.io.reassignment_write import render_reassignment as render_reassignment
from placement.io.reassignment_write import write_election_stream as write_election_stream
from placement.io.textfile import cut, short_key
from placement.model.assignment import PartitionAssignment

CURRENT_TITLE = "Current partition replica assignment"
CURRENT_BLOCK = re.compile(rf"^\s*{CURRENT_TITLE}\s*$", re.MULTILINE)
PROPOSED_BLOCK = re.compile(r"^\s*Proposed partition reassignment configuration\s*$", re.MULTILINE)
# --execute prints the current assignment (to roll back with), then this line; Kafka 0.9-era
# tools then printed the new assignment as a second JSON document: the block ends here
ROLLBACK_LINE = re.compile(
    r"^\s*Save this to use as the --reassignment-json-file option during rollback\s*$",
    re.MULTILINE,
)


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
            offset = locate(self.text, self.start, f"/partitions/{i}", key=False)
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
                        f"{partition_name(a.topic, a.partition)}: broker(s) "
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
        entries = entries_of(doc.value)
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
        entries = in_runs(body)
    except RuleBrokenError:
        pass  # the whole array was parsed: a rule broken, or perhaps a key twice
    else:
        if entries is not None:
            return entries
        entries = column_entries(_loads(body), body)
        if entries is not None:
            return entries
    # a rule broken, or perhaps a key twice: read again with the hook, then entry by entry
    try:
        value = json.loads(body, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except (_DuplicateKeyError, ValueError, RecursionError):
        raise _UnplacedError from None
    try:
        return entries_of(value)
    except ShapeError as problem:
        found = ShapeError(problem.pointer, problem.message, problem.hint, key=problem.key)
        alike = parsed_alike(value, body)
    del value  # the document is not needed to say where: free it
    if not alike:
        raise _UnplacedError  # the positioned parser refuses it first
    raise _PlacedError(found, locate(body, 0, found.pointer, key=found.key))


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
