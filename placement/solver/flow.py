"""Which brokers of one rack hold each partition's replicas there: a min-cost flow.

The network, one per rack:

    item (one partition's replicas in the rack; supply = how many the policy puts there)
      -> (topic, broker)  capacity 1: a broker holds a partition once. Cost 0 when the
                          broker holds the partition now and may keep it, ``move`` otherwise
      -> broker           unit arcs of rising cost: the k-th replica of the topic on the
                          broker costs more than the (k-1)-th, so a topic spreads over the rack
      -> sink             unit arcs of rising cost per replica on the broker, so the rack
                          evens out; with targets (``--rebalance``) a broker below its floor
                          earns a reward per replica and takes nothing above its ceiling

The costs are ordered so that one goal never pays for a lower one: a move costs more than
any change of balance one replica can bring, and one replica of rack imbalance costs more
than any change of topic balance. Rising unit costs are convex, so the integral optimum of
the flow is the exact optimum of that ordered objective over the arcs given (min-cost flow
has integral optima; OR-Tools solves it by cost scaling).

Arcs are bounded: an item gets arcs to every broker it may use unless items x brokers
exceeds ``ARC_LIMIT``; then each item gets the brokers lightest for its topic, rotated so
the items of one topic together reach the whole rack.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from ortools.graph.python import min_cost_flow

from placement.errors import NoSolutionError

ARC_LIMIT = 1_500_000


@dataclass(frozen=True)
class Item:
    """One partition's replicas in the rack."""

    topic: str
    need: int  # replicas the rack must hold, beyond those pinned outside the flow
    held: tuple[int, ...]  # brokers holding it now that may keep it (staying is free)
    new: tuple[int, ...] | None = None  # brokers it may move to; None: every receiver
    sticky: int | None = None  # a held broker it should keep (its leader): leaving costs more
    leads: bool = False  # its old leader is gone and the broker it gets here will lead


@dataclass(frozen=True)
class Targets:
    """--rebalance: every receiving broker ends between floor and ceiling replicas."""

    floor: int
    ceiling: int


@dataclass
class RackFlow:
    receivers: tuple[int, ...]  # brokers that may take new replicas
    base: dict[int, int]  # replicas per broker outside the flow (every broker of the rack)
    topic_base: Mapping[tuple[str, int], int]  # (topic, broker) -> replicas outside the flow
    items: list[Item] = field(default_factory=list)
    targets: Targets | None = None

    def solve(self) -> list[tuple[int, ...]]:
        """The brokers each item ends on, in item order."""
        if not self.items:
            return []
        if self.targets is None and all(len(it.held) == it.need for it in self.items):
            # Every item keeps the brokers it holds: that is the network's one optimum (a
            # move costs more than the most any replica's balance can gain, `_Weights`, and
            # without targets nothing rewards one), so the racks a drain or a repair leaves
            # whole are not solved.
            return [tuple(sorted(it.held)) for it in self.items]
        return _solve(self)


def _candidates(flow: RackFlow, bpos: Mapping[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """The move arcs: (item index, broker position) for every broker an item may move to,
    its held brokers excluded. Items that share a set of destinations (all receivers, or
    one rebalance's brokers below their ceiling) are built together with numpy. Past
    ``ARC_LIMIT`` arcs each item keeps a window of its topic's lightest brokers, rotated
    over the items of the topic so that together they still reach every broker."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for i, it in enumerate(flow.items):
        groups.setdefault(it.new if it.new is not None else flow.receivers, []).append(i)
    full = sum(len(dest) * len(members) for dest, members in groups.items())
    srcs: list[np.ndarray] = []
    bros: list[np.ndarray] = []
    for dest, members in groups.items():
        if not dest:
            continue
        dest_pos = np.array([bpos[b] for b in dest], dtype=np.int64)
        idx = np.array(members, dtype=np.int64)
        width = len(dest)
        if full > ARC_LIMIT:
            width = min(len(dest), max(4, ARC_LIMIT // max(1, len(flow.items))) + 2)
        if width == len(dest):
            src = np.repeat(idx, len(dest))
            bro = np.tile(dest_pos, idx.size)
        else:
            # per topic: its destinations lightest first; the j-th item of the topic takes
            # the window starting at j * width (mod the destinations)
            src_parts, bro_parts = [], []
            by_topic: dict[str, list[int]] = {}
            for i in members:
                by_topic.setdefault(flow.items[i].topic, []).append(i)
            for topic, its in by_topic.items():
                order = np.array(
                    [
                        bpos[b]
                        for b in sorted(
                            dest,
                            key=lambda b: (flow.topic_base.get((topic, b), 0), flow.base[b], b),
                        )
                    ],
                    dtype=np.int64,
                )
                j = np.arange(len(its), dtype=np.int64)
                cols = (j[:, None] * width + np.arange(width, dtype=np.int64)[None, :]) % len(dest)
                src_parts.append(np.repeat(np.array(its, dtype=np.int64), width))
                bro_parts.append(order[cols].ravel())
            src = np.concatenate(src_parts)
            bro = np.concatenate(bro_parts)
        srcs.append(src)
        bros.append(bro)
    if not srcs:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    src = np.concatenate(srcs)
    bro = np.concatenate(bros)
    n_b = len(bpos)
    held = np.array(
        [i * n_b + bpos[b] for i, it in enumerate(flow.items) for b in it.held], dtype=np.int64
    )
    keep = ~np.isin(src * n_b + bro, held)
    return src[keep], bro[keep]


MARGIN = 4  # unit arcs this far above the water level; doubling segments beyond


def convex_arcs(base: int, degree: int, level: int, weight: int) -> list[tuple[int, int]]:
    """(capacity, unit cost) arcs whose cost rises with the units taken: one arc per unit
    up to a little above the water level (exact there), then segments of doubling size,
    each priced at its top (still rising, so the flow fills them in order)."""
    _, caps, costs = _convex_arrays(
        np.array([base], dtype=np.int64),
        np.array([degree], dtype=np.int64),
        np.array([level], dtype=np.int64),
        weight,
    )
    return list(zip(caps.tolist(), costs.tolist(), strict=True))


def _convex_arrays(
    base: np.ndarray, degree: np.ndarray, level: np.ndarray, weight: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`convex_arcs` for many bins at once: (bin index, capacity, unit cost) per arc."""
    units = np.minimum(degree, np.maximum(1, level - base + MARGIN))
    total = int(units.sum())
    owner = np.repeat(np.arange(base.size, dtype=np.int64), units)
    starts = np.repeat(np.cumsum(units) - units, units)
    u = np.arange(total, dtype=np.int64) - starts + 1
    idx = [owner]
    cap = [np.ones(total, dtype=np.int64)]
    cost = [weight * (base[owner] + u)]
    taken = units.copy()
    size = 2
    while True:
        left = degree - taken
        more = np.nonzero(left > 0)[0]
        if more.size == 0:
            break
        step = np.minimum(size, left[more])
        taken[more] += step
        idx.append(more)
        cap.append(step)
        cost.append(weight * (base[more] + taken[more]))
        size *= 2
    return np.concatenate(idx), np.concatenate(cap), np.concatenate(cost)


@dataclass(frozen=True)
class _Weights:
    """The cost of each goal's unit, ordered so that no goal pays for a lower one."""

    topic: int
    rack: int
    sticky: int
    move: int
    fill: int

    @classmethod
    def of(cls, t_cap: int, l_cap: int) -> _Weights:
        rack = 2 * t_cap + 2  # one replica of rack imbalance outweighs any topic change
        sticky = t_cap + 1  # between the two: keep a leader unless the rack needs it moved
        move = 2 * rack * (l_cap + 2) + 2 * sticky  # any balance gain one replica brings
        return cls(1, rack, sticky, move, 4 * move)  # fill: a floor is met even by moves


def _item_arcs(flow: RackFlow, bpos: Mapping[int, int]) -> tuple[np.ndarray, ...]:
    """(item, broker position, kind) per arc; kind 0 a move, 1 held, 2 held and sticky."""
    items = flow.items
    held_src = [i for i, it in enumerate(items) for _ in it.held]
    held_bro = [bpos[b] for it in items for b in it.held]
    held_kind = [2 if b == it.sticky else 1 for it in items for b in it.held]
    move_src, move_bro = _candidates(flow, bpos)
    src = np.concatenate([np.array(held_src, dtype=np.int64), move_src])
    bro = np.concatenate([np.array(held_bro, dtype=np.int64), move_bro])
    kind = np.concatenate(
        [np.array(held_kind, dtype=np.int64), np.zeros(move_src.size, dtype=np.int64)]
    )
    return src, bro, kind


def _topic_levels(
    flow: RackFlow, topics: list[str], tb_topic: np.ndarray, tb_base: np.ndarray, tb_deg: np.ndarray
) -> np.ndarray:
    """Per (topic, broker) pair: the water level of its topic over the rack."""
    tpos = {t: i for i, t in enumerate(topics)}
    placed = np.zeros(len(topics), dtype=np.int64)
    for it in flow.items:
        placed[tpos[it.topic]] += it.need
    level = np.zeros(tb_topic.size, dtype=np.int64)
    order = np.argsort(tb_topic, kind="stable")
    bounds = np.searchsorted(tb_topic[order], np.arange(len(topics) + 1))
    for t in range(len(topics)):
        js = order[bounds[t] : bounds[t + 1]]
        level[js] = water_level(tb_base[js], tb_deg[js], int(placed[t]))
    return level


def _sink_arcs(
    flow: RackFlow,
    brokers: list[int],
    b_base: np.ndarray,
    b_deg: np.ndarray,
    w: _Weights,
) -> list[tuple[int, int, int]]:
    """(broker position, capacity, unit cost) of the arcs from each broker to the sink."""
    out: list[tuple[int, int, int]] = []
    target = flow.targets
    b_level = water_level(b_base, b_deg, sum(it.need for it in flow.items))
    for i, b in enumerate(brokers):
        base, deg = int(b_base[i]), int(b_deg[i])
        if deg == 0:
            continue
        if target is None or b not in flow.receivers:
            out.extend((i, c, cost) for c, cost in convex_arcs(base, deg, b_level, w.rack))
            continue
        below = min(deg, max(0, target.floor - base))
        if below:
            out.append((i, below, -w.fill))
        top = min(deg, max(below, target.ceiling - base))
        out.extend((i, 1, w.rack * (base + u)) for u in range(below + 1, top + 1))
        if deg > top:  # above the ceiling only when nothing else is possible
            out.append((i, deg - top, w.fill))
    return out


def _solve(flow: RackFlow) -> list[tuple[int, ...]]:
    items = flow.items
    brokers = sorted(flow.base)
    bpos = {b: i for i, b in enumerate(brokers)}
    n_b = len(brokers)
    topics = sorted({it.topic for it in items})
    tpos = {t: i for i, t in enumerate(topics)}
    src_a, bro_a, kind_a = _item_arcs(flow, bpos)
    item_topic = np.array([tpos[it.topic] for it in items], dtype=np.int64)
    tb_pairs, tb_a, tb_deg = np.unique(
        item_topic[src_a] * n_b + bro_a, return_inverse=True, return_counts=True
    )
    tb_topic, tb_bro = tb_pairs // n_b, tb_pairs % n_b
    tb_base = np.array(
        [
            flow.topic_base.get((topics[t], brokers[b]), 0)
            for t, b in zip(tb_topic.tolist(), tb_bro.tolist(), strict=True)
        ],
        dtype=np.int64,
    )
    b_base = np.array([flow.base[b] for b in brokers], dtype=np.int64)
    b_deg = np.bincount(tb_bro, weights=tb_deg, minlength=n_b).astype(np.int64)
    t_cap = int((tb_base + tb_deg).max()) + 1 if tb_pairs.size else 1
    w = _Weights.of(t_cap, int((b_base + b_deg).max()) + 1)

    node_tb = len(items)
    node_b = node_tb + tb_pairs.size
    sink = node_b + n_b
    item_cost = np.where(kind_a == 0, w.move, np.where(kind_a == 2, -w.sticky, 0))
    level = _topic_levels(flow, topics, tb_topic, tb_base, tb_deg)
    own, t_caps, t_costs = _convex_arrays(tb_base, tb_deg, level, w.topic)
    sinks = np.array(_sink_arcs(flow, brokers, b_base, b_deg, w), dtype=np.int64).reshape(-1, 3)
    solver = min_cost_flow.SimpleMinCostFlow()
    solver.add_arcs_with_capacity_and_unit_cost(
        np.concatenate([src_a, node_tb + own, node_b + sinks[:, 0]]),
        np.concatenate([node_tb + tb_a, node_b + tb_bro[own], np.full(len(sinks), sink)]),
        np.concatenate([np.ones(src_a.size, dtype=np.int64), t_caps, sinks[:, 1]]),
        np.concatenate([item_cost, t_costs, sinks[:, 2]]),
    )
    supplies = np.zeros(sink + 1, dtype=np.int64)
    supplies[: len(items)] = [it.need for it in items]
    supplies[sink] = -int(supplies[: len(items)].sum())
    solver.set_nodes_supplies(np.arange(sink + 1, dtype=np.int64), supplies)
    status = solver.solve()
    if status != solver.OPTIMAL:
        raise NoSolutionError(
            f"the placement network of a rack has no solution ({status.name}): "
            f"{len(items)} partitions, {len(flow.receivers)} brokers that may receive",
            "run without --rebalance, or report it with the inputs",
        )
    sel = np.nonzero(solver.flows(np.arange(src_a.size, dtype=np.int64)))[0]
    chosen: list[list[int]] = [[] for _ in items]
    for i, j in zip(src_a[sel].tolist(), bro_a[sel].tolist(), strict=True):
        chosen[i].append(brokers[j])
    return [tuple(sorted(c)) for c in chosen]


def water_level(bases: np.ndarray, degrees: np.ndarray, supply: int) -> int:
    """The least level L with sum(clamp(L - base, 0, degree)) >= supply: where an even
    spread of ``supply`` units would fill each bin (a bin takes at most its degree)."""
    if bases.size == 0:
        return 0
    lo, hi = int(bases.min()), int((bases + degrees).max())
    while lo < hi:
        mid = (lo + hi) // 2
        if int(np.minimum(np.maximum(mid - bases, 0), degrees).sum()) >= supply:
            hi = mid
        else:
            lo = mid + 1
    return lo
