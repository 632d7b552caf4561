"""Mutators: bytes, lines and tokens of text, JSON structure, Arrow tables.

Every mutator takes a ``random.Random`` and returns new bytes; the same generator state
gives the same output, so a run is reproducible from its seed. Outputs are capped in size
(``MAX_BYTES``) so that a run stays bounded in memory and time.
"""

from __future__ import annotations

import io
import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

MAX_BYTES = 1 << 20

# Bytes that parsers care about: structure, line ends, NUL, invalid UTF-8, a BOM, a
# surrogate encoded in UTF-8 (invalid), a superscript digit, an escape start.
INTERESTING_BYTES: tuple[bytes, ...] = (
    b"\x00",
    b"\xff",
    b"\x80",
    b"\r",
    b"\n",
    b"\r\n",
    b'"',
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"=",
    b"\\",
    b"\\u",
    b"\\ud800",
    b"\t",
    b"\xef\xbb\xbf",
    b"\xed\xa0\x80",
    b"\xc2\xb2",
    b"\xd9\xa3",
    b"\x1b[31m",
    b"-",
    b"9" * 20,
    b"1e999",
)

# Tokens for text formats (describe, properties, CSV): numbers that do not fit, digits
# that `int()` accepts but Kafka does not, empty values, names that are too long.
SPECIAL_TOKENS: tuple[str, ...] = (
    "",
    " ",
    "-1",
    "0",
    "2147483647",
    "2147483648",
    "9223372036854775807",
    "9223372036854775808",
    "99999999999999999999999",
    "1" * 5000,
    "\u00b2",
    "1\u00b2",
    "\u0663",
    "\u0661\u0662",
    "\uff11",
    "+5",
    "0x10",
    "1e3",
    "NaN",
    "1.5",
    "\\ud800",
    "\\uD800",
    "\\uDC00x",
    "\\u00",
    "\\",
    "\ud800",
    "\r",
    "a\rb",
    "\x00",
    "\x1b[31m",
    "\x7f",
    "orders\n::error::pwn",
    "\u202e",
    "\u00f1",
    "\U0001f600",
    "x" * 300,
    "y" * 70000,
    ",",
    ",,",
    ":",
    "=",
    '"',
    "{}",
    "[]",
    "none",
    "null",
    ".",
    "..",
    "../../../../etc/passwd",
    "/etc/passwd",
    "/proc/self/environ",
    "placement/orders.json",
)

# JSON values that are not what a reader expects. ``Raw`` text is written verbatim.


@dataclass(frozen=True)
class Raw:
    text: str


@dataclass(frozen=True)
class Dup:
    """An object whose members are written as given, repeated keys included."""

    pairs: tuple[tuple[str, Any], ...]


def _deep(rng: random.Random) -> Raw:
    n = rng.choice((50, 999, 1001, 3000, 100_000))
    if rng.random() < 0.5:
        return Raw("[" * n + "]" * n)
    return Raw('{"a":' * n + "1" + "}" * n)


SPECIAL_VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1,
    2**31 - 1,
    2**31,
    -(2**31) - 1,
    2**63 - 1,
    2**63,
    2**64,
    10**30,
    1.5,
    -0.0,
    Raw("1e999"),
    Raw("-1e999"),
    Raw("NaN"),
    Raw("Infinity"),
    Raw("1" * 5000),
    Raw("1e400"),
    Raw("0.0000000000000000000000000000001"),
    Raw('"\\ud800"'),
    Raw('"\\udc00x"'),
    Raw('"\\ud83d\\ude00"'),
    Raw('"a\x01b"'),
    Raw('"a\rb"'),
    Raw("'single'"),
    Raw("01"),
    Raw("-"),
    "",
    " ",
    "\u00b2",
    "1\u00b2",
    "\u0663",
    "2",
    "us-west",
    "a\rb",
    "x\x00y",
    "\x1b]0;title\x07",
    "orders\n::error::pwn",
    "\u202e",
    "\U0001f600",
    "x" * 250,
    "z" * 300,
    "w" * 100_000,
    ".",
    "..",
    "../../../../etc/passwd",
    "/etc/passwd",
    "/proc/self/environ",
    "placement/orders.json",
    [],
    {},
    [[[]]],
    [1, 1, 1],
    [None],
    [2**31, -1],
    {"count": 1},
    {"rack": None},
)


def _clip(data: bytes) -> bytes:
    return data[:MAX_BYTES]


# -- bytes -----------------------------------------------------------------------------


def mutate_bytes(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
    buf = bytearray(data)
    op = rng.randrange(9)
    pos = rng.randrange(len(buf) + 1)
    if op == 0 and buf:  # flip a bit
        i = rng.randrange(len(buf))
        buf[i] ^= 1 << rng.randrange(8)
    elif op == 1 and buf:  # set a random byte
        buf[rng.randrange(len(buf))] = rng.randrange(256)
    elif op == 2:  # insert something interesting
        buf[pos:pos] = rng.choice(INTERESTING_BYTES)
    elif op == 3:  # insert random bytes
        buf[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    elif op == 4 and buf:  # delete a range
        n = rng.randint(1, max(1, min(len(buf), 64)))
        del buf[pos : pos + n]
    elif op == 5:  # truncate
        del buf[pos:]
    elif op == 6 and buf:  # duplicate a range
        n = rng.randint(1, max(1, min(len(buf) - pos, 256)))
        buf[pos:pos] = buf[pos : pos + n] * rng.choice((1, 2, 10))
    elif op == 7 and others:  # splice with another seed
        other = rng.choice(others)
        cut = rng.randrange(len(other) + 1)
        buf = buf[:pos] + bytearray(other[cut:])
    else:  # swap two ranges of lines
        return mutate_lines(rng, bytes(buf), others)
    return _clip(bytes(buf))


# -- text: lines and tokens ------------------------------------------------------------

_TOKEN = re.compile(r"[^\s,:=\t\"{}\[\]]+")


def _encode(rng: random.Random, text: str) -> bytes:
    r = rng.random()
    if r < 0.04:
        return text.encode("latin-1", "replace")
    if r < 0.08:
        return text.encode("utf-16")
    return text.encode("utf-8", "surrogatepass")


def _decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def mutate_lines(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
    text = _decode(data)
    lines = text.split("\n")
    op = rng.randrange(8)
    i = rng.randrange(len(lines))
    if op == 0 and len(lines) > 1:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[i])  # duplicate a line (duplicate rows, repeated blocks)
    elif op == 2:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 3 and others:
        other = _decode(rng.choice(others)).split("\n")
        lines.insert(i, rng.choice(other))
    elif op == 4:
        lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
    elif op == 5:
        lines = [ln + "\r" for ln in lines] if rng.random() < 0.5 else ["\r".join(lines)]
    elif op == 6:
        lines.insert(i, rng.choice(SPECIAL_TOKENS))
    else:
        lines[i:i] = [lines[i]] * rng.choice((2, 50, 2000))
    out = "\n".join(lines)
    try:
        return _clip(out.encode("utf-8", "surrogateescape"))
    except UnicodeEncodeError:
        return _clip(out.encode("utf-8", "surrogatepass"))


def mutate_tokens(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
    text = _decode(data)
    tokens = list(_TOKEN.finditer(text))
    if not tokens:
        return mutate_bytes(rng, data, others)
    m = rng.choice(tokens)
    tok = m.group()
    op = rng.randrange(7)
    if op >= 5:  # another token of the same file and kind: an id, a rack, a topic reused
        same = [t.group() for t in tokens if t.group().isdigit() == tok.isdigit()]
        new = rng.choice(same)
    elif op == 0:
        new = rng.choice(SPECIAL_TOKENS)
    elif op == 1 and tok.isascii() and tok.isdigit() and len(tok) < 100:
        new = str(int(tok) + rng.choice((1, -1, 2**31, 2**63, -(2**32))))
    elif op == 2:
        new = tok * rng.choice((2, 10, 300))
    elif op == 3:
        # a digit replaced by a look-alike that str.isdigit()/int() may accept
        new = "".join(rng.choice("\u00b2\u0663\uff11\u0967") if c.isdigit() else c for c in tok)
    else:
        new = tok + rng.choice(SPECIAL_TOKENS)
    out = text[: m.start()] + new + text[m.end() :]
    return _clip(_encode(rng, out) if rng.random() < 0.1 else _safe_utf8(out))


def _safe_utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")


def mutate_text(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
    r = rng.random()
    if r < 0.45:
        return mutate_tokens(rng, data, others)
    if r < 0.75:
        return mutate_lines(rng, data, others)
    return mutate_bytes(rng, data, others)


# -- JSON structure ----------------------------------------------------------------------


def dump(value: Any, rng: random.Random | None = None) -> str:
    """JSON text for ``value``; ``Raw`` verbatim, ``Dup`` with its repeated keys."""
    indent = rng is not None and rng.random() < 0.5
    out: list[str] = []
    # an explicit stack: the values themselves may be deep
    stack: list[Any] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, Raw):
            out.append(v.text)
        elif isinstance(v, Dup):
            parts: list[Any] = [Raw("{")]
            for n, (k, item) in enumerate(v.pairs):
                if n:
                    parts.append(Raw(",\n" if indent else ","))
                parts.extend((Raw(json.dumps(k) + ":"), item))
            parts.append(Raw("}"))
            stack.extend(reversed(parts))
        elif isinstance(v, dict):
            stack.append(Dup(tuple(v.items())))
        elif isinstance(v, list):
            parts = [Raw("[")]
            for n, item in enumerate(v):
                if n:
                    parts.append(Raw(",\n" if indent else ","))
                parts.append(item)
            parts.append(Raw("]"))
            stack.extend(reversed(parts))
        else:
            out.append(json.dumps(v, ensure_ascii=rng is not None and rng.random() < 0.3))
    return "".join(out)


def _nodes(doc: Any) -> list[tuple[Any, Any]]:
    """(container, key) of every value below the root, iteratively."""
    found: list[tuple[Any, Any]] = []
    stack = [doc]
    while stack and len(found) < 20_000:
        v = stack.pop()
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, item in items:
            found.append((v, k))
            stack.append(item)
    return found


def _special(rng: random.Random, current: Any) -> Any:
    if rng.random() < 0.08:
        return _deep(rng)
    if isinstance(current, int) and not isinstance(current, bool) and rng.random() < 0.4:
        return rng.choice(
            (current + 1, current - 1, -current, current * 10**10, current + 2**31, -1)
        )
    if isinstance(current, str) and rng.random() < 0.3:
        return rng.choice(
            (current.upper(), current + " ", current * 2, current[:-1], "\u00b2" + current)
        )
    return rng.choice(SPECIAL_VALUES)


def _one_json_edit(rng: random.Random, doc: Any, keys: Sequence[str]) -> Any:
    nodes = _nodes(doc)
    if not nodes:
        return rng.choice(SPECIAL_VALUES) if rng.random() < 0.5 else [doc, doc]
    parent, key = rng.choice(nodes)
    value = parent[key]
    op = rng.randrange(10)
    if op <= 3:
        parent[key] = _special(rng, value)
    elif op == 4 and isinstance(parent, dict):  # a repeated key
        pairs = list(parent.items())
        i = rng.randrange(len(pairs))
        extra = (pairs[i][0], _special(rng, pairs[i][1]) if rng.random() < 0.5 else pairs[i][1])
        pairs.insert(rng.randrange(len(pairs) + 1), extra)
        if parent is doc:
            return Dup(tuple(pairs))
        _replace(doc, parent, Dup(tuple(pairs)))
    elif op == 5 and isinstance(parent, dict):
        del parent[key]
    elif op == 6 and isinstance(parent, dict):
        parent[rng.choice([*keys, "", "x" * 300, key.upper(), key + "s"])] = _special(rng, None)
    elif op == 7 and isinstance(parent, list):  # duplicate rows
        for _ in range(rng.choice((1, 1, 2, 100, 20_000))):
            parent.insert(rng.randrange(len(parent) + 1), value)
    elif op == 8 and isinstance(parent, list):
        del parent[key]
    elif isinstance(value, list):
        parent[key] = value + value if rng.random() < 0.5 else []
    else:
        parent[key] = [value] if rng.random() < 0.5 else {"value": value}
    return doc


def _mild_edit(rng: random.Random, doc: Any) -> Any:
    """A change that keeps every type: a number or string swapped for another of the
    document's own (a rack of another broker, a repeated id), a row repeated, dropped or
    moved. Such inputs get past the shape checks and reach the code behind them."""
    nodes = _nodes(doc)
    if not nodes:
        return doc
    ints = [p[k] for p, k in nodes if type(p[k]) is int]
    strs = [p[k] for p, k in nodes if type(p[k]) is str]
    parent, key = rng.choice(nodes)
    value = parent[key]
    if type(value) is int:
        parent[key] = rng.choice([*ints, value + 1, value - 1, 0])
    elif type(value) is str and strs:
        parent[key] = rng.choice(strs)
    elif isinstance(value, list) and value:
        i = rng.randrange(len(value))
        op = rng.randrange(3)
        if op == 0:
            value.insert(rng.randrange(len(value) + 1), value[i])
        elif op == 1:
            del value[i]
        else:
            value.insert(rng.randrange(len(value)), value.pop(i))
    elif isinstance(parent, dict):
        del parent[key]
    return doc


def _replace(doc: Any, target: Any, new: Any) -> None:
    for parent, key in _nodes(doc):
        if parent[key] is target:
            parent[key] = new
            return


def _keys(doc: Any) -> list[str]:
    return sorted({k for p, k in _nodes(doc) if isinstance(p, dict)}) or ["x"]


def mutate_json(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return mutate_text(rng, data, others)
    keys = _keys(doc)
    r = rng.random()
    if r < 0.05:
        doc = _special(rng, doc)
    elif r < 0.4:
        for _ in range(rng.choice((1, 1, 2, 3))):
            doc = _mild_edit(rng, doc)
    else:
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            if isinstance(doc, Dup | Raw):
                break
            doc = _one_json_edit(rng, doc, keys)
    text = dump(doc, rng)
    out = _safe_utf8(text)
    if rng.random() < 0.15:
        out = mutate_bytes(rng, out, others)
    return _clip(out)


def mutate_structured(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
    """JSON files: mostly structure-aware, sometimes bytes or tokens."""
    r = rng.random()
    if r < 0.6:
        return mutate_json(rng, data, others)
    if r < 0.8:
        return mutate_tokens(rng, data, others)
    return mutate_bytes(rng, data, others)


# -- Arrow tables (snapshot Parquet) -----------------------------------------------------

LIST_COLUMNS = ("replicas", "observers", "isr")


def _table_value(rng: random.Random, column: str, current: Any) -> Any:
    if isinstance(current, list) or column in LIST_COLUMNS:
        base = list(current or [1, 2])
        return rng.choice(
            (
                [],
                None,
                [None],
                [*base, None],
                base + base,
                [base[0]] * 3 if base else [1, 1],
                [2**31 - 1, 2**31 - 2],
                [-1],
                list(range(1, 2000)),
            )
        )
    if isinstance(current, str) or column in ("topic", "rack", "placement"):
        return rng.choice(
            (
                None,
                "",
                "\u00b2",
                "x" * 300,
                "orders\n::error::pwn",
                "\ud800",
                "{",
                '{"version": 2}',
                '{"version":2,"replicas":[{"count":99,"constraints":{"rack":"r"}}]}',
                "[" * 5000 + "]" * 5000,
                "placement/orders.json",
            )
        )
    return rng.choice((None, -1, 0, 2**31 - 1, 2**31, 2**63 - 1, -(2**63), 10**12))


def mutate_table(rng: random.Random, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One change to a table given as rows: nulls, duplicate rows, huge ids, odd strings,
    a column dropped, renamed or of the wrong type, no rows at all."""
    rows = [dict(r) for r in rows]
    columns = list(rows[0]) if rows else ["x"]
    op = rng.randrange(8)
    if not rows or op == 0:
        return [] if rng.random() < 0.5 else rows[:1] * rng.choice((2, 500))
    col = rng.choice(columns)
    i = rng.randrange(len(rows))
    if op <= 2:
        rows[i][col] = _table_value(rng, col, rows[i][col])
    elif op == 3:  # duplicate rows
        rows.insert(rng.randrange(len(rows) + 1), dict(rows[i]))
    elif op == 4:  # drop or rename a column
        new = rng.choice((None, col.upper(), col + "_", ""))
        for r in rows:
            v = r.pop(col)
            if new is not None:
                r[new] = v
    elif op == 5:  # every value of a column of another type
        kind = rng.choice((str, float, bool, lambda v: [v], lambda v: {"v": v}))
        for r in rows:
            r[col] = None if r[col] is None else kind(r[col])
    elif op == 6:  # the same id under another row
        other = rows[rng.randrange(len(rows))]
        rows[i][col] = other[col]
    else:  # an extra column
        for r in rows:
            r[rng.choice(("extra", "__index_level_0__"))] = rng.choice((1, "x", None))
    return rows


def table_bytes(rows: list[dict[str, Any]], fmt: str) -> bytes:
    """Rows as a Parquet or JSON Lines file (types inferred, so wrong types stay wrong)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if fmt == "jsonl":
        return _clip("".join(dump(r) + "\n" for r in rows).encode("utf-8", "surrogatepass"))
    table = pa.Table.from_pylist(rows) if rows else pa.table({"t": pa.array([], pa.string())})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


Mutator = Callable[[random.Random, bytes, Sequence[bytes]], bytes]
