"""Findings that repeat one cause, rolled up into one line for the formats a person reads.

A cluster's state repeats a finding per partition (one restarting broker: an MRC904 for
each of its partitions) and a snapshot repeats a policy's findings per topic (6,667 topics
sharing one policy: 6,667 identical MRC503). The `text` and `github` reports show ONE
finding per cause, at its first instance, with how many more there are; GitHub keeps only
10 annotations per level, so the causes must fit. JSON, SARIF and JUnit keep every
instance, and the summary counts every instance.

Same cause, by rule family (always in the same file, with the same code and severity):

- MRC9xx, a partition's state (the message starts with the partition's name):
  MRC901 the same reasons the replicas break the policy; MRC902 the same last ISR;
  MRC903 the same min.insync.replicas and as many in-sync replicas; MRC904 the same
  replica(s) out of the ISR. Another MRC9xx: the same message but for the name.
- Every other rule: the same message, hint and JSON pointer; only what the finding is
  in (its context, e.g. ``topic orders``) and its line differ: one policy shared by
  many topics, or one mistake repeated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from placement.model.diagnostic import Diagnostic

_PARTITION = re.compile(r"^\S+-\d+ ")  # a Kafka topic name has no space
_CAUSE = {
    "MRC901": (re.compile(r"breaks its topic's placement policy: .*", re.S), "same way"),
    "MRC902": (re.compile(r"last ISR [^)]*\)"), "same last ISR"),
    "MRC903": (
        re.compile(r"has \d+ in-sync replica\(s\)|min\.insync\.replicas=\d+"),
        "same in-sync count and min.insync.replicas",
    ),
    "MRC904": (
        re.compile(r"sync replica\(s\) \S+ out of the ISR"),
        "same replica(s) out of the ISR",
    ),
}


class Rolled(NamedTuple):
    """The first finding of a cause, and how many more findings share it."""

    first: Diagnostic
    more: int
    noun: str

    def suffix(self) -> str:
        """What the rolled-up line adds to the first finding's message ("" when alone)."""
        if not self.more:
            return ""
        return f" (and {self.more:,} more {self.noun})"


def cause(d: Diagnostic) -> tuple[object, ...]:
    """What findings of one cause share (see the module's doc)."""
    base = (d.file, d.code, d.severity)
    if d.code.startswith("MRC9") and _PARTITION.match(d.message):
        rest = _PARTITION.sub("", d.message, count=1)
        found = _CAUSE.get(d.code)
        if found is not None:
            return (*base, tuple(found[0].findall(rest)))
        return (*base, rest)
    return (*base, d.message, d.hint, d.pointer)


def _noun(d: Diagnostic, more: int) -> str:
    if d.code.startswith("MRC9") and _PARTITION.match(d.message):
        what = _CAUSE.get(d.code, (None, "same cause"))[1]
        return f"partition{'s' * (more != 1)} with the {what}"
    if d.context and d.context.startswith("topic "):
        return f"topic{'s' * (more != 1)} with the same policy"
    return f"finding{'s' * (more != 1)} with the same message"


def roll_up(diagnostics: Iterable[Diagnostic]) -> list[Rolled]:
    """One `Rolled` per cause, in the order of their first findings."""
    groups: dict[tuple[object, ...], list[Diagnostic]] = {}
    for d in diagnostics:
        groups.setdefault(cause(d), []).append(d)
    return [Rolled(ds[0], len(ds) - 1, _noun(ds[0], len(ds) - 1)) for ds in groups.values()]
