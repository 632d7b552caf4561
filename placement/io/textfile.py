"""Read an input file as UTF-8 text, or fail with the file and the first bad byte's position."""

from __future__ import annotations

from pathlib import Path

from placement.errors import InputError
from placement.io.jsonsrc import EncodingError, decode_utf8


def read_text(path: str | Path, what: str = "the file") -> str:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(str(p), f"cannot read {what}: {exc.strerror}") from None
    try:
        text, _ = decode_utf8(data)
    except EncodingError as exc:
        raise InputError(
            str(p), exc.message, exc.hint, line=exc.position.line, column=exc.position.column
        ) from None
    return text
