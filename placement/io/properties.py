"""Java `.properties` files, keeping where each value's characters came from."""

from __future__ import annotations

from dataclasses import dataclass

_ESC = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_WS = " \t\f"


class PropertiesSyntaxError(Exception):
    """A `\\uXXXX` escape that is not a character (a lone UTF-16 surrogate)."""

    def __init__(self, message: str, offset: int, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset  # offset in the file text of the escape
        self.hint = hint


@dataclass(frozen=True, slots=True)
class Property:
    key: str
    value: str
    line: int  # 1-based line of the key
    column: int  # 1-based column of the key
    value_offsets: tuple[int, ...]  # offset in the file text of each value character


def _physical_lines(text: str) -> list[tuple[int, str]]:
    """(offset, line without its terminator) for every line; \\n, \\r\\n and \\r end lines."""
    out = []
    pos = 0
    n = len(text)
    while pos < n:
        end = pos
        while end < n and text[end] not in "\r\n":
            end += 1
        out.append((pos, text[pos:end]))
        if end < n and text[end] == "\r" and end + 1 < n and text[end + 1] == "\n":
            end += 1
        pos = end + 1
    return out


def _continues(line: str) -> bool:
    slashes = len(line) - len(line.rstrip("\\"))
    return slashes % 2 == 1


def _hex4(chars: list[tuple[str, int]], i: int) -> int | None:
    """The code unit of a `\\uXXXX` escape starting at ``chars[i]``, if there is one."""
    if i + 5 >= len(chars) or chars[i][0] != "\\" or chars[i + 1][0] != "u":
        return None
    digits = "".join(c for c, _ in chars[i + 2 : i + 6])
    if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
        return None
    return int(digits, 16)


def _unescape(chars: list[tuple[str, int]]) -> tuple[str, list[int]]:
    out: list[str] = []
    offsets: list[int] = []
    i = 0
    while i < len(chars):
        ch, off = chars[i]
        if ch == "\\" and i + 1 < len(chars):
            nxt = chars[i + 1][0]
            code = _hex4(chars, i)
            if code is not None:
                # Java strings are UTF-16: a pair of escapes is one character
                if 0xD800 <= code <= 0xDBFF:
                    low = _hex4(chars, i + 6)
                    if low is not None and 0xDC00 <= low <= 0xDFFF:
                        out.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
                        offsets.append(off)
                        i += 12
                        continue
                if 0xD800 <= code <= 0xDFFF:
                    raise PropertiesSyntaxError(
                        f"\\u{code:04x} is a lone UTF-16 surrogate, not a character",
                        off,
                        "write a character outside the BMP as a pair such as \\ud83d\\ude00, "
                        "or directly as UTF-8",
                    )
                out.append(chr(code))
                offsets.append(off)
                i += 6
                continue
            out.append(_ESC.get(nxt, nxt))
            offsets.append(off)
            i += 2
            continue
        out.append(ch)
        offsets.append(off)
        i += 1
    return "".join(out), offsets


def parse_properties(text: str) -> list[Property]:
    """Parse like `java.util.Properties.load`, in file order (later duplicates included).

    Raises :class:`PropertiesSyntaxError` for an escape that is not a character.
    """
    lines = _physical_lines(text)
    props: list[Property] = []
    i = 0
    while i < len(lines):
        start_idx = i
        offset, line = lines[i]
        i += 1
        stripped = line.lstrip(_WS)
        if not stripped or stripped[0] in "#!":
            continue
        # gather the logical line as (char, file offset) pairs
        lead = len(line) - len(stripped)
        chars = [(c, offset + lead + k) for k, c in enumerate(stripped)]
        while chars and _continues("".join(c for c, _ in chars)) and i < len(lines):
            chars.pop()  # the continuation backslash
            off2, nxt = lines[i]
            i += 1
            lead2 = len(nxt) - len(nxt.lstrip(_WS))
            chars.extend((c, off2 + lead2 + k) for k, c in enumerate(nxt[lead2:]))
        if chars and _continues("".join(c for c, _ in chars)):
            chars.pop()
        # split key / value at the first unescaped separator
        k = 0
        while k < len(chars):
            c = chars[k][0]
            if c == "\\":
                k += 2
                continue
            if c in "=:" or c in _WS:
                break
            k += 1
        key_chars = chars[:k]
        v = k
        while v < len(chars) and chars[v][0] in _WS:
            v += 1
        if v < len(chars) and chars[v][0] in "=:":
            v += 1
            while v < len(chars) and chars[v][0] in _WS:
                v += 1
        key, _ = _unescape(key_chars)
        value, value_offsets = _unescape(chars[v:])
        props.append(Property(key, value, start_idx + 1, lead + 1, tuple(value_offsets)))
    return props
