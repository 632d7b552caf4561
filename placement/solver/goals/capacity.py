"""Goal `capacity` (hard): no broker ends above `--max-disk-usage` of its capacity."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from placement.model.assignment import Key, PartitionAssignment
from placement.solver.goals.base import Figure, Goal, Measured, Stats


class Capacity(Goal):
    id = "capacity"
    hard = True
    title = "no broker above --max-disk-usage"
    measures = (
        "brokers (neither drained nor excluded) whose bytes exceed --max-disk-usage of their "
        "capacity_bytes; measured only when sizes and capacities are known"
    )
    lower_bound = "0: a plan that misses it is never written (exit 1 when impossible)"
    contributes = (
        "a pass after the flow: replicas move off brokers above their cap, to brokers of "
        "the same rack with room (placement/solver/capacity.py)"
    )
    where = ("placement/solver/capacity.py",)
    figures = (
        Figure(
            "brokers above --max-disk-usage",
            "Brokers whose bytes end above the cap (a hard limit).",
        ),
    )
    reported_after = "bytes"

    def measure(self, m: Measured) -> Stats:
        if not m.caps or not m.sizes:
            return Stats(None, None)
        counted = {b.id for b in m.inventory.brokers} - m.drained - m.excluded

        def over(state: Mapping[Key, PartitionAssignment]) -> int:
            held: Counter[int] = Counter()
            for key, a in state.items():
                for b in a.replicas:
                    held[b] += m.sizes.get(key, 0)
            return sum(1 for b, cap in m.caps.items() if b in counted and held[b] > cap)

        return Stats(over(m.before), over(m.after))


CAPACITY = Capacity()
