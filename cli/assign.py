"""`mrc-plan assign`: plan a reassignment, check it, write it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

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
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
}


# the largest throttle: what summary.json (an int64 there, as in Kafka's configs) holds
MAX_RATE = 2**63 - 1
# options that reach the solver: CP-SAT's random_seed is an int32, and time and
# tolerance must stay finite numbers (inf and nan are refused by these bounds too)
MAX_SEED = 2**31 - 1
MAX_TIME_LIMIT = 1e6
MAX_TOLERANCE = 1e6


def parse_rate(raw: str) -> int:
    """Bytes per second from ``50000000``, ``50MB`` or ``48MiB`` (optionally ``/s``),
    1 to 2^63-1, computed exactly (a 400-digit figure is refused, not a float overflow)."""
    import re
    from fractions import Fraction

    from placement.errors import UsageError

    hint = "e.g. --throttle 50000000, --throttle 50MB or --throttle 48MiB"
    m = re.fullmatch(r"\s*([0-9]+)(\.[0-9]+)?\s*([A-Za-z]*?)(?:/s)?\s*", raw)
    unit = m.group(3).upper() if m else ""
    if m is None or unit not in UNITS:
        raise UsageError(f"--throttle: expected bytes per second, found {raw!r}", hint)
    whole, fraction = m.group(1).lstrip("0"), (m.group(2) or "")[:31]  # exact enough
    rate = int(Fraction(whole + fraction or "0") * UNITS[unit]) if len(whole) <= 30 else 0
    if not 1 <= rate <= MAX_RATE:
        shown = raw if len(raw) <= 40 else raw[:37] + "..."
        raise UsageError(f"--throttle: {shown!r} is not 1 to {MAX_RATE:,} bytes per second", hint)
    return rate


def _ids(raw: str | None, flag: str) -> list[int]:
    """Broker ids as Kafka has them (ASCII digits, 0..2^31-1); none for an empty value."""
    from placement.simulate.failure import parse_ids

    if not raw or not raw.replace(" ", "").replace(",", ""):
        return []
    return parse_ids(raw, flag)


InventoryOpt = Annotated[Path, typer.Option(help="Broker inventory (JSON, CSV or directory).")]
TopicsOpt = Annotated[Path, typer.Option(help="Topics file: the desired state and policies.")]
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
OutDirOpt = Annotated[
    Path | None,
    typer.Option(
        help="Write the plan in batches here: plan-0001.json ..., a rollback file per "
        "batch, leaders.json + election.json, summary.json. Needs --batch-size and/or "
        "--max-moves-per-broker.",
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
    inventory: InventoryOpt,
    topics: TopicsOpt,
    root: RootOption = None,
    current: CurrentOpt = None,
    sizes: SizesOpt = None,
    drain: DrainOpt = None,
    exclude: ExcludeOpt = None,
    rebalance: RebalanceOpt = False,
    balance_leaders: BalanceLeadersOpt = False,
    tolerance: ToleranceOpt = 0.1,
    max_disk_usage: DiskOpt = 0.85,
    seed: SeedOpt = 0,
    time_limit: TimeLimitOpt = 10.0,
    out: OutOpt = None,
    rollback: RollbackOpt = None,
    election: ElectionOpt = None,
    summary_path: SummaryOpt = None,
    out_dir: OutDirOpt = None,
    batch_size: BatchSizeOpt = None,
    max_moves_per_broker: MovesOpt = None,
    throttle: ThrottleOpt = None,
) -> None:
    """Plan the fewest moves that meet every topic's placement policy.

    Default (repair): only partitions that break their policy, or sit on a drained or dead
    broker, change; each keeps what its policy allows and gains only what is missing.
    --rebalance also evens out every rack. The plan is checked by an independent checker
    before anything is written.
    """
    from placement.io.outputs import Outputs
    from placement.solver.cpsat import SolveParams
    from placement.solver.engine import Options

    from .outputs import report

    rate = _batch_flags(out_dir, batch_size, max_moves_per_broker, throttle)
    _sizes_flag(sizes, current)
    # every output is checked before any work: none is an input, none shares a path
    outputs = Outputs.of(
        [
            ("--inventory", inventory),
            ("--topics", topics),
            ("--current", current),
            ("--sizes", sizes),
        ]
    )
    files = (("--out", out), ("--rollback", rollback), ("--election", election))
    named = {
        flag: outputs.add(flag, path)
        for flag, path in (*files, ("--summary", summary_path))
        if path is not None
    }
    dir_out = outputs.add_dir("--out-dir", out_dir, marker="summary.json") if out_dir else None
    params = SolveParams(time_limit=time_limit, seed=seed, workers=1)
    options = Options(rebalance, balance_leaders, tolerance, max_disk_usage, params)
    with outputs:
        outcome, known = _plan(inventory, topics, root, (current, sizes), drain, exclude, options)
        text = _write_files(outcome, named)
        batches = None
        if dir_out is not None:
            batches = _write_batches(
                dir_out, outcome, known, batch_size, max_moves_per_broker, rate
            )
        written = outputs.commit()
    if text is not None and out is None and out_dir is None:
        # after the files: a plan is never printed when its rollback could not be written
        sys.stdout.write(text)  # with --out-dir, the batches are the output
    summarize(outcome)
    report(outputs, written)
    if batches is not None and out_dir is not None:
        from placement.plan.batches import summary

        from .plan import show_summary

        show_summary(summary(batches, rate), out_dir, stderr=True)


def _sizes_flag(sizes: Path | None, current: Path | None) -> None:
    if sizes is not None and current is None:
        from placement.errors import UsageError

        raise UsageError(
            "--sizes gives the sizes of the current partitions: use it with --current",
            "e.g. --current describe.txt --sizes log-dirs.txt",
        )


def _write_batches(
    dir_out: Any,
    outcome: Any,
    known: Any,
    batch_size: int | None,
    max_moves_per_broker: int | None,
    rate: int | None,
) -> Any:
    """Split the plan into batches, check them independently, stage the directory's files."""
    from placement.plan.batches import render_files, split_checked

    batches = split_checked(
        outcome.plan,
        {a.key: a for a in outcome.rollback},
        known,
        batch_size=batch_size,
        max_moves_per_broker=max_moves_per_broker,
    )
    dir_out.files(render_files(batches, rate))
    return batches


def _batch_flags(
    out_dir: Path | None,
    batch_size: int | None,
    max_moves_per_broker: int | None,
    throttle: str | None,
) -> int | None:
    """The batching options go together; the throttle in bytes/s, if given."""
    from placement.errors import UsageError

    batching = batch_size is not None or max_moves_per_broker is not None
    if batching != (out_dir is not None):
        raise UsageError(
            "--out-dir and --batch-size/--max-moves-per-broker go together",
            "e.g. --out-dir drain-plan --max-moves-per-broker 5 --throttle 50MB",
        )
    if throttle is not None and out_dir is None:
        raise UsageError("--throttle sets the ETA of batches: use it with --out-dir")
    return parse_rate(throttle) if throttle is not None else None


def _current(current: Path | None, sizes: Path | None) -> Any:
    """The current state, its partition sizes from ``sizes`` when given (they replace a
    snapshot's); what the sizes file says about itself and how it fits, on stderr."""
    if current is None:
        return None
    from dataclasses import replace

    from placement.io.convert import coverage_notes, load_sizes
    from placement.io.current import read_current

    from .render import safe

    state = read_current(current)
    if sizes is None:
        return state
    loaded = load_sizes(sizes)
    keys = {a.key for a in state.assignments}
    notes = loaded.notes + coverage_notes(loaded.sizes, keys, str(sizes), "--current")
    if state.sizes:
        notes.insert(0, f"--sizes {sizes} replaces the partition sizes in the snapshot {current}")
    for note in notes:
        sys.stderr.write(f"note: {safe(note)}\n")
    return replace(state, sizes={k: v for k, v in loaded.sizes.items() if k in keys})


def _plan(
    inventory: Path,
    topics: Path,
    root: Path | None,
    current: tuple[Path | None, Path | None],
    drain: str | None,
    exclude: str | None,
    options: Any,
) -> tuple[Any, dict[tuple[str, int], int]]:
    """Read the inputs and plan: the outcome, and the partition sizes the batches use.
    ``current``: the --current and --sizes paths."""
    from placement.io.inventory import load_inventory
    from placement.plan.assign import assign as run_assign
    from placement.plan.topics import read_topics
    from placement.rules.base import CheckContext

    loaded = load_inventory(inventory)
    specs = read_topics(topics, CheckContext(loaded.inventory), refs_root=root)
    state = _current(*current)
    outcome = run_assign(
        loaded,
        specs,
        state,
        drain=_ids(drain, "--drain"),
        exclude=_ids(exclude, "--exclude"),
        options=options,
    )
    return outcome, (state.sizes if state is not None else {})


def _write_files(outcome: Any, named: dict[str, Any]) -> str | None:
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
        "--summary": lambda: report_json(outcome.summary()),
    }
    for flag, output in named.items():
        body = contents[flag]()
        if body is not None:
            output.write(body)
        else:
            output.nothing()
    return text


def summarize(outcome: Any) -> None:
    """The summary on stderr: what changes, how close to the bound, balance before/after."""
    from rich.console import Console

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    _notes(console, outcome)
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
    console.print(_balance_table(outcome))
    _goal_lines(console, outcome)
    console.print(f"engine: {outcome.engine}; {outcome.seconds:.2f} s")
    if not outcome.plan:
        console.print("nothing to do: every partition already meets its policy")
    if "rebalance" not in outcome.engine and any(
        b.after[1] - b.after[0] > 1 for b in outcome.balance
    ):
        console.print("hint: some racks are uneven; --rebalance evens them with the fewest moves")


def _notes(console: Any, outcome: Any) -> None:
    """Topics left alone or missing, brokers the inventory does not place."""
    from .render import cell  # topic names: escaped, no markup

    for topic in outcome.unmanaged_topics:
        console.print(
            cell(
                f"note: topic {topic} has no placement policy in --topics or the cluster: "
                "left alone"
            )
        )
    for topic in outcome.missing_topics:
        console.print(
            cell(f"note: topic {topic} is in --topics but not in the cluster: create it first")
        )
    for ids, what in (
        (outcome.unknown_brokers, "are not in --inventory: replicas of topics with a policy"),
        (outcome.rackless_brokers, "have no rack in --inventory: replicas of topics with a policy"),
    ):
        if ids:
            console.print(
                f"warning: broker(s) {', '.join(map(str, ids))} hold replicas of the current "
                f"assignment but {what} are moved off them"
            )


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
            f"leadership changes: {len(outcome.election)} (lower bound {ls.bound}; "
            f"{ls.forced} forced: the old leader left its partition or its lead rack)"
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
