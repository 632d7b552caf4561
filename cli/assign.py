"""`mrc-plan assign`: plan a reassignment, check it, write it."""

import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from .cluster_options import (
    BootstrapOpt,
    CommandConfigOpt,
    Live,
    SkipUnauthorizedOpt,
    TimeoutOpt,
    naming,
)
from .errors import handle_errors

RootOption = Annotated[
    Path | None,
    typer.Option(
        exists=True,
        file_okay=False,
        help="Directory that placement files named in --topics are resolved in and may "
        "not leave. Default: the topics file's directory.",
        show_default=False,
    ),
]

UNITS = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
}


# the largest throttle or byte cap: what summary.json (an int64 there, as in Kafka's
# configs) holds
MAX_SIZE = 2**63 - 1
# options that reach the solver: CP-SAT's random_seed is an int32, and time and
# tolerance must stay finite numbers (inf and nan are refused by these bounds too)
MAX_SEED = 2**31 - 1
MAX_TIME_LIMIT = 1e6
MAX_TOLERANCE = 1e6


def parse_size(raw: str, flag: str, examples: tuple[str, ...], *, rate: bool = False) -> int:
    """Bytes from ``500000000``, ``500MB``, ``1.5TiB`` (a unit of UNITS, any case, after a
    whole or decimal number), or bytes per second with ``rate`` (``/s`` may follow): 1 to
    2^63-1, computed exactly (a 400-digit figure is refused, not a float overflow). An
    error quotes at most 40 characters of ``raw``."""
    import re
    from fractions import Fraction

    from placement.errors import UsageError

    what = "bytes per second" if rate else "bytes"
    hint = "e.g. " + ", ".join(f"{flag} {e}" for e in examples[:-1]) + f" or {flag} {examples[-1]}"
    shown = raw if len(raw) <= 40 else raw[:37] + "..."
    per_second = "(?:/s)?" if rate else ""
    m = re.fullmatch(rf"\s*([0-9]+)(\.[0-9]+)?\s*([A-Za-z]*?){per_second}\s*", raw)
    unit = m.group(3).upper() if m else ""
    if m is None or unit not in UNITS:
        raise UsageError(f"{flag}: expected {what}, found {shown!r}", hint)
    whole, fraction = m.group(1).lstrip("0"), (m.group(2) or "")[:31]  # exact enough
    value = int(Fraction(whole + fraction or "0") * UNITS[unit]) if len(whole) <= 30 else 0
    if not 1 <= value <= MAX_SIZE:
        raise UsageError(f"{flag}: {shown!r} is not 1 to {MAX_SIZE:,} {what}", hint)
    return value


def _ids(raw: str | None, flag: str) -> list[int]:
    """Broker ids as Kafka has them (ASCII digits, 0..2^31-1); none for an empty value."""
    from placement.simulate.failure import parse_ids

    if not raw or not raw.replace(" ", "").replace(",", ""):
        return []
    return parse_ids(raw, flag)


InventoryOpt = Annotated[
    Path | None,
    typer.Option(
        help="Broker inventory: JSON, CSV, a directory of server.properties, or what the "
        "cluster prints (docs/inputs.md: Where an inventory comes from). Optional with a "
        "snapshot as --current (its brokers table gives the brokers and racks) and with "
        "--bootstrap-server (the cluster's racks; it gives those of brokers reporting none).",
        show_default=False,
    ),
]
TopicsOpt = Annotated[
    Path | None,
    typer.Option(
        help="Topics file: the desired state and policies. Optional with describe output "
        "or a snapshot as --current, or with --bootstrap-server: it then carries only "
        "changes (a new policy, a new topic); the other topics keep the cluster's policy.",
        show_default=False,
    ),
]
CurrentOpt = Annotated[
    Path | None,
    typer.Option(
        help="Current assignment: reassignment JSON, kafka-topics --describe output, or a "
        "snapshot directory. Without it every partition is assigned from scratch."
    ),
]
SizesOpt = Annotated[
    Path | None,
    typer.Option(
        help="Partition sizes of --current: a CSV topic,partition,size_bytes, or what "
        "kafka-log-dirs --describe prints. With a snapshot, they replace the snapshot's sizes.",
        show_default=False,
    ),
]
DrainOpt = Annotated[
    str | None, typer.Option(help="Broker ids to empty, e.g. 4,5 (before removing them).")
]
ExcludeOpt = Annotated[
    str | None,
    typer.Option(help="Broker ids that take no new replica (existing ones may stay)."),
]
RebalanceOpt = Annotated[
    bool,
    typer.Option(
        "--rebalance",
        help="Also move valid replicas until, per rack, brokers differ by at most one "
        "replica (bytes within --tolerance when the snapshot has sizes).",
    ),
]
BalanceLeadersOpt = Annotated[
    bool,
    typer.Option(
        "--balance-leaders",
        help="Reorder replicas so preferred leaders differ by at most one per broker of "
        "each lead rack, with the fewest leadership changes.",
    ),
]
DefaultPolicyOpt = Annotated[
    Path | None,
    typer.Option(
        help="The cluster's default placement, for topics without a policy of their own: a "
        "policy JSON file, or a broker's server.properties (its "
        "confluent.log.placement.constraints, and the internal topics' placements). "
        "Topics with neither follow Kafka's rack-aware rule.",
        show_default=False,
    ),
]
RepairOpt = Annotated[
    bool,
    typer.Option(
        "--repair",
        help="Also change every partition that breaks its rule, not only those on drained "
        "or dead brokers and the topics --topics sets (the default when nothing else is "
        "asked).",
    ),
]
OnlyTopicsOpt = Annotated[
    str | None,
    typer.Option(
        help="Change only topics whose whole name matches this regular expression (Java "
        "and Python syntax agree on the usual cases, e.g. 'orders|payments-.*').",
        show_default=False,
    ),
]
FirstRackOpt = Annotated[
    bool,
    typer.Option(
        "--leaders-in-first-rack",
        help="Put every changed partition's preferred leader in its policy's first rack "
        "(how Confluent places a new topic). Without it a leader stays where it is while it "
        "remains a sync replica.",
    ),
]
ToleranceOpt = Annotated[
    float,
    typer.Option(
        min=0.0,
        max=MAX_TOLERANCE,
        help="--rebalance with sizes: bytes per broker may exceed the rack mean by this fraction.",
    ),
]
DiskOpt = Annotated[
    float,
    typer.Option(
        min=0.01,
        max=1.0,
        help="With partition sizes and capacity_bytes in the inventory: no broker may "
        "end above this fraction of its disk (a hard limit; exit 1 when it cannot hold).",
    ),
]
SeedOpt = Annotated[
    int, typer.Option(min=0, max=MAX_SEED, help="Seed: same inputs and seed, same plan.")
]
TimeLimitOpt = Annotated[
    float,
    typer.Option(min=0.1, max=MAX_TIME_LIMIT, help="Seconds the exact engine may spend per rack."),
]
OutOpt = Annotated[
    Path | None,
    typer.Option(help="Write the reassignment JSON here (atomically); default: stdout."),
]
RollbackOpt = Annotated[
    Path | None,
    typer.Option(help="Write the current assignment of exactly the partitions the plan changes."),
]
ElectionOpt = Annotated[
    Path | None,
    typer.Option(
        help="Write the kafka-leader-election file: partitions whose preferred leader changes."
    ),
]
SummaryOpt = Annotated[
    Path | None,
    typer.Option(
        "--summary",
        help="Write the summary as JSON here: every goal's value after the plan and its "
        "lower bound, the same figures as printed.",
    ),
]
PolicyDirOpt = Annotated[
    Path | None,
    typer.Option(
        help="Write here, for the topics whose policy in --topics differs from the "
        "cluster's (or that the cluster lacks): one policy file each and policy-changes.sh, "
        "the kafka-configs --alter (kafka-topics --create) commands to run before the "
        "reassignment. Needs describe output or a snapshot as --current, or "
        "--bootstrap-server.",
        show_default=False,
    ),
]


ReportOpt = Annotated[
    Path | None,
    typer.Option(
        "--report",
        help="Also write an offline HTML page of the plan (FILE.html): every figure next "
        "to its lower bound; per rack, replicas, bytes and preferred leaders per broker "
        "before and after; the bytes from rack to rack; with --out-dir, the batches on a "
        "timeline. It must lie outside --out-dir, which is replaced whole.",
        show_default=False,
    ),
]


class SummaryFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


FormatOpt = Annotated[
    SummaryFormat,
    typer.Option(
        help="The summary: text on stderr, or json on stdout (the --summary JSON; needs "
        "--out or --out-dir, as stdout otherwise holds the plan)."
    ),
]
OutDirOpt = Annotated[
    Path | None,
    typer.Option(
        help="Write the plan in batches here: plan-0001.json ..., a rollback file per "
        "batch, leaders.json + election.json, summary.json. Needs at least one cap per "
        "batch: --batch-size, --max-moves-per-broker, --batch-bytes.",
        rich_help_panel="Batches",
    ),
]
BatchSizeOpt = Annotated[
    int | None,
    typer.Option(min=1, help="At most this many partitions per batch.", rich_help_panel="Batches"),
]
MovesOpt = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="At most this many replica moves per broker per batch (replicas it receives "
        "plus replicas it gives up).",
        rich_help_panel="Batches",
    ),
]
BatchBytesOpt = Annotated[
    str | None,
    typer.Option(
        help="At most this many bytes copied per batch (e.g. 200GiB, 500GB, 1.5TiB): each "
        "partition's size times the replicas it gains. A partition over it on its own is a "
        "batch alone. Needs partition sizes (--sizes, or a snapshot with them).",
        rich_help_panel="Batches",
        show_default=False,
    ),
]
ThrottleOpt = Annotated[
    str | None,
    typer.Option(
        help="Replication throttle, bytes/s (e.g. 50000000, 50MB, 48MiB), as given to "
        "kafka-reassign-partitions --throttle: each batch's ETA.",
        rich_help_panel="Batches",
    ),
]


@handle_errors
def assign(
    inventory: InventoryOpt = None,
    topics: TopicsOpt = None,
    root: RootOption = None,
    current: CurrentOpt = None,
    bootstrap_server: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    timeout: TimeoutOpt = None,
    skip_unauthorized: SkipUnauthorizedOpt = False,
    sizes: SizesOpt = None,
    drain: DrainOpt = None,
    exclude: ExcludeOpt = None,
    rebalance: RebalanceOpt = False,
    balance_leaders: BalanceLeadersOpt = False,
    default_policy: DefaultPolicyOpt = None,
    repair: RepairOpt = False,
    only_topics: OnlyTopicsOpt = None,
    leaders_in_first_rack: FirstRackOpt = False,
    tolerance: ToleranceOpt = 0.1,
    max_disk_usage: DiskOpt = 0.85,
    seed: SeedOpt = 0,
    time_limit: TimeLimitOpt = 10.0,
    out: OutOpt = None,
    rollback: RollbackOpt = None,
    election: ElectionOpt = None,
    summary_path: SummaryOpt = None,
    policy_dir: PolicyDirOpt = None,
    format: FormatOpt = SummaryFormat.TEXT,
    out_dir: OutDirOpt = None,
    batch_size: BatchSizeOpt = None,
    max_moves_per_broker: MovesOpt = None,
    batch_bytes: BatchBytesOpt = None,
    throttle: ThrottleOpt = None,
    html: ReportOpt = None,
) -> None:
    """Plan the fewest moves that meet every topic's placement policy.

    Default (repair): only partitions that break their policy, or sit on a drained or dead
    broker, change; each keeps what its policy allows and gains only what is missing.
    --rebalance also evens out every rack. The plan is checked by an independent checker
    before anything is written.
    """
    from .outputs import page_possible

    page_possible(html)
    live = Live(bootstrap_server, command_config, timeout, skip_unauthorized)
    live.check(("--current", current))
    given: Path | Live | None = live if live.bootstrap is not None else current
    caps = (batch_size, max_moves_per_broker, batch_bytes)
    batching = _batching(out_dir, caps, throttle, (given, sizes))
    _sizes_flag(sizes, given)
    _summary_flags(policy_dir, given, format, out, out_dir)
    files = {"--out": out, "--rollback": rollback, "--election": election}
    files |= {"--summary": summary_path, "--report": html}
    inputs = (inventory, topics, current, sizes, default_policy, command_config)
    outputs, named = _outputs(inputs, files, (out_dir, policy_dir))
    options = _options(rebalance, balance_leaders, tolerance, max_disk_usage, (time_limit, seed))
    request = _request(
        (inventory, topics, root, sizes, default_policy),
        (drain, exclude, repair, only_topics, leaders_in_first_rack),
        options,
        batching,
    )
    with outputs:
        result = _run(request, given)
        _write_files(result, named, _source(given, drain, exclude, options))
        written = outputs.commit()
    _finish(result, (outputs, written), (out, out_dir), format, policy_dir)


def _options(
    rebalance: bool,
    balance_leaders: bool,
    tolerance: float,
    max_disk_usage: float,
    solve: tuple[float, int],
) -> Any:
    """The planner's options: --rebalance, --balance-leaders, --tolerance,
    --max-disk-usage; ``solve``: --time-limit and --seed."""
    from placement.solver.cpsat import SolveParams
    from placement.solver.engine import Options

    params = SolveParams(time_limit=solve[0], seed=solve[1], workers=1)
    return Options(rebalance, balance_leaders, tolerance, max_disk_usage, params)


def _request(
    paths: tuple[Path | None, ...],
    asks: tuple[str | None, str | None, bool, str | None, bool],
    options: Any,
    batching: Any,
) -> Any:
    """The library's request. ``paths``: --inventory, --topics, --root, --sizes,
    --default-policy; ``asks``: --drain, --exclude, --repair, --only-topics,
    --leaders-in-first-rack (parsed here: a bad one is a usage error before any work)."""
    from placement.plan.front import AssignRequest

    inventory, topics, root, sizes, default_policy = paths
    drain, exclude, repair, only_topics, first_rack = asks
    return AssignRequest(
        inventory,
        topics,
        root,
        sizes=sizes,
        drain=_ids(drain, "--drain"),
        exclude=_ids(exclude, "--exclude"),
        options=options,
        default_policy=default_policy,
        repair=repair,
        only_topics=_pattern(only_topics),
        first_rack=first_rack,
        batching=batching,
        notify=_note,
    )


def _finish(
    result: Any,
    written: tuple[Any, Any],
    out: tuple[Path | None, Path | None],
    format: SummaryFormat,
    policy_dir: Path | None,
) -> None:
    """After the files: the plan on stdout when no file holds it (never when its
    rollback could not be written), the summary, what was written, the batches."""
    from .outputs import report

    if result.plan_text is not None and out == (None, None):
        sys.stdout.write(result.plan_text)  # with --out-dir, the batches are the output
    _show(result, format, policy_dir)
    report(*written)
    if result.batches is not None and out[1] is not None:
        from .plan import show_summary

        show_summary(result.batches, out[1], stderr=True)


def _run(request: Any, given: Path | Live | None) -> Any:
    """The library's `assign` over --current, or over the live cluster read once (then
    taken as its snapshot; a failure reading it names the cluster)."""
    from dataclasses import replace

    from placement.plan.front import run

    if not isinstance(given, Live):
        return run(replace(request, current=given))
    from placement.io.inventory import load_inventory

    inventory = request.inventory
    racks = load_inventory(inventory).inventory if inventory is not None else None
    snapshot = given.read(racks, "assign")
    with naming(snapshot):
        return run(replace(request, current=snapshot))


def _note(note: str) -> None:
    from .render import safe

    sys.stderr.write(f"note: {safe(note)}\n")


def _outputs(
    inputs: tuple[Path | None, ...],
    files: dict[str, Path | None],
    dirs: tuple[Path | None, Path | None],
) -> tuple[Any, dict[str, Any]]:
    """Every output, checked before any work: none is an input, none shares a path, none
    (--report included) lies inside --out-dir. ``dirs``: --out-dir and --policy-dir. The
    outputs, and each by flag (--out-dir first)."""
    from placement.io.outputs import Outputs
    from placement.plan.policies import SCRIPT

    out_dir, policy_dir = dirs
    _report_outside(files.get("--report"), out_dir)
    flags = (
        "--inventory",
        "--topics",
        "--current",
        "--sizes",
        "--default-policy",
        "--command-config",
    )
    outputs = Outputs.of(zip(flags, inputs, strict=True))
    named = {flag: outputs.add(flag, path) for flag, path in files.items() if path is not None}
    if out_dir is not None:
        named = {"--out-dir": outputs.add_dir("--out-dir", out_dir, marker="summary.json")} | named
    if policy_dir is not None:  # replaced only when empty or written by an earlier run
        named["--policy-dir"] = outputs.add_dir("--policy-dir", policy_dir, marker=SCRIPT)
    return outputs, named


def _report_outside(page: Path | None, out_dir: Path | None) -> None:
    """--report inside --out-dir, said plainly (`Outputs` refuses any output inside
    another, links included; this names why)."""
    if page is None or out_dir is None:
        return
    try:
        inside = out_dir.resolve() in page.resolve().parents
    except (OSError, RuntimeError):  # a loop of links, a name too long: Outputs names it
        return
    if inside:
        from placement.errors import UsageError

        raise UsageError(
            f"--report {page} is inside --out-dir {out_dir}: that directory is replaced as "
            "a whole and holds only the plan's files, so the page must lie outside it",
            f"e.g. --report {out_dir.name or 'plan'}.html beside it",
        )


def _source(
    current: Path | Live | None, drain: str | None, exclude: str | None, options: Any
) -> str:
    """How the run was asked for, under the page's title."""
    if isinstance(current, Live):
        parts = [f"--bootstrap-server {current.bootstrap}"]
    else:
        parts = [f"--current {current}" if current is not None else "a fresh layout"]
    parts += [f"{flag} {ids}" for flag, ids in (("--drain", drain), ("--exclude", exclude)) if ids]
    modes = (("--rebalance", options.rebalance), ("--balance-leaders", options.balance_leaders))
    parts += [flag for flag, on in modes if on]
    return "assign " + " ".join(parts)


def _summary_flags(
    policy_dir: Path | None,
    current: Path | Live | None,
    format: SummaryFormat,
    out: Path | None,
    out_dir: Path | None,
) -> None:
    """--policy-dir needs the cluster's policies; --format json needs stdout free."""
    from placement.errors import UsageError
    from placement.plan.inputs import current_kind

    if policy_dir is not None and (
        current is None or (isinstance(current, Path) and current_kind(current) == "reassignment")
    ):
        raise UsageError(
            "--policy-dir compares --topics with the cluster's policies: --current must be "
            "kafka-topics --describe output or a snapshot",
            "e.g. --current describe.txt --topics changes.json --policy-dir policy-changes",
        )
    if format is SummaryFormat.JSON and out is None and out_dir is None:
        raise UsageError(
            "--format json prints the summary on stdout, where the plan goes without --out",
            "add --out PLAN.json (or --out-dir DIR), or write the JSON with --summary FILE",
        )


def _show(result: Any, format: SummaryFormat, policy_dir: Path | None) -> None:
    """The summary: JSON on stdout, or text on stderr."""
    if format is SummaryFormat.JSON:
        sys.stdout.write(result.summary_json())
    else:
        summarize(result.outcome, policy_dir)


def _sizes_flag(sizes: Path | None, current: Path | Live | None) -> None:
    if sizes is not None and current is None:
        from placement.errors import UsageError

        raise UsageError(
            "--sizes gives the sizes of the current partitions: use it with --current "
            "or --bootstrap-server",
            "e.g. --current describe.txt --sizes log-dirs.txt",
        )


def _batching(
    out_dir: Path | None,
    caps: tuple[int | None, int | None, str | None],
    throttle: str | None,
    current: tuple[Path | Live | None, Path | None],
) -> Any:
    """--out-dir with ``caps`` (--batch-size, --max-moves-per-broker, --batch-bytes) and
    --throttle, checked and parsed; None without --out-dir."""
    from placement.plan.front import Batching

    rate, cap = _batch_flags(out_dir, *caps, throttle, current)
    if out_dir is None:
        return None
    return Batching(out_dir, caps[0], caps[1], cap, rate)


def _batch_flags(
    out_dir: Path | None,
    batch_size: int | None,
    max_moves_per_broker: int | None,
    batch_bytes: str | None,
    throttle: str | None,
    current: tuple[Path | Live | None, Path | None],
) -> tuple[int | None, int | None]:
    """The batching options go together; the throttle in bytes/s and the byte cap, if
    given. ``current``: the --current and --sizes paths. A byte cap without --sizes needs
    a snapshot (the split refuses one without sizes), before any planning."""
    from placement.errors import UsageError

    caps = (batch_size, max_moves_per_broker, batch_bytes)
    if any(c is not None for c in caps) != (out_dir is not None):
        raise UsageError(
            "--out-dir and a cap per batch (--batch-size, --max-moves-per-broker, "
            "--batch-bytes) go together",
            "e.g. --out-dir drain-plan --max-moves-per-broker 5 --batch-bytes 200GiB "
            "--throttle 50MB",
        )
    if throttle is not None and out_dir is None:
        raise UsageError("--throttle sets the ETA of batches: use it with --out-dir")
    rate = None
    if throttle is not None:
        rate = parse_size(throttle, "--throttle", ("50000000", "50MB", "48MiB"), rate=True)
    if batch_bytes is None:
        return rate, None
    cap = parse_size(batch_bytes, "--batch-bytes", ("200GiB", "500GB", "1.5TiB"))
    path, sizes = current
    if sizes is None:
        from placement.plan.inputs import current_kind

        # a live cluster is read as a snapshot: the split says if it has no sizes
        if path is None or (isinstance(path, Path) and current_kind(path) != "snapshot"):
            from placement.plan.batches import need_sizes

            raise need_sizes()
    return rate, cap


def _pattern(raw: str | None) -> Any:
    """--only-topics as a compiled regular expression (a bad one is a usage error)."""
    if raw is None:
        return None
    import re

    from placement.errors import UsageError

    try:
        return re.compile(raw)
    except re.error as exc:
        shown = raw if len(raw) <= 40 else raw[:37] + "..."
        raise UsageError(
            f"--only-topics: {shown!r} is not a regular expression ({exc.msg})",
            "e.g. --only-topics 'orders|payments-.*'",
        ) from None


def _write_files(result: Any, named: dict[str, Any], source: str) -> None:
    """Each named output holds this run's result, or no file at all (never an older
    plan); each file rendered only when asked for."""
    contents: dict[str, Callable[[], str | None]] = {
        "--out": lambda: result.plan_text,
        "--rollback": result.rollback_text,
        "--election": result.election_text,
        "--summary": result.summary_json,
        "--report": lambda: _page(result.summary, source),
    }
    for flag, output in named.items():
        if flag == "--out-dir":  # the batches: written whatever they hold
            output.files(result.batch_files)
            continue
        if flag == "--policy-dir":  # a directory of files; none removes a stale one
            policies = result.policy_files()
            if policies:
                output.files(policies)
            else:
                output.nothing()
            continue
        body = contents[flag]()
        if body is not None:
            output.write(body)
        else:
            output.nothing()


def _page(summary: Any, source: str) -> str:
    from placement.html.assign import render_assign  # matplotlib: only for --report

    return render_assign(summary, source=source)


def summarize(outcome: Any, policy_dir: Path | None = None) -> None:
    """The summary on stderr: what changes, how close to the bound, balance before/after,
    and the policy changes to make first."""
    from rich.console import Console

    from .degraded import print_degraded

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    _notes(console, outcome)
    print_degraded(console, outcome.degraded)
    gap = outcome.replicas_added - outcome.lower_bound
    pct = f": +{gap / outcome.lower_bound:.2%}" if gap and outcome.lower_bound else ""
    moved = outcome.bytes_to_move
    console.print(
        f"partitions changed: {len(outcome.plan)}\n"
        f"replicas added: {outcome.replicas_added}, removed: {outcome.replicas_removed}, "
        f"bytes to move: {'unknown (no partition sizes)' if moved is None else f'{moved:,}'}\n"
        f"lower bound on added replicas: {outcome.lower_bound} (plan is {gap} above it{pct})"
    )
    if outcome.bytes_bound is not None:
        console.print(
            f"bytes over the cap that had to leave their broker: >= {outcome.bytes_bound:,}"
        )
    if any(b.status == "drained" for b in outcome.brokers):
        console.print(f"replicas left on drained brokers: {outcome.left_on_drained}")
    console.print(_balance_table(outcome))
    _goal_lines(console, outcome)
    _topic_lines(console, outcome)
    console.print(f"engine: {outcome.engine}; {outcome.seconds:.2f} s")
    if not outcome.plan:
        console.print(_nothing(outcome))
    if "rebalance" not in outcome.engine and any(
        b.after[1] - b.after[0] > 1 for b in outcome.balance
    ):
        console.print("hint: some racks are uneven; --rebalance evens them with the fewest moves")
    _policy_lines(console, outcome, policy_dir)


def _nothing(outcome: Any) -> str:
    """Why the plan is empty, said as it is."""
    if outcome.left_alone:
        n = sum(t.partitions for t in outcome.left_alone)
        return (
            f"no reassignment: nothing asked needs a change; {n} partition(s) outside the "
            "scope break their rule (listed above; --repair changes them)"
        )
    if outcome.policy_changes:
        return "no reassignment: every partition already meets its policy"
    return "nothing to do: every partition already follows its rule"


TOPICS_SHOWN = 10  # topics of the per-topic breakdown in the text summary


def _topic_lines(console: Any, outcome: Any) -> None:
    """The per-topic breakdown (largest first) and the topics left alone."""
    from .render import cell

    rows = outcome.topics
    if rows:
        console.print(f"per topic ({len(rows)} changed, largest first):")
        for t in rows[:TOPICS_SHOWN]:
            size = "unknown" if t.bytes_to_move is None else f"{t.bytes_to_move:,}"
            console.print(
                cell(
                    f"  {t.topic} ({t.rule}): {t.partitions_changed} partition(s), "
                    f"+{t.replicas_added} -{t.replicas_removed} replicas, bytes {size}, "
                    f"{t.leadership_changes} leadership change(s)"
                )
            )
        if len(rows) > TOPICS_SHOWN:
            console.print(f"  and {len(rows) - TOPICS_SHOWN} more (--format json lists all)")
    alone = outcome.left_alone
    if alone:
        n = sum(t.partitions for t in alone)
        console.print(
            f"left alone: {n} partition(s) of {len(alone)} topic(s) break their rule outside "
            "what was asked (--repair changes them):"
        )
        for t in alone[:TOPICS_SHOWN]:
            console.print(cell(f"  {t.topic} ({t.rule}): {t.partitions}"))
        if len(alone) > TOPICS_SHOWN:
            console.print(f"  and {len(alone) - TOPICS_SHOWN} more (--format json lists all)")
    if outcome.offline_kept:
        console.print(
            f"offline partitions not moved: {outcome.offline_kept} (no leader to copy from)"
        )
    if outcome.in_flight_kept:
        console.print(
            f"partitions not moved: {outcome.in_flight_kept} "
            "(a reassignment is in progress; plan again once it completes)"
        )


def _notes(console: Any, outcome: Any) -> None:
    """Topics left alone or missing, brokers the inventory does not place."""
    from .render import cell  # topic names: escaped, no markup

    rules = outcome.rules
    if rules:
        console.print(
            f"topics: {rules.get('policy', 0)} with a policy of their own, "
            f"{rules.get('default', 0)} on the cluster default, "
            f"{rules.get('rack-aware', 0)} on Kafka's rack-aware rule (no policy)"
        )
    creates = {c.topic for c in outcome.policy_changes if c.action == "create"}
    for topic in outcome.missing_topics:
        then = " (see the policy changes)" if topic in creates else ""
        console.print(
            cell(
                f"note: topic {topic} is in --topics but not in the cluster: create it first{then}"
            )
        )
    if outcome.brokers_from == "snapshot":
        console.print("note: brokers and racks from the snapshot's brokers table")
    for ids, what in (
        (outcome.unknown_brokers, "are not in --inventory: their replicas"),
        (outcome.rackless_brokers, "have no rack in --inventory: their replicas"),
    ):
        if ids:
            console.print(
                f"warning: broker(s) {', '.join(map(str, ids))} hold replicas of the current "
                f"assignment but {what} are moved off them"
            )


# why the configs go first, as the summary says it (docs/formats.md, policy changes)
POLICY_FIRST = (
    "make them before the reassignment runs: a policy change moves no data, and until it "
    "is made the partitions the plan moves break the policy the cluster has"
)


def _policy_lines(console: Any, outcome: Any, policy_dir: Path | None) -> None:
    """The topics whose policy the cluster must get first, and how."""
    import shlex

    from placement.plan.policies import SCRIPT

    from .render import cell

    changes = outcome.policy_changes
    if not changes:
        return
    listed = ", ".join(f"{c.topic} ({c.action})" for c in changes)
    console.print(cell(f"policy changes: {len(changes)} topic(s): {listed}"))
    console.print(cell(f"  {POLICY_FIRST}"))
    if policy_dir is not None:
        # quoted to be pasted into a shell; cell() shows any control character escaped
        console.print(cell(f"  run first: sh {shlex.quote(str(policy_dir / SCRIPT))} HOST:PORT"))
    else:
        console.print("  --policy-dir DIR writes the policy files and the commands")


def _balance_table(outcome: Any) -> Any:
    """Replicas and preferred leaders per broker of each rack, before and after."""
    from rich.table import Table

    from .render import cell  # rack names: escaped, no markup

    table = Table(box=None, pad_edge=False, show_edge=False)
    for col in ("rack", "replicas/broker before", "after", "leaders/broker before", "after"):
        table.add_column(col)
    leaders = {b.rack: b for b in outcome.leaders}
    for b in outcome.balance:
        lead = leaders.get(b.rack)
        table.add_row(
            cell(b.rack),
            f"{b.before[0]}..{b.before[1]}",
            f"{b.after[0]}..{b.after[1]}",
            f"{lead.before[0]}..{lead.before[1]}" if lead else "-",
            f"{lead.after[0]}..{lead.after[1]}" if lead else "-",
        )
    return table


def _goal_lines(console: Any, outcome: Any) -> None:
    """Every goal before -> after with its bound; leadership changes; CP-SAT's racks."""
    from .render import cell

    for g in outcome.goals:
        console.print(
            cell(
                f"{g.name}: "
                + (f"{g.before:g} -> " if g.before is not None else "")
                + f"{g.value:g}"
                + (f" (lower bound {g.bound:g})" if g.bound is not None else "")
            )
        )
    if outcome.leader_stats is not None and outcome.election:
        ls = outcome.leader_stats
        console.print(
            f"leadership changes: {len(outcome.election)} ({ls.forced} forced: the old "
            f"leader left the partition or became an observer; "
            f"{len(outcome.election) - ls.forced} chosen; lower bound {ls.bound})"
        )
        if ls.uneven:
            console.print(
                cell(
                    f"leaders stay uneven in {', '.join(ls.uneven)}: no reordering of sync "
                    "replicas evens them (partitions there have a single sync replica in the "
                    "lead rack)"
                )
            )
    for r in outcome.exact:
        res = r.result
        console.print(
            cell(
                f"CP-SAT {r.rack}: {res.status}, objective {res.objective}, bound {res.bound}, "
                f"{res.seconds:.2f} s; fast path {r.fast_cost}; "
                + ("CP-SAT plan used" if r.used else "fast plan kept")
            )
        )
