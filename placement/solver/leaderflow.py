"""The min-cost flow that picks leaders (`leaders`): goal `leaders` (preferred leaders per
broker) within goal `leadership` (fewest leadership changes)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from ortools.graph.python import min_cost_flow

from placement.solver.flow import water_level


def leader_flow(
    fixed: Mapping[int, int], cands: list[list[int]], olds: list[int], *, even: bool
) -> list[int | None]:
    """Who leads each partition, as a min-cost flow over the brokers that may lead.

    ``fixed`` leaders per broker stay where they are; partition i may be led by any of
    ``cands[i]`` (its sync replicas in the lead rack), and keeping ``olds[i]`` costs
    nothing while any other choice is one leadership change. ``even`` (--balance-leaders):
    every broker between floor and ceiling of the rack's mean if any choice reaches it
    (a reward per leader below the floor, a penalty above the ceiling, both above any
    number of changes), then the fewest changes: exact, the flow's optimum is integral.
    Otherwise every choice is a change anyway and rising costs per leader even them out.
    A partition without candidates gets None (it keeps its leader)."""
    brokers = sorted(fixed)
    pos = {b: i for i, b in enumerate(brokers)}
    n = len(cands)
    node_b = n
    sink = n + len(brokers)
    tails: list[int] = []
    heads: list[int] = []
    caps: list[int] = []
    costs: list[int] = []
    deg = dict.fromkeys(brokers, 0)
    supply = 0
    change = 1
    for i, (cand, old) in enumerate(zip(cands, olds, strict=True)):
        if not cand:
            continue
        supply += 1
        for b in cand:
            tails.append(i)
            heads.append(node_b + pos[b])
            caps.append(1)
            costs.append(0 if b == old else change)
            deg[b] += 1
    if supply == 0:
        return [None] * n
    total = sum(fixed.values()) + supply
    floor, rem = divmod(total, len(brokers))
    shape = _LeaderShape(
        floor,
        floor + (1 if rem else 0),
        water_level(np.array(list(fixed.values())), np.array([deg[b] for b in fixed]), supply),
        2 * (supply + 1),
    )
    for b in brokers:
        for cap, cost in shape.spans(fixed[b], deg[b], even=even):
            tails.append(node_b + pos[b])
            heads.append(sink)
            caps.append(cap)
            costs.append(cost)
    solver = min_cost_flow.SimpleMinCostFlow()
    solver.add_arcs_with_capacity_and_unit_cost(
        np.array(tails, dtype=np.int64),
        np.array(heads, dtype=np.int64),
        np.array(caps, dtype=np.int64),
        np.array(costs, dtype=np.int64),
    )
    supplies = np.zeros(sink + 1, dtype=np.int64)
    for i, cand in enumerate(cands):
        supplies[i] = 1 if cand else 0
    supplies[sink] = -supply
    solver.set_nodes_supplies(np.arange(sink + 1, dtype=np.int64), supplies)
    if solver.solve() != solver.OPTIMAL:  # cannot happen: every unit has a path
        raise AssertionError("the leader network has no solution")
    out: list[int | None] = [None] * n
    n_arcs = sum(len(c) for c in cands)
    flows = solver.flows(np.arange(n_arcs, dtype=np.int64)).tolist()
    for arc, f in enumerate(flows):
        if f:
            out[tails[arc]] = brokers[heads[arc] - node_b]
    return out


@dataclass(frozen=True)
class _LeaderShape:
    """The arcs from a broker to the sink of the leader flow."""

    floor: int
    ceiling: int
    level: int  # the water level of the forced choices
    big: int  # above any number of leadership changes

    def spans(self, fixed: int, deg: int, *, even: bool) -> list[tuple[int, int]]:
        """(capacity, unit cost): even = a reward below the floor, free up to the ceiling,
        a penalty above; otherwise rising costs per leader around the water level."""
        if deg == 0:
            return []
        if even:
            below = min(deg, max(0, self.floor - fixed))
            top = min(deg, max(below, self.ceiling - fixed))
            spans = [(below, -self.big)] if below else []
            spans += [(top - below, 0)] if top > below else []
            return spans + ([(deg - top, self.big)] if deg > top else [])
        units = min(deg, max(1, self.level - fixed + 4))
        spans = [(1, fixed + u) for u in range(1, units + 1)]
        rest = deg - units
        return spans + ([(rest, 4 * (self.level + deg + 1))] if rest > 0 else [])
