"""A cluster's partitions as columns: each partition's topic (numbered), replica count and
observer count, and every replica list one after another, as arrays. The reader of
`assign`'s own layout makes them as it reads (`ownlayout`); `assign` judges and counts a
million partitions from them at C speed (`solver.core`, `plan.balance`) instead of a
partition at a time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from operator import attrgetter

import numpy as np

from placement.model.assignment import PartitionAssignment

# a partition's fields, as functions: its columns are made by mapping them over a list
TOPIC = attrgetter("topic")
PARTITION = attrgetter("partition")
REPLICAS = attrgetter("replicas")
OBSERVERS = attrgetter("observers")
KEY = attrgetter("key")


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
        topics = list(map(TOPIC, parts))
        names = list(dict.fromkeys(topics))
        number = dict(zip(names, range(len(names)), strict=True))
        n = len(parts)
        reps = list(map(REPLICAS, parts))
        obs = list(map(OBSERVERS, parts))
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
