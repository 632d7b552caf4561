"""The reader of `assign`'s own layout (`ownlayout`): what `render_reassignment` writes is
read back as written, with its columns; anything else, however near, is either read to
the very entries the general reader reads or left to it (None), never read otherwise."""

from __future__ import annotations

import io
import json
import random
from typing import Any

import numpy as np
import pytest

import placement.io.ownlayout as own
import placement.io.ownlayout_lines as own_lines
import placement.io.ownlayout_make as own_make
from placement.io.columns import Columns
from placement.io.jsonsrc import ShapeError
from placement.io.ownlayout import OwnLayout
from placement.io.reassignment import parse_plan, render_reassignment
from placement.io.reassignment_rules import entries_of
from placement.model.assignment import PartitionAssignment

TOPICS = ["a", "b-7", "x1y2", "00q", "yy.z_9", "t" * 249]


def _plan(rng: random.Random, n: int) -> list[PartitionAssignment]:
    out = {}
    for _ in range(n):
        topic = rng.choice(TOPICS)
        size = rng.randint(1, 6)
        reps = tuple(rng.sample(sorted({0, 1, 9, 10, 99, 2**31 - 1, *range(2, 40)}), size))
        k = rng.randint(0, size - 1)
        out[(topic, rng.choice([0, 1, 10, 7777, 2**31 - 1]))] = reps, reps[size - k :]
    return [PartitionAssignment(t, p, r, o) for (t, p), (r, o) in out.items()]


def _read(text: str, *, both: bool = False) -> OwnLayout | None:
    """`read_own_layout` of ``text``, which reads it as one window; the same read from a
    file a window at a time (`read_own_layout_file`) reads it alike or leaves it (a
    window may end a topic's run of lines where the whole text does not: then either
    may leave a line the other reads), never reads it otherwise. ``both``: both read it."""
    whole = own.read_own_layout(text)
    try:
        data = text.encode("ascii")
    except UnicodeEncodeError:
        assert whole is None
        return None
    windows = own.read_own_layout_file(io.BytesIO(data))
    if both:
        assert whole is not None and windows is not None
    if windows is not None:
        assert windows.entries == (whole.entries if whole is not None else _general(text))
    if whole is not None and windows is not None:
        assert whole.columns.names == windows.columns.names
        for name in ("topic", "sizes", "observers", "flat", "observer_flat"):
            assert np.array_equal(getattr(whole.columns, name), getattr(windows.columns, name))
    return whole


def _general(text: str) -> Any:
    """What the whole-document reader makes of ``text``: the entries, or None."""
    try:
        return entries_of(json.loads(text))
    except (ShapeError, ValueError):
        return None


@pytest.mark.parametrize("seed", range(30))
def test_what_assign_writes_is_read_back_with_its_columns(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(own_lines, "_LINES", rng.choice([1, 2, 5, 4096]))  # chunks across topics
    monkeypatch.setattr(own_make, "_RUN", rng.choice([0, 16, 10**6]))  # tuples by runs, by length
    monkeypatch.setattr(own, "_WINDOW", rng.choice([1 << 11, 1 << 13, 1 << 24]))  # windows
    plan = _plan(rng, rng.randint(1, 80))
    text = render_reassignment(plan)
    for written in (text, text.rstrip("\n")):
        got = _read(written, both=True)
        assert got is not None
        want = sorted(plan)
        assert got.entries == want == parse_plan(written).entries
        cols = Columns.of(want)
        assert cols is not None
        assert got.columns.names == cols.names
        for field in ("topic", "sizes", "observers", "flat", "observer_flat"):
            assert np.array_equal(getattr(got.columns, field), getattr(cols, field)), field


# single edits of a line: what each breaks (or not), the general reader judges
EDITS = [
    ('"partition":', '"partition":0'),  # a leading zero
    ('"replicas":[', '"replicas":[,'),  # an empty place
    ('"replicas":[', '"replicas":[-'),
    ('"replicas":[', '"replicas":[7,'),  # one more replica (maybe a broker twice)
    ('"replicas":[', '"replicas":[2147483648,'),
    ('"observers":[', '"observers":[5'),
    ('"observers":[]', '"observers":[1]'),
    ('"replicas"', '"repl1cas"'),
    ('"any"', '"a1ny"'),
    ('"any"', '"an"'),
    ('"any"', '"any","any"'),
    (",", ", "),
    ("]}", "]}1"),
    ('"topic":"', '"topic":"1'),
    ('"topic":"', '"topic":"\\u0061'),
    ('"topic":"', '"topic":"é'),
    ('"topic":"', '"topic":"'),
    ('"log_dirs":["any"', '"log_dirs":["any1"'),
    ("1", "2"),
    ("1", "01"),
    ("1", ""),
    ("0", "00"),
    ("y", "yy"),
    (":", "::"),
]


@pytest.mark.parametrize("seed", range(60))
def test_an_edited_file_is_read_as_the_general_reader_reads_it_or_left_to_it(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(own_lines, "_LINES", rng.choice([1, 3, 4096]))
    monkeypatch.setattr(own_make, "_RUN", rng.choice([0, 10**6]))
    monkeypatch.setattr(own, "_WINDOW", rng.choice([64, 300, 1 << 11, 1 << 24]))
    text = render_reassignment(_plan(rng, rng.randint(2, 30)))
    lines = text.split("\n")
    for _ in range(12):
        edited = list(lines)
        i = rng.randint(1, len(lines) - 3)
        kind = rng.random()
        if kind < 0.6:
            old, new = rng.choice(EDITS)
            at = [j for j in range(len(edited[i])) if edited[i].startswith(old, j)]
            if not at:
                continue
            j = rng.choice(at)
            edited[i] = edited[i][:j] + new + edited[i][j + len(old) :]
        elif kind < 0.8:  # a line twice, or two swapped
            k = rng.randint(1, len(lines) - 3)
            edited[k] = edited[i]
        else:  # one byte, anywhere in the line
            j = rng.randrange(len(edited[i]))
            edited[i] = edited[i][:j] + rng.choice('0123456789,[]:"y{}a ') + edited[i][j + 1 :]
        candidate = "\n".join(edited)
        got = _read(candidate)
        if got is not None:
            assert got.entries == _general(candidate)


@pytest.mark.parametrize(
    "text",
    [
        '{"version":1,"partitions":[\n]}\n',  # no entry
        '{"version":1,"partitions":[\n{"topic":"a","partition":1,"replicas":[1],'
        '"observers":[],"log_dirs":["any"]}\n]}\n\n',  # a blank line at the end
        '{"version":1, "partitions":[\n{"topic":"a","partition":1,"replicas":[1],'
        '"observers":[],"log_dirs":["any"]}\n]}\n',
        '{"version":1,"partitions":[\n{"topic":"a","partition":1,"replicas":[1,1],'
        '"observers":[],"log_dirs":["any","any"]}\n]}\n',  # a broker twice
        '{"version":1,"partitions":[\n{"topic":"a","partition":1,"replicas":[1,2],'
        '"observers":[1],"log_dirs":["any","any"]}\n]}\n',  # observers not the tail
        '{"version":1,"partitions":[\n{"topic":"a","partition":1,"replicas":[1],'
        '"observers":[1],"log_dirs":["any"]}\n]}\n',  # no sync replica
        '{"version":1,"partitions":[\n{"topic":"..","partition":1,"replicas":[1],'
        '"observers":[],"log_dirs":["any"]}\n]}\n',
        '{"version":1,"partitions":[\n{"topic":"a","partition":1,"replicas":[1],'
        '"observers":[],"log_dirs":["any"]},\n{"topic":"a","partition":1,"replicas":[2],'
        '"observers":[],"log_dirs":["any"]}\n]}\n',  # a partition twice
        # a replica's place empty, and a number where no observer is: as many numbers
        '{"version":1,"partitions":[\n{"topic":"a","partition":1,"replicas":[1,],'
        '"observers":[2],"log_dirs":["any","any"]}\n]}\n',
        '{"version":1,"partitions":[\n{"topic":"a","partition":1,"replicas":[1,,3],'
        '"observers":[23],"log_dirs":["any","any","any"]}\n]}\n',
        '{"version":1,"partitions":[\n{"topic":"a","partition":,"replicas":[1,2],'
        '"observers":[2],"log_dirs":["any","any"]}\n]}\n',
    ],
)
def test_what_breaks_a_rule_or_the_layout_is_left_to_the_general_reader(text: str) -> None:
    assert _read(text) is None


@pytest.mark.parametrize("seed", range(10))
def test_runs_of_lines_alike_are_read_a_run_at_a_time(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As `assign` writes: each topic's lists of one length (its observers too, or none)."""
    rng = random.Random(seed)
    monkeypatch.setattr(own_make, "_RUN", rng.choice([0, 2, 16]))
    monkeypatch.setattr(own_make, "_PIECE", rng.choice([1, 7, 1 << 16]))  # runs in pieces
    monkeypatch.setattr(own, "_SHARED", rng.choice([0, 1 << 20]))  # ints by table, or not
    monkeypatch.setattr(own, "_WINDOW", rng.choice([1 << 11, 1 << 24]))
    plan = []
    for topic in rng.sample(TOPICS, rng.randint(1, len(TOPICS))):
        size = rng.randint(1, 6)
        k = rng.randint(0, size - 1)
        for p in range(rng.randint(1, 40)):
            reps = tuple(rng.sample(range(2**31 - 40, 2**31), size) if p % 7 else range(size))
            plan.append(PartitionAssignment(topic, p, reps, reps[size - k :]))
    got = _read(render_reassignment(plan), both=True)
    assert got is not None
    assert got.entries == sorted(plan) == _general(render_reassignment(plan))


@pytest.mark.parametrize("shared", [0, 1 << 20])
def test_lists_of_one_id_share_a_tuple_per_id(shared: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(own, "_SHARED", shared)
    monkeypatch.setattr(own_make, "_RUN", 0)
    rng = random.Random(shared)
    plan = [
        PartitionAssignment(t, p, reps, reps[-1:] if p % 5 else ())
        for t in ("a", "b")
        for p in range(60)
        for reps in [tuple(rng.sample([1, 2, 3, 2**31 - 1], 2 + p % 3))]
    ]
    plan.append(PartitionAssignment("c", 0, (2,)))
    text = render_reassignment(plan)
    got = _read(text, both=True)
    assert got is not None
    assert got.entries == sorted(plan) == _general(text)
    tails = {id(a.observers) for a in got.entries if a.observers}
    assert len(tails) <= 4  # one tuple per id


@pytest.mark.parametrize(
    "other", ["x1y3", "x11y2", "x1y22", "x1y", "xy2", "1x1y2", "x2y1", "x1y2x"]
)
@pytest.mark.parametrize("lines", [1, 4096])
def test_a_line_of_another_topic_within_a_topics_run_is_told_apart(
    other: str, lines: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lines of a topic are found as a run from its first line; each line is then held
    to that topic's prefix, byte for byte (a name differing only in its digits too)."""
    monkeypatch.setattr(own_lines, "_LINES", lines)
    plan = [PartitionAssignment("x1y2", p, (p + 1, p + 2), (p + 2,)) for p in range(9)]
    text = render_reassignment(plan)
    for i in (1, 4, 8):
        edited = text.split("\n")
        edited[i] = edited[i].replace('"x1y2"', f'"{other}"')
        candidate = "\n".join(edited)
        want = _general(candidate)
        assert want is not None and any(a.topic == other for a in want)
        got = _read(candidate)
        assert got is None or got.entries == want


@pytest.mark.parametrize("window", [1 << 9, 1 << 10, 1 << 11, 1 << 13])
def test_a_file_is_read_a_window_at_a_time_wherever_the_windows_end(
    window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows ending anywhere in a line, at its newline, or at the file's end: the last
    entry (no comma after it) is always read with the file's end."""
    monkeypatch.setattr(own, "_WINDOW", window)
    plan = [PartitionAssignment(f"t{p % 3}", p, (p + 10, p + 50, 7), (7,)) for p in range(40)]
    text = render_reassignment(plan)
    for pad in range(60):  # moves where each window ends
        padded = text.replace('"t0"', '"t0' + "_" * pad + '"')
        for written in (padded, padded.rstrip("\n")):
            got = _read(written, both=True)
            assert got is not None
            assert got.entries == _general(written)
    assert _read(text[:-4] + ",\n]}\n") is None  # a comma after the last


@pytest.mark.parametrize("size", [0, 10, 200, 10**6])
def test_a_file_longer_than_its_size_said_is_read_or_left(size: int) -> None:
    """(A file grown since its size was taken: read in windows of that size, or left.)"""
    plan = [PartitionAssignment("t", p, (p + 10, p + 50), ()) for p in range(30)]
    text = render_reassignment(plan).encode()
    got = own.read_own_layout_file(io.BytesIO(text), size)
    assert got is None or got.entries == plan
    if size >= len(text):
        assert got is not None
