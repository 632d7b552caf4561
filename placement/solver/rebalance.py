"""`--rebalance`: move valid replicas until every rack is even, with the fewest moves.

Works on the state after repair (every partition already meets its policy). Within one
rack the brokers that may take replicas (not drained, not excluded) get targets:

- replica counts (sizes unknown): ``floor(total / brokers)`` each, one more for the
  ``total % brokers`` brokers that keep the most of their current replicas. Every broker
  then ends within one of every other, and no targets need fewer moves, so
  ``sum(max(0, target - kept))`` over brokers is a lower bound on replicas added in the
  rack (`bound`), next to the per-partition repair bound;
- bytes (sizes known): at most ``mean * (1 + tolerance)`` bytes per broker; the bytes above
  that cap must leave, which bounds the bytes moved.

Replicas leave a broker above its target for one below it: first those the repair just
added (moving them costs nothing more), then observers and followers, leaders last. A
replica never goes to a broker that already holds its partition; when no direct move is
left, a chain (heavy -> middle -> light, each step a different partition) finishes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from placement.model.assignment import PartitionAssignment

Key = tuple[str, int]


@dataclass(frozen=True)
class RackGoal:
    rack: str
    brokers: tuple[int, ...]  # the brokers balanced: in the rack, not drained, not excluded


def _replace(a: PartitionAssignment, src: int, dst: int) -> PartitionAssignment:
    return PartitionAssignment(
        a.topic,
        a.partition,
        tuple(dst if b == src else b for b in a.replicas),
        tuple(dst if b == src else b for b in a.observers),
    )


class _Rack:
    """One rack's brokers, their load and which partitions sit on each."""

    def __init__(
        self,
        brokers: Iterable[int],
        after: dict[Key, PartitionAssignment],
        before: Mapping[Key, PartitionAssignment],
        sizes: Mapping[Key, int],
        use_bytes: bool,
    ) -> None:
        self.after, self.before, self.sizes, self.use_bytes = after, before, sizes, use_bytes
        self.load: dict[int, int] = dict.fromkeys(brokers, 0)
        self.kept: dict[int, int] = dict.fromkeys(self.load, 0)
        self.on: dict[int, dict[Key, None]] = {b: {} for b in self.load}
        self.added: dict[int, set[Key]] = {b: set() for b in self.load}  # by this plan

    def cost(self, key: Key) -> int:
        return self.sizes.get(key, 0) if self.use_bytes else 1

    def move(self, key: Key, src: int, dst: int) -> None:
        self.after[key] = _replace(self.after[key], src, dst)
        del self.on[src][key]
        self.on[dst][key] = None
        self.added[src].discard(key)
        old = self.before.get(key)
        if old is None or dst not in old.replicas:
            self.added[dst].add(key)
        self.load[src] -= self.cost(key)
        self.load[dst] += self.cost(key)

    def preference(self, b: int) -> Iterator[Key]:
        """Partitions on ``b`` in the order their replica there should leave: added by this
        plan (moving it again adds nothing), then followers, then preferred leaders (moving
        those changes leadership too); by bytes, biggest first within each group. Lazy:
        a broker usually sheds a few of its thousands."""
        fresh = sorted(self.added[b])
        rest: Iterator[Key] = (k for k in list(self.on[b]) if k not in self.added[b])
        if self.use_bytes:
            fresh.sort(key=lambda k: -self.cost(k))
            rest = iter(sorted(rest, key=lambda k: -self.cost(k)))
        leaders: list[Key] = []
        for key in fresh:
            if key in self.on[b]:  # still there: a chain may have moved it
                yield key
        for key in rest:
            if self.after[key].replicas[0] == b:
                leaders.append(key)
            elif key in self.on[b]:
                yield key
        for key in leaders:
            if key in self.on[b]:
                yield key


def count_targets(load: Mapping[int, int], kept: Mapping[int, int]) -> dict[int, int]:
    q, r = divmod(sum(load.values()), len(load))
    order = sorted(load, key=lambda b: (-kept[b], -load[b], b))
    return {b: q + (1 if i < r else 0) for i, b in enumerate(order)}


def _level_counts(rack: _Rack) -> None:
    goal = count_targets(rack.load, rack.kept)
    under = [b for b in sorted(goal) if rack.load[b] < goal[b]]
    for src in sorted(goal, key=lambda b: (goal[b] - rack.load[b], b)):
        if rack.load[src] <= goal[src]:
            break
        for key in rack.preference(src):
            if rack.load[src] <= goal[src]:
                break
            held = rack.after[key].replicas
            dst = next((u for u in under if rack.load[u] < goal[u] and u not in held), None)
            if dst is not None:
                rack.move(key, src, dst)
        under = [u for u in under if rack.load[u] < goal[u]]
    _chains(rack)


def _chains(rack: _Rack) -> None:
    """Finish what direct moves could not: heavy -> ... -> light paths, shortest first."""
    stuck: set[int] = set()
    while True:
        floor = min(rack.load.values())
        sources = [b for b in rack.load if b not in stuck and rack.load[b] >= floor + 2]
        if not sources:
            return
        heavy = max(sources, key=lambda b: (rack.load[b], -b))
        parent: dict[int, tuple[int, Key]] = {}
        frontier, seen, found = [heavy], {heavy}, None
        order = sorted(rack.load, key=lambda b: (rack.load[b], b))
        while frontier and found is None:
            nxt = []
            for src in frontier:
                for dst in order:
                    if dst in seen:
                        continue
                    key = next((k for k in rack.on[src] if dst not in rack.after[k].replicas), None)
                    if key is None:
                        continue
                    seen.add(dst)
                    parent[dst] = (src, key)
                    if rack.load[dst] <= rack.load[heavy] - 2:
                        found = dst
                        break
                    nxt.append(dst)
                if found is not None:
                    break
            frontier = nxt
        if found is None:
            stuck.add(heavy)
            continue
        node = found
        while node != heavy:
            src, key = parent[node]
            rack.move(key, src, node)
            node = src


def byte_cap(load: Mapping[int, int], tolerance: float) -> int:
    return int(sum(load.values()) / len(load) * (1 + tolerance))


def _level_bytes(rack: _Rack, tolerance: float) -> None:
    cap = byte_cap(rack.load, tolerance)
    mean = sum(rack.load.values()) / len(rack.load)
    for src in sorted(rack.load, key=lambda b: (-rack.load[b], b)):
        if rack.load[src] <= cap:
            break
        for key in rack.preference(src):
            if rack.load[src] <= cap:
                break
            size = rack.cost(key)
            if rack.load[src] - size < mean and size > rack.load[src] - cap:
                continue  # too big: look for a smaller one first
            held = rack.after[key].replicas
            dst = min(
                (b for b in rack.load if b not in held and rack.load[b] + size <= cap),
                key=lambda b: (rack.load[b], b),
                default=None,
            )
            if dst is not None:
                rack.move(key, src, dst)


def rebalance(
    after: dict[Key, PartitionAssignment],
    before: Mapping[Key, PartitionAssignment],
    goals: Iterable[RackGoal],
    sizes: Mapping[Key, int],
    tolerance: float = 0.1,
) -> dict[str, int]:
    """Even out every rack of ``after`` in place. Returns per rack a lower bound: on the
    replicas added there in all (counts), or on the bytes that must leave brokers over the
    cap beyond what the repair moves (bytes)."""
    use_bytes = bool(sizes)
    racks = {g.rack: _Rack(g.brokers, after, before, sizes, use_bytes) for g in goals if g.brokers}
    where = {b: r for r in racks.values() for b in r.load}
    for key, a in after.items():
        w = sizes.get(key, 0) if use_bytes else 1
        old = before.get(key)
        for b in a.replicas:
            r = where.get(b)
            if r is not None:
                r.load[b] += w
                r.on[b][key] = None
                if old is None or b not in old.replicas:
                    r.added[b].add(key)
        # what each broker could keep: a partition over its count in a rack drops some,
        # which only makes the bound weaker, never wrong
        for b in old.replicas if old is not None else ():
            r = where.get(b)
            if r is not None:
                r.kept[b] += w
    bounds: dict[str, int] = {}
    for name, r in racks.items():
        if use_bytes:
            cap = byte_cap(r.load, tolerance)
            bounds[name] = sum(max(0, w - cap) for w in r.kept.values())
            _level_bytes(r, tolerance)
        else:
            goal = count_targets(r.load, r.kept)
            bounds[name] = sum(max(0, goal[b] - r.kept[b]) for b in goal)
            _level_counts(r)
    return bounds
