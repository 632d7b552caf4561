"""The text summary of `mrc-plan assign`, on stderr: what changes, how close to the
bound, balance before and after, and the policy changes to make first."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from .degraded import print_degraded
from .render import cell

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from placement.plan.assign import AssignOutcome


def summarize(outcome: AssignOutcome, policy_dir: Path | None = None) -> None:
    """The summary on stderr: what changes, how close to the bound, balance before/after,
    and the policy changes to make first."""
    from rich.console import Console

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


def _nothing(outcome: AssignOutcome) -> str:
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


def _topic_lines(console: Console, outcome: AssignOutcome) -> None:
    """The per-topic breakdown (largest first) and the topics left alone."""
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
        for a in alone[:TOPICS_SHOWN]:
            console.print(cell(f"  {a.topic} ({a.rule}): {a.partitions}"))
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


def _notes(console: Console, outcome: AssignOutcome) -> None:
    """Topics left alone or missing, brokers the inventory does not place."""
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


def _policy_lines(console: Console, outcome: AssignOutcome, policy_dir: Path | None) -> None:
    """The topics whose policy the cluster must get first, and how."""
    from placement.plan.policies import SCRIPT

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


def _balance_table(outcome: AssignOutcome) -> Table:
    """Replicas and preferred leaders per broker of each rack, before and after."""
    from rich.table import Table

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


def _goal_lines(console: Console, outcome: AssignOutcome) -> None:
    """Every goal before -> after with its bound; leadership changes; CP-SAT's racks."""
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
