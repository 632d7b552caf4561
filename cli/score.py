"""`mrc-plan score`: rate plans against a cluster snapshot with Spark."""

import sys
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from placement.diagnostics.escape import escape

from .errors import handle_errors
from .outputs import page_possible
from .outputs import report as report_outputs
from .score_text import bar as bar
from .score_text import load_bars as load_bars
from .score_text import render
from .simulate_options import DefaultMinIsrOpt, MinInsyncReplicasOpt, resolve_min_isr


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

    from placement.io.outputs import Outputs
    from placement.score.front import ScoreRequest, check, run

    from .render import cell

    min_isr = resolve_min_isr(min_insync_replicas, default_min_isr)
    page_possible(html)
    request = ScoreRequest(snapshot, plan or [], topics, policy_dir, master, min_isr)
    request = check(request)  # --policy-dir resolved, the policies the plans set read
    inputs = [("--snapshot", snapshot), *(("--plan", p) for p in plan or [])]
    if request.topics is not None:
        inputs.append(("--topics", request.topics))
    outputs = Outputs.of(inputs)
    report_out = outputs.add("--out", out) if out is not None else None
    page = outputs.add("--report", html) if html is not None else None
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    with outputs, err.status("scoring") as status:

        def progress(stage: str) -> None:
            status.update(cell(stage))

        result = run(replace(request, progress=progress))
        if report_out is not None:
            report_out.write(result.report_json)
        if page is not None:
            from placement.html.score import render_score

            status.update("writing the HTML report")
            page.write(render_score(result.report, source=result.source))
        written = outputs.commit()
    report_outputs(outputs, written)
    if format is ScoreFormat.JSON:
        sys.stdout.write(result.report_json)
    else:
        render(result.report, bars)


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
    from placement.score.localcluster import stop

    for note in stop(_state_dir(state_dir)):
        sys.stderr.write(f"note: {escape(note)}\n")
