"""Read an input file as UTF-8 text, or fail with the file and the first bad byte's position."""

from __future__ import annotations

from pathlib import Path

from placement.errors import InputError
from placement.io.jsonsrc import EncodingError, decode_utf8
from placement.io.limits import PLAN_BYTES, Limit, read_bytes_capped


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
