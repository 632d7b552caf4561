"""Partition assignments: which brokers hold each partition, sync replicas first
(docs/formats.md, reassignment JSON)."""

from __future__ import annotations

from dataclasses import dataclass

Key = tuple[str, int]  # (topic, partition): how every plan and state is indexed


@dataclass(frozen=True, slots=True, order=True)
class PartitionAssignment:
    """One partition's replica list; ``observers`` is a suffix of ``replicas``."""

    topic: str
    partition: int
    replicas: tuple[int, ...]
    observers: tuple[int, ...] = ()

    @property
    def sync(self) -> tuple[int, ...]:
        return self.replicas[: len(self.replicas) - len(self.observers)]

    @property
    def key(self) -> Key:
        return (self.topic, self.partition)

    def with_broker(self, old: int, new: int) -> PartitionAssignment:
        """The same partition with broker ``old`` replaced by ``new`` in the same position
        (its role kept: leader, follower or observer)."""
        return PartitionAssignment(
            self.topic,
            self.partition,
            tuple(new if b == old else b for b in self.replicas),
            tuple(new if b == old else b for b in self.observers),
        )

    @property
    def leader(self) -> int | None:
        """The preferred leader: the first replica."""
        return self.replicas[0] if self.replicas else None
