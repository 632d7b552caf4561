"""Goal `moves`: the fewest replicas added for what the mode asks."""

from __future__ import annotations

from placement.solver.goals.base import Figure, Goal, Measured, Stats


class Moves(Goal):
    id = "moves"
    hard = False
    title = "fewest moves"
    measures = "replicas the plan adds (a partition it creates: all of its replicas)"
    lower_bound = (
        "per partition and rack, its rule's count there minus the brokers there that may "
        "keep a replica (placement/solver/repair.py, lower_bound); --rebalance: the replicas "
        "any plan that evens every rack adds (placement/solver/tallies.py, RackState.targets)"
    )
    contributes = (
        "the flow's costs: staying is free and each move costs more than any balance gain, "
        "so the flow's optimum adds the fewest (placement/solver/flow.py); --rebalance: the "
        "partitions brokers above their floor offer (placement/solver/tallies.py), and "
        "CP-SAT on a rack the flow leaves above its bound (placement/solver/cpsat.py)"
    )
    where = (
        "placement/solver/repair.py",
        "placement/solver/flow.py",
        "placement/solver/tallies.py",
        "placement/solver/cpsat.py",
    )
    figures = (
        Figure(
            "replicas added",
            "Brokers a partition gains; its lower bound is what the policies "
            "(and --rebalance) force: no plan adds fewer.",
        ),
    )

    def measure(self, m: Measured) -> Stats:
        added = 0
        for k in m.changed():
            old = set(m.before[k].replicas) if k in m.before else set()
            added += len(set(m.after[k].replicas) - old)
        return Stats(None, added)


MOVES = Moves()
