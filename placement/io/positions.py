"""Source positions: character offsets, 1-based line/column, and RFC 6901 pointers."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Position:
    """A 1-based line and column (columns count characters, not bytes)."""

    line: int
    column: int


class LineIndex:
    """Maps character offsets of a text to positions.

    ``offsets`` optionally maps each character of the text to an offset in an
    enclosing physical file: used when the JSON being parsed is the value of a
    `.properties` key, so positions point into the properties file itself.
    """

    def __init__(
        self, text: str, physical: LineIndex | None = None, offsets: Sequence[int] | None = None
    ) -> None:
        # \n, \r\n and a lone \r (old Mac files; Java's Properties honours it) end lines
        self._starts = [0]
        self._starts.extend(
            i + 1
            for i, ch in enumerate(text)
            if ch == "\n" or (ch == "\r" and text[i + 1 : i + 2] != "\n")
        )
        self._length = len(text)
        self._physical = physical
        self._offsets = offsets

    def position(self, offset: int) -> Position:
        if self._physical is not None and self._offsets is not None:
            if not self._offsets:
                return self._physical.position(0)
            if offset >= len(self._offsets):
                # one past the end: just after the last mapped character
                return self._physical.position(self._offsets[-1] + 1)
            return self._physical.position(self._offsets[max(offset, 0)])
        offset = min(max(offset, 0), self._length)
        line = bisect.bisect_right(self._starts, offset) - 1
        return Position(line + 1, offset - self._starts[line] + 1)


def escape_token(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(parts: Iterable[str | int]) -> str:
    """Build an RFC 6901 JSON pointer from path parts."""
    return "".join("/" + escape_token(p) for p in parts)


def parent_pointers(ptr: str) -> Iterable[str]:
    """``ptr`` itself, then each ancestor up to the root ``""``."""
    while True:
        yield ptr
        if not ptr:
            return
        ptr = ptr[: ptr.rfind("/")]


def position_in(text: str, offset: int) -> Position:
    """`LineIndex(text).position(offset)` without indexing every line: for one position in
    a large text (the same line ends: \\n, \\r\\n and a lone \\r)."""
    offset = min(max(offset, 0), len(text))
    lone_cr = text.count("\r", 0, offset) - text.count("\r\n", 0, offset + 1)
    line = text.count("\n", 0, offset) + lone_cr + 1
    start = text.rfind("\n", 0, offset) + 1
    cr = text.rfind("\r", 0, offset)
    if cr + 1 > start and text[cr + 1 : cr + 2] != "\n":
        start = cr + 1
    return Position(line, offset - start + 1)
