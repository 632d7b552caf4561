"""`validate` as one call: a request of what to check and against what, in; the report of
every finding, and the notes that are no finding, out.

The CLI maps its flags to a `ValidateRequest`, calls `run`, and renders the report in the
format asked for (the reporters of `placement.diagnostics`, or its own text); nothing here
prints or writes a file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from placement.io.inventory import inventory_for_checks
from placement.model.diagnostic import build_report
from placement.rules import validate  # validate.validate_paths: tests replace it

if TYPE_CHECKING:  # the models load with the checks, not with `import placement`
    from placement.io.snapshot import Snapshot
    from placement.model.diagnostic import ValidationReport
    from placement.model.shapes import InventoryLike


@dataclass(frozen=True)
class ValidateRequest:
    """What `mrc-plan validate` is asked, flags already parsed. ``cluster``: reads a live
    cluster's snapshot, given the inventory's brokers (the racks of brokers reporting
    none); it is called once the inventory is read, before any file is checked."""

    paths: Sequence[Path] = ()
    inventory: Path | None = None
    min_insync_replicas: int | None = None
    ibp: str | None = None  # as --ibp takes it, e.g. 3.2 or 3.3-IV3
    strict: bool = False  # warnings fail too
    cluster: Callable[[InventoryLike | None], Snapshot] | None = None
    tool_version: str = ""  # what the report says made it


@dataclass(frozen=True)
class ValidateResult:
    report: ValidationReport
    # what the user should know but is no finding (paths of a directory left unchecked)
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """A file has an error (or a warning, with ``strict``)."""
        return self.report.failed


def run(request: ValidateRequest) -> ValidateResult:
    """Read the inventory, parse the IBP, read the live cluster if asked, check every
    file under the paths. Unreadable inputs raise (`placement.errors`)."""
    inventory = request.inventory
    options = validate.ValidateOptions(
        inventory=inventory_for_checks(inventory) if inventory is not None else None,
        min_insync_replicas=request.min_insync_replicas,
        ibp=validate.parse_ibp(request.ibp) if request.ibp is not None else None,
    )
    notes: list[str] = []
    clusters = []
    if request.cluster is not None:
        racks = options.inventory.inventory if options.inventory is not None else None
        clusters.append(request.cluster(racks))
    findings = validate.validate_paths(request.paths, options, notes=notes, clusters=clusters)
    report = build_report(findings, strict=request.strict, tool_version=request.tool_version)
    return ValidateResult(report, notes)
