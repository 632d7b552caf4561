"""A plan file read from its bytes (`read_plan_file`, `read_plan_entries`, what `assign
--current` reads a reassignment JSON with): the own layout is read without decoding the
text, and whatever is not that layout (a BOM, a byte not ASCII, bytes not UTF-8) is read,
or refused with its position, exactly as the text `read_text` decodes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from placement.errors import InputError
from placement.io.current import read_current
from placement.io.reassignment import (
    parse_plan,
    read_plan_entries,
    read_plan_file,
    render_reassignment,
)
from placement.io.textfile import read_text
from placement.model.assignment import PartitionAssignment

PLAN = [
    PartitionAssignment("t", 0, (1, 2, 3), (3,)),
    PartitionAssignment("t", 1, (2, 3, 1)),
    PartitionAssignment("u-9", 0, (3, 1, 2, 4), (2, 4)),
]


def _outcome(path: Path) -> tuple[object, ...]:
    """What each way to read ``path`` makes of it: its entries, or its error."""
    out: list[object] = []
    for read in (
        lambda: read_plan_file(path).entries,
        lambda: read_plan_entries(path)[0],
        lambda: read_current(path).assignments,
        lambda: parse_plan(read_text(path, "the plan"), str(path)).entries,
    ):
        try:
            out.append(read())
        except InputError as exc:
            out.append((str(exc), exc.line, exc.column))
    return tuple(out)


def test_the_own_layout_is_read_from_bytes_with_its_columns(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    text = render_reassignment(PLAN)
    path.write_text(text)
    entries, columns = read_plan_entries(path)
    assert entries == PLAN
    assert columns is not None and columns.names == ["t", "u-9"]
    assert np.array_equal(columns.flat, [1, 2, 3, 2, 3, 1, 3, 1, 2, 4])
    plan = read_plan_file(path)
    assert plan.entries == PLAN and plan.text == text and plan.one_per_line
    assert plan.columns is not None
    state = read_current(path)
    assert state.assignments == PLAN and state.columns is not None


@pytest.mark.parametrize(
    "edit",
    [
        lambda b: b"\xef\xbb\xbf" + b,  # a BOM: read past it, by the general reader
        lambda b: b.replace(b'"u-9"', '"u-é"'.encode()),  # a topic name not ASCII
        lambda b: b.replace(b'"u-9"', b'"u-\xe9"'),  # not UTF-8: refused with its place
        lambda b: b.replace(b'"u-9"', b'"u-\xff\xfe"'),
        lambda b: b.replace(b"[3,1,2,4]", b"[3,1,2,\xc3\xa94]"),
        lambda b: b.replace(b'"any"]', b'"\xe0ny"]', 1),
        lambda b: b.replace(b'"t"', b'"t\x00"', 1),
        lambda b: b.replace(b"\n", b"\r\n"),
        lambda b: b.replace(b'"partition":1', b'"partition":0'),  # a partition twice
    ],
)
def test_what_is_not_the_layout_is_read_as_the_decoded_text_is(
    tmp_path: Path, edit: Callable[[bytes], bytes]
) -> None:
    path = tmp_path / "plan.json"
    path.write_bytes(edit(render_reassignment(PLAN).encode()))
    got = _outcome(path)
    assert all(g == got[-1] for g in got), got
    if isinstance(got[-1], list):
        assert read_plan_entries(path)[1] is None or got[-1] == PLAN
