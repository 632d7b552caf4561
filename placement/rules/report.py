"""MRC8xx: about the report itself, not about a policy."""

from __future__ import annotations

from placement.model.diagnostic import Severity
from placement.rules.base import Rule


class TooManyFindings(Rule):
    """A file has more findings than the report shows; the rest are counted, not listed.

    What it does: after the first findings of a file (errors first, then warnings; 100 by
    default, `MRC_PLAN_MAX_DIAGNOSTICS_PER_FILE` sets the cap), adds this one note saying
    how many more errors and warnings were left out. It sits where the first one left out
    is. The file's verdict is unchanged: an error left out still fails the file, because
    errors are always listed first.

    Why: a generated or corrupted file can hold hundreds of thousands of identical
    mistakes; listing them all buries the first one and can take minutes to print.

    Example: `{"version": 2, "replicas": [1, 1, 1, ... 500000 times]}`.

    Fix: fix the findings that are listed and validate again; or check where the file
    came from.
    """

    code = "MRC801"
    name = "too-many-findings"
    severity = Severity.WARNING
