"""What a command did with each output path the user named, on stderr."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from placement.io.outputs import Outcome, Outputs


def report(outputs: Outputs, outcomes: Iterable[Outcome], *, skip: Iterable[str] = ()) -> None:
    """One line per output (``skip``: flags whose "wrote" line the command prints itself),
    after the leftovers of interrupted runs that were cleaned up."""
    from placement.diagnostics.escape import escape  # the paths: escaped

    skipped = set(skip)
    for note in outputs.notes:
        sys.stderr.write(f"note: {escape(note)}\n")
    for o in outcomes:
        if not (o.action == "wrote" and o.flag in skipped):
            sys.stderr.write(escape(o.message) + "\n")
