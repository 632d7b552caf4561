"""Balance and movement figures: what a plan moves, and the balance before and after it
that `assign` reports for the balance goals (`placement.solver.goals`) with their bounds,
the per-rack tables of its summary and every broker's load (one pass over the current
state; the state after is counted from the plan's changes only), and the bytes each rack
sends to each rack. `snapshot show` takes
its per-rack ranges from here too."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import itemgetter

import numpy as np

from placement.io.columns import KEY, REPLICAS, TOPIC, Columns
from placement.model.assignment import Key, PartitionAssignment
from placement.model.inventory import Inventory
from placement.model.policy import PlacementPolicy
from placement.plan.summary import BrokerFigures
from placement.solver.capacity import bytes_held
from placement.solver.columns import positions
from placement.solver.goals import figure_name, summary_order
from placement.solver.tallies import per_topic


@dataclass(frozen=True)
class RackBalance:
    rack: str
    before: tuple[int, int]  # (min, max) per broker
    after: tuple[int, int]


@dataclass(frozen=True)
class Goal:
    """One goal's figure after the plan, named as its goal's `Figure` in
    `placement.solver.goals` (whose `summary_order` is the order they are listed in)."""

    name: str
    value: float
    bound: float | None  # no plan does better (None: no bound is computed)
    before: float | None = None


@dataclass(frozen=True)
class BalanceFigures:
    """What `balance_goals` measures: the goals, the per-rack (min, max) tables of
    replicas and of preferred leaders, and every broker's load before and after."""

    goals: list[Goal]
    replicas: list[RackBalance]
    leaders: list[RackBalance]
    brokers: list[BrokerFigures]


def spread(counts: Mapping[int, int], ids: Sequence[int]) -> int:
    """max - min over ``ids`` (0 for none)."""
    values = [counts.get(b, 0) for b in ids]
    return max(values) - min(values) if values else 0


def movement(
    plan: Sequence[PartitionAssignment],
    before: Mapping[Key, PartitionAssignment],
    sizes: Mapping[Key, int],
) -> tuple[int, int, int | None]:
    """Replicas the plan adds and removes, and the bytes it copies (None when a partition
    that gains a replica has no known size; a new partition has no data to copy)."""
    added = removed = 0
    moved: int | None = 0
    for a in plan:
        old = set(before[a.key].replicas) if a.key in before else set()
        new = set(a.replicas)
        added += len(new - old)
        removed += len(old - new)
        if new - old and a.key in before and moved is not None:
            size = sizes.get(a.key)
            moved = None if size is None else moved + size * len(new - old)
    return added, removed, moved


def rack_minmax(
    counts: Mapping[int, int], members: Mapping[str, Sequence[int]]
) -> dict[str, tuple[int, int]]:
    """rack -> (min, max) of ``counts`` over its brokers (a broker absent counts 0; a rack
    without brokers is left out)."""
    return {rack: _minmax(counts, ids) for rack, ids in members.items() if ids}


def _uneven(counts: Mapping[int, int], ids: Sequence[int]) -> int:
    """1 when the items over ``ids`` cannot be spread evenly (a spread's lower bound)."""
    return int(sum(counts.get(b, 0) for b in ids) % len(ids) != 0)


def _minmax(counts: Mapping[int, int], ids: Sequence[int]) -> tuple[int, int]:
    return (min(counts.get(b, 0) for b in ids), max(counts.get(b, 0) for b in ids))


class TopicTable:
    """Replicas per (topic, broker) as a table of the topics and brokers given (a
    cluster's state holds up to millions of such pairs: counted as arrays, not as a dict);
    a pair outside it counts 0 until set, and is kept aside."""

    def __init__(self, topics: list[str], brokers: list[int], table: np.ndarray) -> None:
        self.topics = topics
        self.brokers = brokers
        self.row = dict(zip(topics, range(len(topics)), strict=True))
        self.column = dict(zip(brokers, range(len(brokers)), strict=True))
        self.table = table
        self.aside: Counter[tuple[str, int]] = Counter()

    def __getitem__(self, pair: tuple[str, int]) -> int:
        t, b = self.row.get(pair[0]), self.column.get(pair[1])
        return self.aside[pair] if t is None or b is None else int(self.table[t, b])

    def __setitem__(self, pair: tuple[str, int], n: int) -> None:
        t, b = self.row.get(pair[0]), self.column.get(pair[1])
        if t is None or b is None:
            self.aside[pair] = n
        else:
            self.table[t, b] = n

    def copy(self) -> TopicTable:
        out = TopicTable(self.topics, self.brokers, self.table.copy())
        out.aside = Counter(self.aside)
        return out

    def counts(self) -> Counter[tuple[str, int]]:
        """Every pair held (count not 0), as a `Counter`."""
        t, b = np.nonzero(self.table)
        pairs = zip(
            map(self.topics.__getitem__, t.tolist()),
            map(self.brokers.__getitem__, b.tolist()),
            strict=True,
        )
        out = Counter(dict(zip(pairs, self.table[t, b].tolist(), strict=True)))
        out.update({k: n for k, n in self.aside.items() if n})
        return out

    def spread(self, racks: Mapping[str, Sequence[int]]) -> int | None:
        """The worst (topic, rack) spread, as `_Racks.topic_spread` (None when pairs are
        kept aside: then count them that way)."""
        if any(self.aside.values()):
            return None
        worst = 0
        for ids in racks.values():
            at = [self.column[b] for b in ids if b in self.column]
            if not at or not self.table.size:
                continue
            part = self.table[:, at]
            low = part.min(axis=1) if len(at) == len(ids) else 0
            worst = max(worst, int((part.max(axis=1) - low).max()))
        return worst


@dataclass
class Tally:
    """Replicas, preferred leaders and replicas of each topic per broker; the lead racks."""

    load: Counter[int]
    leaders: Counter[int]
    per_topic: Counter[tuple[str, int]] | TopicTable  # (topic, broker)
    lead_racks: set[str]

    @classmethod
    def of(cls, state: Iterable[PartitionAssignment], lead_of: Mapping[str, str]) -> Tally:
        # columns counted at C speed: a cluster holds up to millions of partitions
        parts = [a for a in state if a.replicas]
        reps = list(map(REPLICAS, parts))
        topics = list(map(TOPIC, parts))
        names = list(dict.fromkeys(topics))
        counted = _counted(names, topics, reps)
        if counted is None:
            counted = (
                Counter(chain.from_iterable(reps)),
                Counter(map(itemgetter(0), reps)),
                per_topic(topics, reps),
            )
        return cls(*counted, {lead_of[t] for t in names if t in lead_of})

    @classmethod
    def of_columns(
        cls,
        cols: Columns,
        lead_of: Mapping[str, str],
        topics: Iterable[str],
        brokers: Iterable[int],
    ) -> Tally | None:
        """`of` the partitions of ``cols``, from its arrays; the (topic, broker) table
        also has rows and columns for ``topics`` and ``brokers`` (those a plan may add).
        None when that table would be too large (then `of`)."""
        names = list(dict.fromkeys(chain(cols.names, topics)))
        if cols.flat.size and cols.flat.min() >= 0 and cols.flat.max() < _CELLS:
            held_ids = np.flatnonzero(np.bincount(cols.flat)).tolist()
        else:
            held_ids = np.unique(cols.flat).tolist()
        ids = sorted(set(brokers).union(held_ids))
        if len(names) * len(ids) > _CELLS:
            return None
        at = positions(cols.flat, ids)
        load = np.bincount(at, minlength=len(ids))
        has = cols.sizes > 0
        led = np.bincount(at[cols.starts[has]], minlength=len(ids))
        cells = np.bincount(cols.topic[cols.row] * len(ids) + at, minlength=len(names) * len(ids))
        table = cells.reshape(len(names), len(ids))
        held = np.flatnonzero(np.bincount(cols.topic[has], minlength=len(cols.names))).tolist()
        return cls(
            _nonzero(ids, load),
            _nonzero(ids, led),
            TopicTable(names, ids, table),
            {lead_of[cols.names[t]] for t in held if cols.names[t] in lead_of},
        )

    def copy(self) -> Tally:
        per_topic = self.per_topic
        return Tally(
            Counter(self.load),
            Counter(self.leaders),
            per_topic.copy() if isinstance(per_topic, TopicTable) else Counter(per_topic),
            set(self.lead_racks),
        )

    def apply_table(
        self, gone: Sequence[PartitionAssignment], come: Sequence[PartitionAssignment]
    ) -> bool:
        """`apply` -1 for each of ``gone``, then +1 for each of ``come``, into the table
        a whole list at a time; False (nothing changed) when a pair lies outside it."""
        table = self.per_topic
        assert isinstance(table, TopicTable)
        changes = []
        for sign, parts in ((-1, gone), (1, come)):
            parts = [a for a in parts if a.replicas]
            reps = list(map(REPLICAS, parts))
            try:
                rows = list(map(table.row.__getitem__, map(TOPIC, parts)))
                cols = list(map(table.column.__getitem__, chain.from_iterable(reps)))
            except KeyError:
                return False
            at_rows = np.repeat(np.array(rows, dtype=np.int64), list(map(len, reps)))
            changes.append((sign, reps, at_rows, np.array(cols, dtype=np.int64)))
        for sign, reps, at_rows, at_cols in changes:
            np.add.at(table.table, (at_rows, at_cols), sign)
            firsts = list(map(itemgetter(0), reps))
            if sign > 0:
                self.load.update(chain.from_iterable(reps))
                self.leaders.update(firsts)
            else:
                self.load.subtract(chain.from_iterable(reps))
                self.leaders.subtract(firsts)
        return True

    def apply(self, a: PartitionAssignment, sign: int) -> None:
        if not a.replicas:
            return
        self.leaders[a.replicas[0]] += sign
        for b in a.replicas:
            self.load[b] += sign
            self.per_topic[(a.topic, b)] += sign


def _nonzero(ids: list[int], counts: np.ndarray) -> Counter[int]:
    held = np.flatnonzero(counts)
    return Counter(dict(zip(np.asarray(ids)[held].tolist(), counts[held].tolist(), strict=True)))


# the most (topic, broker) cells `_counted` counts in one array (8 bytes each)
_CELLS = 1 << 24


def _counted(
    names: list[str], topics: list[str], reps: list[tuple[int, ...]]
) -> tuple[Counter[int], Counter[int], Counter[tuple[str, int]]] | None:
    """Replicas and preferred leaders per broker, and replicas per (topic, broker), of
    partitions of ``topics`` (whose distinct names are ``names``) holding ``reps`` (none
    empty), as `Counter` and `per_topic` count them (the same counts, none of 0), by
    counting arrays of brokers and of (topic, broker) cells; None when the cells would be
    too many (then they are counted one by one)."""
    sizes = np.fromiter(map(len, reps), np.int64, len(reps))
    flat = np.fromiter(chain.from_iterable(reps), np.int64, int(sizes.sum()))
    if not flat.size or flat.min() < 0 or flat.max() >= _CELLS:
        return None
    # each broker's column: its rank among the brokers holding replicas (a table by id)
    brokers = np.flatnonzero(np.bincount(flat))
    width = brokers.size
    if len(names) * width > _CELLS:
        return None
    rank = np.zeros(int(brokers[-1]) + 1, np.int64)
    rank[brokers] = np.arange(width)
    column = rank[flat]
    number = {name: i for i, name in enumerate(names)}
    row = np.fromiter(map(number.__getitem__, topics), np.int64, len(topics))
    cells = np.bincount(np.repeat(row, sizes) * width + column, minlength=len(names) * width)
    held = np.flatnonzero(cells)
    ids = brokers.tolist()
    load = Counter(dict(zip(ids, np.bincount(column, minlength=width).tolist(), strict=True)))
    firsts = np.bincount(column[np.cumsum(sizes) - sizes], minlength=width)
    led = np.flatnonzero(firsts)
    leaders = Counter(dict(zip(brokers[led].tolist(), firsts[led].tolist(), strict=True)))
    keys = zip(
        map(names.__getitem__, (held // width).tolist()),
        map(ids.__getitem__, (held % width).tolist()),
        strict=True,
    )
    return load, leaders, Counter(dict(zip(keys, cells[held].tolist(), strict=True)))


class _Racks:
    """The brokers counted per rack, and the figures of a tally over them."""

    def __init__(self, inventory: Inventory, unusable: frozenset[int]) -> None:
        self.rack_of = {b.id: b.rack for b in inventory.brokers if b.id not in unusable}
        self.ids: dict[str, list[int]] = {}
        for b, r in self.rack_of.items():
            if r is not None:
                self.ids.setdefault(r, []).append(b)

    def figures(self, t: Tally) -> tuple[int, ...]:
        """Worst rack, (topic, rack) and lead-rack spreads, and the bounds of the first
        and last (1 where the replicas do not divide evenly over the brokers, else 0)."""
        ids = self.ids
        lead = [r for r in t.lead_racks if r in ids]
        return (
            max((spread(t.load, m) for m in ids.values()), default=0),
            self.topic_spread(t.per_topic),
            max((spread(t.leaders, ids[r]) for r in lead), default=0),
            max((int(sum(t.load[b] for b in m) % len(m) != 0) for m in ids.values()), default=0),
            max(
                (int(sum(t.leaders[b] for b in ids[r]) % len(ids[r]) != 0) for r in lead), default=0
            ),
        )

    def topic_spread(self, per_topic: Mapping[tuple[str, int], int] | TopicTable) -> int:
        """The worst (topic, rack) spread: max - min replicas of the topic over the rack's
        brokers, for every topic with a replica in the rack (where it has none, the spread
        is 0). From the (topic, broker) counts as arrays, grouped by (topic, rack): a
        broker missing from them holds none, so a rack's minimum is 0 unless every broker
        of it holds the topic."""
        if isinstance(per_topic, TopicTable):
            worst = per_topic.spread(self.ids)
            if worst is not None:
                return worst
            per_topic = per_topic.counts()
        n = len(per_topic)
        racks = {r: i for i, r in enumerate(self.ids)}
        rack_at = {b: racks[r] for b, r in self.rack_of.items() if r is not None}
        topics = {t: i for i, t in enumerate(dict.fromkeys(map(itemgetter(0), per_topic)))}
        topic = np.fromiter(map(topics.__getitem__, map(itemgetter(0), per_topic)), np.int64, n)
        rack = np.fromiter(map(rack_at.get, map(itemgetter(1), per_topic), repeat(-1)), np.int64, n)
        count = np.fromiter(per_topic.values(), np.int64, n)
        held = (count != 0) & (rack >= 0)
        if not held.any():
            return 0
        group = (topic * len(racks) + rack)[held]
        order = np.argsort(group, kind="stable")
        group, count = group[order], count[held][order]
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        top = np.maximum.reduceat(count, starts)
        low = np.minimum.reduceat(count, starts)
        holding = np.diff(np.r_[starts, group.size])
        size = np.array([len(ids) for ids in self.ids.values()])[group[starts] % len(racks)]
        return int((top - np.where(holding == size, low, 0)).max())


def balance_goals(
    inventory: Inventory,
    policies: Mapping[str, PlacementPolicy],
    before: Mapping[Key, PartitionAssignment],
    plan: Sequence[PartitionAssignment],
    drained: frozenset[int],
    unusable: frozenset[int],
    caps: Mapping[int, int],
    sizes: Mapping[Key, int],
    columns: Columns | None = None,
) -> BalanceFigures:
    """The balance goals before and after, the per-rack tables: replicas per broker
    (drained brokers left out) and preferred leaders per broker of each lead rack (drained
    and excluded left out), and every broker's load. ``columns``: ``before``'s partitions
    in its order as arrays, if at hand (then counted from them)."""
    racks = _Racks(inventory, unusable)
    lead_of = {t: p.lead_rack for t, p in policies.items()}
    t0 = None
    if columns is not None:
        added = chain.from_iterable(map(REPLICAS, plan))
        t0 = Tally.of_columns(columns, lead_of, map(TOPIC, plan), chain(inventory.rack_of, added))
    if t0 is None:
        t0 = Tally.of(before.values(), lead_of)
    t1 = t0.copy()
    olds = [x for x in map(before.get, map(KEY, plan)) if x is not None]
    if not isinstance(t1.per_topic, TopicTable) or not t1.apply_table(olds, plan):
        for a in plan:
            for sign, x in ((-1, before.get(a.key)), (1, a)):
                if x is not None:
                    t1.apply(x, sign)
    # leaders sit in every rack holding sync replicas (a leader stays where it is): the
    # racks compared are those where a broker leads, before or after
    rack_of = inventory.rack_of
    leading = {r for t in (t0, t1) for b, n in t.leaders.items() if n > 0 and (r := rack_of.get(b))}
    t0.lead_racks = t1.lead_racks = leading
    b0, b1 = racks.figures(t0), racks.figures(t1)
    # each goal's figure under its name in `placement.solver.goals`, in the summary's order
    measured = [
        Goal(figure_name("replicas"), b1[0], b1[3], b0[0]),
        Goal(figure_name("topics"), b1[1], None, b0[1]),
        Goal(figure_name("leaders"), b1[2], b1[4], b0[2]),
    ]
    if caps and sizes:
        over = _over_cap(before, plan, caps, sizes, racks.rack_of)
        measured.append(Goal(figure_name("capacity"), over, 0))
    order = summary_order()
    goals = sorted(measured, key=lambda g: order.index(g.name))
    held = _bytes(before, plan, sizes, t0.load, t1.load)
    brokers = _brokers(inventory, drained, unusable - drained, (t0, t1), held)
    return BalanceFigures(goals, *_tables(inventory, drained, racks, t0, t1), brokers)


def _over_cap(
    before: Mapping[Key, PartitionAssignment],
    plan: Sequence[PartitionAssignment],
    caps: Mapping[int, int],
    sizes: Mapping[Key, int],
    counted: Mapping[int, str | None],
) -> int:
    changed = {a.key: a for a in plan}
    held = bytes_held((changed.get(key, a) for key, a in before.items()), sizes)
    return sum(1 for b, cap in caps.items() if b in counted and held.get(b, 0) > cap)


def _tables(
    inventory: Inventory, drained: frozenset[int], racks: _Racks, t0: Tally, t1: Tally
) -> tuple[list[RackBalance], list[RackBalance]]:
    balance = []
    leaders = []
    for rack in inventory.racks():
        rids = [b.id for b in inventory.brokers if b.rack == rack and b.id not in drained]
        if rids:
            balance.append(RackBalance(rack, _minmax(t0.load, rids), _minmax(t1.load, rids)))
        if rack in t1.lead_racks and rack in racks.ids:
            lids = racks.ids[rack]
            leaders.append(RackBalance(rack, _minmax(t0.leaders, lids), _minmax(t1.leaders, lids)))
    return balance, leaders


# per broker: bytes held, and replicas of partitions whose size is unknown
_Held = tuple[Counter[int], Counter[int]]


def _bytes(
    before: Mapping[Key, PartitionAssignment],
    plan: Sequence[PartitionAssignment],
    sizes: Mapping[Key, int],
    load: Counter[int],
    after_load: Counter[int] | None = None,
) -> tuple[_Held, _Held]:
    """Bytes per broker before and after the plan, each with the count of replicas whose
    size is unknown there (a partition the plan creates holds no data yet). ``load``:
    replicas per broker before (all of unknown size when there are no sizes at all), and
    ``after_load`` after the plan, if counted."""
    held: Counter[int] = Counter()
    if not sizes and after_load is not None:
        # every replica of a partition that exists is of unknown size, and a partition
        # the plan creates holds nothing yet: no byte is known before or after
        created = chain.from_iterable(a.replicas for a in plan if a.key not in before)
        unknown_after = Counter(after_load)
        unknown_after.subtract(created)
        return (held, Counter(load)), (Counter(), unknown_after)
    if sizes:
        unknown: Counter[int] = Counter()
        for key, a in before.items():
            size = sizes.get(key)
            for b in a.replicas:
                if size is None:
                    unknown[b] += 1
                else:
                    held[b] += size
    else:
        unknown = Counter(load)
    after, unknown_after = Counter(held), Counter(unknown)
    for a in plan:
        for sign, x in ((-1, before.get(a.key)), (1, a)):
            if x is None:
                continue
            size = sizes.get(x.key) if x.key in before else 0
            for b in x.replicas:
                if size is None:
                    unknown_after[b] += sign
                else:
                    after[b] += sign * size
    return (held, unknown), (after, unknown_after)


def _brokers(
    inventory: Inventory,
    drained: frozenset[int],
    excluded: frozenset[int],
    tallies: tuple[Tally, Tally],
    held: tuple[_Held, _Held],
) -> list[BrokerFigures]:
    """Every broker of the inventory and every other one holding replicas, by id."""
    t0, t1 = tallies
    rack_of = inventory.rack_of
    ids = sorted(
        set(rack_of) | {b for b, n in t0.load.items() if n} | {b for b, n in t1.load.items() if n}
    )

    def size(state: _Held, b: int) -> int | None:
        return None if state[1][b] else state[0][b]

    out = []
    for b in ids:
        status = (
            "absent"
            if b not in rack_of
            else "drained"
            if b in drained
            else "excluded"
            if b in excluded
            else "active"
        )
        out.append(
            BrokerFigures(
                broker=b,
                rack=rack_of.get(b),
                status=status,
                replicas_before=t0.load[b],
                replicas_after=t1.load[b],
                bytes_before=size(held[0], b),
                bytes_after=size(held[1], b),
                leaders_before=t0.leaders[b],
                leaders_after=t1.leaders[b],
            )
        )
    return out
