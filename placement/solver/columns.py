"""Lookups and sums over the arrays of `placement.io.columns.Columns`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def positions(values: np.ndarray, ids: Sequence[int]) -> np.ndarray:
    """Each of ``values``' position in ``ids`` (distinct), -1 where it is not there."""
    known = np.asarray(ids, dtype=np.int64)
    if not known.size:
        return np.full(values.size, -1, dtype=np.int64)
    low = min(int(known.min()), int(values.min(initial=0)))
    top = max(int(known.max()), int(values.max(initial=0)))
    if low >= 0 and top < _TABLE:  # broker ids as they are: a table by id
        table = np.full(top + 1, -1, dtype=np.int64)
        table[known] = np.arange(known.size, dtype=np.int64)
        found: np.ndarray = table[values]
        return found
    order = np.argsort(known, kind="stable")
    known = known[order]
    at = np.minimum(np.searchsorted(known, values), known.size - 1)
    return np.where(known[at] == values, order[at], -1)


_TABLE = 1 << 22  # the highest broker id `positions` looks up in a table


def sums(values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The sum of each run of ``values`` (the runs ``sizes`` long, one after another;
    empty runs sum to 0). Sums past 64 bits wrap, as the running total does."""
    total = np.zeros(values.size + 1, dtype=values.dtype)
    np.cumsum(values, out=total[1:])
    ends = np.cumsum(sizes)
    out: np.ndarray = total[ends] - total[ends - sizes]
    return out
