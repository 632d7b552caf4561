"""`--balance-leaders`: reorder replica lists so preferred leaders are even per lead rack.

A partition's preferred leader must be a sync replica in its policy's first rack; which of
those leads moves no data. Per rack, over the brokers that may lead there (not drained,
not excluded), leaders are leveled to max - min <= 1 with the fewest leadership changes
(`level.level_units`: its direct moves meet the lower bound `level.excess`; chains are the
exception). Roles do not change: only the order of the sync replicas does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from placement.model.assignment import PartitionAssignment
from placement.model.policy import PlacementPolicy
from placement.solver.level import excess, level_units

Key = tuple[str, int]


@dataclass(frozen=True)
class LeaderStats:
    changes: int  # partitions whose preferred leader differs from before
    bound: int  # fewest changes any plan needs to even the leaders of the evened racks
    evened_changes: int  # the changes made in those racks (compare with bound)
    uneven: tuple[str, ...]  # racks no reordering evens (a leader's rack holds no choice)
    spread_before: dict[str, tuple[int, int]]  # rack -> (min, max) leaders per broker
    spread_after: dict[str, tuple[int, int]]


def leader_spread(
    state: Mapping[Key, PartitionAssignment],
    policies: Mapping[str, PlacementPolicy],
    may_lead: Mapping[str, tuple[int, ...]],
) -> dict[str, tuple[int, int]]:
    counts = {rack: dict.fromkeys(ids, 0) for rack, ids in may_lead.items()}
    for a in state.values():
        policy = policies.get(a.topic)
        if policy is None or not a.replicas:
            continue
        here = counts.get(policy.replicas[0].constraints.rack)
        if here is not None and a.replicas[0] in here:
            here[a.replicas[0]] += 1
    return {r: (min(c.values()), max(c.values())) for r, c in counts.items() if c}


def balance_leaders(
    after: dict[Key, PartitionAssignment],
    policies: Mapping[str, PlacementPolicy],
    rack_of: Mapping[int, str | None],
    may_lead: Mapping[str, tuple[int, ...]],
) -> LeaderStats:
    """Reorder ``after`` in place (sorted keys, so the result is deterministic)."""
    spread_before = leader_spread(after, policies, may_lead)
    first = {k: a.replicas[0] for k, a in after.items() if a.replicas}
    by_rack: dict[str, list[Key]] = {}
    for key in sorted(after):
        policy = policies.get(key[0])
        if policy is not None:
            by_rack.setdefault(policy.replicas[0].constraints.rack, []).append(key)
    bound = evened = 0
    uneven: list[str] = []
    for rack, keys in by_rack.items():
        weight = dict.fromkeys(may_lead.get(rack, ()), 0)
        if not weight:
            continue
        at: list[int] = []
        cands: list[list[int]] = []
        for key in keys:
            a = after[key]
            at.append(a.replicas[0])
            cands.append([b for b in a.sync if rack_of.get(b) == rack and b in weight])
            if a.replicas[0] in weight:
                weight[a.replicas[0]] += 1
        need = excess(weight)
        level_units(weight, at, cands)
        made = 0
        for key, leader in zip(keys, at, strict=True):
            a = after[key]
            if leader != a.replicas[0]:
                rest = tuple(b for b in a.replicas if b != leader)
                after[key] = PartitionAssignment(a.topic, a.partition, (leader, *rest), a.observers)
            made += after[key].replicas[0] != first.get(key)
        if max(weight.values()) - min(weight.values()) <= 1:
            bound += need
            evened += made
        else:
            uneven.append(rack)
    changes = sum(1 for k, b in first.items() if after[k].replicas[0] != b)
    return LeaderStats(
        changes,
        bound,
        evened,
        tuple(uneven),
        spread_before,
        leader_spread(after, policies, may_lead),
    )
