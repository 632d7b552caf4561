"""Goal `rules` (hard): every partition the plan changes follows its topic's rule."""

from __future__ import annotations

from collections import Counter

from placement.model.assignment import PartitionAssignment
from placement.model.rackaware import rack_sizes, spread_ok
from placement.solver.goals.base import Goal, Measured, Stats
from placement.solver.judging import Expected


class Rules(Goal):
    id = "rules"
    hard = True
    title = "every changed partition follows its rule"
    measures = (
        "partitions that break their rule: their topic's placement policy (its own or the "
        "cluster default), else Kafka's rack-aware rule; no broker twice, none drained or "
        "missing from the inventory (before: all of them; after: those the plan changes)"
    )
    lower_bound = "0: a plan that misses it is never written"
    contributes = (
        "who enters the flow: a partition that meets its rule stays out "
        "(placement/solver/judging.py); each other one asks its rule's count of replicas "
        "per rack (placement/solver/cluster.py derives it for the rack-aware rule)"
    )
    where = (
        "placement/solver/judging.py",
        "placement/solver/cluster.py",
        "placement/solver/core.py",
    )

    def measure(self, m: Measured) -> Stats:
        home = {
            b.id: b.rack
            for b in m.inventory.brokers
            if b.rack is not None and b.id not in m.drained
        }
        sizes = rack_sizes(m.inventory, m.drained)

        def breaks(a: PartitionAssignment) -> bool:
            return not _follows(m, a, home, sizes)

        before = sum(map(breaks, m.before.values()))
        return Stats(before, sum(breaks(m.after[k]) for k in m.changed()))


def _follows(
    m: Measured, a: PartitionAssignment, home: dict[int, str], sizes: dict[str, int]
) -> bool:
    reps = a.replicas
    at = tuple(home.get(b) for b in reps)
    if not reps or len(set(reps)) != len(reps) or None in at:
        return False
    policy = m.policies.get(a.topic)
    if policy is None:  # Kafka's rack-aware rule: no observers, racks as even as they allow
        return not a.observers and spread_ok(Counter(r for r in at if r), sizes, len(reps))
    tail = reps[len(reps) - len(a.observers) :]
    return Expected.of(policy).racks_fit(at, len(a.observers)) and set(tail) == set(a.observers)


RULES = Rules()
