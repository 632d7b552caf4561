"""Goal `leaders`: preferred leaders per broker even within each lead rack."""

from __future__ import annotations

from placement.solver.goals.base import Figure, Goal, Measured, Stats, leaders_per_broker, worst


class Leaders(Goal):
    id = "leaders"
    hard = False
    title = "preferred leaders per broker"
    measures = (
        "the worst lead rack's spread of preferred leaders (first replicas) per broker "
        "(drained and excluded brokers left out); a lead rack: one where a broker leads, "
        "before or after"
    )
    lower_bound = "1 where a lead rack's leaders do not divide evenly over its brokers, else 0"
    contributes = (
        "right after each rack's flow, trades of a new leader and a new follower that keep "
        "every count (placement/solver/leadtrades.py); then the leader flow's costs per "
        "leader on each broker (placement/solver/leaderflow.py, placement/solver/leaders.py)"
    )
    where = (
        "placement/solver/leadtrades.py",
        "placement/solver/leaderflow.py",
        "placement/solver/leaders.py",
    )
    figures = (
        Figure(
            "preferred-leader spread (per broker, worst lead rack)",
            "Per lead rack, the most minus "
            "the fewest preferred leaders per broker (drained and excluded brokers left out).",
        ),
    )

    def measure(self, m: Measured) -> Stats:
        racks = m.members()
        rack_of = m.inventory.rack_of
        led = leaders_per_broker(m.before), leaders_per_broker(m.after)
        leading = {rack_of.get(b) for counts in led for b, n in counts.items() if n > 0}
        ids = [racks[r] for r in sorted(r for r in leading if r in racks)]
        return Stats(worst(led[0], ids), worst(led[1], ids))


LEADERS = Leaders()
