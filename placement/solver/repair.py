"""What an `assign` request is, and the bound on the replicas it must add.

A partition must change when it breaks its policy or sits on a drained, dead or rack-less
broker. Per rack of its policy it keeps as many of its current brokers there as the policy
allows, so only the shortfall is added: summed over partitions and racks that is the lower
bound on added replicas (`lower_bound`), which the core (`core`) meets exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from placement.io.columns import PARTITION, TOPIC, Columns
from placement.model.assignment import Key, PartitionAssignment
from placement.model.inventory import Inventory
from placement.model.policy import PlacementPolicy
from placement.model.scope import Scope


@dataclass(frozen=True)
class Request:
    inventory: Inventory
    policies: Mapping[str, PlacementPolicy]
    current: Sequence[PartitionAssignment] = ()
    fresh: Mapping[str, int] = field(default_factory=dict)  # topic -> partitions to create
    drained: frozenset[int] = frozenset()
    excluded: frozenset[int] = frozenset()
    sizes: Mapping[Key, int] = field(default_factory=dict)
    caps: Mapping[int, int] = field(default_factory=dict)  # usable disk bytes per broker
    fixed_bytes: Mapping[int, int] = field(default_factory=dict)  # of topics without a policy
    read: Columns | None = None  # ``current`` as columns, when its reader made them
    scope: Scope = field(default_factory=Scope)
    # preferred leaders of existing partitions in their policy's first rack (opt-in)
    first_rack: bool = False

    @cached_property
    def before(self) -> dict[Key, PartitionAssignment]:
        """``current`` by key, made once (a cluster holds up to millions of partitions);
        read, never changed."""
        topics = map(TOPIC, self.current)
        keys = zip(topics, map(PARTITION, self.current), strict=True)
        return dict(zip(keys, self.current, strict=True))

    @cached_property
    def columns(self) -> Columns | None:
        """``before``'s partitions, in its order, as columns (None: see `Columns.of`):
        ``read`` when given (the reader's keys are distinct: ``before`` keeps their order)."""
        if self.read is not None and len(self.read) == len(self.before) == len(self.current):
            return self.read
        return Columns.of(list(self.before.values()))


def lower_bound(req: Request) -> dict[str, int]:
    """Added replicas no plan can avoid, per rack: per partition, the policy's count there
    minus the current brokers there that may stay (in the inventory, not drained)."""
    live = {b.id: b.rack for b in req.inventory.brokers if b.id not in req.drained}
    bound: dict[str, int] = {}
    for t, n in req.fresh.items():
        for rack, (s, o) in req.policies[t].per_rack().items():
            bound[rack] = bound.get(rack, 0) + n * (s + o)
    need = {t: [(r, s + o) for r, (s, o) in p.per_rack().items()] for t, p in req.policies.items()}
    for a in req.current:
        counts = need.get(a.topic)
        if counts is None:
            continue
        racks = [live.get(b) for b in set(a.replicas)]
        for rack, n in counts:
            short = n - racks.count(rack)
            if short > 0:
                bound[rack] = bound.get(rack, 0) + short
    return bound
