"""What the per-rack flow starts from: each rack's load outside the flow and the flow's
items (`RackState`), counted from the partitions that meet their rule (`tally_meeting`,
over the columns when the reader made them); under ``--rebalance`` what each broker may
offer the flow (goal `replicas`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from itertools import chain, compress, groupby, repeat
from operator import is_, itemgetter, ne

import numpy as np

from placement.io.columns import REPLICAS, Columns
from placement.model.assignment import Key, PartitionAssignment
from placement.solver.cluster import Cluster
from placement.solver.columns import positions
from placement.solver.flow import Item, Targets
from placement.solver.judging import Expected, meeting, meeting_columns
from placement.solver.repair import Request

# --rebalance: a broker above its floor offers the flow this many of its partitions per
# replica above the floor, plus a few: enough choice for the topics, a bounded network
OFFER = 3


OFFER_MIN = 16


class RackState:
    """One rack while the flow is built: load outside the flow, and the flow's items."""

    def __init__(self, ids: Iterable[int]) -> None:
        self.base = dict.fromkeys(ids, 0)
        self.topic_base: Counter[tuple[str, int]] = Counter()
        self.kept = dict.fromkeys(self.base, 0)  # replicas each broker could keep
        self.on: dict[int, list[Key]] = {b: [] for b in self.base}  # offerable partitions
        self.items: list[Item] = []
        self.keys: list[Key] = []
        self.leaders: Counter[int] = Counter()  # preferred leaders that stay put

    def add(self, key: Key, item: Item) -> None:
        self.items.append(item)
        self.keys.append(key)

    def targets(self, receivers: tuple[int, ...]) -> tuple[Targets, int]:
        """Floor and ceiling per receiving broker, and the replicas any plan that meets them
        must add: the ceilings go to the brokers that keep the most."""
        total = sum(self.base[b] for b in receivers) + sum(
            max(0, it.need - sum(1 for b in it.held if b not in receivers)) for it in self.items
        )
        q, r = divmod(total, len(receivers))
        order = sorted(receivers, key=lambda b: (-self.kept[b], b))
        goal = {b: q + (1 if i < r else 0) for i, b in enumerate(order)}
        bound = sum(max(0, goal[b] - self.kept[b]) for b in receivers)
        return Targets(q, q + (1 if r else 0)), bound

    def offer(
        self,
        before: Mapping[Key, PartitionAssignment],
        receivers: tuple[int, ...],
        targets: Targets,
    ) -> None:
        """--rebalance: the partitions the brokers above their floor may shed join the flow,
        with arcs to the brokers below their ceiling; the ones whose topic the broker holds
        most of come first, preferred leaders last."""
        under = tuple(b for b in receivers if self.base[b] < targets.ceiling)
        over = [b for b in receivers if self.base[b] > targets.floor]
        if not under or not over:
            return
        topic_total: Counter[str] = Counter()
        for (t, _b), n in self.topic_base.items():
            topic_total[t] += n
        share = {t: n / len(receivers) for t, n in topic_total.items()}
        offered: set[Key] = set()
        for b in over:
            want = OFFER * (self.base[b] - targets.floor) + OFFER_MIN
            # the j-th partition of a topic on the broker scores its topic's count there,
            # less j, less the topic's even share: the offer takes every topic in
            # proportion to how much of it the broker holds above its share
            seen: Counter[str] = Counter()
            scored = []
            for k in sorted(self.on[b]):
                if k in offered:
                    continue
                j = seen[k[0]]
                seen[k[0]] += 1
                over_share = self.topic_base[(k[0], b)] - j - share[k[0]]
                scored.append((before[k].replicas[0] == b, -over_share, k))
            scored.sort()
            offered.update(k for _, _, k in scored[:want])
        members = set(self.base)
        for key in sorted(offered):
            a = before[key]
            here = [b for b in dict.fromkeys(a.replicas) if b in members]
            for b in here:
                self.base[b] -= 1
                self.topic_base[(key[0], b)] -= 1
            leader = a.replicas[0]  # valid partitions: a leader here is of the lead rack
            sticky = leader if leader in here else None
            if sticky is not None:
                self.leaders[sticky] -= 1
            self.add(key, Item(key[0], len(here), tuple(here), new=under, sticky=sticky))


def tally_meeting(
    req: Request,
    c: Cluster,
    racks: Mapping[str, RackState],
    home: Mapping[int, str],
    expect: Mapping[str, Expected],
    rebalance: bool,
    allows: Callable[[Key], bool] | None,
) -> list[bool]:
    """Which partitions of ``req.before`` already meet their policy (in its order), each
    of them tallied into ``racks`` (`tally_kept`, or over the columns when the reader
    made them)."""
    before = req.before
    parts = list(before.values())
    cols = req.columns
    judged = (
        None
        if cols is None
        else meeting_columns(cols, parts, expect, home, req.first_rack, c.sizes)
    )
    if cols is None or judged is None:
        meets = meeting(parts, list(map(expect.get, map(itemgetter(0), before))), home)
        keys = list(compress(before, meets))
        tally_kept(racks, home, keys, list(compress(parts, meets)), rebalance, allows)
        return meets
    columns_meet: list[bool] = judged.tolist()
    tally_columns(racks, home, cols, judged, rebalance)
    if rebalance:
        kept_keys = list(compress(before, columns_meet))
        kept_parts = list(compress(parts, columns_meet))
        if allows is not None:
            ok = list(map(allows, kept_keys))
            kept_keys, kept_parts = (
                list(compress(kept_keys, ok)),
                list(compress(kept_parts, ok)),
            )
        tally_on(racks, home, kept_keys, kept_parts)
    return columns_meet


def tally_columns(
    racks: Mapping[str, RackState],
    home: Mapping[int, str],
    cols: Columns,
    meets: np.ndarray,
    rebalance: bool,
) -> None:
    """`tally_kept` over the columns (its ``rebalance`` lists aside, `tally_on`): the
    replicas, preferred leaders and (topic, broker) pairs of the partitions that meet
    their policy, counted as arrays (all of their brokers are at home)."""
    home_ids = list(home)
    n_home = len(home_ids)
    kept = np.repeat(meets, cols.sizes)
    at = positions(cols.flat[kept], home_ids)
    firsts = cols.starts[meets & (cols.sizes > 0)]
    load = np.bincount(at, minlength=n_home).tolist()
    led = np.bincount(positions(cols.flat[firsts], home_ids), minlength=n_home).tolist()
    for b, n, m in zip(home_ids, load, led, strict=True):
        st = racks[home[b]]
        if n:
            st.base[b] += n
            if rebalance:
                st.kept[b] += n
        if m:
            st.leaders[b] += m
    cells = cols.topic[cols.row[kept]] * n_home + at
    if len(cols.names) * n_home <= _CELLS:
        counts = np.bincount(cells, minlength=len(cols.names) * n_home)
        cells = np.flatnonzero(counts)
        counts = counts[cells]
    else:
        cells, counts = np.unique(cells, return_counts=True)
    rack_of = np.array([sorted(racks).index(home[b]) for b in home_ids], dtype=np.int64)
    order = np.argsort(rack_of[cells % n_home], kind="stable")
    cells, counts = cells[order], counts[order]
    bounds = np.searchsorted(rack_of[cells % n_home], np.arange(len(racks) + 1))
    for r, rack in enumerate(sorted(racks)):
        span = slice(int(bounds[r]), int(bounds[r + 1]))
        topics = map(cols.names.__getitem__, (cells[span] // n_home).tolist())
        brokers = map(home_ids.__getitem__, (cells[span] % n_home).tolist())
        # the first count of each pair: the tallies are empty
        pairs = zip(topics, brokers, strict=True)
        dict.update(racks[rack].topic_base, zip(pairs, counts[span].tolist(), strict=True))


_CELLS = 1 << 24  # the most (topic, broker) cells `tally_columns` counts as one array


def tally_on(
    racks: Mapping[str, RackState],
    home: Mapping[int, str],
    keys: list[Key],
    parts: list[PartitionAssignment],
) -> None:
    """--rebalance: which partitions each broker holds, of those that meet their policy."""
    for key, a in zip(keys, parts, strict=True):
        for b in a.replicas:
            racks[home[b]].on[b].append(key)


def tally_kept(
    racks: Mapping[str, RackState],
    home: Mapping[int, str],
    keys: list[Key],
    parts: list[PartitionAssignment],
    rebalance: bool,
    allows: Callable[[Key], bool] | None = None,
) -> None:
    """Count, per rack, what the partitions that meet their policy keep: replicas,
    replicas of each topic and preferred leaders per broker (and for ``rebalance``, what
    each broker could keep, and which partitions), counted at C speed: none of their
    brokers is unusable or there twice. It counts first, into empty tallies."""
    reps = list(map(REPLICAS, parts))
    load = Counter(chain.from_iterable(reps))
    for b, n in load.items():
        st = racks[home[b]]
        st.base[b] += n
        if rebalance:
            st.kept[b] += n
    for b, n in Counter(map(itemgetter(0), reps)).items():
        racks[home[b]].leaders[b] += n
    for pair, n in per_topic(list(map(itemgetter(0), keys)), reps).items():
        racks[home[pair[1]]].topic_base[pair] = n  # the first count of each pair
    if rebalance:
        for key, brokers in zip(keys, reps, strict=True):
            if allows is not None and not allows(key):
                continue
            for b in brokers:
                racks[home[b]].on[b].append(key)


def was(
    before: Mapping[Key, PartitionAssignment], after: Mapping[Key, PartitionAssignment]
) -> Iterable[PartitionAssignment]:
    """``before``'s partition for each key of ``after``, in ``after``'s order. The engines
    replace entries of a copy of ``before``, never add or move one, so the two usually
    list the same keys in the same order: then no key is looked up."""
    if len(after) == len(before) and all(map(is_, after, before)):
        return before.values()
    return map(before.__getitem__, after)


def per_topic(topics: list[str], replicas: list[tuple[int, ...]]) -> Counter[tuple[str, int]]:
    """(topic, broker) -> replicas of the topic on the broker, over partitions of
    ``topics`` holding ``replicas``. Each topic's partitions are usually listed together
    (as Kafka's tools and `assign` write them): then each topic's brokers are counted on
    their own, as plain numbers, and paired with the topic once per broker (no pair made
    per replica); otherwise every (topic, broker) pair is counted."""
    runs = 1 + sum(map(ne, topics[1:], topics[:-1]))
    if runs != len(set(topics)):
        return Counter(chain.from_iterable(map(zip, map(repeat, topics), replicas)))
    out: Counter[tuple[str, int]] = Counter()
    for topic, group in groupby(zip(topics, replicas, strict=True), key=itemgetter(0)):
        counts = Counter(chain.from_iterable(map(itemgetter(1), group)))
        pairs = zip(repeat(topic), counts, strict=False)  # repeat: as long as counts
        dict.update(out, zip(pairs, counts.values(), strict=True))  # each pair new: no sum
    return out


def swap_broker(
    chosen: dict[Key, dict[str, tuple[int, ...]]], rack: str, key: Key, src: int, dst: int
) -> None:
    chosen[key][rack] = tuple(sorted(dst if b == src else b for b in chosen[key][rack]))
