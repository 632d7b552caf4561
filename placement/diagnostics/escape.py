r"""Untrusted text made safe to show: one rule for the terminal, CI logs and every report.

Rack, topic and file names, and the input text that messages quote, come from files a pull
request may have written. Shown raw, a newline starts a new log line (`::error::` becomes a
GitHub workflow command), an ESC drives the terminal, a bidi override reorders what the reader
sees, and a file name that is not UTF-8 (Python hands it over with lone surrogates, PEP 383)
makes the output invalid UTF-8 or crashes the writer.

`escape` renders every such character as a visible escape, Python-style:

- C0 controls, DEL and C1 controls: ``\n``, ``\r``, ``\t``, else ``\x1b``, ``\x7f``, ``\x85``;
- bidi controls (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069), the line and
  paragraph separators U+2028/U+2029 and the non-characters U+FFFE/U+FFFF: ``\u202e``;
- a byte that is not UTF-8 (a surrogate U+DC80..U+DCFF from ``surrogateescape``): that byte,
  ``\xff``; any other lone surrogate: ``\ud800``.

A backslash is left as it is: this is for reading, not a reversible encoding. The result has
no character below U+0020 (but those in ``keep``), encodes to UTF-8, and is legal in XML 1.0.

`encodable` applies only the last rule: for structured output (JSON) whose own escaping copes
with controls but not with strings that cannot be encoded at all. `json_text` then writes the
unsafe characters JSON leaves raw (DEL, C1, bidi) as JSON escapes: the data stays the same, and
a report printed on a terminal stays inert.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# compiled on first use (these classes take milliseconds to compile; most text is plain ASCII)
_UNSAFE = (
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]"
)
_SURROGATE = "[\ud800-\udfff]"
# what JSON serialisers leave raw inside strings (they must escape C0, which outside strings
# is whitespace)
_JSON_RAW = "[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]"


@cache
def _pattern(chars: str) -> re.Pattern[str]:
    return re.compile(chars)


def _visible(ch: str) -> str:
    code = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if 0xDC80 <= code <= 0xDCFF:  # the byte surrogateescape could not decode
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def escape(text: str, *, keep: str = "") -> str:
    """``text`` with every unsafe character as a visible escape; characters in ``keep``
    (only ``"\\n"`` and ``"\\t"`` make sense) stay as they are."""
    if text.isascii() and text.isprintable():  # the usual case: nothing unsafe
        return text
    unsafe = _pattern(_UNSAFE)
    if not unsafe.search(text):
        return text
    if keep:
        return unsafe.sub(lambda m: m[0] if m[0] in keep else _visible(m[0]), text)
    return unsafe.sub(lambda m: _visible(m[0]), text)


def encodable(text: str) -> str:
    """``text`` with lone surrogates (bytes that were not UTF-8) as visible escapes."""
    if text.isascii():
        return text
    surrogate = _pattern(_SURROGATE)
    if not surrogate.search(text):
        return text
    return surrogate.sub(lambda m: _visible(m[0]), text)


def json_text(text: str) -> str:
    """JSON text (from a serialiser, its strings already `encodable`) with every unsafe
    character as a ``\\uXXXX`` escape; outside strings JSON has none, so the value is unchanged."""
    raw = _pattern(_JSON_RAW)
    if not raw.search(text):
        return text
    return raw.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def encodable_tree(value: Any) -> Any:
    """`encodable` applied to every string (keys too) of a JSON-like value."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {encodable_tree(k): encodable_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encodable_tree(v) for v in value]
    return value
