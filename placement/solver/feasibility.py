"""The preliminary feasibility check, before any solving (cf. Confluent's broker removal).

Per rack, a partition needs one distinct broker for each sync replica and observer its
policy puts there. After drains and exclusions a rack may no longer have that many: the
request is then proven infeasible, and we say which rack, which topics, how many brokers
they need and how many remain.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from placement.errors import MrcPlanError
from placement.model.assignment import PartitionAssignment
from placement.model.inventory import Inventory
from placement.model.policy import PlacementPolicy


@dataclass(frozen=True)
class RackShortfall:
    rack: str
    needed: int  # brokers the most demanding partition needs in the rack
    remaining: int  # brokers left that may hold its replicas
    topics: tuple[str, ...]
    total: int  # brokers of the rack in the inventory
    drained: tuple[int, ...] = ()
    excluded: tuple[int, ...] = ()

    def explain(self) -> str:
        why = []
        if self.total == 0:
            why.append("no broker in the inventory has this rack")
        if self.drained:
            why.append(f"drained: {', '.join(map(str, self.drained))}")
        if self.excluded:
            why.append(f"excluded: {', '.join(map(str, self.excluded))}")
        shown = ", ".join(self.topics[:5]) + (
            f" and {len(self.topics) - 5} more" if len(self.topics) > 5 else ""
        )
        return (
            f'rack "{self.rack}" needs {self.needed} brokers for topic(s) {shown} but only '
            f"{self.remaining} of its {self.total} remain" + (f" ({'; '.join(why)})" if why else "")
        )


class InfeasibleError(MrcPlanError):
    """The request cannot be met by any plan (exit 1)."""

    def __init__(self, shortfalls: list[RackShortfall]) -> None:
        super().__init__(
            "infeasible: " + "; ".join(s.explain() for s in shortfalls),
            "add brokers to the rack, drain or exclude fewer brokers, or lower the policy's "
            "counts there",
        )
        self.shortfalls = shortfalls


@dataclass(frozen=True)
class Demand:
    """What the topics ask of one rack."""

    rack: str
    needs: dict[str, int] = field(default_factory=dict)  # topic -> brokers per partition


def rack_demands(policies: Mapping[str, PlacementPolicy]) -> dict[str, Demand]:
    out: dict[str, Demand] = {}
    for topic, policy in sorted(policies.items()):
        for rack, (s, o) in policy.per_rack().items():
            out.setdefault(rack, Demand(rack)).needs[topic] = s + o
    return out


def check_feasible(
    inventory: Inventory,
    policies: Mapping[str, PlacementPolicy],
    *,
    drained: Iterable[int] = (),
    excluded: Iterable[int] = (),
    current: Iterable[PartitionAssignment] = (),
) -> None:
    """Raise :class:`InfeasibleError` naming every rack that cannot hold its partitions.

    An excluded broker takes no new replica but may keep the ones it has, so a partition
    can count the excluded brokers that already hold it.
    """
    drained_set, excluded_set = set(drained), set(excluded)
    members = inventory.rack_members()
    rack_of = inventory.rack_of
    # per topic and rack: the fewest excluded brokers (which keep what they hold) that any
    # partition of the topic can count on; a topic with no current partitions counts none
    held: dict[str, list[dict[str, int]]] = {}
    for a in current if excluded_set else ():  # only excluded brokers keep what they hold
        counts: dict[str, int] = {}
        for broker in a.replicas:
            r = rack_of.get(broker)
            if r is not None and broker in excluded_set and broker not in drained_set:
                counts[r] = counts.get(r, 0) + 1
        held.setdefault(a.topic, []).append(counts)
    shortfalls = []
    for rack, demand in sorted(rack_demands(policies).items()):
        ids = members.get(rack, [])
        usable = [b for b in ids if b not in drained_set and b not in excluded_set]
        short: list[str] = []
        worst = 0
        for topic, need in demand.needs.items():
            extra = min((c.get(rack, 0) for c in held.get(topic, [])), default=0)
            if need > len(usable) + extra:
                short.append(topic)
                worst = max(worst, need)
        if short:
            shortfalls.append(
                RackShortfall(
                    rack,
                    worst,
                    len(usable),
                    tuple(short),
                    len(ids),
                    tuple(sorted(drained_set & set(ids))),
                    tuple(sorted(excluded_set & set(ids))),
                )
            )
    if shortfalls:
        raise InfeasibleError(shortfalls)
