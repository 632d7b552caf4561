"""The position-tracking JSON parser: values, source map, every syntax error, depth limit."""

from __future__ import annotations

import contextlib
import json

import pytest

from placement.io.jsonsrc import (
    MAX_DEPTH,
    QUOTE_CHARS,
    DuplicateKey,
    EncodingError,
    JsonSyntaxError,
    ParsedJson,
    SyntaxKind,
    decode_utf8,
    parse_json,
    shorten,
)
from placement.io.positions import LineIndex, Position, pointer

POLICY = """{
  "version": 2,
  "replicas": [
    {"count": 2, "constraints": {"rack": "us-west"}}
  ],
  "observers": []
}
"""


def at(doc: ParsedJson, ptr: str, *, key: bool = False) -> tuple[int, int]:
    p = doc.locate(ptr, key=key)
    return p.line, p.column


def syntax_error(text: str, **kwargs: int) -> JsonSyntaxError:
    with pytest.raises(JsonSyntaxError) as info:
        parse_json(text, **kwargs)
    return info.value


# -- values and the source map ------------------------------------------------------------


def test_value_equals_the_standard_library() -> None:
    assert parse_json(POLICY).value == json.loads(POLICY)


@pytest.mark.parametrize(
    ("ptr", "where"),
    [
        ("", (1, 1)),
        ("/version", (2, 14)),
        ("/replicas", (3, 15)),
        ("/replicas/0", (4, 5)),
        ("/replicas/0/count", (4, 15)),
        ("/replicas/0/constraints", (4, 33)),
        ("/replicas/0/constraints/rack", (4, 42)),
        ("/observers", (6, 16)),
    ],
)
def test_value_positions(ptr: str, where: tuple[int, int]) -> None:
    assert at(parse_json(POLICY), ptr) == where


@pytest.mark.parametrize(
    ("ptr", "where"),
    [
        ("/version", (2, 3)),
        ("/replicas", (3, 3)),
        ("/replicas/0/count", (4, 6)),
        ("/replicas/0/constraints/rack", (4, 34)),
        ("/replicas/0", (4, 5)),  # array elements have no key: the value
    ],
)
def test_key_positions(ptr: str, where: tuple[int, int]) -> None:
    assert at(parse_json(POLICY), ptr, key=True) == where


@pytest.mark.parametrize(
    ("ptr", "where"),
    [
        ("/replicas/0/constraints/zone", (4, 33)),
        ("/replicas/3/count", (3, 15)),
        ("/observers/0", (6, 16)),
        ("/observerPromotionPolicy", (1, 1)),
    ],
)
def test_missing_pointer_falls_back_to_the_nearest_ancestor(
    ptr: str, where: tuple[int, int]
) -> None:
    doc = parse_json(POLICY)
    assert at(doc, ptr) == where
    assert at(doc, ptr, key=True) == where


def test_crlf_line_endings_give_the_same_positions() -> None:
    lf, crlf = parse_json(POLICY), parse_json(POLICY.replace("\n", "\r\n"))
    assert crlf.value == lf.value
    for ptr in lf.starts:
        assert at(crlf, ptr) == at(lf, ptr), ptr
        assert at(crlf, ptr, key=True) == at(lf, ptr, key=True), ptr


def test_escaped_pointer_tokens() -> None:
    text = '{"a/b": {"c~d": [0, {"~1": true}]}}'
    doc = parse_json(text)
    ptr = pointer(["a/b", "c~d", 1, "~1"])
    assert ptr == "/a~1b/c~0d/1/~01"
    assert doc.starts[ptr] == text.index("true")
    assert doc.key_starts[ptr] == text.index('"~1"')
    assert doc.key_starts["/a~1b"] == 1
    assert at(doc, ptr + "/x") == (1, text.index("true") + 1)
    assert at(doc, "/a~1b/c~0d/1/~1") == (1, text.index('{"~1"') + 1)  # no such key: the parent


def test_columns_count_characters_not_bytes() -> None:
    text = '{"rack": "Zürich", "count": 1}'
    doc = parse_json(text)
    assert at(doc, "/count", key=True) == (1, 20)
    assert at(doc, "/count") == (1, 29)
    assert at(parse_json('["😀", 1]'), "/1") == (1, 7)  # one character outside the BMP


def test_empty_containers_are_located() -> None:
    doc = parse_json('{"a": {}, "b": []}')
    assert (at(doc, "/a"), at(doc, "/b")) == ((1, 7), (1, 16))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("3", 3),
        ("-1", -1),
        ("0", 0),
        ("-0", 0),
        ("2147483648", 2147483648),
        ("123456789012345678901234567890", 123456789012345678901234567890),
    ],
)
def test_integers_stay_integers(text: str, value: int) -> None:
    parsed = parse_json(text).value
    assert type(parsed) is int
    assert parsed == value


@pytest.mark.parametrize(
    ("text", "value"),
    [("3.0", 3.0), ("1e3", 1000.0), ("2E-1", 0.2), ("-0.5", -0.5), ("1.5e+2", 150.0)],
)
def test_fractions_and_exponents_are_floats(text: str, value: float) -> None:
    parsed = parse_json(text).value
    assert type(parsed) is float
    assert parsed == value


@pytest.mark.parametrize(("text", "value"), [("true", True), ("false", False), ("null", None)])
def test_literals(text: str, value: object) -> None:
    assert parse_json(f" {text} ").value is value


def test_string_escapes() -> None:
    assert parse_json(r'"a\"b\\c\/d\n\t\u00fc\b\f\r"').value == 'a"b\\c/d\n\tü\b\f\r'


def test_surrogate_pair_escape_is_one_character() -> None:
    assert parse_json(r'"\ud83d\ude00"').value == "\U0001f600"


def test_a_5000_digit_integer_is_a_syntax_error_or_a_value() -> None:
    # either outcome is a finding for the caller; a ValueError is a crash
    with contextlib.suppress(JsonSyntaxError):
        assert parse_json("[" + "9" * 5000 + "]").value == [10**5000 - 1]


def test_duplicate_keys_are_recorded_and_the_last_wins() -> None:
    text = '{"a": 1, "b": {"a": 2}, "a": 3, "\\u0061": 4}'
    doc = parse_json(text)
    assert doc.value == {"a": 4, "b": {"a": 2}}
    first = text.index('"a"')
    assert doc.duplicates == [
        DuplicateKey("/a", "a", text.index('"a": 3'), first),
        DuplicateKey("/a", "a", text.index('"\\u0061"'), first),
    ]
    assert doc.key_starts["/a"] == text.index('"\\u0061"')


def test_duplicate_key_inside_an_array_element() -> None:
    text = '{"replicas": [{"count": 1}, {"count": 2, "count": 3}]}'
    (dup,) = parse_json(text).duplicates
    assert (dup.pointer, dup.offset, dup.first_offset) == (
        "/replicas/1/count",
        text.rindex('"count"'),
        text.index('"count": 2'),
    )


# -- syntax errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "offset", "fragment"),
    [
        ('{"a": 1,}', SyntaxKind.TRAILING_COMMA, 7, "before '}'"),
        ("[1, 2,]", SyntaxKind.TRAILING_COMMA, 5, "before ']'"),
        ("[1,\n\n]", SyntaxKind.TRAILING_COMMA, 2, ""),
        ('{"a": 1 // note\n}', SyntaxKind.COMMENT, 8, "(//)"),
        ("/* note */ {}", SyntaxKind.COMMENT, 0, "(/* */)"),
        ("{\n  # note\n}", SyntaxKind.COMMENT, 4, "(#)"),
        ('{"a": // note\n 1}', SyntaxKind.COMMENT, 6, "(//)"),
        ('{"a" /* x */: 1}', SyntaxKind.COMMENT, 5, ""),
        ("{} // trailer", SyntaxKind.COMMENT, 3, ""),
        ('{"a": "abc', SyntaxKind.TRUNCATED, 10, "string that starts at line 1, column 7"),
        ('{"a": "abc\\', SyntaxKind.TRUNCATED, 11, "inside a string"),
        ('{"a": [1, 2', SyntaxKind.TRUNCATED, 11, "'[' opened at line 1, column 7"),
        ('{"a": ', SyntaxKind.TRUNCATED, 6, "'{' opened at line 1, column 1"),
        ('{"a"', SyntaxKind.TRUNCATED, 4, ""),
        ("", SyntaxKind.EMPTY, 0, "empty"),
        (" \n\t\r\n ", SyntaxKind.EMPTY, 0, "empty"),
        ('{"a": True}', SyntaxKind.INVALID, 6, "'True'"),
        ('{"a": NaN}', SyntaxKind.INVALID, 6, "'NaN'"),
        ('{"a": truex}', SyntaxKind.INVALID, 6, "'truex'"),
        ("{'a': 1}", SyntaxKind.INVALID, 1, "single quote"),
        ("{a: 1}", SyntaxKind.INVALID, 1, "'a'"),
        ('{"a" 1}', SyntaxKind.INVALID, 5, "':' after the key \"a\""),
        ('{"a": 1} {}', SyntaxKind.INVALID, 9, "end of the document"),
        ('{"a": 1,,}', SyntaxKind.INVALID, 8, "a key"),
        ("[,1]", SyntaxKind.INVALID, 1, "a value"),
        ("[1 2]", SyntaxKind.INVALID, 3, "',' or ']'"),
        ('{"a": "x\ny"}', SyntaxKind.INVALID, 8, "unescaped line break"),
        ('{"a": "x\ty"}', SyntaxKind.INVALID, 8, "U+0009"),
        ('{"a": "x\\qy"}', SyntaxKind.INVALID, 8, "'\\q'"),
        ('{"a": "\\u12G4"}', SyntaxKind.INVALID, 7, "'\\u'"),
        ('{"count": <integer>}', SyntaxKind.INVALID, 10, "placeholder <integer>"),
        ("[1, 01]", SyntaxKind.INVALID, 4, "'01'"),
        ("[+1]", SyntaxKind.INVALID, 1, "'+'"),
        ("[.5]", SyntaxKind.INVALID, 1, "'.'"),
        ("[1.]", SyntaxKind.INVALID, 1, "invalid number"),
        ("[0x10]", SyntaxKind.INVALID, 1, "'0x10'"),
        ("[-]", SyntaxKind.INVALID, 1, "invalid number"),
        ("[1e]", SyntaxKind.INVALID, 1, "invalid number"),
        ("[2.0.1]", SyntaxKind.INVALID, 1, "invalid number"),
        ('{"a":\u00a01}', SyntaxKind.INVALID, 5, "U+00A0"),
        ("[" * 300, SyntaxKind.TOO_DEEP, MAX_DEPTH, "deeper than 256"),
    ],
)
def test_syntax_errors(text: str, kind: SyntaxKind, offset: int, fragment: str) -> None:
    err = syntax_error(text)
    assert (err.kind, err.offset) == (kind, offset), err.message
    assert fragment in err.message


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ('{"a": True}', "JSON spells it true"),
        ('{"a": None}', "JSON spells it null"),
        ('{"a": Infinity}', "JSON has no NaN or Infinity"),
        ("{version: 2}", 'object keys must be double-quoted: "version"'),
        ("{'version': 2}", "JSON strings and keys use double quotes"),
        ('{"a": 1,}', "delete the comma after the last element"),
    ],
)
def test_syntax_error_hints(text: str, hint: str) -> None:
    assert syntax_error(text).hint == hint


def test_error_offsets_map_to_lines_and_columns() -> None:
    text = '{\n  "version": 2,\n  "replicas": [\n    {"count": 2,}\n  ]\n}'
    err = syntax_error(text)
    assert LineIndex(text).position(err.offset) == Position(4, 16)


def test_truncation_at_end_of_a_file_with_a_final_newline() -> None:
    text = '{\n  "replicas": [\n'
    err = syntax_error(text)
    assert err.kind is SyntaxKind.TRUNCATED
    assert LineIndex(text).position(err.offset) == Position(3, 1)
    assert "the '[' opened at line 2, column 15 is never closed" in err.message


# -- depth --------------------------------------------------------------------------------


def test_max_depth_levels_are_accepted() -> None:
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH).value is not None
    deep_objects = '{"a":' * MAX_DEPTH + "1" + "}" * MAX_DEPTH
    assert parse_json(deep_objects).value is not None


def test_one_level_more_is_too_deep() -> None:
    err = syntax_error("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    assert (err.kind, err.offset) == (SyntaxKind.TOO_DEEP, MAX_DEPTH)


@pytest.mark.parametrize(
    ("unit", "offset"),
    # the opener at depth 257: the 257th "[", the 257th "{", the "{" of the 129th unit
    [("[", 256), ('{"a":', 256 * 5), ('{"a": [', 128 * 7)],
)
def test_100000_levels_end_in_a_syntax_error_not_recursion(unit: str, offset: int) -> None:
    err = syntax_error(unit * 100_000)
    assert (err.kind, err.offset) == (SyntaxKind.TOO_DEEP, offset)


def test_max_depth_can_be_lowered() -> None:
    assert parse_json("[[[1]]]", max_depth=3).value == [[[1]]]
    err = syntax_error("[[[[1]]]]", max_depth=3)
    assert (err.kind, err.offset) == (SyntaxKind.TOO_DEEP, 3)


# -- bytes --------------------------------------------------------------------------------


def test_decode_plain_and_bom() -> None:
    assert decode_utf8(b'{"a": "\xc3\xbc"}') == ('{"a": "ü"}', False)
    assert decode_utf8(b'\xef\xbb\xbf{"a": 1}') == ('{"a": 1}', True)


@pytest.mark.parametrize(
    "data", [b"\xff\xfe{\x00}\x00", b"\xfe\xff\x00{\x00}"], ids=["utf-16-le", "utf-16-be"]
)
def test_utf16_is_rejected_at_the_start(data: bytes) -> None:
    with pytest.raises(EncodingError) as info:
        decode_utf8(data)
    assert info.value.position == Position(1, 1)
    assert "UTF-16" in info.value.message


@pytest.mark.parametrize(
    ("data", "where", "fragment"),
    [
        # the column counts the "ü" before the bad byte as one character
        (b'{\n"rack": "Z\xc3\xbcrich",\n"\xc3\xbc": "M\xfcnchen"}', (3, 8), "0xfc"),
        (b'[\r\n"\xff"]', (2, 2), "0xff at byte offset 4"),
        (b'["M\xc3', (1, 4), "0xc3"),  # cut inside a two-byte sequence
        (b'\xef\xbb\xbf["\xff"]', (1, 3), "byte offset 5"),  # the BOM is no column
    ],
)
def test_first_invalid_byte_is_located(data: bytes, where: tuple[int, int], fragment: str) -> None:
    with pytest.raises(EncodingError) as info:
        decode_utf8(data)
    assert info.value.position == Position(*where)
    assert fragment in info.value.message


def test_line_index_clamps_offsets() -> None:
    index = LineIndex("ab\ncd\n")
    assert index.position(-5) == Position(1, 1)
    assert index.position(4) == Position(2, 2)
    assert index.position(6) == Position(3, 1)
    assert index.position(99) == Position(3, 1)


# -- what a message quotes of the input ----------------------------------------------------


@pytest.mark.parametrize(
    ("text", "offset", "first"),
    [
        ("https://x-access-token:ghs_SECRET@github.com\n", 0, "'h'"),
        ("  \n\tTrue", 4, "'T'"),
        ("# a shell or YAML file\n{}", 0, "'#'"),
        ("123abc", 0, "'1'"),
        ("\u00fcber", 0, "U+00FC"),
        ("'single'", 0, "U+0027"),
        ("<html>", 0, "'<'"),
    ],
)
def test_text_that_is_no_json_at_all_is_refused_by_its_first_character(
    text: str, offset: int, first: str
) -> None:
    """Another kind of file (a link to a runner's credentials): nothing of it is quoted
    but its first character."""
    err = syntax_error(text)
    assert (err.kind, err.offset, err.not_json) == (SyntaxKind.INVALID, offset, True)
    assert err.message == f"not JSON: unexpected character {first} at the start"
    assert "ghs_" not in err.message + err.hint and "https" not in err.message + err.hint


@pytest.mark.parametrize("text", ['{"a": 1', "[1, x]", "/* c */ {}", '"a" "b"', "[] x"])
def test_an_error_after_the_start_is_not_the_not_json_refusal(text: str) -> None:
    assert not syntax_error(text).not_json


TOKEN = "A" * 100_000


@pytest.mark.parametrize(
    "text",
    [
        '{"a": ' + TOKEN + "}",
        "[1" + TOKEN + "]",
        "[<" + TOKEN + ">]",
        '{"' + TOKEN + '" 1}',
        "{" + TOKEN + ": 1}",
        "[] " + TOKEN,
    ],
    ids=["word", "number", "placeholder", "key", "unquoted-key", "trailer"],
)
def test_a_message_quotes_at_most_16_characters_of_a_token(text: str) -> None:
    err = syntax_error(text)
    assert "A" * 16 not in err.message + err.hint
    assert len(err.message) < 120


def test_shorten_cuts_with_an_ellipsis() -> None:
    assert shorten("abc") == "abc"
    assert shorten("x" * 16) == "x" * 16
    assert shorten("x" * 17) == "x" * 15 + "\u2026"
    assert len(shorten("y" * 100_000)) == QUOTE_CHARS
