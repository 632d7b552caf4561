"""Goal `brokers` (hard): nothing stays on a drained or absent broker, nothing new goes to
an excluded one."""

from __future__ import annotations

from collections.abc import Mapping

from placement.model.assignment import Key, PartitionAssignment
from placement.solver.goals.base import Goal, Measured, Stats


class Brokers(Goal):
    id = "brokers"
    hard = True
    title = "nothing on drained or absent brokers, nothing new on excluded ones"
    measures = (
        "replicas on drained brokers and on brokers missing from the inventory or without "
        "a rack, plus (after) replicas the plan adds on excluded brokers; partitions the "
        "scope keeps out of the plan (--only-topics, offline ones) may keep theirs"
    )
    lower_bound = "0: a plan that misses it is never written"
    contributes = (
        "the flow's brokers: a replica may stay only on a usable broker, and only brokers "
        "neither drained nor excluded receive (placement/solver/cluster.py)"
    )
    where = ("placement/solver/cluster.py", "placement/solver/flow.py")

    def measure(self, m: Measured) -> Stats:
        usable = {b.id for b in m.inventory.brokers if b.rack is not None} - m.drained

        def away(state: Mapping[Key, PartitionAssignment]) -> int:
            return sum(1 for a in state.values() for b in a.replicas if b not in usable)

        added = 0
        for k in m.changed():
            old = set(m.before[k].replicas) if k in m.before else set()
            added += sum(1 for b in m.after[k].replicas if b in m.excluded and b not in old)
        return Stats(away(m.before), away(m.after) + added)


BROKERS = Brokers()
