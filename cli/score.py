"""`mrc-plan score`: rate plans against a cluster snapshot with Spark."""

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from .errors import handle_errors
from .simulate import DefaultMinIsrOpt, MinInsyncReplicasOpt, resolve_min_isr


class ScoreFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


# the options of `score`, one alias each (the command's signature stays readable)
SnapshotOpt = Annotated[
    Path, typer.Option(help="Snapshot directory (brokers, topics, partitions).")
]
PlansOpt = Annotated[
    list[Path] | None,
    typer.Option(help="Reassignment JSON to score (repeatable); none: the snapshot alone."),
]
TopicsOpt = Annotated[
    Path | None,
    typer.Option(
        help="Topics file (as for assign --topics) whose policies the plans set: each "
        "plan's violations and rack failures are judged against them, not the "
        "snapshot's; the snapshot as it stands keeps its own."
    ),
]
PolicyDirOpt = Annotated[
    Path | None,
    typer.Option(
        help="The directory assign --policy-dir wrote with the plans: the policies "
        "they set (its topics.json) judge them, as --topics does.",
        show_default=False,
    ),
]
MasterOpt = Annotated[
    str | None,
    typer.Option(
        help="Spark master, e.g. spark://host:7077; default: SPARK_MASTER, the one "
        "spark-submit set, else local[*]."
    ),
]
FormatOpt = Annotated[ScoreFormat, typer.Option(help="text (tables) or json.")]
OutOpt = Annotated[Path | None, typer.Option(help="Also write the JSON report here (atomically).")]
BarsOpt = Annotated[
    int,
    typer.Option(
        min=0,
        help="Text format: per plan, bars of replicas per broker before/after for this "
        "many brokers, most changed first (0: none; the JSON report has every broker).",
    ),
]
ReportOpt = Annotated[
    Path | None,
    typer.Option(
        "--report",
        help="Also write an offline HTML page (FILE.html): the plans side by side, the "
        "load per rack before and after, every broker. With --out: both or neither.",
    ),
]


@handle_errors
def score(
    snapshot: SnapshotOpt,
    plan: PlansOpt = None,
    topics: TopicsOpt = None,
    policy_dir: PolicyDirOpt = None,
    master: MasterOpt = None,
    min_insync_replicas: MinInsyncReplicasOpt = None,
    default_min_isr: DefaultMinIsrOpt = None,
    format: FormatOpt = ScoreFormat.TEXT,
    out: OutOpt = None,
    bars: BarsOpt = 20,
    html: ReportOpt = None,
) -> None:
    """Score the snapshot as it stands and after each plan, best plan first.

    Per plan: partitions changed, replicas added/removed, bytes to move, cross-rack bytes,
    policy violations before/after, replicas/leaders/bytes per broker (min, max, mean,
    stddev), and per rack what its failure would leave offline, under min ISR or promoted,
    as `simulate --fail-rack` counts it: from the ISR the snapshot records (the sync
    replicas where it records none) and, after a plan, the ISR its completed reassignment
    leaves.

    score = 100 - 50 x violations_after / partitions - 20 x replicas_added / replicas
    - 20 x min(1, stddev / mean of replicas per broker) - 10 x (offline + under_min_isr
    over every rack failure) / (partitions x racks). Higher is better; plans leaving
    fewer violations always rank first.
    """
    from rich.console import Console

    from placement.diagnostics.jsonout import report_json
    from placement.io.outputs import Outputs
    from placement.score.run import run_score

    from .outputs import page_possible
    from .outputs import report as report_outputs
    from .render import cell

    min_isr = resolve_min_isr(min_insync_replicas, default_min_isr)
    page_possible(html)
    topics = _planned_topics(topics, policy_dir)
    inputs = [("--snapshot", snapshot), *(("--plan", p) for p in plan or [])]
    outputs = Outputs.of([*inputs, *([("--topics", topics)] if topics is not None else [])])
    planned = None
    if topics is not None:
        from placement.plan.topics import read_topics

        planned = {t.name: (t.policy, t.min_isr) for t in read_topics(topics)}
    report_out = outputs.add("--out", out) if out is not None else None
    page = outputs.add("--report", html) if html is not None else None
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    with outputs, err.status("scoring") as status:
        report = run_score(
            snapshot,
            plan or [],
            master=master,
            default_min_isr=min_isr,
            progress=lambda stage: status.update(cell(stage)),
            planned=planned,
        )
        text = report_json(report)
        if report_out is not None:
            report_out.write(text)
        if page is not None:
            from placement.html.score import render_score

            status.update("writing the HTML report")
            page.write(render_score(report, source=f"snapshot {snapshot}; plans best first"))
        written = outputs.commit()
    report_outputs(outputs, written)
    if format is ScoreFormat.JSON:
        sys.stdout.write(text)
    else:
        render(report, bars)


def _planned_topics(topics: Path | None, policy_dir: Path | None) -> Path | None:
    """The topics file holding the policies the plans set: --topics, or the topics.json
    of --policy-dir (the one a plan's policy changes are written with)."""
    from placement.errors import InputError, UsageError
    from placement.plan.policies import SCRIPT, TOPICS_FILE

    if policy_dir is None:
        return topics
    if topics is not None:
        raise UsageError("--topics and --policy-dir both give the policies the plans set: pass one")
    found = policy_dir / TOPICS_FILE
    if not found.is_file():
        written = (policy_dir / SCRIPT).is_file()
        raise InputError(
            str(policy_dir),
            f"holds no {TOPICS_FILE}"
            + (" (written by an older mrc-plan)" if written else "")
            + ": it is not a directory assign --policy-dir wrote",
            "write it again with assign --policy-dir, or pass the topics file the plans "
            "were made with as --topics",
        )
    return found


def _stats(s: Any, unit: float = 1, suffix: str = "") -> str:
    return f"{s.min / unit:,.0f}..{s.max / unit:,.0f}{suffix} (sd {s.stddev / unit:,.1f})"


BLOCKS = " ▏▎▍▌▋▊▉█"


def _gib(n: int, unknown: int) -> str:
    """Bytes as GiB; when partitions without a size are moved, the sum is not the answer."""
    if unknown:
        return f"unknown ({unknown:,} partitions without a size)"
    return f"{n / 2**30:,.1f}"


def bar(value: float, top: float, width: int) -> str:
    """``value`` out of ``top`` as ``width`` cells of block characters (eighths)."""
    eighths = round(8 * width * value / top) if top > 0 else 0
    full, part = divmod(max(0, min(eighths, 8 * width)), 8)
    return ("█" * full + (BLOCKS[part] if part else "")).ljust(width)


def load_bars(before: list[Any], after: list[Any], count: int, width: int = 24) -> list[str]:
    """Lines of replicas per broker before -> after for the ``count`` most changed brokers
    (ties: by id; unchanged ones left out), bars on one scale."""
    pairs = [(b, a) for b, a in zip(before, after, strict=True) if a.replicas != b.replicas]
    pairs.sort(key=lambda p: (-abs(p[1].replicas - p[0].replicas), p[0].broker))
    shown = sorted(pairs[:count], key=lambda p: (p[0].rack or "", p[0].broker))
    top = max([max(b.replicas, a.replicas) for b, a in shown], default=0)
    lines = []
    for b, a in shown:
        delta = a.replicas - b.replicas
        lines.append(
            f"  {b.rack or '-':>10} {b.broker:>6}  {bar(b.replicas, top, width)} "
            f"{b.replicas:>9,} -> {bar(a.replicas, top, width)} {a.replicas:>9,} "
            f"({delta:+,})"
        )
    return lines


def render(report: Any, bars: int = 20) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from .render import cell, safe  # plan file and rack names: escaped, no markup

    console = Console(highlight=False, soft_wrap=True)
    snap = report.snapshot
    console.print(
        f"snapshot: {snap.brokers:,} brokers, {snap.topics:,} topics, "
        f"{snap.partitions:,} partitions, {snap.replicas:,} replicas"
    )
    table = Table(title="plans, best first")
    table.add_column("metric")
    table.add_column("as it stands")
    for p in report.plans:
        table.add_column(cell(Path(p.plan).name))
    base = report.baseline

    def row(name: str, now: str, per_plan: list[str]) -> None:
        table.add_row(cell(name), now, *per_plan)

    plans = report.plans
    row("score", "-", [f"{p.score:.3f}" for p in plans])
    row("partitions changed", "-", [f"{p.partitions_changed:,}" for p in plans])
    row("replicas added", "-", [f"{p.replicas_added:,}" for p in plans])
    row("GiB to move", "-", [_gib(p.bytes_to_move, p.bytes_unknown_partitions) for p in plans])
    row(
        "cross-rack GiB",
        "-",
        [_gib(p.cross_rack_bytes, p.bytes_unknown_partitions) for p in plans],
    )
    row("violations", f"{base.violations:,}", [f"{p.violations_after:,}" for p in plans])
    unsized = report.snapshot.partitions_without_size
    for metric, unit, suffix in (("replicas", 1, ""), ("leaders", 1, ""), ("bytes", 2**30, " GiB")):
        label = f"{metric}/broker"
        if metric == "bytes" and unsized:
            if unsized == report.snapshot.partitions:  # no sizes at all: nothing to show
                row(label, "unknown (no sizes)", ["unknown"] * len(plans))
                continue
            label += f" ({unsized:,} partitions without a size)"
        row(
            label,
            _stats(getattr(base.balance, metric), unit, suffix),
            [_stats(getattr(p.balance, metric), unit, suffix) for p in plans],
        )
    if base.rack_failure:
        table.caption = "rack down: from the recorded ISR, as simulate counts it"
    for rack in sorted(base.rack_failure):
        b = base.rack_failure[rack]
        row(
            f"{rack} down: offline/under-ISR/promoted",
            f"{b.offline}/{b.under_min_isr}/{b.promoted}",
            [
                f"{f.offline}/{f.under_min_isr}/{f.promoted}"
                for f in (p.rack_failure[rack] for p in plans)
            ],
        )
    console.print(table)
    for p in plans if bars else []:
        lines = load_bars(base.brokers, p.brokers, bars)
        changed = sum(
            a.replicas != b.replicas for b, a in zip(base.brokers, p.brokers, strict=True)
        )
        name = safe(Path(p.plan).name)
        if not lines:
            console.print(Text(f"\n{name}: no broker's replica count changes"))
            continue
        console.print(
            Text(
                f"\n{name}: replicas per broker, as it stands -> after the plan "
                f"({len(lines)} most changed of the {changed:,} that change, "
                f"{len(p.brokers):,} brokers)"
            )
        )
        for line in lines:
            console.print(cell(line))


cluster_app = typer.Typer(
    rich_markup_mode=None,
    help="A real Spark standalone cluster (master + one worker) on 127.0.0.1, to try "
    "`score --master` without installing Spark.",
    no_args_is_help=True,
)


def _state_dir(state_dir: Path | None) -> Path:
    from placement.score.localcluster import default_state_dir

    return state_dir or default_state_dir()


@cluster_app.command("start")
@handle_errors
def cluster_start(
    state_dir: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="Private directory (0700, yours) for the secret, pids and logs; default: "
            "$TMPDIR/mrc-plan-UID/cluster.",
        ),
    ] = None,
    cores: Annotated[int, typer.Option(min=1, help="Worker cores.")] = 1,
    memory: Annotated[str, typer.Option(help="Worker memory, e.g. 2g.")] = "1g",
) -> None:
    """Start the master and a worker; print the master URL for --master.

    Only you can use it: it listens on 127.0.0.1 and requires a secret (spark.authenticate)
    kept in the state directory; `score`/`simulate --master URL` find it there for the default
    directory, else set MRC_PLAN_SPARK_SECRET_FILE to DIR/secret. The daemons' web UIs answer
    no one without a token signed with the key kept beside the secret."""
    from placement.score.localcluster import default_state_dir, start

    from .render import safe  # the paths: escaped

    cluster = start(_state_dir(state_dir), cores=cores, memory=memory)
    sys.stdout.write(cluster.master_url + "\n")
    sys.stderr.write(
        f"web UI: {cluster.web_url} (locked: 403 without a token signed with the key in "
        f"{safe(cluster.state_dir / 'ui-key')}); stop with: mrc-plan spark-local-cluster stop"
    )
    if cluster.state_dir != default_state_dir().resolve():
        sys.stderr.write(
            f" --dir {safe(cluster.state_dir)}\nfor score/simulate --master: "
            f"export MRC_PLAN_SPARK_SECRET_FILE={safe(cluster.secret_file)}"
        )
    sys.stderr.write("\n")


@cluster_app.command("stop")
@handle_errors
def cluster_stop(
    state_dir: Annotated[
        Path | None, typer.Option("--dir", help="The directory given to start.")
    ] = None,
) -> None:
    """Stop the worker and the master started by `start` (and no other process)."""
    from placement.diagnostics.escape import escape
    from placement.score.localcluster import stop

    for note in stop(_state_dir(state_dir)):
        sys.stderr.write(f"note: {escape(note)}\n")
