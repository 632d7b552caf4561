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

When no item holds more brokers than it needs and there are no targets (a drain, dead
brokers, a repair that only adds), every item keeps what it holds: leaving a held broker
costs a move, more than any balance it could buy. What is left to choose is how many new
replicas of each topic each receiver takes, and which partitions of the topic they are:
`_solve_kept` solves the first as a flow of ``topics + receivers`` nodes with the same unit
costs (so the same optimum, over every receiver rather than a window of them), then
realizes its counts partition by partition (`_realize`).

Arcs are bounded: an item gets arcs to every broker it may use unless items x brokers
exceeds ``ARC_LIMIT``; then each item gets the brokers lightest for its topic, rotated so
the items of one topic together reach the whole rack.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from ortools.graph.python import max_flow, min_cost_flow

from placement.errors import NoSolutionError

ARC_LIMIT = 1_500_000


@dataclass(frozen=True)
class Item:
    """One partition's replicas in the rack."""

    topic: str
    need: int  # replicas the rack must hold, beyond those pinned outside the flow
    held: tuple[int, ...]  # brokers holding it now that may keep it (staying is free)
    new: tuple[int, ...] | None = None  # brokers it may move to; None: every receiver
    sticky: int | None = None  # a held broker it keeps (its leader) unless it must leave
    leads: bool = False  # its old leader is gone and the broker it gets here will lead
    # led from this rack and its old leader gone: one of its brokers here will lead it
    leader_left: bool = False


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
    leaders: Mapping[int, int] = field(default_factory=dict)  # preferred leaders that stay

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
        if self.targets is None and all(
            it.new is None and len(it.held) <= it.need for it in self.items
        ):
            kept = _solve_kept(self)
            if kept is not None:
                return kept
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
        # a partition that gives up a replica here keeps its leader's (the leader rule):
        # above any balance one replica brings, below a move
        sticky = rack * (l_cap + 2) + t_cap + 1
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


def _solve_kept(flow: RackFlow) -> list[tuple[int, ...]] | None:
    """The network's optimum when every item keeps its held brokers (none holds more than
    it needs, no targets), from two small problems: new replicas per (topic, receiver), a
    min-cost flow topic -> receiver -> sink with the full network's convex costs, and then
    which of the topic's partitions take them (`_realize`). The counts range over every
    receiver a partition does not hold, as the full network without a window of arcs. None
    when there is no receiver or the counts cannot be realized: the full network decides."""
    items = flow.items
    receivers = flow.receivers
    n_b = len(receivers)
    if n_b == 0:
        return None
    bpos = {b: i for i, b in enumerate(receivers)}
    topics = sorted({it.topic for it in items})
    tpos = {t: i for i, t in enumerate(topics)}
    n_t = len(topics)
    item_t = np.fromiter((tpos[it.topic] for it in items), np.int64, len(items))
    rest = np.fromiter((it.need - len(it.held) for it in items), np.int64, len(items))
    pairs = [(i, bpos[b]) for i, it in enumerate(items) for b in it.held if b in bpos]
    h_item, h_pos = np.array(pairs, dtype=np.int64).reshape(-1, 2).T
    # what each receiver, and each topic on it, holds once every item keeps its brokers
    load = np.array([flow.base[b] for b in receivers], dtype=np.int64)
    load += np.bincount(h_pos, minlength=n_b)
    tb_get = flow.topic_base.get
    tb_load = np.array([[tb_get((t, b), 0) for b in receivers] for t in topics], dtype=np.int64)
    np.add.at(tb_load, (item_t[h_item], h_pos), 1)
    # how many of a topic's new replicas a receiver may take: one per moving partition of
    # the topic that does not hold it
    moving = rest > 0
    cap = np.repeat(np.bincount(item_t[moving], minlength=n_t)[:, None], n_b, axis=1)
    held_moving = moving[h_item]
    np.add.at(cap, (item_t[h_item[held_moving]], h_pos[held_moving]), -1)
    supply = np.bincount(item_t, weights=rest, minlength=n_t).astype(np.int64)
    total = int(supply.sum())
    pt, pb = np.nonzero(cap)
    p_load, p_cap = tb_load[pt, pb], cap[pt, pb]
    level = np.zeros(pt.size, dtype=np.int64)
    bounds = np.searchsorted(pt, np.arange(n_t + 1))
    for t in range(n_t):
        span = slice(int(bounds[t]), int(bounds[t + 1]))
        level[span] = water_level(p_load[span], p_cap[span], int(supply[t]))
    b_deg = cap.sum(axis=0)
    t_cap = int((p_load + p_cap).max()) + 1 if pt.size else 1
    w = _Weights.of(t_cap, int((load + b_deg).max()) + 1)
    own, t_caps, t_costs = _convex_arrays(p_load, p_cap, level, w.topic)
    b_level = np.full(n_b, water_level(load, b_deg, total), dtype=np.int64)
    bown, b_caps, b_costs = _convex_arrays(load, b_deg, b_level, w.rack)
    sink = n_t + n_b
    solver = min_cost_flow.SimpleMinCostFlow()
    solver.add_arcs_with_capacity_and_unit_cost(
        np.concatenate([pt[own], n_t + bown]),
        np.concatenate([n_t + pb[own], np.full(bown.size, sink, dtype=np.int64)]),
        np.concatenate([t_caps, b_caps]),
        np.concatenate([t_costs, b_costs]),
    )
    supplies = np.zeros(sink + 1, dtype=np.int64)
    supplies[:n_t] = supply
    supplies[sink] = -total
    solver.set_nodes_supplies(np.arange(sink + 1, dtype=np.int64), supplies)
    if solver.solve() != solver.OPTIMAL:
        return None
    counts = np.zeros((n_t, n_b), dtype=np.int64)
    np.add.at(counts, (pt[own], pb[own]), solver.flows(np.arange(own.size, dtype=np.int64)))
    return _placed(flow, counts, item_t, rest, moving)


def _placed(
    flow: RackFlow,
    counts: np.ndarray,
    item_t: np.ndarray,
    rest: np.ndarray,
    moving: np.ndarray,
) -> list[tuple[int, ...]] | None:
    """`_solve_kept`'s brokers per item, once ``counts`` says how many new replicas each
    topic (by number, ``item_t``) puts on each receiver: which of its moving partitions
    (``rest``: replicas each still needs) take them (`_realize`); None when they cannot."""
    items, receivers = flow.items, flow.receivers
    bpos = {b: i for i, b in enumerate(receivers)}
    members: list[list[int]] = [[] for _ in range(counts.shape[0])]
    for i in np.flatnonzero(moving).tolist():
        members[int(item_t[i])].append(i)
    # preferred leaders per receiver so far: those that stay, and one for each partition
    # that must change leader (its brokers here may lead it), on the one leading least
    lead = [0] * len(receivers)
    for b, n in flow.leaders.items():
        if b in bpos:
            lead[bpos[b]] += n
    for i, it in enumerate(items):
        if it.sticky is not None and it.sticky in bpos:
            lead[bpos[it.sticky]] += 1
        elif it.leader_left and not moving[i]:
            _lead(lead, [bpos[b] for b in it.held if b in bpos])
    chosen = [list(it.held) for it in items]
    for t, its in enumerate(members):
        if not its:
            continue
        quota = {j: q for j, q in enumerate(counts[t].tolist()) if q}
        held = [[bpos[b] for b in items[i].held if b in bpos] for i in its]
        leads = [items[i].leader_left for i in its]
        picks = _realize(quota, [int(rest[i]) for i in its], held, leads, lead)
        if picks is None:
            return None
        for i, pick in zip(its, picks, strict=True):
            chosen[i].extend(receivers[j] for j in pick)
    return [tuple(sorted(c)) for c in chosen]


def _lead(lead: list[int], brokers: list[int]) -> None:
    """One more leader, on whichever of ``brokers`` leads least (if any)."""
    if brokers:
        lead[min(brokers, key=lambda j: (lead[j], j))] += 1


def _realize(
    quota: dict[int, int],
    need: list[int],
    held: list[list[int]],
    leads: list[bool],
    lead: list[int],
) -> list[list[int]] | None:
    """Receivers for one topic's moving partitions: partition i takes ``need[i]`` distinct
    receivers outside ``held[i]``, receiver j ``quota[j]`` of them in all (the sums agree).
    Greedy first, the partitions holding most first, each taking the receivers with the
    most quota left (for bipartite degrees without exclusions that never fails); a
    max-flow when it leaves any partition short. None: no way exists.

    Among receivers with as much quota left, a partition that must change leader
    (``leads[i]``) takes those leading least so far (``lead``: preferred leaders per
    receiver, updated with one on the least loaded of its brokers): leaders come after
    topics in the goal order, and this leaves the leader choice (`core.leader_flow`)
    brokers to even out."""
    order = sorted(range(len(need)), key=lambda i: (-len(held[i]), -need[i], i))
    left = dict(quota)
    buckets: dict[int, dict[int, None]] = {}  # quota left -> receivers (ordered sets)
    for j, q in left.items():
        buckets.setdefault(q, {})[j] = None
    picks: list[list[int]] = [[] for _ in need]
    for i in order:
        pick = picks[i]
        n = need[i]
        h = held[i]
        for q in sorted(buckets, reverse=True):
            free = [j for j in buckets[q] if j not in h]
            if leads[i] and len(free) > n - len(pick):
                free.sort(key=lambda j: (lead[j], j))
            pick.extend(free[: n - len(pick)])
            if len(pick) == n:
                break
        if len(pick) < n:
            return _realize_by_flow(quota, need, held, leads, lead)
        for j in pick:
            q = left[j]
            del buckets[q][j]
            if not buckets[q]:
                del buckets[q]
            left[j] = q - 1
            if q > 1:
                buckets.setdefault(q - 1, {})[j] = None
        if leads[i]:
            _lead(lead, h + pick)
    return picks


def _realize_by_flow(
    quota: dict[int, int],
    need: list[int],
    held: list[list[int]],
    leads: list[bool],
    lead: list[int],
) -> list[list[int]] | None:
    """`_realize` as a max-flow: source -> partition -> receiver -> sink."""
    recv = sorted(quota)
    n = len(need)
    tails: list[int] = []
    heads: list[int] = []
    for i, h in enumerate(held):
        for k, j in enumerate(recv):
            if j not in h:
                tails.append(i)
                heads.append(n + k)
    source, sink = n + len(recv), n + len(recv) + 1
    solver = max_flow.SimpleMaxFlow()
    solver.add_arcs_with_capacity(
        np.array(tails + [source] * n + [n + k for k in range(len(recv))], dtype=np.int64),
        np.array(heads + list(range(n)) + [sink] * len(recv), dtype=np.int64),
        np.array([1] * len(tails) + need + [quota[j] for j in recv], dtype=np.int64),
    )
    if solver.solve(source, sink) != solver.OPTIMAL or solver.optimal_flow() != sum(need):
        return None
    flows = solver.flows(np.arange(len(tails), dtype=np.int64)).tolist()
    picks: list[list[int]] = [[] for _ in need]
    for arc, f in enumerate(flows):
        if f:
            picks[tails[arc]].append(recv[heads[arc] - n])
    for i, pick in enumerate(picks):
        if leads[i]:
            _lead(lead, held[i] + pick)
    return picks


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
