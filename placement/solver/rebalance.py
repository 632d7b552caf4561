"""`--rebalance` by bytes (partition sizes known), after the core has repaired the cluster.

Replica counts are the core's (`core`, one min-cost flow per rack). With sizes, within one
rack the brokers that may take replicas (not drained, not excluded) may hold at most
``mean * (1 + tolerance)`` bytes; the bytes above that cap must leave, which bounds the
bytes moved. Replicas leave a broker above the cap for the lightest broker with room:
first those the repair just added (moving them costs nothing more), then observers and
followers, leaders last; a replica never goes to a broker that already holds its
partition. Then replica counts: a broker above ``COUNT_SLACK`` times the rack's mean count
(it holds many small partitions) passes its smallest replicas to brokers below the mean
that stay under the byte cap, so bytes and counts are even at the same time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from placement.model.assignment import Key, PartitionAssignment


@dataclass(frozen=True)
class RackGoal:
    rack: str
    brokers: tuple[int, ...]  # the brokers balanced: in the rack, not drained, not excluded


class _Rack:
    """One rack's brokers, their load and which partitions sit on each."""

    def __init__(
        self,
        brokers: Iterable[int],
        after: dict[Key, PartitionAssignment],
        before: Mapping[Key, PartitionAssignment],
        sizes: Mapping[Key, int],
    ) -> None:
        self.after, self.before, self.sizes = after, before, sizes
        self.load: dict[int, int] = dict.fromkeys(brokers, 0)
        self.kept: dict[int, int] = dict.fromkeys(self.load, 0)
        self.on: dict[int, dict[Key, None]] = {b: {} for b in self.load}
        self.added: dict[int, set[Key]] = {b: set() for b in self.load}  # by this plan

    def cost(self, key: Key) -> int:
        return self.sizes.get(key, 0)

    def move(self, key: Key, src: int, dst: int) -> None:
        self.after[key] = self.after[key].with_broker(src, dst)
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
        those changes leadership too); biggest first within each group. Lazy: a broker
        usually sheds a few of its thousands."""
        fresh = sorted(sorted(self.added[b]), key=lambda k: -self.cost(k))
        rest = sorted(
            (k for k in list(self.on[b]) if k not in self.added[b]), key=lambda k: -self.cost(k)
        )
        leaders: list[Key] = []
        for key in fresh:
            if key in self.on[b]:  # still there: an earlier move may have taken it
                yield key
        for key in rest:
            if self.after[key].replicas[0] == b:
                leaders.append(key)
            elif key in self.on[b]:
                yield key
        for key in leaders:
            if key in self.on[b]:
                yield key


def byte_cap(load: Mapping[int, int], tolerance: float) -> int:
    return int(sum(load.values()) / len(load) * (1 + tolerance))


def _level_bytes(rack: _Rack, tolerance: float) -> None:
    """Bytes leave brokers above the cap, the biggest that fit first, each for the
    lightest broker with room."""
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


COUNT_SLACK = 1.10  # replicas per broker: at most this times the rack's mean after bytes


def _level_counts_under_cap(rack: _Rack, cap: int) -> None:
    count = dict.fromkeys(rack.load, 0)
    topic_on: Counter[tuple[str, int]] = Counter()
    for b, keys in rack.on.items():
        count[b] = len(keys)
        topic_on.update((k[0], b) for k in keys)
    mean = sum(count.values()) / len(count)
    limit = int(mean * COUNT_SLACK)
    for src in sorted(count, key=lambda b: (-count[b], b)):
        if count[src] <= limit:
            break
        # followers first (moving a leader's replica changes leadership), smallest first,
        # then those of the topics the broker holds most of
        small = sorted(
            rack.on[src],
            key=lambda k: (
                rack.after[k].replicas[0] == src,
                rack.cost(k),
                -topic_on[(k[0], src)],
                k,
            ),
        )
        for key in small:
            if count[src] <= limit:
                break
            size = rack.cost(key)
            held = rack.after[key].replicas
            dst = min(
                (
                    b
                    for b in rack.load
                    if b not in held and count[b] < mean and rack.load[b] + size <= cap
                ),
                key=lambda b: (count[b], topic_on[(key[0], b)], rack.load[b], b),
                default=None,
            )
            if dst is not None:
                rack.move(key, src, dst)
                count[src] -= 1
                count[dst] += 1
                topic_on[(key[0], src)] -= 1
                topic_on[(key[0], dst)] += 1


def rebalance(
    after: dict[Key, PartitionAssignment],
    before: Mapping[Key, PartitionAssignment],
    goals: Iterable[RackGoal],
    sizes: Mapping[Key, int],
    tolerance: float = 0.1,
) -> dict[str, int]:
    """Even out the bytes of every rack of ``after`` in place. Returns per rack a lower
    bound on the bytes that must leave brokers over the cap beyond what the repair moves."""
    racks = {g.rack: _Rack(g.brokers, after, before, sizes) for g in goals if g.brokers}
    where = {b: r for r in racks.values() for b in r.load}
    for key, a in after.items():
        w = sizes.get(key, 0)
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
        cap = byte_cap(r.load, tolerance)
        bounds[name] = sum(max(0, w - cap) for w in r.kept.values())
        _level_bytes(r, tolerance)
        _level_counts_under_cap(r, cap)
    return bounds
