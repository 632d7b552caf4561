"""Java .properties parsing, and positions of placement policies inside properties files."""

from __future__ import annotations

import pytest

from placement.io.jsonsrc import JsonSyntaxError, parse_json
from placement.io.positions import LineIndex, Position
from placement.io.properties import Property, parse_properties
from placement.rules.base import CheckContext
from placement.rules.validate import validate_properties_bytes

KEY = "confluent.log.placement.constraints"


def pairs(text: str) -> list[tuple[str, str]]:
    return [(p.key, p.value) for p in parse_properties(text)]


def only(text: str) -> Property:
    (prop,) = parse_properties(text)
    return prop


@pytest.mark.parametrize(
    ("line", "key", "value"),
    [
        ("broker.rack=us-west", "broker.rack", "us-west"),
        ("broker.rack = us-west", "broker.rack", "us-west"),
        ("broker.rack:us-west", "broker.rack", "us-west"),
        ("broker.rack : us-west", "broker.rack", "us-west"),
        ("broker.rack us-west", "broker.rack", "us-west"),
        ("broker.rack\tus-west", "broker.rack", "us-west"),
        ("broker.rack\f=\fus-west", "broker.rack", "us-west"),
        ("broker.rack   us-west  ", "broker.rack", "us-west  "),  # trailing blanks are kept
        ("broker.rack==us-west", "broker.rack", "=us-west"),
        ("broker.rack:=us-west", "broker.rack", "=us-west"),
        ("broker.rack = a=b:c", "broker.rack", "a=b:c"),
        ("broker.rack", "broker.rack", ""),
        ("broker.rack=", "broker.rack", ""),
        ("   broker.rack=us-west", "broker.rack", "us-west"),
    ],
)
def test_separators(line: str, key: str, value: str) -> None:
    assert pairs(line + "\n") == [(key, value)]


@pytest.mark.parametrize(
    "comment", ["# a comment", "! a comment", "   # indented", "\t! tab", "#", "!"]
)
def test_comment_lines(comment: str) -> None:
    assert pairs(f"{comment}\nnode.id=1\n") == [("node.id", "1")]


def test_a_hash_inside_a_value_is_not_a_comment() -> None:
    assert pairs("listeners=PLAINTEXT://h:9092 # not a comment\n") == [
        ("listeners", "PLAINTEXT://h:9092 # not a comment")
    ]


def test_blank_lines_and_no_final_newline() -> None:
    assert pairs("\n\n  \t\na=1\n\nb=2") == [("a", "1"), ("b", "2")]


def test_duplicates_are_kept_in_file_order() -> None:
    assert pairs("a=1\nb=2\na=3\n") == [("a", "1"), ("b", "2"), ("a", "3")]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("k=a\\\n   b\\\n\tc\n", "abc"),  # leading blanks of continuation lines dropped
        ("k=a, \\\n  b\n", "a, b"),  # blanks before the backslash kept
        ("k=a\\\n  # b\n", "a# b"),  # a continuation line is never a comment
        ("k=a\\\r\n  b\r\n", "ab"),
        ("k=a\\\r  b\r", "ab"),
        ("k=a\\", "a"),  # backslash at the end of the file
        ("k=\\\n  a\n", "a"),
    ],
)
def test_continuation_lines(text: str, value: str) -> None:
    prop = only(text)
    assert (prop.key, prop.value, prop.line, prop.column) == ("k", value, 1, 1)


def test_an_escaped_backslash_at_the_end_does_not_continue() -> None:
    assert pairs("k=a\\\\\nnext=b\n") == [("k", "a\\"), ("next", "b")]


def test_a_blank_line_ends_a_continued_value() -> None:
    assert pairs("k=a\\\n\nnext=b\n") == [("k", "a"), ("next", "b")]


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("k=tab\\there\n", "k", "tab\there"),
        ("k=a\\nb\\rc\\fd\n", "k", "a\nb\rc\fd"),
        ("k=M\\u00fcnchen\n", "k", "München"),
        ("k=\\u00FC\n", "k", "ü"),
        ('k={"version"\\:2}\n', "k", '{"version":2}'),  # as java.util.Properties.store writes
        ("k=\\=\\#\\!\\ x\n", "k", "=#! x"),
        ("k=\\q\n", "k", "q"),  # an unknown escape drops the backslash
        ("my\\:key=v\n", "my:key", "v"),
        ("my\\=key=v\n", "my=key", "v"),
        ("my\\ key v\n", "my key", "v"),
    ],
)
def test_escapes(text: str, key: str, value: str) -> None:
    assert pairs(text) == [(key, value)]


def test_lines_and_columns_of_keys() -> None:
    text = "# header\r\n\r\nnode.id=1\r\n  broker.rack = us-west\r\n"
    props = parse_properties(text)
    assert [(p.key, p.line, p.column) for p in props] == [
        ("node.id", 3, 1),
        ("broker.rack", 4, 3),
    ]


@pytest.mark.parametrize(
    "text",
    [
        'k={"a": 1}\n',
        'k = {"a": \\\n    1}\n',
        'k={"a"\\: "M\\u00fcnchen"}\n',
        'k:\\\n  {"a":\\\r\n\t[1,\\\r  2]}',
    ],
)
def test_value_offsets_point_at_the_characters_in_the_file(text: str) -> None:
    prop = only(text)
    assert len(prop.value_offsets) == len(prop.value)
    assert list(prop.value_offsets) == sorted(set(prop.value_offsets))
    for ch, off in zip(prop.value, prop.value_offsets, strict=True):
        # an escaped character maps to its backslash
        assert text[off] in (ch, "\\"), (ch, off)


def _json_error_position(text: str) -> Position:
    physical = LineIndex(text)
    (prop,) = (p for p in parse_properties(text) if p.key == KEY)
    index = LineIndex(prop.value, physical, prop.value_offsets)
    with pytest.raises(JsonSyntaxError) as info:
        parse_json(prop.value, index)
    return index.position(info.value.offset)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        # the trailing comma is on the continuation line, after 4 blanks of indentation
        (f'{KEY}={{"version": 2, \\\n    "replicas": [1,]}}\n', (2, 19)),
        # escaped colons (java.util.Properties.store) shift the later characters
        (f'{KEY}={{"version"\\:2, "replicas"\\: [1,]}}\n', (1, 67)),
        # a \\u escape is one character of the value but six of the file
        (f'{KEY}={{"rack": "M\\u00fcnchen", "x": [1,]}}\n', (1, 69)),
        # truncated value: just after its last character
        (f'# c\n{KEY} = {{"version": 2\nnext=1\n', (2, 52)),
    ],
)
def test_json_errors_inside_a_value_are_located_in_the_file(
    text: str, where: tuple[int, int]
) -> None:
    assert _json_error_position(text) == Position(*where)


def test_policy_findings_point_into_the_properties_file() -> None:
    text = (
        "# kafka-east-1\n"
        "broker.rack=us-east\n"
        f'{KEY}={{"version": 2, \\\n'
        '    "replicas": [{"count": 2, "constraints": {"rack": ""}}]}\n'
    )
    (diag,) = validate_properties_bytes(text.encode(), "server.properties", CheckContext())
    assert (diag.code, diag.line, diag.column) == ("MRC207", 4, 55)
    assert diag.pointer == "/replicas/0/constraints/rack"
    assert diag.context == KEY


def test_policy_findings_in_a_file_with_cr_line_endings() -> None:
    text = (
        "broker.rack=us-west\r"
        f'{KEY}={{"version": 3, "replicas": [{{"count": 1, "constraints": {{"rack": "a"}}}}]}}\r'
    )
    (diag,) = validate_properties_bytes(text.encode(), "server.properties", CheckContext())
    assert (diag.code, diag.line, diag.column) == ("MRC202", 2, 49)
