"""Which partitions already meet their rule (goal `rules`): a policy as a partition is
checked against it (`Expected`), judged one partition at a time (`meeting`) or over the
columns of a million partitions at C speed (`meeting_columns`). A partition that meets its
rule stays out of the flow."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from itertools import compress, repeat
from operator import eq, getitem, not_, sub

import numpy as np

from placement.io.columns import OBSERVERS, REPLICAS, Columns
from placement.model.assignment import PartitionAssignment
from placement.model.policy import PlacementPolicy
from placement.model.rackaware import rack_bounds
from placement.solver.columns import positions, sums


@dataclass(frozen=True, eq=False)  # hashed by identity: `meeting` caches on it
class Expected:
    """A policy as a partition is checked against it: racks of sync replicas and of
    observers (sorted), the lead rack, and the counts per rack."""

    lead_rack: str
    sync: tuple[str, ...]
    observers: tuple[str, ...]
    per_rack: dict[str, tuple[int, int]]
    lead_check: bool  # --leaders-in-first-rack: the leader must sit in the lead rack

    @classmethod
    def of(cls, policy: PlacementPolicy, lead_check: bool = False) -> Expected:
        per_rack = policy.per_rack()
        sync = tuple(sorted(r for r, (s, _) in per_rack.items() for _ in range(s)))
        obs = tuple(sorted(r for r, (_, o) in per_rack.items() for _ in range(o)))
        return cls(policy.lead_rack, sync, obs, per_rack, lead_check)

    def racks_fit(self, at: tuple[str | None, ...], n_observers: int) -> bool:
        """Whether replicas in the racks ``at`` (None: an unusable broker), the last
        ``n_observers`` of them observers, are placed as the policy asks: none unusable,
        sync and observer racks as asked (and the leader in the lead rack when asked).
        (`meeting` adds what the brokers themselves must be.)"""
        if not at or None in at or (self.lead_check and at[0] != self.lead_rack):
            return False
        n_sync = len(at) - n_observers
        racks = [r for r in at if r is not None]  # all of them: None was ruled out above
        return (
            tuple(sorted(racks[:n_sync])) == self.sync
            and tuple(sorted(racks[n_sync:])) == self.observers
        )


def meeting(
    parts: list[PartitionAssignment],
    expected: list[Expected | None],
    home: Mapping[int, str],
) -> list[bool]:
    """Which partitions already meet their policy (``expected``, None: they have none):
    `Expected.racks_fit`, no broker twice, and the observers the replicas after the sync
    ones. Most partitions of a cluster do, a million of them: the racks are judged once
    per pattern (policy, racks, observers) and the brokers a column at a time."""

    @cache
    def fits(exp: Expected | None, at: tuple[str | None, ...], n_observers: int) -> bool:
        return exp is not None and exp.racks_fit(at, n_observers)

    reps = list(map(REPLICAS, parts))
    observers = list(map(OBSERVERS, parts))
    counts = list(map(len, observers))
    ats = map(tuple, map(map, repeat(home.get), reps))
    placed = map(fits, expected, ats, counts)
    lengths = list(map(len, reps))
    distinct = map(eq, map(len, map(set, reps)), lengths)
    tails = list(map(getitem, reps, map(slice, map(sub, lengths, counts), repeat(None))))
    as_tail = list(map(eq, tails, observers))
    for i in compress(range(len(parts)), map(not_, as_tail)):  # the same brokers, reordered
        as_tail[i] = set(tails[i]) == set(observers[i])
    return list(map(all, zip(placed, distinct, as_tail, strict=True)))


def meeting_columns(
    cols: Columns,
    parts: list[PartitionAssignment],
    expect: Mapping[str, Expected],
    home: Mapping[int, str],
    first_rack: bool = False,
    rule_racks: Mapping[str, int] | None = None,
) -> np.ndarray | None:
    """`meeting` over the columns of ``parts``, at C speed: each partition's racks, sync
    and observer, counted into one 64-bit number per partition (a field of bits per rack
    and kind, and one for brokers that are away) and compared with its policy's. None when
    those fields do not fit in 64 bits or a list is longer than `_LONGEST` (then one
    partition at a time). ``rule_racks`` (brokers per rack that stay): a partition of a
    topic without a policy meets Kafka's rack-aware rule over those racks (without it,
    such a partition never meets: one partition at a time)."""
    expected = [expect.get(name) for name in cols.names]
    wanted = [e for e in expected if e is not None]
    racks = sorted(set(home.values()).union(*(e.per_rack for e in wanted)))
    code = {r: i for i, r in enumerate(racks)}
    asked = [len(e.sync) + len(e.observers) for e in wanted]
    longest = max([int(cols.sizes.max(initial=0)), *asked])
    width = longest.bit_length()  # any count of one rack and kind fits its field
    fits = (2 * len(racks) + 1) * width <= 64
    if not fits or longest > _LONGEST or (cols.observers > cols.sizes).any():
        return None
    # each replica's field: its rack's, as a sync replica or an observer, or "away"
    # (unusable): a partition meets the policy's racks when its fields count as the
    # policy's (so none away)
    home_ids = list(home)
    n_racks = len(racks)
    rack = np.array([code[home[b]] for b in home_ids] + [2 * n_racks], dtype=np.int64)
    field = rack[positions(cols.flat, home_ids)]
    k = cols.observers
    ends = np.cumsum(cols.sizes)
    tail = (
        np.repeat(ends - k, k) + np.arange(cols.observer_flat.size) - np.repeat(np.cumsum(k) - k, k)
    )
    field[tail] += np.where(field[tail] < n_racks, n_racks, 0)
    bits = np.array(
        [1 << (f * width) for f in range(2 * n_racks)] + [1 << (2 * n_racks * width)],
        dtype=np.uint64,
    )
    counted = sums(bits[field], cols.sizes)
    want = np.zeros(len(expected), dtype=np.uint64)
    lead = np.full(len(expected), -2, dtype=np.int64)  # -2: no policy, so never met
    for i, e in enumerate(expected):
        if e is not None:
            lead[i] = code.get(e.lead_rack, -2)
            fields = [code[r] for r in e.sync] + [n_racks + code[r] for r in e.observers]
            want[i] = sum(1 << (f * width) for f in fields)
    has = cols.sizes > 0
    first = np.full(len(cols), -1, dtype=np.int64)  # the leader's rack (-1: away)
    first[has] = field[cols.starts[has]]
    first = np.where(first == 2 * n_racks, -1, first % n_racks)
    t = cols.topic
    met: np.ndarray = has & (counted == want[t])
    if first_rack:
        met &= first == lead[t]
    if rule_racks is not None:
        free = np.array([e is None for e in expected], dtype=bool)
        if free.any():
            met = np.where(free[t], _follow_rule(counted, cols, racks, rule_racks, width), met)
    # no broker twice: each replica against those 1, 2, ... places before it in its list
    twice = np.zeros(cols.flat.size, dtype=bool)
    for d in range(1, longest):
        twice[d:] |= (cols.flat[d:] == cols.flat[:-d]) & (cols.place[d:] >= d)
    met &= sums(twice.astype(np.int64), cols.sizes) == 0
    # the observers: the replicas' tail (or the same brokers in another order)
    if cols.observer_flat.size:
        differs = sums((cols.flat[tail] != cols.observer_flat).astype(np.int64), k) > 0
        for i in np.flatnonzero(differs & met).tolist():
            a = parts[i]
            met[i] = set(a.replicas[len(a.replicas) - len(a.observers) :]) == set(a.observers)
    return met


_LONGEST = 64  # the longest replica list `meeting_columns` judges


def _follow_rule(
    counted: np.ndarray,
    cols: Columns,
    racks: list[str],
    sizes: Mapping[str, int],
    width: int,
) -> np.ndarray:
    """Per partition of ``cols``, whether its fields (``counted``, as `meeting_columns`
    packs them) follow Kafka's rack-aware rule: no broker away, no observer, and each
    rack's count between its floor and its ceiling for the partition's replica count."""
    n_racks = len(racks)
    longest = int(cols.sizes.max(initial=0))
    low = np.ones((longest + 1, n_racks), dtype=np.int64)  # low > high: never met
    high = np.zeros((longest + 1, n_racks), dtype=np.int64)
    for n in range(1, longest + 1):
        bounds = rack_bounds(n, sizes)
        if bounds is None:
            continue
        for i, rack in enumerate(racks):
            low[n, i], high[n, i] = bounds.get(rack, (0, 0))  # a rack with no broker: none
    lengths = cols.sizes
    others = counted >> np.uint64(n_racks * width)  # observer and away fields
    ok: np.ndarray = (lengths > 0) & (others == 0) & (cols.observers == 0)
    mask = np.uint64((1 << width) - 1)
    for i in range(n_racks):
        count = ((counted >> np.uint64(i * width)) & mask).astype(np.int64)
        ok &= (count >= low[lengths, i]) & (count <= high[lengths, i])
    return ok
