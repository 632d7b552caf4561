"""Goal `leadership`: the fewest leadership changes."""

from __future__ import annotations

from placement.solver.goals.base import Figure, Goal, Measured, Stats


class Leadership(Goal):
    id = "leadership"
    hard = False
    title = "fewest leadership changes"
    measures = "partitions whose preferred leader (first replica) changes"
    lower_bound = (
        "the changes forced because the old leader left its partition or its lead rack, "
        "plus under --balance-leaders the fewest that even the leaders "
        "(placement/solver/leaders.py, LeaderStats.bound)"
    )
    contributes = (
        "the leader flow: keeping the old leader costs nothing, any other choice one "
        "change (placement/solver/leaderflow.py); only --balance-leaders moves a leader "
        "that may stay (placement/solver/leaders.py)"
    )
    where = ("placement/solver/leaderflow.py", "placement/solver/leaders.py")
    figures = (
        Figure(
            "leadership changes",
            "Partitions whose preferred leader changes; forced: the old "
            "leader left its partition or its lead rack.",
        ),
    )

    def measure(self, m: Measured) -> Stats:
        changes = 0
        for k in m.changed():
            old = m.before.get(k)
            if old is not None and old.replicas[:1] != m.after[k].replicas[:1]:
                changes += 1
        return Stats(None, changes)


LEADERSHIP = Leadership()
