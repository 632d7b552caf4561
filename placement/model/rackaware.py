"""Kafka's rack-aware rule, the placement every topic without a policy follows.

A topic with neither a `confluent.placement.constraints` of its own nor a cluster default
(`confluent.log.placement.constraints`) is placed as Kafka's rack-aware assignment places
it: no broker twice, and the replicas spread over the racks as evenly as the racks allow.
With ``n`` replicas over racks of ``c_r`` brokers (the brokers that stay in the cluster),
the level ``L`` is the smallest number with ``sum(min(c_r, L)) >= n``; when every rack has
enough brokers it is ``ceil(n / racks)``. A partition follows the rule when no rack holds
more than ``L`` of its replicas and every rack holds at least ``min(c_r, L - 1)``: so three
replicas over three racks are one per rack, and four are 2, 1, 1, never 2, 2, 0.

The planner and the independent checker both use these functions; neither trusts the
other's choice of where a partition's replicas go, only this definition of valid.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping

from placement.model.inventory import Inventory


def rack_sizes(inventory: Inventory, drained: Collection[int]) -> dict[str, int]:
    """Brokers per rack that stay in the cluster: the rule's racks (a rack whose every
    broker is drained is none of them)."""
    return dict(
        Counter(b.rack for b in inventory.brokers if b.rack is not None and b.id not in drained)
    )


def level(n: int, sizes: Iterable[int]) -> int | None:
    """The fewest replicas per rack that can hold ``n`` over racks of ``sizes`` brokers;
    None when the racks together have fewer than ``n`` brokers."""
    caps = [c for c in sizes if c > 0]
    if n <= 0:
        return 0
    if sum(caps) < n:
        return None
    low, high = 1, n
    while low < high:
        mid = (low + high) // 2
        if sum(min(c, mid) for c in caps) >= n:
            high = mid
        else:
            low = mid + 1
    return low


def rack_bounds(n: int, sizes: Mapping[str, int]) -> dict[str, tuple[int, int]] | None:
    """Per rack of ``sizes`` brokers, the fewest and the most of ``n`` replicas the rule
    lets it hold, ``(min(c, L - 1), min(c, L))``; None when the racks together have fewer
    than ``n`` brokers. A rack left out of ``sizes`` holds none."""
    top = level(n, sizes.values())
    if top is None:
        return None
    return {r: (min(c, top - 1), min(c, top)) for r, c in sizes.items()}


def spread_ok(counts: Mapping[str, int], sizes: Mapping[str, int], n: int) -> bool:
    """Whether ``counts`` (replicas per rack, summing to ``n``) follow the rule over racks
    of ``sizes`` brokers (racks with none are left out of ``sizes``)."""
    bounds = rack_bounds(n, sizes)
    if bounds is None or sum(counts.values()) != n:
        return False
    if any(r not in sizes and k > 0 for r, k in counts.items()):
        return False
    return all(low <= counts.get(r, 0) <= high for r, (low, high) in bounds.items())


def spread(counts: Iterable[int]) -> int:
    """Max minus min replicas per rack (racks holding none count as 0)."""
    values = list(counts)
    return max(values) - min(values) if values else 0
