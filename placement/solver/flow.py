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

ARC_LIMIT = 3_000_000


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
        return _solve(self)


def _candidates(flow: RackFlow) -> list[tuple[int, ...]]:
    """Per item, the brokers it may move to (its held brokers excluded)."""
    receivers = flow.receivers
    per_item = [
        tuple(b for b in (it.new if it.new is not None else receivers) if b not in it.held)
        for it in flow.items
    ]
    total = sum(len(c) for c in per_item)
    if total <= ARC_LIMIT or not receivers:
        return per_item
    # too many arcs: each item keeps the k brokers lightest for its topic, rotated over the
    # items of the topic so that together they still reach every broker
    k = max(4, ARC_LIMIT // len(flow.items))
    ranked: dict[str, list[int]] = {}
    seen: dict[str, int] = {}
    out = []
    for it, cands in zip(flow.items, per_item, strict=True):
        if len(cands) <= k:
            out.append(cands)
            continue
        order = ranked.get(it.topic)
        if order is None:
            order = sorted(
                receivers, key=lambda b: (flow.topic_base.get((it.topic, b), 0), flow.base[b], b)
            )
            ranked[it.topic] = order
        j = seen.get(it.topic, 0)
        seen[it.topic] = j + 1
        allowed = set(cands)
        start = (j * k) % len(order)
        pick = [b for b in order[start:] + order[:start] if b in allowed][: k + it.need]
        out.append(tuple(pick))
    return out


MARGIN = 4  # unit arcs this far above the water level; doubling segments beyond


def _convex(base: int, degree: int, level: int, weight: int) -> list[tuple[int, int]]:
    """(capacity, unit cost) arcs whose cost rises with the units taken: one arc per unit
    up to a little above the water level (exact there), then segments of doubling size,
    each priced at its top (still rising, so the flow fills them in order)."""
    units = min(degree, max(1, level - base + MARGIN))
    out = [(1, weight * (base + u)) for u in range(1, units + 1)]
    size, taken = 2, units
    while taken < degree:
        cap = min(size, degree - taken)
        taken += cap
        out.append((cap, weight * (base + taken)))
        size *= 2
    return out


def _convex_arrays(
    base: np.ndarray, degree: np.ndarray, level: np.ndarray, weight: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_convex` for many bins at once: (bin index, capacity, unit cost) per arc."""
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


def _solve(flow: RackFlow) -> list[tuple[int, ...]]:
    items = flow.items
    cands = _candidates(flow)
    brokers = sorted(flow.base)
    bpos = {b: i for i, b in enumerate(brokers)}
    n_b = len(brokers)
    n_items = len(items)
    supply = sum(it.need for it in items)
    topics = sorted({it.topic for it in items})
    tpos = {t: i for i, t in enumerate(topics)}

    # item arcs: (item, broker position, kind) with kind 0 a move, 1 held, 2 held and sticky
    src_l: list[int] = []
    bro_l: list[int] = []
    kind_l: list[int] = []
    for i, (it, cand) in enumerate(zip(items, cands, strict=True)):
        for b in it.held:
            src_l.append(i)
            bro_l.append(bpos[b])
            kind_l.append(2 if b == it.sticky else 1)
        src_l.extend([i] * len(cand))
        bro_l.extend(bpos[b] for b in cand)
        kind_l.extend([0] * len(cand))
    src_a = np.array(src_l, dtype=np.int64)
    bro_a = np.array(bro_l, dtype=np.int64)
    kind_a = np.array(kind_l, dtype=np.int64)
    item_topic = np.array([tpos[it.topic] for it in items], dtype=np.int64)
    pair = item_topic[src_a] * n_b + bro_a
    tb_pairs, tb_a, tb_deg = np.unique(pair, return_inverse=True, return_counts=True)
    n_tb = tb_pairs.size
    tb_topic = tb_pairs // n_b
    tb_bro = tb_pairs % n_b
    tb_base = np.array(
        [
            flow.topic_base.get((topics[t], brokers[b]), 0)
            for t, b in zip(tb_topic.tolist(), tb_bro.tolist(), strict=True)
        ],
        dtype=np.int64,
    )
    b_base = np.array([flow.base[b] for b in brokers], dtype=np.int64)
    b_deg = np.bincount(tb_bro, weights=tb_deg, minlength=n_b).astype(np.int64)
    t_cap = int((tb_base + tb_deg).max()) + 1 if n_tb else 1
    l_cap = int((b_base + b_deg).max()) + 1

    w_topic = 1
    w_rack = 2 * t_cap + 2  # one replica of rack imbalance outweighs any topic change
    sticky = t_cap + 1  # between the two: keep a leader unless the rack needs it moved
    move = 2 * w_rack * (l_cap + 2) + 2 * sticky  # any balance gain one replica brings
    fill = 4 * move  # --rebalance: a floor is met even at the price of moves

    node_tb = n_items
    node_b = node_tb + n_tb
    sink = node_b + n_b
    tails: list[np.ndarray] = []
    heads: list[np.ndarray] = []
    caps: list[np.ndarray] = []
    costs: list[np.ndarray] = []

    def arcs(t: np.ndarray, h: np.ndarray, c: np.ndarray, w: np.ndarray) -> None:
        tails.append(np.asarray(t, dtype=np.int64))
        heads.append(np.asarray(h, dtype=np.int64))
        caps.append(np.asarray(c, dtype=np.int64))
        costs.append(np.asarray(w, dtype=np.int64))

    item_cost = np.where(kind_a == 0, move, np.where(kind_a == 2, -sticky, 0))
    n_item_arcs = src_a.size
    arcs(src_a, node_tb + tb_a, np.ones(n_item_arcs), item_cost)

    # (topic, broker) -> broker: rising unit costs around each topic's water level
    placed = np.zeros(len(topics), dtype=np.int64)
    for it in items:
        placed[tpos[it.topic]] += it.need
    level = np.zeros(n_tb, dtype=np.int64)
    order = np.argsort(tb_topic, kind="stable")
    bounds = np.searchsorted(tb_topic[order], np.arange(len(topics) + 1))
    for t in range(len(topics)):
        js = order[bounds[t] : bounds[t + 1]]
        level[js] = _water_level_np(tb_base[js], tb_deg[js], int(placed[t]))
    own, cap, cost = _convex_arrays(tb_base, tb_deg, level, w_topic)
    arcs(node_tb + own, node_b + tb_bro[own], cap, cost)

    # broker -> sink
    s_tail: list[int] = []
    s_cap: list[int] = []
    s_cost: list[int] = []
    target = flow.targets
    b_level = _water_level_np(b_base, b_deg, supply)
    for i, b in enumerate(brokers):
        base, deg = int(b_base[i]), int(b_deg[i])
        if deg == 0:
            continue
        node = node_b + i
        if target is not None and b in flow.receivers:
            below = min(deg, max(0, target.floor - base))
            if below:
                s_tail.append(node)
                s_cap.append(below)
                s_cost.append(-fill)
            top = min(deg, max(below, target.ceiling - base))
            for u in range(below + 1, top + 1):
                s_tail.append(node)
                s_cap.append(1)
                s_cost.append(w_rack * (base + u))
            if deg > top:  # above the ceiling only when nothing else is possible
                s_tail.append(node)
                s_cap.append(deg - top)
                s_cost.append(fill)
            continue
        for c_, w_ in _convex(base, deg, b_level, w_rack):
            s_tail.append(node)
            s_cap.append(c_)
            s_cost.append(w_)
    arcs(np.array(s_tail), np.full(len(s_tail), sink), np.array(s_cap), np.array(s_cost))

    solver = min_cost_flow.SimpleMinCostFlow()
    solver.add_arcs_with_capacity_and_unit_cost(
        np.concatenate(tails), np.concatenate(heads), np.concatenate(caps), np.concatenate(costs)
    )
    supplies = np.zeros(sink + 1, dtype=np.int64)
    supplies[:n_items] = [it.need for it in items]
    supplies[sink] = -supply
    solver.set_nodes_supplies(np.arange(sink + 1, dtype=np.int64), supplies)
    status = solver.solve()
    if status != solver.OPTIMAL:
        raise NoSolutionError(
            f"the placement network of a rack has no solution ({status.name}): "
            f"{n_items} partitions, {len(flow.receivers)} brokers that may receive",
            "run without --rebalance, or report it with the inputs",
        )
    used = solver.flows(np.arange(n_item_arcs, dtype=np.int64))
    sel = np.nonzero(used)[0]
    chosen: list[list[int]] = [[] for _ in items]
    for i, j in zip(src_a[sel].tolist(), bro_a[sel].tolist(), strict=True):
        chosen[i].append(brokers[j])
    return [tuple(sorted(c)) for c in chosen]


def _water_level_np(bases: np.ndarray, degrees: np.ndarray, supply: int) -> int:
    """`_water_level` on arrays."""
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
