"""The reassignment reader's fast path: a plan laid out as Kafka's tool and `assign` write
it is parsed a run of entries at a time (by orjson), and what it reads, refuses and places
is what a parse of the whole document reads, refuses and places; as is what orjson
refuses but JSON allows (then the standard library reads it)."""

from __future__ import annotations

import gc
import json
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_reassignment_fast import AT, BROKEN, LINES, PLAN, ROWS, documents

import placement.io.reassignment_columns as reader
from placement.errors import InputError
from placement.io.jsonsrc import ShapeError
from placement.io.ownlayout_make import assignments
from placement.io.reassignment import collector_paused, parse_plan
from placement.io.reassignment_columns import column_entries, in_runs
from placement.io.reassignment_rules import entries_of
from placement.model.assignment import PartitionAssignment


def _outcome(text: str) -> Any:
    """What `parse_plan` makes of ``text``: the entries, or the refusal and where."""
    try:
        return parse_plan(text, "plan.json").entries
    except InputError as err:
        return (err.message, err.line, err.column)


# runs of one entry parse each entry alone: the slowest case, left to `make test`
@pytest.fixture(params=[pytest.param(1, marks=pytest.mark.slow), 40, 700, 1 << 17])
def run(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Runs of one entry (the smallest a run can be), a few, many, and the default."""
    monkeypatch.setattr(reader, "_RUN", request.param)
    return int(request.param)


def test_a_plan_is_read_in_runs_alike(run: int) -> None:
    assert in_runs(PLAN) == ROWS
    assert parse_plan(PLAN).entries == ROWS


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_rule_broken_in_any_run_is_placed_as_before(run: int, kind: str) -> None:
    entry = BROKEN[kind][0]
    for at in (0, 1234, len(ROWS) - 1):
        lines = list(LINES)
        lines[at + 1] = entry + ("," if at < len(ROWS) - 1 else "")
        text = "\n".join(lines)
        with pytest.raises(reader.RuleBrokenError):
            in_runs(text)
        err = _outcome(text)
        # "listed twice" copies row AT - 1 (the second of the two is refused)
        line = max(at, AT - 1) + 2 if kind == "listed twice" else at + 2
        assert isinstance(err, tuple) and err[1] == line, (kind, at, err)


def test_a_run_cut_inside_a_string_falls_back_to_the_whole_document(run: int) -> None:
    """A log dir holding "}," (where a run may be cut): no run of that cut is JSON alone,
    so the document is read whole, as before."""
    doc = json.loads(PLAN)
    for entry in doc["partitions"][::97]:
        entry["log_dirs"] = ["/data/a},b"] * len(entry["replicas"])
    text = json.dumps(doc, separators=(",", ":"))
    entries = parse_plan(text).entries
    assert entries == ROWS
    if run == 1:  # the first entry's own "}," is a cut
        assert in_runs(text) is None


def test_what_orjson_refuses_but_json_allows_is_read_as_before() -> None:
    """An escaped lone surrogate in a log dir: valid JSON that orjson refuses."""
    text = PLAN.replace('"any"', '"\\udc80"', 1)
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(text)
    assert parse_plan(text).entries == ROWS


@pytest.mark.parametrize(
    "value",
    ["1" + "0" * 30, "9223372036854775808", "-9223372036854775809", "1" + "0" * 5000],
)
def test_numbers_past_64_bits_are_refused_as_before(value: str) -> None:
    """orjson makes a float of some (a JSON number is still no broker id)."""
    for field in ("partition", "replicas"):
        lines = list(LINES)
        old = f'"partition":{ROWS[5].partition}' if field == "partition" else '"replicas":['
        new = f'"partition":{value}' if field == "partition" else f'"replicas":[{value},'
        lines[6] = lines[6].replace(old, new, 1)
        err = _outcome("\n".join(lines))
        assert isinstance(err, tuple) and err[1:] == (7, lines[6].index(value) + 1), err


def test_a_key_twice_in_a_run_is_refused_at_the_second(run: int) -> None:
    lines = list(LINES)
    lines[301] = lines[301].replace('"partition":', '"partition":3,"partition":', 1)
    err = _outcome("\n".join(lines))
    assert err == ('plan.json:302:36: duplicate key "partition"', 302, 36)


def test_a_partition_twice_across_runs_is_refused_at_the_second(run: int) -> None:
    lines = list(LINES)
    lines[1500] = lines[3].rstrip(",") + ","
    err = _outcome("\n".join(lines))
    assert isinstance(err, tuple) and "listed twice" in err[0] and err[1] == 1500 + 1


def test_assignments_are_made_as_the_constructor_makes_them() -> None:
    made = assignments(["t", "u"], [0, 7], [(1, 2), (3, 4, 5)], [(), (5,)])
    assert made == [
        PartitionAssignment("t", 0, (1, 2)),
        PartitionAssignment("u", 7, (3, 4, 5), (5,)),
    ]
    assert [type(a) for a in made] == [PartitionAssignment] * 2
    assert made[1].sync == (3, 4) and hash(made[0]) == hash(PartitionAssignment("t", 0, (1, 2)))


def test_the_collector_is_back_with_nothing_young_to_walk() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        kept = [[i] for i in range(50_000)]
    assert gc.isenabled() and gc.get_count()[0] < 1_000 and len(kept) == 50_000


def _layouts(doc: Any) -> list[str]:
    """``doc`` as Kafka's tool writes it (one line), one entry a line, and spaced out."""
    parts = doc.get("partitions") if isinstance(doc, dict) else None
    out = [json.dumps(doc, separators=(",", ":")), json.dumps(doc, indent=1)]
    if isinstance(parts, list) and list(doc) == ["version", "partitions"]:
        lines = ",\n".join(json.dumps(p, separators=(",", ":")) for p in parts)
        out.append(f'{{"version":{json.dumps(doc["version"])},"partitions":[\n{lines}\n]}}\n')
    return out


@settings(max_examples=300, deadline=None)
@given(documents(), st.sampled_from([1, 2, 60]))
def test_runs_read_and_refuse_what_the_whole_document_does(doc: Any, size: int) -> None:
    """Against the entry-by-entry check of the whole document (what was always read)."""
    for text in _layouts(doc):
        try:
            expected: Any = entries_of(json.loads(text))
        except ShapeError:
            expected = None
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(reader, "_RUN", size)
            got = _outcome(text)
        if expected is None:
            assert isinstance(got, tuple)
        else:
            assert got == expected


@settings(max_examples=300, deadline=None)
@given(documents())
@pytest.mark.slow  # the fast tier leaves it to make test
def test_the_column_check_reads_orjson_as_the_standard_library(doc: Any) -> None:
    body = json.dumps(doc)
    assert column_entries(orjson.loads(body), body) == column_entries(json.loads(body), body)


def test_log_dirs_all_any_or_else_each_a_string() -> None:
    from placement.io.reassignment_columns import _dirs_ok

    assert _dirs_ok([["any"] * 3, ["any"]], [3, 1])
    assert not _dirs_ok([["any"] * 3, ["any"]], [3, 2])
    assert _dirs_ok([["any", "/d:1"], ["x"] * 70], [2, 70])
    assert not _dirs_ok([["any", 1], ["any"]], [2, 1])
    assert not _dirs_ok([["any"] * 70], [69])
    assert not _dirs_ok(["any"], [1])
