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
    from placement.solver.cpsat import SolveParams
    from placement.solver.engine import Options

    from .outputs import page_possible, report

    page_possible(html)
    live = Live(bootstrap_server, command_config, timeout, skip_unauthorized)
    live.check(("--current", current))
    given: Path | Live | None = live if live.bootstrap is not None else current
    rate, cap = _batch_flags(
        out_dir, batch_size, max_moves_per_broker, batch_bytes, throttle, (given, sizes)
    )
    _sizes_flag(sizes, given)
    _summary_flags(policy_dir, given, format, out, out_dir)
    files = {"--out": out, "--rollback": rollback, "--election": election}
    files |= {"--summary": summary_path, "--report": html}
    outputs, named, dir_out = _outputs(
        (inventory, topics, current, sizes, default_policy, command_config), files, out_dir
    )
    if policy_dir is not None:
        named["--policy-dir"] = _policy_output(outputs, policy_dir)
    params = SolveParams(time_limit=time_limit, seed=seed, workers=1)
    options = Options(rebalance, balance_leaders, tolerance, max_disk_usage, params)
    with outputs:
        asks = (default_policy, repair, only_topics, leaders_in_first_rack)
        outcome, known = _plan(
            inventory, topics, root, (given, sizes), drain, exclude, options, asks
        )
        batches = None
        if dir_out is not None:
            batches = _write_batches(
                dir_out, outcome, known, (batch_size, max_moves_per_broker, cap), rate
            )
        summary = _summary(outcome, batches, out_dir)
        text = _write_files(outcome, summary, named, _source(given, drain, exclude, options))
        written = outputs.commit()
    if text is not None and out is None and out_dir is None:
        # after the files: a plan is never printed when its rollback could not be written
        sys.stdout.write(text)  # with --out-dir, the batches are the output
    _show(outcome, summary, format, policy_dir)
    report(outputs, written)
    if batches is not None and out_dir is not None:
        from .plan import show_summary

        show_summary(batches, out_dir, stderr=True)


def _outputs(
    inputs: tuple[Path | None, ...], files: dict[str, Path | None], out_dir: Path | None
) -> tuple[Any, dict[str, Any], Any]:
    """Every output, checked before any work: none is an input, none shares a path, none
    (--report included) lies inside --out-dir. The outputs, the files by flag, the
    directory's."""
    from placement.io.outputs import Outputs

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
    dir_out = outputs.add_dir("--out-dir", out_dir, marker="summary.json") if out_dir else None
    return outputs, named, dir_out


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


def _summary(outcome: Any, batches: dict[str, Any] | None, out_dir: Path | None) -> Any:
    """The JSON summary, made once and only when asked for (--summary, --format json,
    --report); with --out-dir it holds the batches as `plan show` reads them."""
    from functools import cache

    @cache
    def make() -> Any:
        view = None
        if batches is not None and out_dir is not None:
            from placement.io.summary import batches_view

            view = batches_view(batches, out_dir)
        return outcome.summary(view)

    return make


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


def _show(outcome: Any, summary: Any, format: SummaryFormat, policy_dir: Path | None) -> None:
    """The summary: JSON on stdout, or text on stderr."""
    if format is SummaryFormat.JSON:
        from placement.diagnostics.jsonout import report_json

        sys.stdout.write(report_json(summary()))
    else:
        summarize(outcome, policy_dir)


def _policy_output(outputs: Any, policy_dir: Path) -> Any:
    """The --policy-dir directory: replaced only when empty or written by an earlier run."""
    from placement.plan.policies import SCRIPT

    return outputs.add_dir("--policy-dir", policy_dir, marker=SCRIPT)


def _write_policies(policy_out: Any, outcome: Any) -> None:
    """The policy files and their commands; none (a stale directory removed) without a
    change."""
    from placement.plan.policies import render_policy_dir

    files = render_policy_dir(outcome.policy_changes)
    if files:
        policy_out.files(files)
    else:
        policy_out.nothing()


def _sizes_flag(sizes: Path | None, current: Path | Live | None) -> None:
    if sizes is not None and current is None:
        from placement.errors import UsageError

        raise UsageError(
            "--sizes gives the sizes of the current partitions: use it with --current "
            "or --bootstrap-server",
            "e.g. --current describe.txt --sizes log-dirs.txt",
        )


def _write_batches(
    dir_out: Any,
    outcome: Any,
    known: Any,
    caps: tuple[int | None, int | None, int | None],
    rate: int | None,
) -> Any:
    """Split the plan into batches under ``caps`` (partitions, moves per broker, bytes),
    check them independently, stage the directory's files. Returns their summary.json
    document; the batches that are one oversized partition each are noted on stderr."""
    from placement.plan.batches import render_files, split_checked, summary

    batch_size, max_moves_per_broker, batch_bytes = caps
    batches = split_checked(
        outcome.plan,
        {a.key: a for a in outcome.rollback},
        known,
        batch_size=batch_size,
        max_moves_per_broker=max_moves_per_broker,
        batch_bytes=batch_bytes,
        current_leaders=outcome.senders,
    )
    dir_out.files(render_files(batches, rate))
    doc = summary(batches, rate)
    alone = [row["file"] for row in doc["batches"] if row["oversized"]]
    if alone:
        listed = ", ".join(alone[:5]) + (f" and {len(alone) - 5:,} more" if len(alone) > 5 else "")
        sys.stderr.write(
            f"note: {len(alone):,} partition(s) copy more than --batch-bytes {batch_bytes:,} "
            f"bytes on their own: each is a batch alone ({listed})\n"
        )
    return doc


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


def _current(current: Any, sizes: Path | None) -> Any:
    """The current state (``current``: the --current path, or the snapshot read from a
    live cluster), its partition sizes from ``sizes`` when given (they replace a
    snapshot's); what the sizes file says about itself and how it fits, on stderr."""
    if current is None:
        return None
    from dataclasses import replace

    from placement.io.convert import coverage_notes, load_sizes
    from placement.io.current import read_current, snapshot_state

    from .render import safe

    live = not isinstance(current, Path)
    state = snapshot_state(current) if live else read_current(current)
    if sizes is None:
        return state
    loaded = load_sizes(sizes)
    keys = {a.key for a in state.assignments}
    where = current.source if live else "--current"
    notes = loaded.notes + coverage_notes(loaded.sizes, keys, str(sizes), where)
    if state.sizes:
        snapshot = current.source if live else f"the snapshot {current}"
        notes.insert(0, f"--sizes {sizes} replaces the partition sizes in {snapshot}")
    for note in notes:
        sys.stderr.write(f"note: {safe(note)}\n")
    return replace(state, sizes={k: v for k, v in loaded.sizes.items() if k in keys})


def _plan(
    inventory: Path | None,
    topics: Path | None,
    root: Path | None,
    current: tuple[Path | Live | None, Path | None],
    drain: str | None,
    exclude: str | None,
    options: Any,
    asks: tuple[Path | None, bool, str | None, bool] = (None, False, None, False),
) -> tuple[Any, dict[tuple[str, int], int]]:
    """Read the inputs and plan: the outcome, and the partition sizes the batches use.
    ``current``: the --current path (or the live cluster to read) and --sizes;
    ``asks``: --default-policy, --repair, --only-topics, --leaders-in-first-rack."""
    from placement.plan.assign import Ask
    from placement.plan.assign import assign as run_assign
    from placement.plan.inputs import DefaultPolicies, read_default_policy, read_inputs
    from placement.rules.base import CheckContext

    from .render import safe

    given, sizes = current
    if isinstance(given, Live):  # the cluster read once, then taken as its snapshot
        from placement.io.inventory import load_inventory

        racks = load_inventory(inventory).inventory if inventory is not None else None
        source: Any = given.read(racks, "assign")
    else:
        source = given
    inputs = read_inputs(inventory, topics, source, root)
    for note in inputs.notes:
        sys.stderr.write(f"note: {safe(note)}\n")
    from contextlib import nullcontext

    with naming(source) if isinstance(given, Live) else nullcontext():
        state = _current(source, sizes)
    if topics is not None:  # a count left out, or one the cluster does not have: exit 2
        from placement.plan.honest import check_topics

        check_topics(inputs.topics, topics, state)
    outcome = run_assign(
        inputs.loaded,
        inputs.topics,
        state,
        drain=_ids(drain, "--drain"),
        exclude=_ids(exclude, "--exclude"),
        options=options,
        policies_known=inputs.policies_known,
        brokers_from=inputs.brokers_from,
        ask=Ask(
            repair=asks[1],
            only_topics=_pattern(asks[2]),
            first_rack=asks[3],
            defaults=(
                read_default_policy(asks[0], CheckContext(inputs.loaded.inventory))
                if asks[0] is not None
                else DefaultPolicies()
            ),
        ),
    )
    return outcome, (state.sizes if state is not None else {})


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


def _write_files(
    outcome: Any, summary: Callable[[], Any], named: dict[str, Any], source: str
) -> str | None:
    """Each named output holds this run's result, or no file at all (never an older
    plan). Returns the plan's text (None: nothing to do)."""
    from placement.diagnostics.jsonout import report_json
    from placement.io.reassignment import render_election, render_reassignment

    text = render_reassignment(outcome.plan) if outcome.plan else None
    # rendered only when asked for: a rollback of a large plan is as big as the plan
    contents: dict[str, Callable[[], str | None]] = {
        "--out": lambda: text,
        # the partitions the plan changes that exist already
        "--rollback": lambda: render_reassignment(outcome.rollback) if outcome.rollback else None,
        "--election": lambda: render_election(outcome.election) if outcome.election else None,
        "--summary": lambda: report_json(summary()),
        "--report": lambda: _page(summary(), source),
    }
    for flag, output in named.items():
        if flag == "--policy-dir":  # a directory of files
            _write_policies(output, outcome)
            continue
        body = contents[flag]()
        if body is not None:
            output.write(body)
        else:
            output.nothing()
    return text


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
