"""`PartitionAssignment` objects made from columns at C speed: the objects made bare and
each field set a column at a time (`assignments`), replica lists made tuples a run of
one length at a time with one int object per broker id (`tuples`), and the arrays joined
without numpy's huge pages (`joined`). The readers of a million partitions use them
(`ownlayout`, `reassignment_columns`, `snapshot`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import fields
from itertools import repeat
from typing import Any

import numpy as np

from placement.model.assignment import PartitionAssignment


def joined(arrays: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate(arrays)``, in memory numpy did not allocate: numpy asks the
    kernel for huge pages for an array of some MB, which on a virtual machine costs
    several times what the same pages cost one at a time (0.24 s against 0.06 s to
    make and fill 80 MB on a 2-core virtual machine)."""
    dtype = arrays[0].dtype
    out = np.frombuffer(bytearray(sum(a.size for a in arrays) * dtype.itemsize), dtype=dtype)
    np.concatenate(arrays, out=out)
    return out


def topic_names(names: list[str], topic: np.ndarray) -> list[str]:
    """Each line's topic name (``names[topic[i]]``), a run of lines of one topic at a
    time."""
    firsts = np.flatnonzero(np.append(True, topic[1:] != topic[:-1]))
    counts = np.diff(np.append(firsts, topic.size)).tolist()
    out: list[str] = []
    for t, count in zip(topic[firsts].tolist(), counts, strict=True):
        out += repeat(names[t], count)
    return out


def pieces(values: np.ndarray, table: np.ndarray | None) -> list[int]:
    """``values`` as a list, each value ``table[value]`` when a table is given (a piece
    at a time: no large array of objects)."""
    if table is None:
        return list(values.tolist())
    out: list[int] = []
    for lo in range(0, values.size, _PIECE):
        out += table[values[lo : lo + _PIECE]].tolist()
    return out


_RUN = 16  # lines a run of one length holds at least, on average, for `tuples` by runs


def tuples(flat: np.ndarray, sizes: np.ndarray, table: np.ndarray | None) -> list[tuple[int, ...]]:
    """The lists ``sizes`` long, one after another in ``flat``, as tuples (each id one
    int object for all its lists: ``table[id]``, when a table is given): a run of lines
    of one length at a time (the file's order: a topic's lines are alike), else a length
    at a time."""
    if not flat.size:
        return [()] * sizes.size
    if table is not None:
        at, shared = flat, table
    else:
        ids, at = np.unique(flat, return_inverse=True)
        shared = np.empty(ids.size, dtype=object)
        shared[:] = ids.tolist()
    n = sizes.size
    cut = np.flatnonzero(sizes[1:] != sizes[:-1]) + 1
    if cut.size * _RUN > n:
        return _by_length(shared, at, sizes)
    bounds = [0, *cut.tolist(), n]
    out: list[tuple[int, ...]] = []
    lengths = sizes[bounds[:-1]].tolist()
    # lists of one id (an observer, most often): one tuple per id, when fewer
    singles = None
    if np.count_nonzero(sizes == 1) > shared.size:
        singles = np.fromiter(zip(shared.tolist()), dtype=object, count=shared.size)
    begin = 0  # in ``at``
    for lo, hi, k in zip(bounds[:-1], bounds[1:], lengths, strict=True):
        if not k:
            out += repeat((), hi - lo)
            continue
        if k == 1 and singles is not None:
            out += singles[at[begin : begin + hi - lo]].tolist()
            begin += hi - lo
            continue
        step = max(_PIECE // k, 1)  # lines: the ids of a piece of the run as a list
        for first in range(lo, hi, step):
            end = begin + min(step, hi - first) * k
            ids = iter(shared[at[begin:end]].tolist())
            out += zip(*repeat(ids, k), strict=False)  # a tuple: the next k ids
            begin = end
    return out


_PIECE = 1 << 16  # ids made a list at a time (a few in the cache, and no large list)


def _by_length(shared: np.ndarray, at: np.ndarray, sizes: np.ndarray) -> list[tuple[int, ...]]:
    """`tuples`, a length at a time: ``shared[at]``, the ids."""
    out: list[tuple[int, ...]] = [()] * sizes.size
    starts = np.cumsum(sizes) - sizes
    for k in np.unique(sizes).tolist():
        if k == 0:
            continue
        rows = np.flatnonzero(sizes == k)
        cells = at[starts[rows][:, None] + np.arange(k)]
        cols = [shared[cells[:, j]].tolist() for j in range(k)]
        deque(map(out.__setitem__, rows.tolist(), zip(*cols, strict=True)), maxlen=0)
    return out


# the fields of a PartitionAssignment, each set by `assignments` (which calls no __init__)
_FIELDS = ("topic", "partition", "replicas", "observers")
assert tuple(f.name for f in fields(PartitionAssignment)) == _FIELDS
assert not hasattr(PartitionAssignment, "__post_init__")


def assignments(*columns: Sequence[Any]) -> list[PartitionAssignment]:
    """``PartitionAssignment(*row)`` for each row of ``columns`` (a topic, a partition,
    replicas and observers each, checked), at C speed: the objects made bare, then each
    field set a column at a time through its slot (what the frozen dataclass's __init__
    does one object at a time, at about twice the cost)."""
    out = list(map(object.__new__, repeat(PartitionAssignment, len(columns[0]))))
    for name, column in zip(_FIELDS, columns, strict=True):
        deque(map(getattr(PartitionAssignment, name).__set__, out, column), maxlen=0)
    return out
