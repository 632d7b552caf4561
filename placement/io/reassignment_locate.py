"""Where a problem of a plan is, without the positioned parse of the whole document:
the way to the member a JSON pointer names is walked at C speed, and only that member
(in "partitions", only the one entry) is parsed with positions (jsonsrc)."""

from __future__ import annotations

import json
import re
from itertools import chain, compress, repeat
from operator import is_
from typing import Any

from placement.io.jsonsrc import (
    MAX_DEPTH,
    parse_json,
)
from placement.io.positions import escape_token, parent_pointers

# what holds other values: the levels `parsed_alike` walks
_CONTAINERS: frozenset[type] = frozenset({dict, list})


# an escaped UTF-16 surrogate: the positioned parser refuses a lone one, the standard
# library reads it
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def parsed_alike(value: Any, body: str) -> bool:
    """Whether the positioned parser reads ``body`` as the standard library read it
    (``value``; with no key twice, no NaN): all it refuses besides is an escaped surrogate
    and nesting deeper than MAX_DEPTH. Then the part of the document a problem is in,
    parsed alone, locates the problem as a parse of the whole would."""
    if _SURROGATE.search(body):
        return False
    level = [value] if type(value) in _CONTAINERS else []
    for _ in range(MAX_DEPTH):  # a level of containers at a time, at C speed
        if not level:
            return True
        kinds = list(map(type, level))
        objects = compress(level, map(is_, kinds, repeat(dict)))
        arrays = compress(level, map(is_, kinds, repeat(list)))
        inside = list(chain(chain.from_iterable(map(dict.values, objects)), *arrays))
        level = list(compress(inside, map(_CONTAINERS.__contains__, map(type, inside))))
    return not level


_WS = re.compile(r"[ \t\n\r]*")
_INDEX = re.compile(r"0|[1-9][0-9]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, pos: int) -> int:
    """Past the whitespace at ``pos``."""
    m = _WS.match(text, pos)
    assert m is not None  # it matches the empty string
    return m.end()


def _end(text: str, pos: int) -> int:
    """Where the JSON value at ``pos`` ends (read at C speed)."""
    return _DECODER.raw_decode(text, pos)[1]


def locate(text: str, begin: int, pointer: str, *, key: bool) -> int:
    """Where `ParsedJson.locate` puts ``pointer`` in the JSON document at ``begin`` of
    ``text``, for a document the positioned parser reads alike (`parsed_alike`): the
    way to the root member it names is walked at C speed, and only that member (in
    "partitions", only the one entry) is parsed with positions."""
    root = _skip(text, begin)
    if not pointer or text[root] != "{":
        return root  # only "" names a part of a document that is not an object
    first, _, rest = pointer[1:].partition("/")
    pos = _skip(text, root + 1)
    while text[pos] == '"':  # each member: its key, a colon, its value
        name, after = _DECODER.raw_decode(text, pos)
        value_at = _skip(text, _skip(text, after) + 1)
        if escape_token(name) == first:
            break
        pos = _skip(text, _end(text, value_at))
        if text[pos] != ",":
            return root  # no such member
        pos = _skip(text, pos + 1)
    else:
        return root
    if not rest:
        return pos if key else value_at
    span, prefix = None, "/" + first
    number = rest.partition("/")[0]
    if name == "partitions" and text[value_at] == "[" and _INDEX.fullmatch(number):
        span = _element(text, value_at, int(number))  # the one entry at fault
    if span is None:
        unit_at, unit_end = value_at, _end(text, value_at)
    else:
        (unit_at, unit_end), prefix = span, f"{prefix}/{number}"
    inner = pointer[len(prefix) :]
    if not inner:
        return unit_at  # an entry: where it starts, no parse needed
    doc = parse_json(text[unit_at:unit_end])
    for candidate in parent_pointers(inner):
        if key and candidate == inner and candidate in doc.key_starts:
            return unit_at + doc.key_starts[candidate]
        if candidate in doc.starts:
            return unit_at + doc.starts[candidate]
    return unit_at


def _element(text: str, pos: int, i: int) -> tuple[int, int] | None:
    """Where element ``i`` of the array at ``pos`` starts and ends; None past its end."""
    pos = _skip(text, pos + 1)
    if text[pos] == "]":
        return None
    for _ in range(i):
        pos = _skip(text, _end(text, pos))
        if text[pos] != ",":
            return None
        pos = _skip(text, pos + 1)
    return pos, _end(text, pos)
