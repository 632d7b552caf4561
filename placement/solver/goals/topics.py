"""Goal `topics`: replicas of each topic per broker even within each rack."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from placement.model.assignment import Key, PartitionAssignment
from placement.solver.goals.base import Figure, Goal, Measured, Stats, spread


class Topics(Goal):
    id = "topics"
    hard = False
    title = "replicas of each topic per broker within a rack"
    measures = (
        "the worst (topic, rack) spread: most minus fewest replicas of the topic per broker "
        "of the rack, over the topics with a replica there"
    )
    lower_bound = "none computed"
    contributes = (
        "the flow's rising cost per replica on each (topic, broker) pair (placement/solver/flow.py)"
    )
    where = ("placement/solver/flow.py",)
    figures = (
        Figure(
            "topic spread (replicas of a topic per broker, worst topic and rack)",
            "Per topic and "
            "rack, the most minus the fewest replicas of the topic per broker; no bound computed.",
        ),
    )

    def measure(self, m: Measured) -> Stats:
        racks = m.members()

        def worst(state: Mapping[Key, PartitionAssignment]) -> int:
            per: dict[str, Counter[int]] = {}
            for a in state.values():
                per.setdefault(a.topic, Counter()).update(a.replicas)
            return max(
                (
                    spread(counts, ids)
                    for counts in per.values()
                    for ids in racks.values()
                    if any(counts[b] for b in ids)
                ),
                default=0,
            )

        return Stats(worst(m.before), worst(m.after))


TOPICS = Topics()
