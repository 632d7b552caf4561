"""The table of caps in docs/safety.md lists every limit in placement/io/limits.py, with its
default."""

from __future__ import annotations

import re
from pathlib import Path

from placement.io import limits

REPO = Path(__file__).resolve().parent.parent
UNITS = {"GiB": 2**30, "MiB": 2**20}


def _documented_caps() -> dict[str, int]:
    text = (REPO / "docs" / "safety.md").read_text(encoding="utf-8")
    caps = {}
    for name, value in re.findall(r"^\| `(MRC_PLAN_MAX_\w+)` \| ([^|]+) \|", text, re.M):
        number, _, unit = value.strip().partition(" ")
        caps[name] = int(number.replace(",", "")) * UNITS.get(unit, 1)
    return caps


def test_every_limit_is_documented_with_its_default() -> None:
    code = {v.name: v.default for v in vars(limits).values() if isinstance(v, limits.Limit)}
    assert code, "no limits found"
    assert _documented_caps() == code
