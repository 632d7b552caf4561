"""The lines `assign` prints before its summary when the cluster is already degraded: what
is under-replicated, under min ISR or offline, rolled up by broker and by topic
(placement/plan/degraded.py), so one restarting broker reads as one line, not one per
partition."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .render import cell

if TYPE_CHECKING:
    from placement.plan.degraded import Degraded, DegradedBroker, DegradedTopic

_Row = TypeVar("_Row")

BROKERS_SHOWN = 10
TOPICS_SHOWN = 5


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _causes(d: Degraded) -> str:
    """The causes present, the first naming the unit: `34 partitions under-replicated,
    3 under min ISR, 1 offline (no leader)`."""
    causes = [
        (n, what)
        for n, what in (
            (d.under_replicated, "under-replicated"),
            (d.under_min_isr, "under min ISR"),
            (d.offline, "offline (no leader)"),
        )
        if n
    ]
    (n, what), rest = causes[0], causes[1:]
    return ", ".join([f"{_count(n, 'partition')} {what}"] + [f"{m:,} {w}" for m, w in rest])


def _broker(b: DegradedBroker) -> str:
    parts = []
    if b.missing_from_isr:
        parts.append("is missing from " + _count(b.missing_from_isr, "ISR"))
    if b.offline_hosted:
        parts.append("hosts " + _count(b.offline_hosted, "offline partition"))
    return f"  broker {b.broker} " + " and ".join(parts)


def _topic(t: DegradedTopic) -> str:
    parts = [
        f"{n:,} {what}"
        for n, what in (
            (t.under_replicated, "under-replicated"),
            (t.under_min_isr, "under min ISR"),
            (t.offline, "offline"),
        )
        if n
    ]
    return f"  topic {t.topic}: " + ", ".join(parts)


def print_degraded(console: Any, degraded: Degraded | None) -> None:
    """One line of what is degraded, then the brokers (most first, at most BROKERS_SHOWN)
    and the topics (at most TOPICS_SHOWN). Nothing when nothing is degraded or nothing
    was recorded. Topic names are untrusted: printed through `cell`."""
    if degraded is None or not degraded.any:
        return
    console.print(cell(f"degraded before the plan: {_causes(degraded)}"))
    _capped(console, degraded.brokers, BROKERS_SHOWN, _broker, "broker")
    _capped(console, degraded.topics, TOPICS_SHOWN, _topic, "topic")


def _capped(
    console: Any, rows: Sequence[_Row], shown: int, line: Callable[[_Row], str], noun: str
) -> None:
    for row in rows[:shown]:
        console.print(cell(line(row)))
    if len(rows) > shown:
        console.print(cell(f"  and {_count(len(rows) - shown, 'more ' + noun)}"))
