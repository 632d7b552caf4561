"""A cluster's partitions as columns: each partition's topic (numbered), replica count and
observer count, and every replica list one after another, as arrays. `assign` judges and
counts a million partitions from these at C speed (`core`, `plan.balance`) instead of a
partition at a time; they are made once per request (`Request.columns`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from operator import attrgetter

import numpy as np

from placement.model.assignment import PartitionAssignment

_TOPIC = attrgetter("topic")
_REPLICAS = attrgetter("replicas")
_OBSERVERS = attrgetter("observers")


@dataclass(frozen=True, eq=False)
class Columns:
    """``names``: the distinct topics in order of first appearance; per partition, its
    topic's number in ``names`` (``topic``), its replicas (``sizes``) and observers
    (``observers``); ``flat``: the replica lists, one after another."""

    names: list[str]
    topic: np.ndarray
    sizes: np.ndarray
    observers: np.ndarray
    flat: np.ndarray
    observer_flat: np.ndarray  # the observer lists, one after another

    @classmethod
    def of(cls, parts: Sequence[PartitionAssignment]) -> Columns | None:
        """The columns of ``parts``; None when a broker id is no 64-bit integer (then
        the callers count one partition at a time)."""
        topics = list(map(_TOPIC, parts))
        names = list(dict.fromkeys(topics))
        number = dict(zip(names, range(len(names)), strict=True))
        n = len(parts)
        reps = list(map(_REPLICAS, parts))
        obs = list(map(_OBSERVERS, parts))
        sizes = np.fromiter(map(len, reps), np.int64, n)
        observers = np.fromiter(map(len, obs), np.int64, n)
        try:
            flat = np.fromiter(chain.from_iterable(reps), np.int64, int(sizes.sum()))
            tails = np.fromiter(chain.from_iterable(obs), np.int64, int(observers.sum()))
        except (OverflowError, TypeError, ValueError):
            return None
        topic = np.fromiter(map(number.__getitem__, topics), np.int64, n)
        return cls(names, topic, sizes, observers, flat, tails)

    def __len__(self) -> int:
        return int(self.sizes.size)

    @cached_property
    def starts(self) -> np.ndarray:
        """Where each partition's replicas start in ``flat``."""
        out: np.ndarray = np.cumsum(self.sizes) - self.sizes
        return out

    @cached_property
    def row(self) -> np.ndarray:
        """The partition of each entry of ``flat``."""
        out: np.ndarray = np.repeat(np.arange(self.sizes.size, dtype=np.int64), self.sizes)
        return out

    @cached_property
    def place(self) -> np.ndarray:
        """Each entry's place in its partition's list (0: the preferred leader)."""
        out: np.ndarray = np.arange(self.flat.size, dtype=np.int64)
        out -= np.repeat(self.starts, self.sizes)
        return out


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
