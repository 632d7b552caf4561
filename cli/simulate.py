"""`mrc-plan simulate`: what losing a rack or some brokers does to every partition."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .assign import RootOption
from .errors import EXIT_FINDINGS, EXIT_OK, handle_errors

if TYPE_CHECKING:
    from placement.io.outputs import Outcome, Output, Outputs
    from placement.simulate.failure import SimulateReport


class SimFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


# topics listed in the text table; the JSON report has every topic
SHOWN_TOPICS = 20

UNCLEAN_WARNING = (
    "warning: an unclean leader election makes an observer the leader with whatever it had "
    "copied: writes it had not received are lost, and consumers may see offsets go back. "
    "Run it only when the failed brokers cannot come back soon enough:\n"
    "  kafka-leader-election --bootstrap-server HOST:PORT --election-type UNCLEAN "
    "--path-to-json-file {path}"
)


@handle_errors
def simulate(
    fail_rack: Annotated[
        str | None, typer.Option(help="Take every broker of this rack down.", show_default=False)
    ] = None,
    fail_brokers: Annotated[
        str | None,
        typer.Option(help="Take these brokers down: ids separated by commas.", show_default=False),
    ] = None,
    snapshot: Annotated[
        Path | None,
        typer.Option(help="Snapshot directory: runs on the Spark stage.", show_default=False),
    ] = None,
    current: Annotated[
        Path | None,
        typer.Option(
            help="Current assignment (reassignment JSON, kafka-topics --describe output, or a "
            "snapshot directory): runs in-process; needs --inventory.",
            show_default=False,
        ),
    ] = None,
    inventory: Annotated[
        Path | None,
        typer.Option(
            help="Broker inventory: the racks of the brokers (with --current) and the KRaft "
            "controllers (the quorum check, with either input).",
            show_default=False,
        ),
    ] = None,
    topics: Annotated[
        Path | None,
        typer.Option(
            help="Topics file with each topic's policy and min_isr (with --current; "
            "default: the configs in the describe output or snapshot).",
            show_default=False,
        ),
    ] = None,
    root: RootOption = None,
    plan: Annotated[
        Path | None,
        typer.Option(help="Apply this reassignment JSON first.", show_default=False),
    ] = None,
    default_min_isr: Annotated[
        int,
        typer.Option(min=1, max=2**31 - 1, help="min.insync.replicas for topics that set none."),
    ] = 1,
    unclean_out: Annotated[
        Path | None,
        typer.Option(
            help="Write the partitions that only an unclean election onto an observer can "
            "bring back, as kafka-leader-election --path-to-json-file input.",
            show_default=False,
        ),
    ] = None,
    master: Annotated[
        str | None,
        typer.Option(
            help="Spark master for --snapshot (default as for score).", show_default=False
        ),
    ] = None,
    format: Annotated[SimFormat, typer.Option(help="text (tables) or json.")] = SimFormat.TEXT,
    exit_zero: Annotated[
        bool, typer.Option(help="Exit 0 even when partitions go offline or under min ISR.")
    ] = False,
) -> None:
    """Apply a rack or broker failure to every partition (after --plan, when given).

    Each partition is available (enough sync replicas survive for min ISR), promoted
    (v2 under-min-isr/under-replicated observers join the ISR), under min ISR (acks=all
    writes fail) or offline (no sync replica survives: an unclean election onto a surviving
    observer, with possible data loss, or nothing left at all). Every surviving sync
    replica is assumed in the ISR.

    Exits 1 when any partition goes offline or under min ISR, or the KRaft quorum is lost.
    """
    from rich.console import Console

    from placement.diagnostics.jsonout import report_json
    from placement.errors import UsageError
    from placement.io.inventory import load_inventory
    from placement.simulate.failure import parse_ids

    from .render import cell, safe  # names and paths: escaped, no markup

    ids = parse_ids(fail_brokers) if fail_brokers is not None else None
    if (snapshot is None) == (current is None):
        raise UsageError("give the cluster as --snapshot DIR or as --current FILE --inventory INV")
    if (fail_rack is None) == (ids is None):
        raise UsageError("name one failure: --fail-rack NAME or --fail-brokers IDS")
    if root is not None and topics is None:
        raise UsageError("--root goes with --topics: the directory its placement files are in")
    outputs, unclean_file = _outputs(unclean_out, snapshot, current, inventory, topics, plan)
    loaded = load_inventory(inventory) if inventory is not None else None
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    written: int | None
    if snapshot is not None:
        if topics is not None:
            raise UsageError(
                "--topics goes with --current; a snapshot carries its topics' policies"
            )
        from placement.score.simulate import run_simulate

        with outputs, err.status("simulating") as status:
            report, written = run_simulate(
                snapshot,
                fail_rack=fail_rack,
                fail_brokers=ids,
                plan=plan,
                master=master,
                default_min_isr=default_min_isr,
                inventory=loaded.inventory if loaded else None,
                unclean_out=unclean_file.staged() if unclean_file else None,
                progress=lambda stage: status.update(stage),
            )
            outcomes = _commit(outputs, unclean_file, written)
    elif current is not None:
        if loaded is None:
            raise UsageError("--current needs --inventory: the racks of the brokers")
        from placement.io.reassignment import write_election_stream
        from placement.simulate.failure import simulate_files

        report, unclean = simulate_files(
            current,
            loaded,
            topics=topics,
            refs_root=root,
            plan=plan,
            fail_rack=fail_rack,
            fail_brokers=ids,
            default_min_isr=default_min_isr,
        )
        written = None
        with outputs:
            if unclean_file is not None:
                keys = ((u.topic, u.partition) for u in unclean)
                written = write_election_stream(unclean_file.staged(), keys)
            outcomes = _commit(outputs, unclean_file, written)
    unknown_rack = report.unknown_rack_note()
    if unknown_rack is not None:  # an assumption the numbers rest on: said, not hidden
        err.print(cell(unknown_rack))
    if format is SimFormat.JSON:
        sys.stdout.write(report_json(report))
    else:
        render(report)
    if written is not None:
        for note in outputs.notes:
            err.print(cell(f"note: {note}"))
        if written:
            err.print(cell(f"wrote {unclean_out}: {written:,} partition(s)"))
            err.print(UNCLEAN_WARNING.format(path=safe(unclean_out)), markup=False, emoji=False)
        else:
            err.print("no partition needs an unclean election", markup=False)
            for o in outcomes:  # a file from an earlier run is removed, and this says so
                err.print(cell(o.message))
    lost_quorum = report.quorum is not None and not report.quorum.kept
    failed = report.writes_fail > 0 or lost_quorum
    raise typer.Exit(EXIT_FINDINGS if failed and not exit_zero else EXIT_OK)


def _outputs(unclean_out: Path | None, *inputs: Path | None) -> tuple[Outputs, Output | None]:
    """--unclean-out, checked before any work: not an input, its directory writable."""
    from placement.io.outputs import Outputs

    flags = ("--snapshot", "--current", "--inventory", "--topics", "--plan")
    outputs = Outputs.of(zip(flags, inputs, strict=True))
    return outputs, outputs.add("--unclean-out", unclean_out) if unclean_out else None


def _commit(outputs: Outputs, unclean: Output | None, written: int | None) -> list[Outcome]:
    """All or nothing; with no unclean partition, no file is left at --unclean-out."""
    if unclean is not None and not written:
        unclean.nothing()
    return outputs.commit()


def _ids(ids: list[int], limit: int = 12) -> str:
    shown = ", ".join(map(str, ids[:limit]))
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def render(report: SimulateReport) -> None:
    from rich.console import Console
    from rich.table import Table

    from .render import cell  # rack, topic and plan names: escaped, no markup

    # a pipe or a file gets whole rows, a terminal its own width
    console = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
    f = report.failure
    after = f", after {report.plan}" if report.plan else ""
    if f.rack is not None:
        console.print(cell(f'rack "{f.rack}" down: brokers {_ids(f.brokers)}{after}'))
    else:
        console.print(cell(f"brokers {_ids(f.brokers)} down{after}"))
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
    hit = [x for x in report.topics if x.partitions != x.available]
    hit.sort(key=lambda x: (-x.offline, -x.under_min_isr, -x.promoted, x.topic))
    if hit:
        per = Table(title="topics affected, worst first", title_justify="left")
        for col in ("topic", "policy", "min ISR", "partitions", "promoted", "under min ISR"):
            per.add_column(col, justify="left" if col in ("topic", "policy") else "right")
        per.add_column("offline (unclean/lost)", justify="right")
        for x in hit[:SHOWN_TOPICS]:
            per.add_row(
                cell(x.topic),
                cell(x.policy),
                str(x.min_isr),
                f"{x.partitions:,}",
                f"{x.promoted:,}",
                f"{x.under_min_isr:,}",
                f"{x.offline:,} ({x.unclean:,}/{x.lost:,})",
            )
        console.print(per)
        if len(hit) > SHOWN_TOPICS:
            console.print(f"… and {len(hit) - SHOWN_TOPICS:,} more topics (--format json)")
    else:
        console.print("every partition stays available")
    if report.unclean_sample:
        console.print(
            f"\nonly an unclean election onto an observer brings back {t.unclean:,} "
            "partition(s) (--unclean-out writes them all), e.g.:"
        )
        for u in report.unclean_sample[:10]:
            console.print(cell(f"  {u.topic}-{u.partition}: observers {_ids(u.observers)}"))
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
