"""Repair, drain and exclude with the fewest added replicas (the default `assign` mode).

For a partition that must change (it breaks its policy, or sits on a drained, dead or
rack-less broker), every rack of its policy keeps as many of the partition's current
brokers there as the policy allows; only the shortfall is added. That is exactly the
lower bound on added replicas, so moves = bound by construction. The freedom left is
*where* each added replica goes: the least-loaded eligible broker of the rack (bytes when
sizes are known, else replicas), and which replica leads: the current leader when it may,
else the sync replica of the leader rack that leads the fewest partitions. Roles are
swapped freely among kept brokers: that moves no data.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from placement.model.assignment import PartitionAssignment
from placement.model.inventory import Inventory
from placement.model.policy import PlacementPolicy

Key = tuple[str, int]


@dataclass(frozen=True)
class Request:
    inventory: Inventory
    policies: Mapping[str, PlacementPolicy]
    current: Sequence[PartitionAssignment] = ()
    fresh: Mapping[str, int] = field(default_factory=dict)  # topic -> partitions to create
    drained: frozenset[int] = frozenset()
    excluded: frozenset[int] = frozenset()
    sizes: Mapping[Key, int] = field(default_factory=dict)


@dataclass
class Load:
    """Replicas, bytes and preferred leaders per broker, kept up to date while planning."""

    replicas: dict[int, int]
    bytes: dict[int, int]
    leaders: dict[int, int]

    @classmethod
    def of(
        cls,
        brokers: Iterable[int],
        assignments: Iterable[PartitionAssignment],
        sizes: Mapping[Key, int],
    ) -> Load:
        load = cls({b: 0 for b in brokers}, {b: 0 for b in brokers}, {b: 0 for b in brokers})
        for a in assignments:
            load.add(a, sizes.get(a.key, 0), +1)
        return load

    def add(self, a: PartitionAssignment, size: int, sign: int) -> None:
        for b in a.replicas:
            self.replicas[b] = self.replicas.get(b, 0) + sign
            self.bytes[b] = self.bytes.get(b, 0) + sign * size
        if a.replicas:
            self.leaders[a.replicas[0]] = self.leaders.get(a.replicas[0], 0) + sign


@dataclass
class RackPicker:
    """The least-loaded eligible broker of a rack, in O(log n) per pick."""

    weight: dict[int, int]
    heap: list[tuple[int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.heap = [(w, b) for b, w in self.weight.items()]
        heapq.heapify(self.heap)

    def take(self, count: int, avoid: set[int], cost: int) -> list[int]:
        chosen: list[int] = []
        skipped: list[tuple[int, int]] = []
        while len(chosen) < count:
            w, b = heapq.heappop(self.heap)  # IndexError: infeasible, checked beforehand
            if w != self.weight[b]:
                continue  # stale entry
            if b in avoid:
                skipped.append((w, b))
                continue
            chosen.append(b)
        for b in chosen:
            self.weight[b] += cost
            heapq.heappush(self.heap, (self.weight[b], b))
        for entry in skipped:
            heapq.heappush(self.heap, entry)
        return chosen

    def release(self, broker: int, cost: int) -> None:
        if broker in self.weight:
            self.weight[broker] -= cost
            heapq.heappush(self.heap, (self.weight[broker], broker))


def _even_out(
    weight: dict[int, int],
    rack: str,
    todo: Sequence[PartitionAssignment],
    keeps: Sequence[Mapping[str, list[int]]],
    adds: Sequence[dict[str, list[int]]],
    sizes: Mapping[Key, int],
    use_bytes: bool,
) -> None:
    """Move added replicas from the heaviest to lighter brokers of ``rack`` while it helps."""
    if len(weight) < 2:
        return
    placed: dict[int, list[int]] = {b: [] for b in weight}  # broker -> todo indices added there
    for i, added in enumerate(adds):
        for b in added.get(rack, ()):
            placed[b].append(i)

    def cost(i: int) -> int:
        return sizes.get(todo[i].key, 0) if use_bytes else 1

    def holds(i: int, b: int) -> bool:
        return b in adds[i].get(rack, ()) or b in keeps[i].get(rack, ()) or b in todo[i].replicas

    def move(i: int, src: int, dst: int) -> None:
        adds[i][rack] = [dst if b == src else b for b in adds[i][rack]]
        placed[src].remove(i)
        placed[dst].append(i)
        weight[src] -= cost(i)
        weight[dst] += cost(i)

    if use_bytes:
        _pairwise(weight, placed, cost, holds, move)
        return
    # unit weights: shift along a path heavy -> ... -> light; the brokers in between keep
    # their load, so a chain finds moves no single swap can
    stuck: set[int] = set()
    for _ in range(sum(len(v) for v in placed.values()) + len(weight)):
        floor = min(weight.values())
        sources = [b for b in weight if b not in stuck and weight[b] >= floor + 2]
        if not sources:
            return  # spread <= 1, or no chain can narrow it
        heavy = max(sources, key=lambda b: (weight[b], -b))
        parent: dict[int, tuple[int, int]] = {}  # broker -> (previous broker, item moved)
        frontier = [heavy]
        seen = {heavy}
        target = None
        order = sorted(weight, key=lambda b: (weight[b], b))  # lightest first
        while frontier and target is None:
            nxt = []
            for src in frontier:
                for dst in order:
                    if dst in seen:
                        continue
                    item = next((i for i in placed[src] if not holds(i, dst)), None)
                    if item is None:
                        continue
                    seen.add(dst)
                    parent[dst] = (src, item)
                    if weight[dst] <= weight[heavy] - 2:
                        target = dst
                        break
                    nxt.append(dst)
                if target is not None:
                    break
            frontier = nxt
        if target is None:
            stuck.add(heavy)
            continue
        node = target
        while node != heavy:
            src, i = parent[node]
            move(i, src, node)
            node = src


def _pairwise(
    weight: dict[int, int],
    placed: dict[int, list[int]],
    cost: Callable[[int], int],
    holds: Callable[[int, int], bool],
    move: Callable[[int, int, int], None],
) -> None:
    """Bytes: move the biggest added replica that narrows a heavy/light gap, while one does."""
    for _ in range(sum(len(v) for v in placed.values()) + 1):
        order = sorted(weight, key=lambda b: (weight[b], b))
        done = True
        for heavy in reversed(order):
            for light in order:
                gap = weight[heavy] - weight[light]
                if gap < 2:
                    break
                item = next(
                    (
                        i
                        for i in sorted(placed[heavy], key=lambda i: -cost(i))
                        if cost(i) < gap and not holds(i, light)
                    ),
                    None,
                )
                if item is not None:
                    move(item, heavy, light)
                    done = False
                    break
            if not done:
                break
        if done:
            return


def needs_change(
    a: PartitionAssignment,
    policy: PlacementPolicy,
    rack_of: Mapping[int, str | None],
    unusable: set[int],
) -> bool:
    reps = a.replicas
    if len(set(reps)) != len(reps) or not unusable.isdisjoint(reps):
        return True
    if rack_of.get(reps[0]) != policy.replicas[0].constraints.rack:
        return True
    n_sync = len(reps) - len(a.observers)
    sync = [rack_of.get(b) for b in reps[:n_sync]]
    observers = [rack_of.get(b) for b in reps[n_sync:]]
    per_rack = policy.per_rack()
    if sum(s for s, _ in per_rack.values()) != n_sync or len(observers) != sum(
        o for _, o in per_rack.values()
    ):
        return True
    return any(sync.count(r) != s or observers.count(r) != o for r, (s, o) in per_rack.items())


def lower_bound(req: Request) -> dict[str, int]:
    """Added replicas no plan can avoid, per rack: per partition, the policy's count there
    minus the current brokers there that may stay (in the inventory, not drained)."""
    live = {b.id: b.rack for b in req.inventory.brokers if b.id not in req.drained}
    bound: dict[str, int] = {}
    for t, n in req.fresh.items():
        for rack, (s, o) in req.policies[t].per_rack().items():
            bound[rack] = bound.get(rack, 0) + n * (s + o)
    for a in req.current:
        policy = req.policies.get(a.topic)
        if policy is None:
            continue
        racks = [live.get(b) for b in set(a.replicas)]
        for rack, (s, o) in policy.per_rack().items():
            short = s + o - racks.count(rack)
            if short > 0:
                bound[rack] = bound.get(rack, 0) + short
    return bound


def plan_repair(req: Request) -> list[PartitionAssignment]:
    """The changed partitions of ``req.current``, sorted by topic and partition."""
    rack_of = {b.id: b.rack for b in req.inventory.brokers}
    members: dict[str, list[int]] = {}
    for node in req.inventory.brokers:
        if node.rack is not None:
            members.setdefault(node.rack, []).append(node.id)
    usable = {b for b, r in rack_of.items() if r is not None} - set(req.drained)
    unusable = {b for a in req.current for b in a.replicas if b not in usable}
    use_bytes = bool(req.sizes)
    load = Load.of(rack_of, req.current, req.sizes)

    todo = [
        cur
        for cur in req.current
        if cur.topic in req.policies
        and needs_change(cur, req.policies[cur.topic], rack_of, unusable)
    ]
    # biggest first so the bytes balance well; then a fixed order for determinism
    todo.sort(key=lambda a: (-req.sizes.get(a.key, 0), a.key))

    def weight(b: int) -> int:
        return load.bytes[b] if use_bytes else load.replicas[b]

    # pass 1: what each changing partition keeps, per rack. Where it has more replicas than
    # its policy allows, the current leader stays if it can (no needless leadership
    # change), then the lightest brokers keep theirs, by the load as it stands after the
    # drops decided so far: the drops of many partitions spread over the rack instead of
    # piling on the brokers that were heaviest at the start
    keeps: list[dict[str, list[int]]] = []
    for before in todo:
        size = req.sizes.get(before.key, 0)
        leader = before.replicas[0] if before.replicas else None
        keep: dict[str, list[int]] = {}
        for rack, (s, o) in req.policies[before.topic].per_rack().items():
            here = [
                b for b in dict.fromkeys(before.replicas) if rack_of.get(b) == rack and b in usable
            ]
            here.sort(key=lambda b: (b != leader, weight(b), b))
            keep[rack] = here[: s + o]
        keeps.append(keep)
        kept = {b for ids in keep.values() for b in ids}
        for b in before.replicas:  # every replica that goes is gone from the load
            if b not in kept:
                load.replicas[b] -= 1
                load.bytes[b] -= size
    # pass 2: the old leaders are re-chosen below
    for before in todo:
        load.leaders[before.replicas[0]] -= 1

    pickers = {
        rack: RackPicker({b: weight(b) for b in ids if b in usable and b not in req.excluded})
        for rack, ids in members.items()
    }
    # pass 3: place what is missing on the least-loaded eligible brokers
    adds: list[dict[str, list[int]]] = []
    for before, keep in zip(todo, keeps, strict=True):
        cost = req.sizes.get(before.key, 0) if use_bytes else 1
        holding = set(before.replicas)
        added: dict[str, list[int]] = {}
        for rack, (s, o) in req.policies[before.topic].per_rack().items():
            added[rack] = pickers[rack].take(s + o - len(keep[rack]), holding, cost)
            holding.update(added[rack])
        adds.append(added)
    # pass 4: the greedy order can leave a rack uneven; moving an *added* replica to a
    # lighter broker costs nothing, so do that while it narrows the spread
    for rack, picker in pickers.items():
        _even_out(picker.weight, rack, todo, keeps, adds, req.sizes, use_bytes)
    # pass 5: roles and leaders
    plan: list[PartitionAssignment] = []
    for before, keep, added in zip(todo, keeps, adds, strict=True):
        policy = req.policies[before.topic]
        size = req.sizes.get(before.key, 0)
        old = before.replicas
        old_sync = set(before.sync)
        sync: list[int] = []
        observers: list[int] = []
        for rack, (s, _) in policy.per_rack().items():
            for b in added[rack]:
                load.replicas[b] += 1
                load.bytes[b] += size
            brokers = sorted(keep[rack] + added[rack], key=lambda b: (b not in old_sync, b))
            sync.extend(brokers[:s])
            observers.extend(brokers[s:])
        lead_rack = policy.replicas[0].constraints.rack
        candidates = [b for b in sync if rack_of.get(b) == lead_rack]
        leader = (
            old[0]
            if old and old[0] in candidates
            else min(candidates, key=lambda b: (load.leaders.get(b, 0), b))
        )
        sync.remove(leader)
        load.leaders[leader] = load.leaders.get(leader, 0) + 1
        new = PartitionAssignment(
            before.topic, before.partition, (leader, *sync, *observers), tuple(observers)
        )
        if new.replicas != before.replicas or new.observers != before.observers:
            plan.append(new)
    return sorted(plan, key=lambda p: (p.topic, p.partition))
