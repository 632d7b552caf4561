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


def _water_level(bases: list[int], degrees: list[int], supply: int) -> int:
    """The least level L with sum(clamp(L - base, 0, degree)) >= supply: where an even
    spread of ``supply`` units would fill each bin (a bin takes at most its degree)."""
    lo = min(bases, default=0)
    hi = max((b + d for b, d in zip(bases, degrees, strict=True)), default=0)
    while lo < hi:
        mid = (lo + hi) // 2
        if sum(min(max(mid - b, 0), d) for b, d in zip(bases, degrees, strict=True)) >= supply:
            hi = mid
        else:
            lo = mid + 1
    return lo


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


def _solve(flow: RackFlow) -> list[tuple[int, ...]]:
    items = flow.items
    cands = _candidates(flow)
    brokers = sorted(flow.base)
    bpos = {b: i for i, b in enumerate(brokers)}
    n_items = len(items)
    supply = sum(it.need for it in items)

    # per (topic, broker): how many item arcs reach it, to size its unit arcs
    tb_index: dict[tuple[str, int], int] = {}
    tb_degree: list[int] = []
    src: list[int] = []
    dst_tb: list[int] = []
    stay: list[int] = []  # 0 new broker, 1 held, 2 held and sticky
    for i, (it, cand) in enumerate(zip(items, cands, strict=True)):
        for kind, group in ((1, it.held), (0, cand)):
            for b in group:
                key = (it.topic, b)
                j = tb_index.get(key)
                if j is None:
                    j = tb_index[key] = len(tb_degree)
                    tb_degree.append(0)
                tb_degree[j] += 1
                src.append(i)
                dst_tb.append(j)
                stay.append(2 if kind and b == it.sticky else kind)
    tb_keys = list(tb_index)
    n_tb = len(tb_keys)

    # levels: how far above its base a topic or a broker can be pushed at most
    tb_base = np.array([flow.topic_base.get(k, 0) for k in tb_keys], dtype=np.int64)
    tb_deg = np.array(tb_degree, dtype=np.int64)
    topic_total: dict[str, int] = {}
    for (t, _), base in zip(tb_keys, tb_base.tolist(), strict=True):
        topic_total[t] = topic_total.get(t, 0) + base
    for it in items:
        topic_total[it.topic] = topic_total.get(it.topic, 0) + it.need
    b_base = np.array([flow.base[b] for b in brokers], dtype=np.int64)
    b_deg = np.zeros(len(brokers), dtype=np.int64)
    np.add.at(b_deg, [bpos[k[1]] for k in tb_keys], tb_deg)
    t_cap = int((tb_base + tb_deg).max()) + 1 if n_tb else 1
    l_cap = int((b_base + b_deg).max()) + 1

    w_topic = 1
    w_rack = 2 * t_cap + 2  # one replica of rack imbalance outweighs any topic change
    sticky = t_cap + 1  # between the two: keep a leader unless the rack needs it moved
    move = 2 * w_rack * (l_cap + 2) + 2 * sticky  # any balance gain one replica brings
    fill = 4 * move  # --rebalance: a floor is met even at the price of moves

    node_item = 0
    node_tb = n_items
    node_b = node_tb + n_tb
    sink = node_b + len(brokers)
    tails: list[np.ndarray] = []
    heads: list[np.ndarray] = []
    caps: list[np.ndarray] = []
    costs: list[np.ndarray] = []

    def arcs(t: np.ndarray, h: np.ndarray, c: np.ndarray, w: np.ndarray) -> None:
        tails.append(t.astype(np.int64))
        heads.append(h.astype(np.int64))
        caps.append(c.astype(np.int64))
        costs.append(w.astype(np.int64))

    src_a = np.array(src, dtype=np.int64)
    tb_a = np.array(dst_tb, dtype=np.int64)
    stay_a = np.array(stay, dtype=np.int64)
    item_cost = np.where(stay_a == 0, move, np.where(stay_a == 2, -sticky, 0))
    n_item_arcs = src_a.size
    arcs(node_item + src_a, node_tb + tb_a, np.ones(n_item_arcs), item_cost)

    # (topic, broker) -> broker: rising unit costs around the topic's water level
    t_tail: list[int] = []
    t_head: list[int] = []
    t_cap_l: list[int] = []
    t_cost: list[int] = []
    by_topic: dict[str, list[int]] = {}
    for j, (t, _b) in enumerate(tb_keys):
        by_topic.setdefault(t, []).append(j)
    tb_base_l = tb_base.tolist()
    for t, js in by_topic.items():
        placed = topic_total[t] - sum(tb_base_l[j] for j in js)
        level = _water_level([tb_base_l[j] for j in js], [tb_degree[j] for j in js], placed)
        for j in js:
            head = node_b + bpos[tb_keys[j][1]]
            for cap, cost in _convex(tb_base_l[j], tb_degree[j], level, w_topic):
                t_tail.append(node_tb + j)
                t_head.append(head)
                t_cap_l.append(cap)
                t_cost.append(cost)
    arcs(np.array(t_tail), np.array(t_head), np.array(t_cap_l), np.array(t_cost))

    # broker -> sink
    s_tail: list[int] = []
    s_cap: list[int] = []
    s_cost: list[int] = []
    target = flow.targets
    level = _water_level(b_base.tolist(), b_deg.tolist(), supply)
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
        for cap, cost in _convex(base, deg, level, w_rack):
            s_tail.append(node)
            s_cap.append(cap)
            s_cost.append(cost)
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
    chosen: list[list[int]] = [[] for _ in items]
    for i, j, f in zip(src_a.tolist(), tb_a.tolist(), used.tolist(), strict=True):
        if f:
            chosen[i].append(tb_keys[j][1])
    return [tuple(sorted(c)) for c in chosen]
