"""The reassignment reader's two checks agree: every rule checked a column at a time
(a valid plan) and entry by entry (the first problem, in file order), and a problem found
in a large plan is placed at its line and column by re-reading only the entry at fault."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from placement.errors import InputError
from placement.io.jsonsrc import ShapeError
from placement.io.reassignment import parse_plan, render_reassignment
from placement.io.reassignment_columns import column_entries
from placement.io.reassignment_rules import entries_of
from placement.model.assignment import PartitionAssignment

# a plan as `assign` writes it: 3 racks of brokers, RF 4 with one observer, 2,000 partitions
ROWS = [
    PartitionAssignment(
        f"orders-{t:02d}", p, (p % 7, 10 + p % 5, 20 + p % 3, 30 + t % 4), (30 + t % 4,)
    )
    for t in range(20)
    for p in range(100)
]
PLAN = render_reassignment(ROWS)
LINES = PLAN.split("\n")
# Kafka's own layout: kafka-reassign-partitions prints the whole document on one line
ONE_LINE = json.dumps(
    {
        "version": 1,
        "partitions": [
            {
                "topic": a.topic,
                "partition": a.partition,
                "replicas": list(a.replicas),
                "observers": list(a.observers),
                "log_dirs": ["any"] * len(a.replicas),
            }
            for a in ROWS
        ],
    },
    separators=(",", ":"),
)
KAFKA_OUTPUT = (
    "Current partition replica assignment\n\n"
    + ONE_LINE
    + "\n\nSave this to use as the --reassignment-json-file option during rollback\n"
    + "Proposed partition reassignment configuration\n\n"
    + ONE_LINE
    + "\n"
)
AT = 1234  # the entry that breaks a rule: LINES[AT + 1], line AT + 2 of PLAN
TOPIC, PART = ROWS[AT].topic, ROWS[AT].partition
SHORT = f'{{"topic":"{TOPIC}","partition":{PART}'

# (what entry AT becomes, a word of the message, where the column points in the line)
BROKEN: dict[str, tuple[str, str, str]] = {
    "illegal topic name": (
        f'{{"topic":"orders 01","partition":{PART},"replicas":[1,2]}}',
        "Kafka allows only",
        '"orders 01"',
    ),
    "topic name too long": (
        f'{{"topic":"{"x" * 250}","partition":{PART},"replicas":[1,2]}}',
        "at most 249",
        '"xxx',
    ),
    "topic not a string": (
        f'{{"topic":7,"partition":{PART},"replicas":[1,2]}}',
        "non-empty string",
        "7,",
    ),
    "negative partition": (
        f'{{"topic":"{TOPIC}","partition":-1,"replicas":[1,2]}}',
        "from 0 to",
        "-1",
    ),
    "partition 2^31": (
        f'{{"topic":"{TOPIC}","partition":2147483648,"replicas":[1,2]}}',
        "from 0 to",
        "2147483648",
    ),
    "partition a float": (
        f'{{"topic":"{TOPIC}","partition":1.0,"replicas":[1,2]}}',
        "from 0 to",
        "1.0",
    ),
    "empty replicas": (f'{SHORT},"replicas":[]}}', "empty replica list", "[]"),
    "duplicate broker": (f'{SHORT},"replicas":[4,5,4]}}', "appears twice", "[4,5,4]"),
    "broker id 2^31": (f'{SHORT},"replicas":[4,2147483648]}}', "not a broker id", "2147483648"),
    "negative broker id": (f'{SHORT},"replicas":[4,-5]}}', "not a broker id", "-5"),
    "broker id a float": (f'{SHORT},"replicas":[4,5.0]}}', "not a broker id", "5.0"),
    "broker id true": (f'{SHORT},"replicas":[4,true]}}', "not a broker id", "true"),
    "replicas not an array": (f'{SHORT},"replicas":"4,5"}}', "array of broker ids", '"4,5"'),
    "observers not the tail": (
        f'{SHORT},"replicas":[4,5,6],"observers":[5]}}',
        "not the last",
        "[5]",
    ),
    "observers not replicas": (
        f'{SHORT},"replicas":[4,5,6],"observers":[9]}}',
        "not the last",
        "[9]",
    ),
    "observers all replicas": (
        f'{SHORT},"replicas":[4,5],"observers":[4,5]}}',
        "no sync replica",
        "[4,5]}",
    ),
    "observer a float": (
        f'{SHORT},"replicas":[4,5,6],"observers":[6.0]}}',
        "not a broker id",
        "6.0",
    ),
    "observer true": (f'{SHORT},"replicas":[0,1],"observers":[true]}}', "not a broker id", "true"),
    "log_dirs too short": (
        f'{SHORT},"replicas":[4,5],"log_dirs":["any"]}}',
        "has 1 entries",
        '["any"]',
    ),
    "log_dirs not strings": (
        f'{SHORT},"replicas":[4,5],"log_dirs":["any",1]}}',
        "array of strings",
        '["any",1]',
    ),
    "unknown key": (f'{SHORT},"replicas":[4,5],"leader":4}}', "unknown key", '"leader"'),
    "missing replicas": (f"{SHORT}}}", 'lacks "replicas"', SHORT),
    "not an object": ("[1,2]", "must be an object", "[1,2]"),
    "listed twice": (LINES[AT].rstrip(","), "listed twice", LINES[AT].rstrip(",")),
}


def _refusal(text: str) -> InputError:
    with pytest.raises(InputError) as info:
        parse_plan(text, "plan.json")
    return info.value


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_rule_broken_deep_in_a_plan_is_placed_at_its_line_and_column(kind: str) -> None:
    entry, word, points_at = BROKEN[kind]
    lines = list(LINES)
    lines[AT + 1] = entry + ","
    err = _refusal("\n".join(lines))
    assert word in err.message
    assert err.line == AT + 2
    assert err.column is not None
    assert lines[AT + 1][err.column - 1 :].startswith(points_at)
    assert err.message.startswith(f"plan.json:{err.line}:{err.column}:")


@pytest.mark.parametrize("kind", ["duplicate broker", "observers not the tail", "unknown key"])
def test_a_rule_broken_in_kafkas_one_line_output_is_placed_in_the_whole_file(kind: str) -> None:
    entry, word, points_at = BROKEN[kind]
    original = LINES[AT + 1].rstrip(",")
    assert original in ONE_LINE
    text = KAFKA_OUTPUT.replace(original, entry, 1)  # in the current block (the first)
    err = _refusal(text)
    assert word in err.message
    assert err.line == 3 and err.column is not None
    line = text.split("\n")[2]
    assert line[err.column - 1 :].startswith(points_at)
    assert line.index(entry) < err.column <= line.index(entry) + len(entry)


def test_a_rule_broken_in_a_pretty_printed_plan_is_placed() -> None:
    doc = json.loads(PLAN)
    doc["partitions"][AT]["replicas"] = [4, 5, 4]
    text = json.dumps(doc, indent=2)
    err = _refusal(text)
    assert "appears twice" in err.message
    assert err.line is not None and err.column is not None
    assert text.split("\n")[err.line - 1][err.column - 1 :] == "["
    # the entry's replicas: the first array after the entry's own topic and partition
    before = text.split("\n")[: err.line - 1]
    assert f'"partition": {PART},' in before[-1] and f'"topic": "{TOPIC}",' in before[-2]


def test_a_bad_version_ahead_of_a_large_plan_is_placed() -> None:
    err = _refusal(PLAN.replace('{"version":1,', '{"version":2,', 1))
    assert "unsupported version 2" in err.message
    assert (err.line, err.column) == (1, 12)


def test_unknown_top_level_key_after_the_partitions_is_placed_at_the_key() -> None:
    text = PLAN.rstrip("\n").removesuffix("]}") + '],\n"comment":"x"}\n'
    err = _refusal(text)
    assert 'unknown key "comment"' in err.message
    assert (err.line, err.column) == (len(ROWS) + 3, 1)


def test_colons_in_log_dirs_are_read_and_a_key_twice_is_still_refused() -> None:
    """Keys repeated are told by counting colons; a log dir may hold some of its own."""
    windows = [
        {"topic": a.topic, "partition": a.partition, "replicas": list(a.replicas)}
        | {"log_dirs": ["D:\\kafka-logs"] * len(a.replicas)}
        for a in ROWS[:50]
    ]
    text = json.dumps({"version": 1, "partitions": windows})
    assert [a.key for a in parse_plan(text).entries] == [a.key for a in ROWS[:50]]
    twice = text.replace('"partition": 7,', '"partition": 7, "partition": 7,', 1)
    err = _refusal(twice)
    assert 'duplicate key "partition"' in err.message
    first = twice.index('"partition": 7,')
    assert (err.line, err.column) == (1, twice.index('"partition": 7,', first + 1) + 1)
    # an escaped colon is not in the text: the count cannot tell, the hook does
    hidden = twice.replace("D:\\\\kafka-logs", "D\\u003a\\\\kafka-logs", 1)
    assert 'duplicate key "partition"' in _refusal(hidden).message


def test_what_the_positioned_parser_refuses_first_is_said_first() -> None:
    """A problem after an escaped lone surrogate: the syntax error is reported, as a parse
    of the whole document with positions finds it first."""
    lines = list(LINES)
    lines[10] = lines[10].replace('"any"', '"\\ud800"', 1)
    lines[AT + 1] = BROKEN["duplicate broker"][0] + ","
    err = _refusal("\n".join(lines))
    assert "lone surrogate" in err.message and err.line == 11
    lines[10] = LINES[10].replace("[", "[NaN,", 1)
    err = _refusal("\n".join(lines))
    assert "NaN" in err.message and err.line == 11


def test_entries_are_located_in_kafkas_one_line_output() -> None:
    plan = parse_plan(KAFKA_OUTPUT, "current.txt")
    assert not plan.one_per_line
    for i in (0, 1, AT, len(ROWS) - 1):
        pos = plan.position(i)
        assert pos.line == 3
        line = KAFKA_OUTPUT.split("\n")[2]
        assert line[pos.column - 1 :].startswith(f'{{"topic":"{ROWS[i].topic}","partition":')
        assert json.loads(line[pos.column - 1 :].split("}", 1)[0] + "}")["partition"] == (
            ROWS[i].partition
        )


def test_the_layout_assign_writes_is_recognised_by_its_lines() -> None:
    assert parse_plan(PLAN).one_per_line
    assert parse_plan(PLAN.rstrip("\n")).one_per_line
    assert not parse_plan(PLAN + "\n").one_per_line
    assert not parse_plan(PLAN.replace(",\n{", ",\n {", 1)).one_per_line
    assert not parse_plan(PLAN.replace("\n", "\r\n")).one_per_line


# values near and beyond each rule, to mix into entries (the valid ones first)
_VALUES: dict[str, list[Any]] = {
    "topic": ["t", "orders.v2", "", ".", "a b", "x" * 250, 7, None, ["t"]],
    "partition": [0, 1, 2, 3, 4, 5, -1, 2**31 - 1, 2**31, 1.0, True, "0"],
    "replicas": [[1, 3], [2, 1, 3], [], [1, 1], [1, 2.0], [True], [-1], [2**31], "1", None],
    "observers": [[], [3], [1, 3], [1], [2, 1, 3], [3.0], [True], None],
    "log_dirs": [["any"] * 3, ["a:b", "c:", "any"], ["any"], [1, "a", "b"], None, "any"],
    "leader": [1],
}
_VALID = {"topic": 2, "partition": 6, "replicas": 2, "observers": 3, "log_dirs": 2, "leader": 0}


@st.composite
def documents(draw: st.DrawFn) -> Any:
    """Small reassignment documents, about a third of them valid."""
    entries = []
    for _ in range(draw(st.integers(1, 4))):
        keys = [k for k in ("topic", "partition", "replicas") if draw(st.integers(0, 40))]
        keys += [k for k in ("observers", "log_dirs") if draw(st.booleans())]
        keys += ["leader"] * (draw(st.integers(0, 40)) == 0)
        entry = {}
        for k in keys:
            pool = _VALUES[k][: _VALID[k]] if draw(st.integers(0, 15)) else _VALUES[k]
            entry[k] = draw(st.sampled_from(pool or _VALUES[k]))
        entries.append(entry)
    doc: dict[str, Any] = {"partitions": entries}
    version = draw(st.sampled_from([None, 1, 1, 1, 2, 1.0, True]))
    if version is not None:
        doc["version"] = version
    return doc


@settings(max_examples=500, deadline=None)
@given(documents())
@pytest.mark.slow  # the fast tier leaves it to make test
def test_the_column_check_accepts_only_what_the_entry_check_reads_alike(doc: Any) -> None:
    body = json.dumps(doc)
    by_column = column_entries(json.loads(body), body)
    try:
        by_entry = entries_of(json.loads(body))
    except ShapeError:
        assert by_column is None
        return
    assert by_column is None or by_column == by_entry
