"""Read an input file as UTF-8 text, or fail with the file and the first bad byte's position;
and what an error message may show of a file's content."""

from __future__ import annotations

import re
from pathlib import Path

from placement.errors import InputError
from placement.io.jsonsrc import EncodingError, decode_utf8
from placement.io.limits import PLAN_BYTES, Limit, read_bytes_capped
from placement.model.kafka import INT32_MAX, TOPIC_NAME_MAX, topic_name_error

_TOPIC_CHAR = re.compile(r"[a-zA-Z0-9._-]")
_ASCII_INT = re.compile(r"-?[0-9]+")


def read_text(path: str | Path, what: str = "the file", limit: Limit = PLAN_BYTES) -> str:
    """The file's text; refused before reading when larger than ``limit``."""
    p = Path(path)
    data = read_bytes_capped(p, limit, what)
    try:
        text, _ = decode_utf8(data)
    except EncodingError as exc:
        raise InputError(
            str(p), exc.message, exc.hint, line=exc.position.line, column=exc.position.column
        ) from None
    return text


# -- what an error message may show of a file ----------------------------------------------
#
# An input may come from an untrusted pull request (a symlink to a credentials file) and CI
# logs are public. So a message never quotes a line or a token of a file: a file that is
# not the format expected is named with the kind of its first character at most; a value
# of a file that is the format is named whole only when it is short (SHOWN_MAX characters)
# and, when it is well formed, cut to SHOWN_MAX characters with an ellipsis.

SHOWN_MAX = 16


def _printable(text: str) -> bool:
    return text.isprintable() and text.isascii()


def _plural(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")


def fits(value: str) -> bool:
    """Whether a message may quote ``value`` whole: at most SHOWN_MAX printable
    characters."""
    return len(value) <= SHOWN_MAX and value.isprintable()


def short(value: str, quote: str = "'") -> str:
    """A value that is not what its place needs (a broker id of letters, an unknown key),
    in ``quote`` marks when at most SHOWN_MAX printable characters, else by its
    length alone: it may be anything, a secret too."""
    if fits(value):
        return repr(value) if quote == "'" else f"{quote}{value}{quote}"
    return f"[{_plural(len(value), 'character')}, not shown]"


def short_key(key: str) -> str:
    """`short` for a JSON key (in double quotes, as JSON writes it)."""
    return short(key, '"')


def cut(value: str) -> str:
    """A value that is well formed for its place (a legal topic name, a rack), cut to
    SHOWN_MAX characters with an ellipsis; characters that are not printable ASCII as
    escapes."""
    if len(value) > SHOWN_MAX:
        return "".join(map(_escaped, value[: SHOWN_MAX - 1])) + "…"
    return "".join(map(_escaped, value))


def shown(value: str) -> str:
    """`cut`, in single quotes."""
    return f"'{cut(value)}'"


def _escaped(ch: str) -> str:
    if _printable(ch):
        return ch
    return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"


def char_kind(ch: str) -> str:
    """One character as a message may name it: its kind for a letter or a digit, itself
    for other printable ASCII, else its code point."""
    if ch.isascii() and ch.isalpha():
        return "a letter"
    if ch.isascii() and ch.isdigit():
        return "a digit"
    if ch.isascii() and (ch.isprintable() or ch in "\t\r\n"):
        return repr(ch)
    return f"U+{ord(ch):04X}"


def starts_with(text: str) -> str:
    """What ``text`` starts with (after blanks), as a message may say it."""
    stripped = text.lstrip(" \t\r\n\ufeff")
    if not stripped:
        return "nothing but blanks"
    return char_kind(stripped[0])


def topic_name_problem(name: str) -> str | None:
    """Why ``name`` is not a legal Kafka topic name (as `topic_name_error`), naming the
    name only when short, and its first illegal character by itself; None when legal."""
    problem = topic_name_error(name)
    if problem is None or not name or name in (".", ".."):
        return problem
    if len(name) > TOPIC_NAME_MAX:
        return f"a topic name has at most {TOPIC_NAME_MAX} characters, this one has {len(name)}"
    at, bad = next((i, ch) for i, ch in enumerate(name) if not _TOPIC_CHAR.fullmatch(ch))
    return (
        f"topic name {short(name)} holds {char_kind(bad)}"
        + ("" if fits(name) else f" (its character {at + 1})")
        + "; Kafka allows only ASCII letters, digits, '.', '_' and '-'"
    )


def int_problem_short(text: str, what: str, *, low: int = 0, high: int = INT32_MAX) -> str:
    """`int_problem` (the message for a value `parse_ascii_int` refused) quoting the value
    only when short."""
    s = text.strip()
    if _ASCII_INT.fullmatch(s) is None:
        return f"{what}: {short(s)} is not an integer (ASCII digits only)"
    return f"{what}: {s if fits(s) else short(s)} is out of range ({low}..{high})"
