"""`mrc-plan simulate`: what losing a rack or some brokers does to every partition.

The flags map to the library's `SimulateRequest` (placement/simulate/front.py), run by
`placement.score.front.simulate` (Spark for --snapshot, in process otherwise). The
options are declared in cli/simulate_options.py, the text report is in
cli/simulate_text.py.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from placement.errors import UsageError

from .assign_options import RootOption
from .cluster_options import (
    BootstrapOpt,
    CommandConfigOpt,
    Live,
    SkipUnauthorizedOpt,
    TimeoutOpt,
    naming,
)
from .errors import EXIT_FINDINGS, EXIT_OK, handle_errors
from .outputs import page_possible
from .simulate_options import (
    AssumeInSyncOpt,
    CurrentOpt,
    DefaultMinIsrOpt,
    ExitZeroOpt,
    FailBrokersOpt,
    FailRackOpt,
    FormatOpt,
    InventoryOpt,
    MasterOpt,
    MinInsyncReplicasOpt,
    PlanOpt,
    ReplicaStatusOpt,
    ReportOpt,
    SimFormat,
    SnapshotOpt,
    TopicsOpt,
    UncleanOutOpt,
    resolve_min_isr,
)
from .simulate_text import kafka_picks, render, risk_line

if TYPE_CHECKING:
    from rich.console import Console

    from placement.io.outputs import Outcome, Output, Outputs
    from placement.simulate.failure import SimulateReport
    from placement.simulate.front import SimulateRequest, SimulateResult
    from placement.simulate.risk import DataAtRisk

    # the report, how many partitions went to --unclean-out (None: not asked), the outputs
    Run = tuple[SimulateReport, int | None, list[Outcome]]
    # --unclean-out and --report, each when asked
    Files = tuple[Output | None, Output | None]


UNCLEAN_WARNING = (
    "warning: an unclean leader election makes a replica outside the ISR (an observer, or a "
    "replica that fell behind) the leader with whatever it had copied: writes it had not "
    "received are lost, and consumers may see offsets go back. "
    "Run it only when the failed brokers cannot come back soon enough:\n"
    "  kafka-leader-election --bootstrap-server HOST:PORT --election-type UNCLEAN "
    "--path-to-json-file {path}"
)


@handle_errors
def simulate(
    fail_rack: FailRackOpt = None,
    fail_brokers: FailBrokersOpt = None,
    snapshot: SnapshotOpt = None,
    current: CurrentOpt = None,
    bootstrap_server: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    timeout: TimeoutOpt = None,
    skip_unauthorized: SkipUnauthorizedOpt = False,
    inventory: InventoryOpt = None,
    topics: TopicsOpt = None,
    root: RootOption = None,
    plan: PlanOpt = None,
    min_insync_replicas: MinInsyncReplicasOpt = None,
    default_min_isr: DefaultMinIsrOpt = None,
    assume_in_sync: AssumeInSyncOpt = False,
    unclean_out: UncleanOutOpt = None,
    replica_status: ReplicaStatusOpt = None,
    master: MasterOpt = None,
    format: FormatOpt = SimFormat.TEXT,
    html: ReportOpt = None,
    exit_zero: ExitZeroOpt = False,
) -> None:
    """Apply a rack or broker failure to every partition (after --plan, when given).

    Each partition is available (enough sync replicas survive for min ISR), promoted
    (v2 under-min-isr/under-replicated observers join the ISR), under min ISR (acks=all
    writes fail) or offline (no replica in the ISR survives: an unclean election onto a
    surviving replica outside it, with possible data loss, or nothing left at all). A
    surviving replica counts as in sync when the recorded ISR lists it (every sync replica
    with --assume-in-sync, or where no ISR is recorded); partitions already offline or
    under min ISR before the failure are counted apart from those it breaks. With
    --replica-status, each partition needing an unclean election gets an estimate of what
    electing its most caught-up surviving replica would truncate. With --plan DIR (batches
    written by `assign --out-dir`) the failure is also applied before any batch and after
    each step, worst step first; the rest of the report is the state after the last.

    Exits 1 when any partition goes offline or under min ISR (at any step of --plan DIR),
    or the KRaft quorum is lost.
    """
    from rich.console import Console

    from placement.simulate.front import SimulateRequest, check

    min_isr = resolve_min_isr(min_insync_replicas, default_min_isr)
    live = Live(bootstrap_server, command_config, timeout, skip_unauthorized)
    live.check(("--current", current), ("--snapshot", snapshot))
    given = live if live.bootstrap is not None else current
    ids = _failure_flags(fail_rack, fail_brokers, snapshot, given, root, topics)
    outputs, unclean_file = _outputs(
        unclean_out, snapshot, current, inventory, topics, plan, replica_status, command_config
    )
    page_possible(html)
    page = outputs.add("--report", html) if html is not None else None
    request = SimulateRequest(
        fail_rack,
        ids,
        snapshot,
        current,
        inventory,
        topics,
        root,
        plan,
        min_isr,
        assume_in_sync,
        replica_status,
        master,
    )
    request = check(request)  # the inventory and replica status read, before any work
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    if snapshot is not None:
        report, written, outcomes = _on_spark(request, outputs, (unclean_file, page), err)
    else:
        assert given is not None  # _failure_flags: one of the two
        report, written, outcomes = _in_process(given, request, outputs, (unclean_file, page))
    _show(report, format, err)
    _say_outputs(err, outputs, outcomes, written, unclean_out, report, page is not None)
    raise typer.Exit(EXIT_FINDINGS if report.failed and not exit_zero else EXIT_OK)


def _failure_flags(
    fail_rack: str | None,
    fail_brokers: str | None,
    snapshot: Path | None,
    current: Path | Live | None,
    root: Path | None,
    topics: Path | None,
) -> list[int] | None:
    """One cluster and one failure; --root only with --topics. The ids of --fail-brokers.
    ``current``: --current, or the live cluster to read in its place."""
    from placement.simulate.failure import parse_ids

    ids = parse_ids(fail_brokers) if fail_brokers is not None else None
    if (snapshot is None) == (current is None):
        raise UsageError(
            "give the cluster as --snapshot DIR, as --current FILE --inventory INV, or as "
            "--bootstrap-server HOST:PORT"
        )
    if (fail_rack is None) == (ids is None):
        raise UsageError("name one failure: --fail-rack NAME or --fail-brokers IDS")
    if root is not None and topics is None:
        raise UsageError("--root goes with --topics: the directory its placement files are in")
    return ids


def _on_spark(request: SimulateRequest, outputs: Outputs, files: Files, err: Console) -> Run:
    """--snapshot: the failure on the Spark stage, its stage shown while it runs; the
    unclean partitions streamed to the file as they come back."""
    from placement.score.front import simulate

    unclean, page = files
    with outputs, err.status("simulating") as status:
        result = simulate(
            replace(
                request,
                unclean_out=unclean.staged() if unclean else None,
                progress=lambda stage: status.update(stage),
            )
        )
        if page is not None:
            status.update("writing the HTML report")
        outcomes = _commit(outputs, files, result.report, result.written)
    return result.report, result.written, outcomes


def _in_process(
    current: Path | Live, request: SimulateRequest, outputs: Outputs, files: Files
) -> Run:
    """--current (or --bootstrap-server): the failure in process; the unclean partitions
    then written to the file."""
    from placement.simulate.front import run_in_process

    result = _live(current, request) if isinstance(current, Live) else run_in_process(request)
    written = None
    unclean = files[0]
    with outputs:
        if unclean is not None:
            written = result.write_unclean(unclean.staged())
        outcomes = _commit(outputs, files, result.report, written)
    return result.report, written, outcomes


def _live(live: Live, request: SimulateRequest) -> SimulateResult:
    """--bootstrap-server: the cluster read once, then simulated exactly as `--current
    SNAPSHOT` is. The in-process engine reads a snapshot directory, so the snapshot goes
    through a private temporary directory (removed after); what names that directory
    names the cluster instead. The racks are --inventory's when given (as with
    --current), else the snapshot's brokers table's (the cluster's, which needs none)."""
    import tempfile

    from placement.io.snapshot import write_snapshot_files
    from placement.plan.inputs import recorded_brokers
    from placement.simulate.front import run_in_process

    loaded = request.loaded
    snap = live.read(loaded.inventory if loaded else None, "simulate")
    if loaded is None:
        loaded = recorded_brokers(snap)
    with tempfile.TemporaryDirectory(prefix="mrc-plan-live-") as tmp:
        where = Path(tmp) / "snapshot"
        where.mkdir()
        write_snapshot_files(where, snap)
        with naming(snap, where):
            return run_in_process(replace(request, current=where, inventory=loaded))


def _show(report: SimulateReport, format: SimFormat, err: Console) -> None:
    """The report on stdout, after any assumption it rests on on stderr."""
    from placement.diagnostics.jsonout import report_json

    from .render import cell  # names: escaped, no markup

    unknown_rack = report.unknown_rack_note()
    if unknown_rack is not None:  # an assumption the numbers rest on: said, not hidden
        err.print(cell(unknown_rack))
    if format is SimFormat.JSON:
        sys.stdout.write(report_json(report))
    else:
        render(report)


def _say_outputs(
    err: Console,
    outputs: Outputs,
    outcomes: list[Outcome],
    written: int | None,
    unclean_out: Path | None,
    report: SimulateReport,
    page: bool,
) -> None:
    """On stderr, what went to --unclean-out (``written`` partitions; None: not asked),
    then, with a --report ``page``, the outputs' notes (unless said already) and where the
    page went."""
    if written is not None:
        unclean = [o for o in outcomes if o.flag == "--unclean-out"]
        _say_unclean(err, outputs, unclean, written, unclean_out, report.data_at_risk)
    if page:
        from .render import cell

        if written is None:
            for note in outputs.notes:
                err.print(cell(f"note: {note}"))
        for o in outcomes:
            if o.flag == "--report":
                err.print(cell(o.message))


def _say_unclean(
    err: Console,
    outputs: Outputs,
    outcomes: list[Outcome],
    written: int,
    path: Path | None,
    at_risk: DataAtRisk | None,
) -> None:
    """What went to --unclean-out, with the warning an unclean election deserves (and,
    with --replica-status, the estimates beside the first partitions, and which replica
    Kafka would elect)."""
    from placement.simulate.failure import SAMPLE

    from .render import cell, safe  # paths: escaped, no markup

    for note in outputs.notes:
        err.print(cell(f"note: {note}"))
    if written:
        if at_risk is None:
            err.print(cell(f"wrote {path}: {written:,} partition(s)"))
        else:
            err.print(cell(f"wrote {path}: {written:,} partition(s), riskiest first:"))
            for r in at_risk.partitions[:SAMPLE]:
                err.print(cell(f"  {risk_line(r, at_risk.replica_status)}"))
            if written > SAMPLE:
                err.print(f"  … and {written - SAMPLE:,} more (--format json lists them all)")
        err.print(UNCLEAN_WARNING.format(path=safe(path)), markup=False, emoji=False)
        if at_risk is not None:
            err.print(cell(kafka_picks(at_risk)))
    else:
        err.print("no partition needs an unclean election", markup=False)
        for o in outcomes:  # a file from an earlier run is removed, and this says so
            err.print(cell(o.message))


def _outputs(unclean_out: Path | None, *inputs: Path | None) -> tuple[Outputs, Output | None]:
    """--unclean-out, checked before any work: not an input, its directory writable."""
    from placement.io.outputs import Outputs

    flags = (
        *("--snapshot", "--current", "--inventory", "--topics", "--plan", "--replica-status"),
        "--command-config",
    )
    outputs = Outputs.of(zip(flags, inputs, strict=True))
    return outputs, outputs.add("--unclean-out", unclean_out) if unclean_out else None


def _commit(
    outputs: Outputs, files: Files, report: SimulateReport, written: int | None
) -> list[Outcome]:
    """The page drawn, then all or nothing; with no unclean partition, no file is left at
    --unclean-out."""
    unclean, page = files
    if page is not None:
        from placement.html.simulate import render_simulate

        page.write(render_simulate(report))
    if unclean is not None and not written:
        unclean.nothing()
    return outputs.commit()
