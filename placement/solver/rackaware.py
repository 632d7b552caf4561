"""Where a partition of a topic without a policy goes when it must change.

Such a topic follows Kafka's rack-aware rule (`placement.model.rackaware`). When one of its
partitions must change (a replica on a drained or dead broker, or the rule broken under
``--repair``), the planner picks replicas per rack for it, then treats that choice as the
partition's policy: the min-cost flow places it like any other. The choice keeps as many
of the partition's current replicas as the rule allows (so the replicas added are the
fewest any valid plan adds) and puts what is missing back in the racks that lost it, so a
drain leaves the partition spread over its racks as before.
"""

from __future__ import annotations

from collections.abc import Mapping

from placement.model.policy import PlacementPolicy
from placement.model.rackaware import rack_bounds

_INTERNED: dict[tuple[tuple[str, int], ...], PlacementPolicy] = {}


def as_policy(counts: Mapping[str, int], lead: str | None) -> PlacementPolicy:
    """Replicas per rack as a policy of sync replicas only, ``lead``'s rack first (the
    same counts give the same object: a cluster has few patterns)."""
    order = sorted((r, k) for r, k in counts.items() if k > 0)
    if lead is not None:
        order.sort(key=lambda rk: rk[0] != lead)
    key = tuple(order)
    policy = _INTERNED.get(key)
    if policy is None:
        policy = PlacementPolicy.model_validate(
            {
                "version": 2,
                "replicas": [{"count": k, "constraints": {"rack": r}} for r, k in order],
            }
        )
        _INTERNED[key] = policy
    return policy


def target_counts(
    n: int,
    kept: Mapping[str, int],
    sizes: Mapping[str, int],
    room: Mapping[str, int],
    lost: Mapping[str, int],
) -> dict[str, int] | None:
    """Replicas per rack for a partition of ``n`` replicas that keeps ``kept`` per rack
    (brokers that stay), over racks of ``sizes`` brokers, where ``room`` brokers per rack
    may take a new replica of it and ``lost`` replicas per rack are leaving. None when no
    choice both follows the rule and fits the room."""
    bounds = rack_bounds(n, sizes)
    if bounds is None:
        return None
    target = {r: min(kept.get(r, 0), bounds[r][1]) for r in sizes}
    added = dict.fromkeys(sizes, 0)

    def add(r: str) -> bool:
        if added[r] >= room.get(r, 0) or target[r] >= bounds[r][1]:
            return False
        target[r] += 1
        added[r] += 1
        return True

    for r in sorted(sizes):  # every rack up to its floor
        while target[r] < bounds[r][0]:
            if not add(r):
                return None
    extra = sum(target.values()) - n
    while extra > 0:  # the floors pushed past n: drop kept replicas where most are kept
        drop = max(
            (r for r in sizes if target[r] > bounds[r][0] and target[r] > added[r]),
            key=lambda r: (target[r], r),
            default=None,
        )
        if drop is None:
            return None
        target[drop] -= 1
        extra -= 1
    left = dict(lost)
    while sum(target.values()) < n:
        order = sorted(
            (r for r in sizes if added[r] < room.get(r, 0) and target[r] < bounds[r][1]),
            key=lambda r: (-min(left.get(r, 0), 1), target[r], -(room.get(r, 0) - added[r]), r),
        )
        if not order:
            return None
        r = order[0]
        add(r)
        if left.get(r, 0):
            left[r] -= 1
    return target
