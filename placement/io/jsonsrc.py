"""Strict JSON parsing that remembers where every value came from.

The standard library's parser throws away positions, accepts duplicate keys
silently and recurses (so deep nesting ends in RecursionError). Placement files
are small, so a hand-written iterative parser costs little and gives exact
line:column for every syntax error and every value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from placement.errors import InputError
from placement.io.positions import LineIndex, Position, escape_token, parent_pointers

MAX_DEPTH = 256

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_STRING_CHUNK = re.compile(r'[^"\\\x00-\x1f]*')
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.+-]*")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_NOT_JSON_WORDS = {
    "True": "true",
    "False": "false",
    "None": "null",
    "NULL": "null",
    "TRUE": "true",
    "FALSE": "false",
    "Null": "null",
}


class SyntaxKind(StrEnum):
    """Why a document is not valid JSON; each kind has its own rule code."""

    INVALID = "invalid"
    COMMENT = "comment"
    TRAILING_COMMA = "trailing-comma"
    TRUNCATED = "truncated"
    EMPTY = "empty"
    ENCODING = "encoding"
    TOO_DEEP = "too-deep"


QUOTE_CHARS = 16  # the most of an input's text a message quotes
NOT_JSON = "not JSON"  # how the message for text that is no JSON at all starts


def shorten(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` as a message may quote it: at most ``limit`` characters, the last an
    ellipsis when it is cut. Input may be a file that is not what the reader expects (a
    symlink to a runner's credentials): a message never carries more of it than this."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def describe_char(ch: str) -> str:
    """One character of the input, for a message: 'h', or U+00A0 when it is not
    printable ASCII (or is a quote)."""
    if ch.isascii() and ch.isprintable() and ch not in "'\"":
        return f"'{ch}'"
    return f"U+{ord(ch):04X}"


class JsonSyntaxError(Exception):
    """What is wrong (``kind``, and ``found``: the comment marker, for a comment), where
    (``offset``), and a message and hint that hold for any JSON input. A reader of one
    particular input may say more: the MRC1xx rules word it for placement policies.

    ``not_json``: the text fails at its first character, so it is no JSON at all (another
    kind of file): the message says so and quotes nothing of it but that character."""

    def __init__(
        self,
        kind: SyntaxKind,
        message: str,
        offset: int,
        hint: str = "",
        found: str = "",
        *,
        not_json: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.offset = offset
        self.hint = hint
        self.found = found
        self.not_json = not_json


class ShapeError(Exception):
    """A parsed document that is valid JSON but not the expected shape: the JSON pointer
    of the value at fault (``key``: point at its key rather than its value), a message
    and a hint. A reader turns it into the InputError at ``ParsedJson.locate``."""

    def __init__(self, pointer: str, message: str, hint: str = "", key: bool = False) -> None:
        super().__init__(message)
        self.pointer = pointer
        self.message = message
        self.hint = hint
        self.key = key


def is_json_int(value: Any) -> bool:
    """An integer as a JSON parser returns it: not a bool (Python counts True as 1), not
    2.0. (A parser makes no other int subclass, so the exact type is the test.)"""
    return type(value) is int


class EncodingError(Exception):
    """The bytes are not UTF-8; ``line``/``column`` locate the first bad byte."""

    def __init__(self, message: str, position: Position, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.position = position
        self.hint = hint


class DuplicateKey(NamedTuple):  # a named tuple: cheaper to create than a dataclass
    pointer: str  # pointer of the repeated member
    key: str
    offset: int
    first_offset: int


@dataclass(slots=True)
class ParsedJson:
    """A parsed document plus its source map (pointer -> offsets)."""

    value: Any
    index: LineIndex
    starts: dict[str, int] = field(default_factory=dict)
    key_starts: dict[str, int] = field(default_factory=dict)
    duplicates: list[DuplicateKey] = field(default_factory=list)

    def position(self, offset: int) -> Position:
        return self.index.position(offset)

    def locate(self, ptr: str, *, key: bool = False) -> Position:
        """Where ``ptr`` starts; its key when ``key`` is set; else its nearest ancestor."""
        for candidate in parent_pointers(ptr):
            if key and candidate == ptr and candidate in self.key_starts:
                return self.position(self.key_starts[candidate])
            if candidate in self.starts:
                return self.position(self.starts[candidate])
        return Position(1, 1)


def decode_utf8(data: bytes) -> tuple[str, bool]:
    """Decode ``data`` as UTF-8; return the text and whether a BOM was stripped."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise EncodingError(
            "file is UTF-16 encoded, not UTF-8",
            Position(1, 1),
            "re-save the file as UTF-8 (without a byte order mark)",
        )
    bom = data.startswith(b"\xef\xbb\xbf")
    if bom:
        data = data[3:]
    try:
        return data.decode("utf-8"), bom
    except UnicodeDecodeError as exc:
        good = data[: exc.start].decode("utf-8")
        raise EncodingError(
            f"invalid UTF-8 byte 0x{data[exc.start]:02x} at byte offset {exc.start + 3 * bom}",
            LineIndex(good).position(len(good)),
            "save the file as UTF-8; a Latin-1 or Windows-1252 character probably slipped in",
        ) from None


class _Frame:
    __slots__ = ("container", "is_object", "key", "open_offset", "ptr", "seen")

    def __init__(self, is_object: bool, ptr: str, open_offset: int) -> None:
        self.is_object = is_object
        self.container: Any = {} if is_object else []
        self.ptr = ptr
        self.open_offset = open_offset
        self.key = ""
        self.seen: dict[str, int] = {}


class _Parser:
    def __init__(self, text: str, index: LineIndex, max_depth: int) -> None:
        self.text = text
        self.n = len(text)
        self.index = index
        self.max_depth = max_depth
        self.doc = ParsedJson(None, index)

    # -- errors -------------------------------------------------------------

    def where(self, offset: int) -> str:
        p = self.index.position(offset)
        return f"line {p.line}, column {p.column}"

    def unexpected(self, pos: int, expected: str, stack: list[_Frame]) -> JsonSyntaxError:
        if pos >= self.n:
            if stack:
                top = stack[-1]
                opener = "{" if top.is_object else "["
                return JsonSyntaxError(
                    SyntaxKind.TRUNCATED,
                    f"unexpected end of file: expected {expected}; the '{opener}' opened at "
                    f"{self.where(top.open_offset)} is never closed",
                    pos,
                    "the file looks truncated: restore the missing end of the document",
                )
            return JsonSyntaxError(
                SyntaxKind.TRUNCATED,
                f"unexpected end of file: expected {expected}",
                pos,
                "the file looks truncated",
            )
        ch = self.text[pos]
        nxt = self.text[pos + 1] if pos + 1 < self.n else ""
        if ch == "/" and nxt in "/*":
            style = "//" if nxt == "/" else "/* */"
            return JsonSyntaxError(
                SyntaxKind.COMMENT,
                f"comments ({style}) are not allowed in JSON",
                pos,
                "delete every comment: JSON has none",
                found=style,
            )
        if not stack and pos == self.ws(0):
            return self.not_json(pos)  # a '#' here starts a shell, YAML or properties file
        if ch == "#":
            return JsonSyntaxError(
                SyntaxKind.COMMENT,
                "comments (#) are not allowed in JSON",
                pos,
                "delete the comment line",
                found="#",
            )
        word = _WORD.match(self.text, pos)
        if ch == "<":
            end = self.text.find(">", pos, pos + QUOTE_CHARS)
            placeholder = self.text[pos : end + 1] if end > pos else "<...>"
            return JsonSyntaxError(
                SyntaxKind.INVALID,
                f"expected {expected} but found the placeholder {placeholder}",
                pos,
                "replace the placeholder with a real value",
            )
        if ch == "'":
            return JsonSyntaxError(
                SyntaxKind.INVALID,
                f"expected {expected} but found a single quote",
                pos,
                "JSON strings and keys use double quotes",
            )
        if word is not None:
            w = shorten(word.group())
            hint = ""
            if w in _NOT_JSON_WORDS:
                hint = f"JSON spells it {_NOT_JSON_WORDS[w]}"
            elif w in ("NaN", "Infinity"):
                hint = "JSON has no NaN or Infinity"
            elif stack and stack[-1].is_object and expected.startswith("a key"):
                hint = f'object keys must be double-quoted: "{w}"'
            return JsonSyntaxError(
                SyntaxKind.INVALID, f"expected {expected} but found '{w}'", pos, hint
            )
        shown = repr(ch)[1:-1] if ch.isprintable() else f"U+{ord(ch):04X}"
        return JsonSyntaxError(SyntaxKind.INVALID, f"expected {expected} but found '{shown}'", pos)

    def not_json(self, pos: int) -> JsonSyntaxError:
        """The error for text whose first character cannot start a JSON document: it is
        another kind of file, so nothing of it is quoted but that character."""
        return JsonSyntaxError(
            SyntaxKind.INVALID,
            f"{NOT_JSON}: unexpected character {describe_char(self.text[pos])} at the start",
            pos,
            "check that this path names the file you meant: a JSON document starts with '{' or '['",
            not_json=True,
        )

    # -- scanning -------------------------------------------------------------

    def ws(self, pos: int) -> int:
        m = _WS.match(self.text, pos)
        return m.end() if m else pos

    def string(self, pos: int, stack: list[_Frame]) -> tuple[str, int]:
        """Parse a string whose opening quote is at ``pos``."""
        text, n = self.text, self.n
        start = pos
        pos += 1
        parts: list[str] = []
        while True:
            m = _STRING_CHUNK.match(text, pos)
            assert m is not None
            parts.append(m.group())
            pos = m.end()
            if pos >= n:
                raise JsonSyntaxError(
                    SyntaxKind.TRUNCATED,
                    f"unexpected end of file inside the string that starts at {self.where(start)}",
                    pos,
                    "close the string with a double quote",
                )
            ch = text[pos]
            if ch == '"':
                return "".join(parts), pos + 1
            if ch == "\\":
                esc = text[pos + 1] if pos + 1 < n else ""
                if esc in _ESCAPES:
                    parts.append(_ESCAPES[esc])
                    pos += 2
                elif esc == "u" and _HEX4.match(text, pos + 2):
                    code = int(text[pos + 2 : pos + 6], 16)
                    if (
                        0xD800 <= code <= 0xDBFF
                        and text.startswith("\\u", pos + 6)
                        and (
                            _HEX4.match(text, pos + 8)
                            and 0xDC00 <= int(text[pos + 8 : pos + 12], 16) <= 0xDFFF
                        )
                    ):
                        low = int(text[pos + 8 : pos + 12], 16)
                        parts.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
                        pos += 12
                        continue
                    if 0xD800 <= code <= 0xDFFF:
                        raise JsonSyntaxError(
                            SyntaxKind.INVALID,
                            f"lone surrogate escape '\\u{text[pos + 2 : pos + 6]}' in a string",
                            pos,
                            "a character outside the BMP is written as a pair such as "
                            "\\ud83d\\ude00, or directly as UTF-8",
                        )
                    parts.append(chr(code))
                    pos += 6
                elif not esc:
                    raise JsonSyntaxError(
                        SyntaxKind.TRUNCATED, "unexpected end of file inside a string", pos + 1
                    )
                else:
                    raise JsonSyntaxError(
                        SyntaxKind.INVALID,
                        f"invalid escape sequence '\\{esc}' in a string",
                        pos,
                        'valid escapes: \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX',
                    )
            else:
                what = "line break" if ch in "\r\n" else f"control character U+{ord(ch):04X}"
                raise JsonSyntaxError(
                    SyntaxKind.INVALID,
                    f"unescaped {what} inside a string",
                    pos,
                    "close the string on the line it starts, or escape the character",
                )

    def scalar(self, pos: int, stack: list[_Frame]) -> tuple[Any, int]:
        text = self.text
        ch = text[pos]
        if ch == '"':
            return self.string(pos, stack)
        if ch == "-" or ch.isdigit():
            m = _NUMBER.match(text, pos)
            if m is None or (
                m.end() < self.n and (text[m.end()].isalnum() or text[m.end()] == ".")
            ):
                if not stack and pos == self.ws(0):
                    raise self.not_json(pos)
                end = m.end() if m else pos + 1
                bad = _WORD.match(text, end)
                token = shorten(text[pos : (bad.end() if bad else end + 1)])
                raise JsonSyntaxError(
                    SyntaxKind.INVALID,
                    f"invalid number '{token}'",
                    pos,
                    "JSON numbers have no leading zeros, '+' signs, or hex",
                )
            if m.group(1) or m.group(2):
                return float(m.group()), m.end()
            try:
                return int(m.group()), m.end()
            except ValueError:  # longer than sys.get_int_max_str_digits() (4300)
                raise JsonSyntaxError(
                    SyntaxKind.INVALID,
                    f"number with {len(m.group())} digits is too long",
                    pos,
                    "broker ids and counts are 32-bit integers",
                ) from None
        for literal, value in (("true", True), ("false", False), ("null", None)):
            if text.startswith(literal, pos):
                end = pos + len(literal)
                if end < self.n and (text[end].isalnum() or text[end] == "_"):
                    break
                return value, end
        raise self.unexpected(pos, "a value", stack)

    def key(self, pos: int, frame: _Frame, stack: list[_Frame]) -> int:
        """Parse ``"key" :`` at ``pos`` (after whitespace); return the offset after the colon."""
        if pos >= self.n or self.text[pos] != '"':
            raise self.unexpected(pos, "a key (a double-quoted string)", stack)
        key, after = self.string(pos, stack)
        child = frame.ptr + "/" + escape_token(key)
        if key in frame.seen:
            self.doc.duplicates.append(DuplicateKey(child, key, pos, frame.seen[key]))
        else:
            frame.seen[key] = pos
        self.doc.key_starts[child] = pos
        frame.key = key
        after = self.ws(after)
        if after >= self.n or self.text[after] != ":":
            raise self.unexpected(after, f"':' after the key \"{shorten(key)}\"", stack)
        return after + 1

    def member(self, pos: int, frame: _Frame, stack: list[_Frame]) -> tuple[int, str]:
        """Where the next member of ``frame`` starts (after its key, in an object), and
        its pointer."""
        if frame.is_object:
            pos = self.key(pos, frame, stack)
            return pos, frame.ptr + "/" + escape_token(frame.key)
        return pos, frame.ptr + "/" + str(len(frame.container))

    # -- driver -------------------------------------------------------------

    def parse(self) -> ParsedJson:
        text, n = self.text, self.n
        pos = self.ws(0)
        if pos >= n:
            raise JsonSyntaxError(
                SyntaxKind.EMPTY,
                "file is empty",
                0,
                "write the JSON document this file should hold, or name another file",
            )
        stack: list[_Frame] = []
        starts = self.doc.starts
        ptr = ""
        while True:
            # a value starts at pos
            pos = self.ws(pos)
            if pos >= n:
                raise self.unexpected(pos, "a value", stack)
            starts[ptr] = pos
            ch = text[pos]
            if ch in "{[":
                if len(stack) >= self.max_depth:
                    raise JsonSyntaxError(
                        SyntaxKind.TOO_DEEP,
                        f"nesting deeper than {self.max_depth} levels",
                        pos,
                        "placement policies, topics files and inventories are a few levels deep; "
                        "this file is corrupt or not the expected input",
                    )
                frame = _Frame(ch == "{", ptr, pos)
                stack.append(frame)
                pos = self.ws(pos + 1)
                if pos >= n or text[pos] != ("}" if frame.is_object else "]"):
                    pos, ptr = self.member(pos, frame, stack)
                    continue
                value: Any = frame.container
                stack.pop()
                pos += 1
            else:
                value, pos = self.scalar(pos, stack)
            after = self.close(value, pos, stack)
            if after is None:
                return self.doc
            pos, ptr = after

    def close(self, value: Any, pos: int, stack: list[_Frame]) -> tuple[int, str] | None:
        """Attach the value that ended at ``pos`` to its container, then close containers
        as far as they end. Return where the next value starts and its pointer, or None
        when the document is complete."""
        text, n = self.text, self.n
        while stack:
            frame = stack[-1]
            if frame.is_object:
                frame.container[frame.key] = value
            else:
                frame.container.append(value)
            pos = self.ws(pos)
            if pos < n and text[pos] == ",":
                comma = pos
                pos = self.ws(pos + 1)
                if pos < n and text[pos] in "}]":
                    raise JsonSyntaxError(
                        SyntaxKind.TRAILING_COMMA,
                        f"trailing comma before '{text[pos]}'",
                        comma,
                        "delete the comma after the last element",
                    )
                return self.member(pos, frame, stack)
            if pos < n and text[pos] == ("}" if frame.is_object else "]"):
                value = frame.container
                stack.pop()
                pos += 1
                continue
            expected = "',' or '}'" if frame.is_object else "',' or ']'"
            raise self.unexpected(pos, expected, stack)
        end = self.ws(pos)
        if end < n:
            raise self.unexpected(end, "the end of the document", stack)
        self.doc.value = value
        return None


def parse_json(
    text: str, index: LineIndex | None = None, *, max_depth: int = MAX_DEPTH
) -> ParsedJson:
    """Parse ``text`` strictly; raise :class:`JsonSyntaxError` with an offset on failure."""
    return _Parser(text, index or LineIndex(text), max_depth).parse()


def parse_json_file(text: str, path: str, hint: str | None = None) -> ParsedJson:
    """:func:`parse_json` for a file that must be JSON: a syntax error is the
    :class:`~placement.errors.InputError` naming ``path``, line and column (with ``hint``
    instead of the parser's own, when given)."""

    try:
        return parse_json(text)
    except JsonSyntaxError as exc:
        pos = LineIndex(text).position(exc.offset)
        raise InputError(
            path, exc.message, exc.hint if hint is None else hint, line=pos.line, column=pos.column
        ) from None
