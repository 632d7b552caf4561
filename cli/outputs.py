"""What a command did with each output path the user named, on stderr."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from placement.diagnostics.escape import escape
from placement.errors import require

if TYPE_CHECKING:
    from placement.io.outputs import Outcome, Outputs


def report(outputs: Outputs, outcomes: Iterable[Outcome], *, skip: Iterable[str] = ()) -> None:
    """One line per output (``skip``: flags whose "wrote" line the command prints itself),
    after the leftovers of interrupted runs that were cleaned up."""
    skipped = set(skip)
    print_notes(outputs.notes)
    for o in outcomes:
        if not (o.action == "wrote" and o.flag in skipped):
            sys.stderr.write(escape(o.message) + "\n")


def print_notes(notes: Iterable[str]) -> None:
    """``note: ...`` lines on stderr; the notes name paths only, shown escaped."""
    for note in notes:
        sys.stderr.write(f"note: {escape(note)}\n")


def notes_mark() -> int:
    """Where the notes of the outputs a command is about to make begin (see
    :func:`print_unread_notes`). The outputs' module is not loaded for it: a command that
    never loads it has no notes."""
    module = sys.modules.get("placement.io.outputs")
    return 0 if module is None else int(module.notes_mark())


def print_unread_notes(mark: int) -> None:
    """The notes about leftovers of interrupted runs that the command did not print
    itself (it failed, or was interrupted, before it reported its outputs)."""
    module = sys.modules.get("placement.io.outputs")
    if module is not None:
        print_notes(module.unread_notes(mark))


def page_possible(page: object) -> None:
    """Before any work: an HTML page (``page``, the --report path, or None) needs the
    `report` extra; without it the command stops at once, naming it, not after the work."""
    if page is not None:
        require("report", "--report (the page's charts)")
