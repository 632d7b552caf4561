"""Goal `replicas`: replicas per broker even within each rack."""

from __future__ import annotations

from placement.solver.goals.base import Figure, Goal, Measured, Stats, replicas_per_broker, worst


class Replicas(Goal):
    id = "replicas"
    hard = False
    title = "replicas per broker within each rack"
    measures = (
        "the worst rack's spread: most minus fewest replicas per broker (drained and "
        "excluded brokers left out)"
    )
    lower_bound = "1 where a rack's replicas do not divide evenly over its brokers, else 0"
    contributes = (
        "the flow's rising cost per replica on each broker (placement/solver/flow.py); "
        "--rebalance: each receiving broker's floor and ceiling (placement/solver/tallies.py)"
    )
    where = ("placement/solver/flow.py", "placement/solver/tallies.py")
    figures = (
        Figure(
            "rack spread (replicas per broker, worst rack)",
            "Per rack, the most minus the fewest "
            "replicas per broker (drained brokers left out); 1 where they cannot divide evenly.",
        ),
    )

    def measure(self, m: Measured) -> Stats:
        racks = m.members().values()
        before = worst(replicas_per_broker(m.before), racks)
        return Stats(before, worst(replicas_per_broker(m.after), racks))


REPLICAS = Replicas()
