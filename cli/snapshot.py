"""`mrc-plan snapshot ...`: build, generate and inspect cluster snapshots."""

import sys
import time
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from placement.errors import UsageError, require

from .errors import handle_errors
from .outputs import report

if TYPE_CHECKING:
    from placement.io.cluster import FromCluster
    from placement.io.cluster_config import ClientSettings
    from placement.io.logdirs import SizesRead
    from placement.snapshot.facts import SnapshotReport

SizesOption = typer.Option(
    "--sizes",
    help="Partition sizes: a CSV topic,partition,size_bytes, or what kafka-log-dirs "
    "--describe prints (the largest replica's size per partition).",
)

app = typer.Typer(
    rich_markup_mode=None,
    help="Build, generate and inspect cluster snapshots (Parquet).",
    no_args_is_help=True,
)


@app.command()
@handle_errors
def synth(
    brokers: Annotated[int, typer.Option(min=1, help="Number of brokers.")],
    racks: Annotated[int, typer.Option(min=1, help="Number of racks (near-equal sizes).")],
    topics: Annotated[int, typer.Option(min=1, help="Number of topics.")],
    partitions_per_topic: Annotated[int, typer.Option(min=1, help="Partitions per topic.")],
    out: Annotated[Path, typer.Option(help="Output snapshot directory.")],
    policy: Annotated[
        list[Path] | None,
        typer.Option(
            help="Placement policy file to use (repeatable); default: a built-in mix of v1/v2 "
            "policies with observers. Their racks become the first synthetic racks."
        ),
    ] = None,
    violations: Annotated[
        float,
        typer.Option(
            min=0.0, max=1.0, help="Fraction of partitions generated in breach of their policy."
        ),
    ] = 0.0,
    seed: Annotated[
        int, typer.Option(min=0, max=2**63 - 1, help="Random seed: same seed, same files.")
    ] = 0,
) -> None:
    """Generate a realistic synthetic cluster snapshot."""
    from placement.io.limits import POLICY_BYTES
    from placement.io.outputs import Outputs
    from placement.io.snapshot import add_snapshot_output, write_snapshot_files
    from placement.io.textfile import read_text
    from placement.plan.topics import InvalidPoliciesError
    from placement.rules.base import CheckContext
    from placement.rules.validate import check_policy_text
    from placement.snapshot.synth import SynthSpec, check_spec
    from placement.snapshot.synth import synth as run_synth

    check_spec(SynthSpec(brokers, racks, topics, partitions_per_topic))  # caps, before any work
    outputs = Outputs.of(("--policy", p) for p in policy or [])
    snap_out = add_snapshot_output(outputs, "--out", out)
    with outputs:  # the checks and the temporary directory, before the work
        policies = []
        for path in policy or []:
            text = read_text(path, "the policy", POLICY_BYTES)
            checked = check_policy_text(text, str(path), CheckContext())
            if checked.policy is None:
                raise InvalidPoliciesError(str(path), checked.diagnostics)
            policies.append(checked.policy)
        started = time.perf_counter()
        try:
            result = run_synth(
                SynthSpec(
                    brokers, racks, topics, partitions_per_topic, tuple(policies), violations, seed
                )
            )
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        write_snapshot_files(snap_out.staged(), result.snapshot)
        written = outputs.commit()
    report(outputs, written, skip=["--out"])
    snap = result.snapshot
    from .render import safe

    sys.stderr.write(
        f"wrote {safe(out)}: {snap.brokers.num_rows} brokers, {snap.topics.num_rows} topics, "
        f"{snap.partitions.num_rows} partitions ({result.violations} breaking their policy) "
        f"in {time.perf_counter() - started:.1f} s\n"
    )


@app.command("from-describe")
@handle_errors
def from_describe(
    describe: Annotated[Path, typer.Argument(help="Output of kafka-topics --describe.")],
    inventory: Annotated[
        Path,
        typer.Option(
            help="Broker inventory: JSON, CSV, a directory of server.properties, or what the "
            "cluster prints (docs/inputs.md: Where an inventory comes from)."
        ),
    ],
    out: Annotated[Path, typer.Option(help="Output snapshot directory.")],
    sizes: Annotated[Path | None, SizesOption] = None,
) -> None:
    """Build a snapshot from describe output and an inventory."""
    from placement.io.convert import coverage_notes, load_sizes, snapshot_from_describe
    from placement.io.describe import read_describe
    from placement.io.inventory import load_inventory
    from placement.io.outputs import Outputs
    from placement.io.snapshot import add_snapshot_output, write_snapshot_files

    from .render import safe

    outputs = Outputs.of([("DESCRIBE", describe), ("--inventory", inventory), ("--sizes", sizes)])
    snap_out = add_snapshot_output(outputs, "--out", out)
    with outputs:  # the checks and the temporary directory, before the work
        # a reassignment in flight is kept: its adding and removing columns say which
        described = read_describe(describe, in_flight=True)
        loaded = load_sizes(sizes) if sizes else None
        snap = snapshot_from_describe(
            described, load_inventory(inventory).inventory, loaded.sizes if loaded else None
        )
        write_snapshot_files(snap_out.staged(), snap)
        written = outputs.commit()
    if loaded is not None:
        keys = {(p.topic, p.partition) for p in described.partitions}
        for note in loaded.notes + coverage_notes(loaded.sizes, keys, str(sizes), str(describe)):
            sys.stderr.write(f"note: {safe(note)}\n")
    report(outputs, written, skip=["--out"])
    moving = len(described.reassigning)
    if moving:
        sys.stderr.write(
            f"note: {moving:,} partition(s) are being reassigned: their replicas list the "
            "old and the new brokers, and the adding and removing columns say which\n"
        )
    sys.stderr.write(
        f"wrote {safe(out)}: {snap.brokers.num_rows} brokers, {snap.topics.num_rows} "
        f"topics, {snap.partitions.num_rows} partitions\n"
    )


@app.command("from-cluster")
@handle_errors
def from_cluster(
    bootstrap_server: Annotated[
        str,
        typer.Option(
            "--bootstrap-server", help="HOST:PORT of the cluster (a comma-separated list works)."
        ),
    ],
    out: Annotated[Path, typer.Option(help="Output snapshot directory.")],
    command_config: Annotated[
        Path | None,
        typer.Option(
            "--command-config",
            help="Kafka client properties, as for kafka-topics (security.protocol, "
            "sasl.mechanism, sasl.jaas.config, ssl.*); no secret of it is ever shown.",
        ),
    ] = None,
    inventory: Annotated[
        Path | None,
        typer.Option(help="Broker inventory: the racks of brokers that report none."),
    ] = None,
    sizes: Annotated[Path | None, SizesOption] = None,
    timeout: Annotated[
        float, typer.Option(min=0.1, max=3600, help="Seconds for the whole read.")
    ] = 30.0,
    skip_unauthorized: Annotated[
        bool,
        typer.Option(
            "--skip-unauthorized",
            help="Leave out the topics the client may not describe (listed on stderr) "
            "instead of stopping.",
        ),
    ] = False,
) -> None:
    """Build a snapshot by reading a live cluster (read-only: describe and metadata
    requests only), as from-describe would from its describe output."""
    require("kafka", "`mrc-plan snapshot from-cluster`")  # the client and the snapshot's
    from placement.io.cluster import (
        ClusterConfig,
        read_cluster,
        snapshot_from_cluster,
    )
    from placement.io.cluster_config import ClientSettings, load_command_config
    from placement.io.convert import load_sizes
    from placement.io.inventory import load_inventory
    from placement.io.outputs import Outputs
    from placement.io.snapshot import add_snapshot_output, write_snapshot_files

    from .render import safe

    outputs = Outputs.of(
        [("--command-config", command_config), ("--inventory", inventory), ("--sizes", sizes)]
    )
    snap_out = add_snapshot_output(outputs, "--out", out)
    client = load_command_config(command_config) if command_config else ClientSettings()
    config = ClusterConfig(bootstrap_server, client, timeout)
    with outputs:  # the checks and the temporary directory, before the work
        inv = load_inventory(inventory).inventory if inventory else None
        loaded = load_sizes(sizes) if sizes else None
        started = time.perf_counter()
        state = read_cluster(config, skip_unauthorized=skip_unauthorized)
        made = snapshot_from_cluster(state, inv, loaded.sizes if loaded else None)
        write_snapshot_files(snap_out.staged(), made.snapshot)
        written = outputs.commit()
    for note in _cluster_notes(made, client, loaded, sizes, config.bootstrap):
        sys.stderr.write(f"note: {safe(note)}\n")
    report(outputs, written, skip=["--out"])
    snap = made.snapshot
    sys.stderr.write(
        f"wrote {safe(out)}: {snap.brokers.num_rows} brokers, {snap.topics.num_rows} "
        f"topics, {snap.partitions.num_rows} partitions read from {safe(config.bootstrap)} "
        f"in {time.perf_counter() - started:.1f} s\n"
    )


def _cluster_notes(
    made: "FromCluster",
    client: "ClientSettings",
    loaded: "SizesRead | None",
    sizes: Path | None,
    bootstrap: str,
) -> list[str]:
    """What `snapshot from-cluster` notes on stderr: the read's own notes, the settings of
    --command-config that do nothing, and the sizes' coverage (or that there are none)."""
    from placement.io.convert import coverage_notes

    notes = list(made.notes)
    if client.ignored:
        notes.append(f"--command-config: {', '.join(client.ignored)} have no effect on this read")
    if loaded is not None:
        keys = {(p.topic, p.partition) for p in made.describe.partitions}
        notes += loaded.notes + coverage_notes(loaded.sizes, keys, str(sizes), bootstrap)
    else:
        notes.append(
            "no sizes: the client library (confluent-kafka) has no DescribeLogDirs; give "
            "--sizes with what kafka-log-dirs --describe prints"
        )
    return notes


def _bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            return f"{value:,.1f} {unit}" if unit != "B" else f"{n} B"
        value /= 1024
    return f"{n} B"


class ShowFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


@app.command()
@handle_errors
def show(
    snapshot: Annotated[Path, typer.Argument(help="Snapshot directory.")],
    violations: Annotated[
        bool,
        typer.Option(
            "--violations",
            help="Also list the partitions breaking their policy, with what breaks it.",
        ),
    ] = False,
    limit: Annotated[
        int,
        typer.Option(
            min=1,
            max=1_000_000,
            help="With --violations: list at most this many partitions; the rest are counted.",
        ),
    ] = 20,
    format: Annotated[
        ShowFormat,
        typer.Option(help="text (tables) or json (schema: mrc-plan schema snapshot-summary)."),
    ] = ShowFormat.TEXT,
) -> None:
    """Summarize a snapshot: racks, load per broker, bytes, policy violations, partitions
    offline, under min ISR or under-replicated."""
    from placement.io.snapshot import read_snapshot
    from placement.snapshot.facts import SnapshotReport, first_violations, summarize

    snap = read_snapshot(snapshot)
    listed = first_violations(snap, limit) if violations else None
    report = SnapshotReport.of(str(snapshot), summarize(snap), listed)
    if format is ShowFormat.JSON:
        from placement.diagnostics.jsonout import report_json

        sys.stdout.write(report_json(report))
        return
    _show_text(report)


def _show_text(s: "SnapshotReport") -> None:
    from rich.console import Console
    from rich.table import Table

    from .render import cell  # rack and topic names and the path: escaped, no markup

    console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    head = Table(title=cell(f"snapshot {s.snapshot}"), show_header=False, box=None)
    head.add_row("brokers", f"{s.brokers:,}")
    head.add_row("topics", f"{s.topics:,} ({s.topics_without_policy:,} without a policy)")
    head.add_row("partitions", f"{s.partitions:,}")
    head.add_row("replicas", f"{s.replicas:,}")
    head.add_row("bytes (all replicas)", _bytes(s.total_bytes))
    head.add_row(
        "preferred leaders per broker",
        f"min {s.leaders_per_broker_min:,}, max {s.leaders_per_broker_max:,}",
    )
    for label, count in (
        ("partitions breaking their policy", s.violations),
        ("partitions offline", s.offline),
        ("partitions under min ISR", s.under_min_isr),
    ):
        head.add_row(label, "[green]0[/]" if not count else f"[bold red]{count:,}[/]")
    lagging = s.under_replicated
    head.add_row("partitions under-replicated", f"[yellow]{lagging:,}[/]" if lagging else "0")
    moving = s.reassigning
    head.add_row("partitions being reassigned", f"[yellow]{moving:,}[/]" if moving else "0")
    console.print(head)
    racks = Table("rack", "brokers", "replicas/broker min", "max", title="per rack")
    for r in s.racks:
        racks.add_row(
            cell(r.rack),
            f"{r.brokers:,}",
            f"{r.replicas_per_broker_min:,}",
            f"{r.replicas_per_broker_max:,}",
        )
    console.print(racks)
    if s.violations_listed is None:
        return
    if not s.violations_listed:
        console.print("no partition breaks its policy")
        return
    table = Table(
        "topic",
        "partition",
        "replicas",
        "observers",
        "what breaks the policy",
        title="partitions breaking their policy",
    )
    for v in s.violations_listed:
        table.add_row(
            cell(v.topic),
            str(v.partition),
            ",".join(map(str, v.replicas)),
            ",".join(map(str, v.observers)) or "-",
            cell("; ".join(v.problems)),
        )
    console.print(table)
    if s.violations_not_listed:
        console.print(f"… and {s.violations_not_listed:,} more (--limit N lists more)")


@app.command()
@handle_errors
def export(
    snapshot: Annotated[Path, typer.Argument(help="Snapshot directory.")],
    out: Annotated[
        Path | None,
        typer.Option(help="Write the reassignment JSON here (atomically); default: stdout."),
    ] = None,
    topic: Annotated[list[str] | None, typer.Option(help="Only these topics (repeatable).")] = None,
) -> None:
    """Write a snapshot's current assignment as reassignment JSON (e.g. to keep for rollback)."""
    from placement.io.outputs import Outputs
    from placement.io.reassignment import render_reassignment
    from placement.io.snapshot import read_snapshot, snapshot_assignments

    outputs = Outputs.of([("SNAPSHOT", snapshot)])
    plan_out = outputs.add("--out", out) if out is not None else None
    rows, _ = snapshot_assignments(read_snapshot(snapshot), topic or ())
    if not rows:
        raise UsageError("no partitions to export", "check the --topic names")
    text = render_reassignment(rows)
    if plan_out is None:
        sys.stdout.write(text)
        return
    with outputs:
        plan_out.write(text)
        written = outputs.commit()
    report(outputs, written)


@app.command()
@handle_errors
def apply(
    snapshot: Annotated[Path, typer.Argument(help="Snapshot directory: the cluster before.")],
    plan: Annotated[
        Path, typer.Argument(help="Reassignment JSON to apply (e.g. from assign --out).")
    ],
    out: Annotated[Path, typer.Option(help="Output snapshot directory: the cluster after.")],
) -> None:
    """Write the cluster as it stands after a plan, as a new snapshot (a what-if: nothing
    runs on a cluster). Chain it: assign on a snapshot, apply, then simulate or assign
    again on the result."""
    from placement.io.outputs import Outputs
    from placement.io.snapshot import add_snapshot_output, read_snapshot, write_snapshot_files
    from placement.snapshot.apply import apply_plan_file

    from .render import safe

    outputs = Outputs.of([("SNAPSHOT", snapshot), ("PLAN", plan)])
    snap_out = add_snapshot_output(outputs, "--out", out)
    with outputs:  # the checks and the temporary directory, before the work
        applied = apply_plan_file(read_snapshot(snapshot), plan)
        write_snapshot_files(snap_out.staged(), applied.snapshot)
        written = outputs.commit()
    report(outputs, written, skip=["--out"])
    total = applied.snapshot.partitions.num_rows
    sys.stderr.write(
        f"wrote {safe(out)}: the plan's {applied.entries:,} entries change {applied.changed:,} "
        f"of {total:,} partitions; {applied.violations_after:,} break their policy after "
        f"({applied.violations_before:,} before)\n"
    )
