"""Did-you-mean hints and short descriptions of JSON values."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from placement.io.jsonsrc import shorten


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``word`` was most likely meant to be, if any is close enough."""
    options = list(candidates)
    folded = {c.casefold().strip(): c for c in options}
    if word.casefold().strip() in folded:
        return folded[word.casefold().strip()]
    match = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return match[0] if match else None


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    match = closest(word, candidates)
    return f'did you mean "{match}"?' if match is not None else ""


def describe(value: Any) -> str:
    """How a JSON value reads in a message: 'the string "3"', '2.0 (a number with a fraction)'."""
    import json

    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{json.dumps(value)} (a boolean)"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value!r} (a number with a fraction)"
    if isinstance(value, str):
        # a few characters at most: the "policy" may be another JSON file (a runner's
        # credentials), and CI logs are public
        return f"the string {json.dumps(shorten(value), ensure_ascii=False)}"
    if isinstance(value, list):
        return "an array"
    return "an object"
