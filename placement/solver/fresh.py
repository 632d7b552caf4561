"""Fresh assignment: every partition of every topic placed from scratch.

Per rack the brokers that may take replicas stand in a ring. Each partition takes the
next ``sync + observers`` places of the ring its policy uses there (`_slots`), and the
next partition, of the same topic or the next, starts where it stopped. So within every
rack the replicas of each topic, and of all topics together, are laid out round-robin:
per broker they differ by at most one (per rack and per topic), by construction.
Consecutive places are distinct brokers because the feasibility check guarantees the
ring is at least that long.

The preferred leader of a partition is any of its brokers in its policy's first rack
(roles within a rack are free in a fresh plan): the one with the fewest leaders so far,
then leveled (`level.level_units`) so leaders differ by at most one per broker. A rack
lays out the topics it leads before the others, so their windows form one run, widest
windows first: forced leaders (one-replica windows) last, in a run of their own. The
leveling is exact for the windows it is given (no chain left means no better choice);
a layout where one-replica windows trap a wider one (tiny topics on few brokers) can
leave a spread of 2, which the summary shows.

The seed permutes each rack's ring; seed 0 keeps broker-id order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from placement.model.assignment import PartitionAssignment
from placement.model.policy import PlacementPolicy
from placement.solver.level import level_units


def rings(
    members: Mapping[str, list[int]], unusable: frozenset[int], seed: int
) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed) if seed else None
    out = {}
    for rack in sorted(members):
        ids = np.array(sorted(b for b in members[rack] if b not in unusable), dtype=np.int64)
        out[rack] = rng.permutation(ids) if rng is not None and ids.size else ids
    return out


def _slots(total: int, n: int, k: int) -> np.ndarray:
    """Ring positions (from the topic's start) of a topic's ``total`` replicas in a rack.

    Every lap of ``n`` places visits each broker once, so any topic, and the rack, stay
    even. When ``k`` divides ``n`` plain laps would pair the same brokers in every lap (on
    4 brokers, k = 2: always {0,1} and {2,3}; drain 3 and all its replicas must go to 0
    and 1), so each full lap after the first is another affine order ``a + u * m`` (m a
    unit mod n): the pairs change, the counts do not. Windows never straddle two laps
    then. The last, partial lap stays plain so the next topic starts where this one ends.
    """
    i = np.arange(total, dtype=np.int64)
    if n % k or total <= n:
        return i % n
    lap, u = np.divmod(i, n)
    units = np.array([m for m in range(1, n) if math.gcd(m, n) == 1], dtype=np.int64)
    laps = np.arange(total // n + 1, dtype=np.int64)
    a = laps % k  # turning by a multiple of k would keep the same windows
    m = units[(laps // k) % units.size]
    a[0], m[0] = 0, 1
    a[-1], m[-1] = 0, 1  # the partial lap (or an unused one)
    return (a[lap] + u * m[lap]) % n


def plan_fresh(
    policies: Mapping[str, PlacementPolicy],
    counts: Mapping[str, int],
    members: Mapping[str, list[int]],
    unusable: frozenset[int],
    seed: int = 0,
) -> list[PartitionAssignment]:
    """Every partition of ``counts`` (topic -> partitions), sorted by topic and partition."""
    ring = rings(members, unusable, seed)
    topics = sorted(t for t, n in counts.items() if n > 0)

    def lay_order(topic: str, rack: str) -> tuple[bool, int]:
        # led from here first; among those the widest windows (most choice of leader)
        # first, so the one-replica windows, whose leader is forced, come last in one run
        leads = policies[topic].lead_rack == rack
        return (not leads, -sum(policies[topic].per_rack()[rack]) if leads else 0)

    windows: dict[str, dict[str, list[list[int]]]] = {t: {} for t in topics}
    for rack, ids in ring.items():
        # the topics led from this rack first: their windows then form one run of the ring,
        # so even a one-replica window (no choice of leader) keeps the leaders even
        users = [t for t in topics if rack in policies[t].per_rack()]
        users.sort(key=lambda t: lay_order(t, rack))
        cursor = 0
        for topic in users:
            s, o = policies[topic].per_rack()[rack]
            k, n_parts = s + o, counts[topic]
            slots = _slots(n_parts * k, ids.size, k) + cursor
            windows[topic][rack] = ids[slots % ids.size].reshape(n_parts, k).tolist()
            cursor = (cursor + n_parts * k) % ids.size

    # leaders: greedy fewest-so-far within the lead rack's window, then leveled per rack
    leaders: dict[str, list[int]] = {}
    for lead_rack in sorted({policies[t].lead_rack for t in topics}):
        load = dict.fromkeys(ring[lead_rack].tolist(), 0)
        at: list[int] = []
        cands: list[list[int]] = []
        mine = [t for t in topics if policies[t].lead_rack == lead_rack]
        for topic in mine:
            for window in windows[topic][lead_rack]:
                b = min(window, key=load.__getitem__)
                load[b] += 1
                at.append(b)
                cands.append(window)
        level_units(load, at, cands)
        start = 0
        for topic in mine:
            leaders[topic] = at[start : start + counts[topic]]
            start += counts[topic]

    plan: list[PartitionAssignment] = []
    for topic in topics:
        per_rack = policies[topic].per_rack()
        lead_rack = policies[topic].lead_rack
        for p in range(counts[topic]):
            leader = leaders[topic][p]
            sync: list[int] = []
            observers: list[int] = []
            for rack, (s, _) in per_rack.items():
                window = windows[topic][rack][p]
                if rack == lead_rack:
                    window = [leader] + [b for b in window if b != leader]
                sync.extend(window[:s])
                observers.extend(window[s:])
            plan.append(PartitionAssignment(topic, p, (*sync, *observers), tuple(observers)))
    return plan
