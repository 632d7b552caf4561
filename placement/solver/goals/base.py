"""What a goal is: the unit of `assign`'s goal order (`placement.solver.goals.GOALS`).

A goal declares its stable id, whether it is hard (a plan that misses it is never written)
or soft (ranked: a lower goal is only pursued among the plans best for every goal above
it), what it measures before and after a plan, its lower bound, what it contributes to the
per-rack flow or to the passes after it, and the figures the summary reports for it.
Every measure is a count where lower is better, so "a goal may not make a higher one
worse" reads: with a lower goal pursued, no higher goal's measure grows.

The measures here count from the partitions themselves, one plain pass each: they are
the definitions, written for reading and for the tests. The planner and the summary
count the same figures at C speed elsewhere (`placement.plan.balance`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from placement.model.assignment import Key, PartitionAssignment
from placement.model.inventory import Inventory
from placement.model.policy import PlacementPolicy


@dataclass(frozen=True)
class Figure:
    """One entry of the summary's `goals` list: its `name` there (the key the JSON summary,
    the text summary and the HTML page use), and what it measures in a sentence (the
    HTML page's tooltip)."""

    name: str
    about: str


@dataclass(frozen=True)
class Stats:
    """A goal's measure before and after a plan; None: not measured (not asked for, or no
    figure before a plan, such as the replicas it adds)."""

    before: int | None
    after: int | None


@dataclass(frozen=True)
class Measured:
    """What a goal is measured on: the cluster before and after a plan (every partition,
    by key), the brokers and the rules, and what the request asked."""

    inventory: Inventory
    # each topic's rule; a topic absent here follows Kafka's rack-aware rule
    policies: Mapping[str, PlacementPolicy]
    before: Mapping[Key, PartitionAssignment]
    after: Mapping[Key, PartitionAssignment]
    drained: frozenset[int] = frozenset()
    excluded: frozenset[int] = frozenset()
    sizes: Mapping[Key, int] = field(default_factory=dict)
    caps: Mapping[int, int] = field(default_factory=dict)  # usable disk bytes per broker

    @classmethod
    def of_plan(
        cls,
        inventory: Inventory,
        policies: Mapping[str, PlacementPolicy],
        before: Mapping[Key, PartitionAssignment],
        plan: Iterable[PartitionAssignment],
        *,
        drained: frozenset[int] = frozenset(),
        excluded: frozenset[int] = frozenset(),
        sizes: Mapping[Key, int] | None = None,
        caps: Mapping[int, int] | None = None,
    ) -> Measured:
        """``before`` with the partitions ``plan`` changes (or creates) replaced."""
        after = dict(before)
        after.update((a.key, a) for a in plan)
        return cls(inventory, policies, before, after, drained, excluded, sizes or {}, caps or {})

    def members(self) -> dict[str, list[int]]:
        """rack -> its brokers that count for balance: neither drained nor excluded (as
        the summary's per-rack figures count them)."""
        out: dict[str, list[int]] = {}
        for b in self.inventory.brokers:
            if b.rack is not None and b.id not in self.drained | self.excluded:
                out.setdefault(b.rack, []).append(b.id)
        return out

    def changed(self) -> list[Key]:
        """The partitions the plan changes or creates, by key."""
        return sorted(k for k, a in self.after.items() if self.before.get(k) != a)


def spread(counts: Mapping[int, int], ids: Sequence[int]) -> int:
    """max - min of ``counts`` over ``ids`` (a broker absent counts 0; 0 for none)."""
    values = [counts.get(b, 0) for b in ids]
    return max(values) - min(values) if values else 0


def worst(counts: Mapping[int, int], racks: Iterable[Sequence[int]]) -> int:
    """The worst rack's spread of ``counts``."""
    return max((spread(counts, ids) for ids in racks), default=0)


def replicas_per_broker(state: Mapping[Key, PartitionAssignment]) -> Counter[int]:
    return Counter(b for a in state.values() for b in a.replicas)


def leaders_per_broker(state: Mapping[Key, PartitionAssignment]) -> Counter[int]:
    return Counter(a.replicas[0] for a in state.values() if a.replicas)


class Goal(ABC):
    """One goal of the order. A subclass per goal, one instance in `GOALS`."""

    id: ClassVar[str]  # stable: the goal's name in code, docs and tests
    hard: ClassVar[bool]
    title: ClassVar[str]  # a few words, as the docs' goal list names it
    measures: ClassVar[str]  # what `measure` counts, in a sentence
    lower_bound: ClassVar[str]  # no plan does better: how the bound is found, or "none"
    contributes: ClassVar[str]  # what it adds to the per-rack flow or the passes after it
    where: ClassVar[tuple[str, ...]]  # the modules that pursue it, from the repository root
    figures: ClassVar[tuple[Figure, ...]] = ()  # what the summary reports for it
    # the summary lists this goal's figures right after those of the goal with this id
    # rather than at its place in the order (how the summary has always listed them)
    reported_after: ClassVar[str | None] = None

    @abstractmethod
    def measure(self, m: Measured) -> Stats:
        """The goal's count before and after the plan (lower is better)."""

    def __repr__(self) -> str:
        return f"<goal {self.id}>"
