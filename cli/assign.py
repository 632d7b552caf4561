"""`mrc-plan assign`: plan a reassignment, check it, write it.

The flags map to the library's `AssignRequest` (placement/plan/front.py), whose result
holds every file this writes. The options are declared in cli/assign_options.py, the
checks across flags are in cli/assign_flags.py, the text summary in cli/assign_text.py.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .assign_flags import batching_of, pattern, report_outside, sizes_flag, summary_flags
from .assign_options import (
    BalanceLeadersOpt,
    BatchBytesOpt,
    BatchSizeOpt,
    CurrentOpt,
    DefaultPolicyOpt,
    DiskOpt,
    DrainOpt,
    ElectionOpt,
    ExcludeOpt,
    FirstRackOpt,
    FormatOpt,
    InventoryOpt,
    MovesOpt,
    OnlyTopicsOpt,
    OutDirOpt,
    OutOpt,
    PolicyDirOpt,
    RebalanceOpt,
    RepairOpt,
    ReportOpt,
    RollbackOpt,
    RootOption,
    SeedOpt,
    SizesOpt,
    SummaryFormat,
    SummaryOpt,
    ThrottleOpt,
    TimeLimitOpt,
    ToleranceOpt,
    TopicsOpt,
    broker_ids,
)
from .assign_options import parse_size as parse_size  # where the tests have it
from .cluster_options import (
    BootstrapOpt,
    CommandConfigOpt,
    Live,
    SkipUnauthorizedOpt,
    TimeoutOpt,
    naming,
)
from .errors import handle_errors
from .outputs import page_possible, report
from .plan import show_summary

if TYPE_CHECKING:
    from placement.io.outputs import Outcome, Output, Outputs
    from placement.plan.front import AssignRequest, AssignResult, Batching
    from placement.plan.summary import AssignSummary
    from placement.solver.engine import Options


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
    page_possible(html)
    live = Live(bootstrap_server, command_config, timeout, skip_unauthorized)
    live.check(("--current", current))
    given: Path | Live | None = live if live.bootstrap is not None else current
    caps = (batch_size, max_moves_per_broker, batch_bytes)
    batching = batching_of(out_dir, caps, throttle, (given, sizes))
    sizes_flag(sizes, given)
    summary_flags(policy_dir, given, format, out, out_dir)
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
) -> Options:
    """The planner's options: --rebalance, --balance-leaders, --tolerance,
    --max-disk-usage; ``solve``: --time-limit and --seed."""
    from placement.solver.cpsat import SolveParams
    from placement.solver.engine import Options

    params = SolveParams(time_limit=solve[0], seed=solve[1], workers=1)
    return Options(rebalance, balance_leaders, tolerance, max_disk_usage, params)


def _request(
    paths: tuple[Path | None, ...],
    asks: tuple[str | None, str | None, bool, str | None, bool],
    options: Options,
    batching: Batching | None,
) -> AssignRequest:
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
        drain=broker_ids(drain, "--drain"),
        exclude=broker_ids(exclude, "--exclude"),
        options=options,
        default_policy=default_policy,
        repair=repair,
        only_topics=pattern(only_topics),
        first_rack=first_rack,
        batching=batching,
        notify=_note,
    )


def _finish(
    result: AssignResult,
    written: tuple[Outputs, list[Outcome]],
    out: tuple[Path | None, Path | None],
    format: SummaryFormat,
    policy_dir: Path | None,
) -> None:
    """After the files: the plan on stdout when no file holds it (never when its
    rollback could not be written), the summary, what was written, the batches."""
    if result.plan_text is not None and out == (None, None):
        sys.stdout.write(result.plan_text)  # with --out-dir, the batches are the output
    _show(result, format, policy_dir)
    report(*written)
    if result.batches is not None and out[1] is not None:
        show_summary(result.batches, out[1], stderr=True)


def _run(request: AssignRequest, given: Path | Live | None) -> AssignResult:
    """The library's `assign` over --current, or over the live cluster read once (then
    taken as its snapshot; a failure reading it names the cluster)."""
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
) -> tuple[Outputs, dict[str, Output]]:
    """Every output, checked before any work: none is an input, none shares a path, none
    (--report included) lies inside --out-dir. ``dirs``: --out-dir and --policy-dir. The
    outputs, and each by flag (--out-dir first)."""
    from placement.io.outputs import Outputs
    from placement.plan.policies import SCRIPT

    out_dir, policy_dir = dirs
    report_outside(files.get("--report"), out_dir)
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


def _source(
    current: Path | Live | None, drain: str | None, exclude: str | None, options: Options
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


def _show(result: AssignResult, format: SummaryFormat, policy_dir: Path | None) -> None:
    """The summary: JSON on stdout, or text on stderr."""
    if format is SummaryFormat.JSON:
        sys.stdout.write(result.summary_json())
    else:
        from .assign_text import summarize

        summarize(result.outcome, policy_dir)


def _write_files(result: AssignResult, named: dict[str, Output], source: str) -> None:
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
            assert result.batch_files is not None  # --out-dir: the request had batching
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


def _page(summary: AssignSummary, source: str) -> str:
    from placement.html.assign import render_assign

    return render_assign(summary, source=source)
