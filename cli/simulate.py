"""`mrc-plan simulate`: what losing a rack or some brokers does to every partition."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypedDict

import typer

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

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from placement.io.inventory import LoadedInventory
    from placement.io.outputs import Outcome, Output, Outputs
    from placement.io.replicastatus import ReplicaStatusRead
    from placement.simulate.failure import BatchStep, SimulateReport, TopicCounts, UncleanPartition
    from placement.simulate.risk import DataAtRisk, PartitionRisk

    # the report, how many partitions went to --unclean-out (None: not asked), the outputs
    Run = tuple[SimulateReport, int | None, list[Outcome]]
    # --unclean-out and --report, each when asked
    Files = tuple[Output | None, Output | None]


class FailureArgs(TypedDict):
    """What fails, after which plan, and the replica status the estimates read: the same
    arguments for either path."""

    fail_rack: str | None
    fail_brokers: list[int] | None
    plan: Path | None
    default_min_isr: int
    assume_in_sync: bool
    replica_status: ReplicaStatusRead | None


class SimFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


# topics listed in the text table; the JSON report has every topic
SHOWN_TOPICS = 20

UNCLEAN_WARNING = (
    "warning: an unclean leader election makes a replica outside the ISR (an observer, or a "
    "replica that fell behind) the leader with whatever it had copied: writes it had not "
    "received are lost, and consumers may see offsets go back. "
    "Run it only when the failed brokers cannot come back soon enough:\n"
    "  kafka-leader-election --bootstrap-server HOST:PORT --election-type UNCLEAN "
    "--path-to-json-file {path}"
)

FailRackOpt = Annotated[
    str | None, typer.Option(help="Take every broker of this rack down.", show_default=False)
]
FailBrokersOpt = Annotated[
    str | None,
    typer.Option(help="Take these brokers down: ids separated by commas.", show_default=False),
]
SnapshotOpt = Annotated[
    Path | None,
    typer.Option(help="Snapshot directory: runs on the Spark stage.", show_default=False),
]
CurrentOpt = Annotated[
    Path | None,
    typer.Option(
        help="Current assignment (reassignment JSON, kafka-topics --describe output, or a "
        "snapshot directory): runs in-process; needs --inventory.",
        show_default=False,
    ),
]
InventoryOpt = Annotated[
    Path | None,
    typer.Option(
        help="Broker inventory: the racks of the brokers (with --current; with "
        "--bootstrap-server, of those that report none) and the KRaft controllers (the "
        "quorum check, with any input).",
        show_default=False,
    ),
]
TopicsOpt = Annotated[
    Path | None,
    typer.Option(
        help="Topics file with each topic's policy and min_isr (with --current; "
        "default: the configs in the describe output or snapshot).",
        show_default=False,
    ),
]
PlanOpt = Annotated[
    Path | None,
    typer.Option(
        help="Apply this reassignment JSON first; or an `assign --out-dir` directory: the "
        "failure before any batch and after each step, worst first (with --current).",
        show_default=False,
    ),
]
MinInsyncReplicasOpt = Annotated[
    int | None,
    typer.Option(
        min=1,
        max=2**31 - 1,
        help="The cluster's min.insync.replicas, for topics that set none of their own "
        "(Kafka's default: 1).",
        show_default=False,
    ),
]
# the old name of --min-insync-replicas: still taken, with a note, and not listed
DefaultMinIsrOpt = Annotated[
    int | None,
    typer.Option(min=1, max=2**31 - 1, hidden=True, help="Now --min-insync-replicas."),
]
ALIAS_NOTE = "note: --default-min-isr is now --min-insync-replicas"
KAFKA_MIN_ISR = 1  # min.insync.replicas when neither the topic nor the cluster sets it


def resolve_min_isr(value: int | None, alias: int | None) -> int:
    """The cluster's min.insync.replicas from --min-insync-replicas or its old name
    --default-min-isr (which prints a note); both with different values: a usage error."""
    if alias is None:
        return KAFKA_MIN_ISR if value is None else value
    if value is not None and value != alias:
        from placement.errors import UsageError

        raise UsageError(
            f"--min-insync-replicas {value} and --default-min-isr {alias} disagree",
            "--default-min-isr is the old name of --min-insync-replicas: give one of them",
        )
    sys.stderr.write(ALIAS_NOTE + "\n")
    return alias


UncleanOutOpt = Annotated[
    Path | None,
    typer.Option(
        help="Write the partitions that only an unclean election onto a replica outside "
        "the ISR can bring back, as kafka-leader-election --path-to-json-file input.",
        show_default=False,
    ),
]
ReplicaStatusOpt = Annotated[
    Path | None,
    typer.Option(
        help="Output of kafka-replica-status (--json, --verbose or the default columns), "
        "taken before the failure: estimate what the unclean elections would truncate, and "
        "list them riskiest first in --unclean-out.",
        show_default=False,
    ),
]
MasterOpt = Annotated[
    str | None,
    typer.Option(help="Spark master for --snapshot (default as for score).", show_default=False),
]
FormatOpt = Annotated[SimFormat, typer.Option(help="text (tables) or json.")]
AssumeInSyncOpt = Annotated[
    bool,
    typer.Option(
        help="Count every sync replica as in the ISR, as if none lagged (default: the ISR "
        "the describe output or snapshot records; reassignment JSON records none)."
    ),
]
ReportOpt = Annotated[
    Path | None,
    typer.Option(
        "--report",
        help="Also write an offline HTML page (FILE.html): outcomes per topic, the "
        "partitions needing an unclean election and, with --replica-status, the data at risk.",
        show_default=False,
    ),
]
ExitZeroOpt = Annotated[
    bool, typer.Option(help="Exit 0 even when partitions go offline or under min ISR.")
]


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

    from placement.io.inventory import load_inventory
    from placement.io.replicastatus import read_replica_status

    from .outputs import page_possible

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
    loaded = load_inventory(inventory) if inventory is not None else None
    status = read_replica_status(str(replica_status)) if replica_status is not None else None
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    failure = FailureArgs(
        fail_rack=fail_rack,
        fail_brokers=ids,
        plan=plan,
        default_min_isr=min_isr,
        assume_in_sync=assume_in_sync,
        replica_status=status,
    )
    if snapshot is not None:
        run = _on_spark(
            snapshot, topics, master, loaded, outputs, (unclean_file, page), err, failure
        )
    else:
        assert given is not None  # _failure_flags: one of the two
        run = _in_process(given, topics, root, loaded, outputs, (unclean_file, page), failure)
    report, written, outcomes = run
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
    from placement.errors import UsageError
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


def _on_spark(
    snapshot: Path,
    topics: Path | None,
    master: str | None,
    loaded: LoadedInventory | None,
    outputs: Outputs,
    files: Files,
    err: Console,
    failure: FailureArgs,
) -> Run:
    """--snapshot: the failure on the Spark stage, its stage shown while it runs."""
    from placement.errors import UsageError
    from placement.simulate.batches import is_directory

    if topics is not None:
        raise UsageError("--topics goes with --current; a snapshot carries its topics' policies")
    if failure["plan"] is not None and is_directory(failure["plan"]):
        raise UsageError(
            "--plan DIR, the steps of a batch directory, runs in-process, not on Spark",
            f"give the snapshot as --current {snapshot} --inventory INV",
        )
    from placement.score.simulate import run_simulate

    unclean, page = files
    with outputs, err.status("simulating") as status:
        report, written = run_simulate(
            snapshot,
            master=master,
            inventory=loaded.inventory if loaded else None,
            unclean_out=unclean.staged() if unclean else None,
            progress=lambda stage: status.update(stage),
            **failure,
        )
        if page is not None:
            status.update("writing the HTML report")
        outcomes = _commit(outputs, files, report, written)
    return report, written, outcomes


def _in_process(
    current: Path | Live,
    topics: Path | None,
    root: Path | None,
    loaded: LoadedInventory | None,
    outputs: Outputs,
    files: Files,
    failure: FailureArgs,
) -> Run:
    """--current (or --bootstrap-server): the failure in process; the unclean partitions
    streamed to the file."""
    from placement.errors import UsageError

    if isinstance(current, Live):
        report, partitions = _live(current, topics, root, loaded, failure)
    elif loaded is None:
        raise UsageError("--current needs --inventory: the racks of the brokers")
    else:
        from placement.simulate.failure import simulate_files

        report, partitions = simulate_files(
            current, loaded, topics=topics, refs_root=root, **failure
        )
    from placement.io.reassignment import write_election_stream

    written = None
    unclean = files[0]
    with outputs:
        if unclean is not None:
            keys = ((u.topic, u.partition) for u in partitions)
            written = write_election_stream(unclean.staged(), keys)
        outcomes = _commit(outputs, files, report, written)
    return report, written, outcomes


def _live(
    live: Live,
    topics: Path | None,
    root: Path | None,
    loaded: LoadedInventory | None,
    failure: FailureArgs,
) -> tuple[SimulateReport, list[UncleanPartition]]:
    """--bootstrap-server: the cluster read once, then simulated exactly as `--current
    SNAPSHOT` is. The in-process engine reads a snapshot directory, so the snapshot goes
    through a private temporary directory (removed after); what names that directory
    names the cluster instead. The racks are --inventory's when given (as with
    --current), else the snapshot's brokers table's (the cluster's, which needs none)."""
    import tempfile

    from placement.io.snapshot import write_snapshot_files
    from placement.plan.inputs import recorded_brokers
    from placement.simulate.failure import simulate_files

    snap = live.read(loaded.inventory if loaded else None, "simulate")
    if loaded is None:
        loaded = recorded_brokers(snap)
    with tempfile.TemporaryDirectory(prefix="mrc-plan-live-") as tmp:
        where = Path(tmp) / "snapshot"
        where.mkdir()
        write_snapshot_files(where, snap)
        with naming(snap, where):
            return simulate_files(where, loaded, topics=topics, refs_root=root, **failure)


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
            err.print(cell(_kafka_picks(at_risk)))
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


def risk_line(r: PartitionRisk, source: str) -> str:
    """One partition's estimate: ``orders-1: 315 offsets at risk electing 10 (...)``."""
    name = f"{r.topic}-{r.partition}"
    elects = ""
    if r.replica is not None and r.kafka_elects != r.replica:
        behind = r.kafka_elects_offsets
        gap = "offsets unknown" if behind is None else f"{behind:,} offsets at risk"
        elects = f"; Kafka elects {r.kafka_elects}, first in replica order: {gap}"
    if not r.listed:
        return f"{name}: no estimate, not in {source}; Kafka elects {r.kafka_elects}"
    if r.replica is None:
        return (
            f"{name}: no estimate, {source} shows no offset for its surviving replicas; "
            f"Kafka elects {r.kafka_elects}"
        )
    lag = "lag unknown" if r.lag_ms is None else f"caught up {r.lag_ms:,} ms before the status"
    offsets = "offsets at risk unknown" if r.offsets is None else f"{r.offsets:,} offsets at risk"
    return f"{name}: {offsets} electing {r.replica}, the most caught up ({lag}){elects}"


def _kafka_picks(at_risk: DataAtRisk) -> str:
    """Which replica Kafka elects, and how many partitions it would elect a worse one for."""
    worse = sum(
        1
        for r in at_risk.partitions
        if r.replica is not None
        and r.kafka_elects != r.replica
        and (r.kafka_elects_offsets is None or r.kafka_elects_offsets > (r.offsets or 0))
    )
    text = (
        "note: Kafka picks the new leader itself: an unclean election elects the first live "
        "replica in the partition's replica order, not the most caught-up one the estimates "
        f"name (estimates from {at_risk.replica_status}, taken before the failure)"
    )
    if worse:
        text += (
            f'; for {worse:,} partition(s) that replica is further behind ("Kafka elects" '
            "above): bring the failed brokers back, or reorder the replicas so that the most "
            "caught-up one comes first, before electing"
        )
    return text


def _ids(ids: list[int], limit: int = 12) -> str:
    shown = ", ".join(map(str, ids[:limit]))
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _survivors(u: UncleanPartition) -> str:
    """The replicas an unclean election can elect: ``observers 5, 6; out of sync 7``."""
    parts = []
    if u.observers:
        parts.append(f"observers {_ids(u.observers)}")
    if u.lagging:
        parts.append(f"out of sync {_ids(u.lagging)}")
    return "; ".join(parts)


def _isr_line(report: SimulateReport) -> str:
    """What the ISR was taken to be, and what was failing before the failure."""
    t = report.totals
    if report.isr == "assumed":
        basis = "ISR assumed: every sync replica counts as in sync (--assume-in-sync)"
    elif t.isr_unknown == t.partitions:
        basis = "no ISR recorded: every sync replica counts as in sync"
    elif t.isr_unknown:
        basis = (
            f"ISR as recorded; {t.isr_unknown:,} partition(s) have none recorded: their sync "
            "replicas count as in sync"
        )
    else:
        basis = "ISR as recorded"
    return (
        f"{basis}\nbefore the failure (no broker down): {t.offline_before:,} offline, "
        f"{t.under_min_isr_before:,} under min ISR; the failure breaks {t.broken:,} more"
    )


def _render_risk(console: Console, at_risk: DataAtRisk) -> None:
    """The data at risk per topic (most offsets first), and the riskiest partitions."""
    from rich.table import Table

    from .render import cell

    t = at_risk.totals
    if not t.partitions:
        return
    table = Table(
        title=cell(f"data at risk in an unclean election, estimated from {at_risk.replica_status}"),
        title_justify="left",
    )
    table.add_column("topic")
    for col in ("partitions", "offsets at risk", "max lag (ms)", "no estimate"):
        table.add_column(col, justify="right")
    topics = sorted(at_risk.topics, key=lambda x: (-x.offsets, x.topic))
    console.print()
    for x in topics[:SHOWN_TOPICS]:
        table.add_row(
            cell(x.topic),
            f"{x.partitions:,}",
            f"{x.offsets:,}",
            "unknown" if x.max_lag_ms is None else f"{x.max_lag_ms:,}",
            f"{x.unknown:,}",
        )
    console.print(table)
    if len(topics) > SHOWN_TOPICS:
        console.print(f"… and {len(topics) - SHOWN_TOPICS:,} more topics (--format json)")
    console.print("riskiest first:")
    for r in at_risk.partitions[:10]:
        console.print(cell(f"  {risk_line(r, at_risk.replica_status)}"))


def _step_line(s: BatchStep) -> str:
    t = s.totals
    risk = "" if s.data_at_risk is None else f", {s.data_at_risk.offsets:,} offsets at risk"
    return (
        f"{t.offline:,} offline, {t.under_min_isr:,} under min ISR, {t.promoted:,} promoted{risk}"
    )


def _render_steps(console: Console, steps: list[BatchStep]) -> None:
    """The steps of a batch directory, worst first; the state before any batch and after
    the last; why a batch in flight needs no row; then what follows is the last step."""
    from rich.table import Table

    from .render import cell

    table = Table(
        title=f"{len(steps):,} steps, worst first (each with the steps before it completed)",
        title_justify="left",
    )
    table.add_column("step")
    risk = steps[0].data_at_risk is not None
    heads = ["order", "reassigned", "available", "promoted", "under min ISR", "offline"]
    for col in [*heads, "unclean", "lost", *(["offsets at risk"] if risk else [])]:
        table.add_column(col, justify="right")
    for s in steps[:SHOWN_TOPICS]:
        t = s.totals
        values = [s.order, s.reassigned, t.available, t.promoted, t.under_min_isr, t.offline]
        values += [t.unclean, t.lost, *([s.data_at_risk.offsets] if s.data_at_risk else [])]
        table.add_row(cell(s.step), *(f"{v:,}" for v in values))
    console.print(table)
    if len(steps) > SHOWN_TOPICS:
        console.print(f"… and {len(steps) - SHOWN_TOPICS:,} more steps (--format json)")
    by_order = sorted(steps, key=lambda s: s.order)
    first, last = by_order[0], by_order[-1]
    console.print(
        cell(
            f"before any batch: {_step_line(first)}; after the last step ({last.step}): "
            f"{_step_line(last)}; worst: {steps[0].step}"
        )
    )
    console.print(
        "a batch in flight keeps its old in-sync replicas until it completes: a failure "
        "then is no worse than at the step before it",
        markup=False,
    )
    console.print()
    console.print(cell(f"after the last step ({last.step}):"))


def render(report: SimulateReport) -> None:
    from rich.console import Console
    from rich.table import Table

    from placement.simulate.failure import worse_first

    from .render import cell  # rack, topic and plan names: escaped, no markup

    # a pipe or a file gets whole rows, a terminal its own width
    console = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
    f = report.failure
    after = f", after {report.plan}" if report.plan else ""
    if report.batches:
        after = f", at each step of {report.plan}"
    if f.rack is not None:
        console.print(cell(f'rack "{f.rack}" down: brokers {_ids(f.brokers)}{after}'))
    else:
        console.print(cell(f"brokers {_ids(f.brokers)} down{after}"))
    if report.batches:
        _render_steps(console, report.batches)
    t = report.totals
    table = Table(title=f"{t.partitions:,} partitions", title_justify="left")
    for col in ("available", "promoted", "under min ISR", "offline", "unclean", "lost"):
        table.add_column(col, justify="right")
    table.add_row(
        *(
            f"{v:,}"
            for v in (t.available, t.promoted, t.under_min_isr, t.offline, t.unclean, t.lost)
        )
    )
    console.print(table)
    console.print(_isr_line(report))
    hit = [x for x in report.topics if x.partitions != x.available]
    hit.sort(key=lambda x: (*worse_first(x), x.topic))
    if hit:
        console.print(_affected(report, hit))
        if len(hit) > SHOWN_TOPICS:
            console.print(f"… and {len(hit) - SHOWN_TOPICS:,} more topics (--format json)")
    else:
        console.print("every partition stays available")
    if report.unclean_sample:
        console.print(
            f"\nonly an unclean election onto a replica outside the ISR brings back "
            f"{t.unclean:,} partition(s) (--unclean-out writes them all), e.g.:"
        )
        for u in report.unclean_sample[:10]:
            console.print(cell(f"  {u.topic}-{u.partition}: {_survivors(u)}"))
    if report.data_at_risk is not None:
        _render_risk(console, report.data_at_risk)
    q = report.quorum
    if q is not None:
        state = "kept" if q.kept else "LOST"
        console.print(
            f"\nKRaft quorum {state}: {q.surviving} of {q.controllers} controllers survive "
            f"(majority {q.majority})"
        )
        if not q.kept:
            console.print(
                "without a quorum no leader election, ISR change or observer promotion "
                "happens: partitions led from the failed brokers stay offline, and the "
                "promotions counted above wait, until the quorum is rebuilt",
                markup=False,
            )


def _affected(report: SimulateReport, hit: list[TopicCounts]) -> Table:
    """The table of the topics ``hit``, worst first (the first `SHOWN_TOPICS`)."""
    from rich.table import Table
    from rich.text import Text

    from .render import cell

    per = Table(title="topics affected, worst first", title_justify="left")
    for col in ("topic", "policy", "min ISR", "partitions", "promoted", "under min ISR"):
        per.add_column(col, justify="left" if col in ("topic", "policy") else "right")
    per.add_column("offline (unclean/lost)", justify="right")
    before = report.writes_failed_before > 0
    if before:
        per.add_column("failing before", justify="right")
    for x in hit[:SHOWN_TOPICS]:
        row: list[str | Text] = [
            cell(x.topic),
            cell(x.policy),
            str(x.min_isr),
            f"{x.partitions:,}",
            f"{x.promoted:,}",
            f"{x.under_min_isr:,}",
            f"{x.offline:,} ({x.unclean:,}/{x.lost:,})",
        ]
        if before:
            row.append(f"{x.offline_before + x.under_min_isr_before:,}")
        per.add_row(*row)
    return per
