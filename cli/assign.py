"""`mrc-plan assign`: plan a reassignment, check it, write it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from .errors import handle_errors


def _ids(raw: str | None, flag: str) -> list[int]:
    from placement.errors import UsageError

    if not raw:
        return []
    try:
        return [int(x) for x in raw.replace(" ", "").split(",") if x]
    except ValueError:
        raise UsageError(
            f"{flag}: expected broker ids separated by commas, found {raw!r}", f"e.g. {flag} 4,5,6"
        ) from None


@handle_errors
def assign(
    inventory: Annotated[Path, typer.Option(help="Broker inventory (JSON, CSV or directory).")],
    topics: Annotated[Path, typer.Option(help="Topics file: the desired state and policies.")],
    current: Annotated[
        Path | None,
        typer.Option(
            help="Current assignment: reassignment JSON, kafka-topics --describe output, or a "
            "snapshot directory. Without it every partition is assigned from scratch."
        ),
    ] = None,
    drain: Annotated[
        str | None, typer.Option(help="Broker ids to empty, e.g. 4,5 (before removing them).")
    ] = None,
    exclude: Annotated[
        str | None,
        typer.Option(help="Broker ids that take no new replica (existing ones may stay)."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Write the reassignment JSON here (atomically); default: stdout."),
    ] = None,
    rollback: Annotated[
        Path | None,
        typer.Option(
            help="Write the current assignment of exactly the partitions the plan changes."
        ),
    ] = None,
) -> None:
    """Plan the fewest moves that meet every topic's placement policy (repair mode).

    Only partitions that break their policy, or sit on a drained or dead broker, change;
    each keeps what its policy allows and gains only what is missing. The plan is checked
    by an independent checker before anything is written.
    """
    from placement.io.atomic import write_atomic
    from placement.io.inventory import load_inventory
    from placement.io.reassignment import render_reassignment
    from placement.io.topics import read_topics
    from placement.plan.assign import assign as run_assign
    from placement.plan.assign import read_current
    from placement.rules.base import CheckContext

    loaded = load_inventory(inventory)
    specs = read_topics(topics, CheckContext(loaded.inventory))
    state = read_current(current) if current is not None else None
    outcome = run_assign(
        loaded, specs, state, drain=_ids(drain, "--drain"), exclude=_ids(exclude, "--exclude")
    )
    err = sys.stderr.write
    for topic in outcome.unmanaged_topics:
        err(f"note: topic {topic} has no placement policy in --topics or the cluster: left alone\n")
    for topic in outcome.missing_topics:
        err(f"note: topic {topic} is in --topics but not in the cluster: create it first\n")
    if outcome.plan:
        text = render_reassignment(outcome.plan)
        if out is None:
            sys.stdout.write(text)
        else:
            write_atomic(out, text)
        if rollback is not None and outcome.rollback:
            write_atomic(rollback, render_reassignment(outcome.rollback))
    gap = outcome.replicas_added - outcome.lower_bound
    err(
        f"partitions changed: {len(outcome.plan)}\n"
        f"replicas added: {outcome.replicas_added}, removed: {outcome.replicas_removed}, "
        f"bytes to move: {outcome.bytes_to_move:,}\n"
        f"lower bound on added replicas: {outcome.lower_bound} (plan is {gap} above it)\n"
    )
    for b in outcome.balance:
        err(
            f"  {b.rack}: replicas per broker min/max {b.before[0]}/{b.before[1]} -> "
            f"{b.after[0]}/{b.after[1]}\n"
        )
    err(f"engine: {outcome.engine}; {outcome.seconds:.2f} s\n")
    if not outcome.plan:
        err("nothing to do: every partition already meets its policy\n")
