"""Goal `bytes`: bytes per broker even within each rack, where sizes are known."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from placement.model.assignment import Key, PartitionAssignment
from placement.solver.goals.base import Figure, Goal, Measured, Stats, worst


class Bytes(Goal):
    id = "bytes"
    hard = False
    title = "bytes per broker within each rack, where sizes are known"
    measures = (
        "the worst rack's spread of bytes per broker (drained and excluded brokers left "
        "out); measured only with sizes"
    )
    lower_bound = (
        "none for the spread; --rebalance with sizes: the bytes that must leave brokers "
        "above the rack's mean plus the tolerance (placement/solver/rebalance.py)"
    )
    contributes = (
        "passes after the flow that keep its counts: replicas the plan adds anyway trade "
        "brokers (placement/solver/bytes_balance.py); --rebalance with sizes: the bytes "
        "leveling (placement/solver/rebalance.py)"
    )
    where = ("placement/solver/bytes_balance.py", "placement/solver/rebalance.py")
    figures = (
        Figure(
            "bytes over the cap that had to leave",
            "With --max-disk-usage: bytes that must leave "
            "brokers above the cap; no plan moves less off them.",
        ),
    )
    reported_after = "moves"

    def measure(self, m: Measured) -> Stats:
        if not m.sizes:
            return Stats(None, None)
        racks = m.members().values()

        def held(state: Mapping[Key, PartitionAssignment]) -> Counter[int]:
            out: Counter[int] = Counter()
            for key, a in state.items():
                for b in a.replicas:
                    out[b] += m.sizes.get(key, 0)
            return out

        return Stats(worst(held(m.before), racks), worst(held(m.after), racks))


BYTES = Bytes()
