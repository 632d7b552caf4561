"""Who is where for the core (`core`): each broker's rack, the brokers that may keep a
replica and those that may receive one, and Kafka's rack-aware rule for topics without a
policy (goal `rules`, `placement/solver/goals/rules.py`)."""

from __future__ import annotations

from collections import Counter
from functools import cached_property
from itertools import chain

from placement.errors import NoSolutionError
from placement.model.assignment import Key, PartitionAssignment
from placement.model.policy import PlacementPolicy
from placement.model.rackaware import rack_sizes, spread_ok
from placement.solver.rackaware import as_policy, target_counts
from placement.solver.repair import Request


class Cluster:
    """Who is where: racks, the brokers that may keep and may receive replicas."""

    def __init__(self, req: Request) -> None:
        self.inventory, self.drained = req.inventory, req.drained
        self.rack_of = req.inventory.rack_of
        self.members = req.inventory.rack_members()
        self.usable = {b for b, r in self.rack_of.items() if r is not None} - set(req.drained)
        self.receivers = {
            rack: tuple(sorted(b for b in ids if b in self.usable and b not in req.excluded))
            for rack, ids in self.members.items()
        }
        self._fits: dict[tuple[str, ...], bool] = {}

    def held(self, a: PartitionAssignment, rack: str) -> list[int]:
        return [
            b for b in dict.fromkeys(a.replicas) if self.rack_of.get(b) == rack and b in self.usable
        ]

    @cached_property
    def sizes(self) -> dict[str, int]:
        """Brokers per rack that stay in the cluster (the rack-aware rule's racks)."""
        return rack_sizes(self.inventory, self.drained)

    def follows_rule(self, reps: tuple[int, ...], at: list[str | None]) -> bool:
        """Whether a partition of a topic without a policy follows the rack-aware rule:
        every broker usable and distinct, the racks as even as they allow."""
        if not reps or None in at or len(set(reps)) != len(reps):
            return False
        racks = tuple(sorted(r for r in at if r is not None))
        fits = self._fits.get(racks)
        if fits is None:  # a cluster has few patterns of racks
            fits = self._fits[racks] = spread_ok(Counter(racks), self.sizes, len(racks))
        return fits

    def derive(self, key: Key, a: PartitionAssignment) -> PlacementPolicy:
        """The replicas per rack a partition of a topic without a policy gets when it must
        change (`solver.rackaware.target_counts`); exit 1 naming it when none fits."""
        reps = tuple(dict.fromkeys(a.replicas))
        kept: Counter[str] = Counter()
        lost: Counter[str] = Counter()
        holds: Counter[str] = Counter()
        for b in reps:
            r = self.rack_of.get(b)
            if b in self.usable and r is not None:
                kept[r] += 1
            elif r is not None:
                lost[r] += 1
            if r is not None and b in self.receiving:
                holds[r] += 1
        room = {r: len(ids) - holds[r] for r, ids in self.receivers.items()}
        counts = target_counts(len(a.replicas), kept, self.sizes, room, lost)
        if counts is None:
            raise NoSolutionError(
                f"partition {key[0]}-{key[1]} (no placement policy: Kafka's rack-aware "
                f"rule) cannot keep {len(a.replicas)} replicas: the racks that stay offer "
                f"{sum(self.sizes.values())} brokers, {sum(room.values())} of them able to "
                "take a new replica of it, as evenly spread as the rule asks",
                "drain or exclude fewer brokers, add brokers, or lower the topic's "
                "replication factor first",
            )
        return as_policy(counts, self.rack_of.get(a.replicas[0]) if a.replicas else None)

    def current_rule(self, a: PartitionAssignment) -> PlacementPolicy:
        """A valid partition of a topic without a policy, as the policy it meets now."""
        counts = Counter(r for b in dict.fromkeys(a.replicas) if (r := self.rack_of.get(b)))
        return as_policy(counts, self.rack_of.get(a.replicas[0]) if a.replicas else None)

    @cached_property
    def receiving(self) -> frozenset[int]:
        return frozenset(chain.from_iterable(self.receivers.values()))
