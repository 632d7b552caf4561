"""The text report of `mrc-plan simulate`: the failure, the partitions per outcome, the
topics affected worst first, the unclean elections and the data they put at risk, the
steps of a batch directory, the KRaft quorum."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from placement.simulate.failure import BatchStep, SimulateReport, TopicCounts, UncleanPartition
    from placement.simulate.risk import DataAtRisk, PartitionRisk

SHOWN_TOPICS = 20


def risk_line(r: PartitionRisk, source: str) -> str:
    """One partition's estimate: ``orders-1: 315 offsets at risk electing 10 (...)``."""
    name = f"{r.topic}-{r.partition}"
    elects = ""
    if r.replica is not None and r.kafka_elects != r.replica:
        behind = r.kafka_elects_offsets
        gap = "offsets unknown" if behind is None else f"{behind:,} offsets at risk"
        elects = f"; Kafka elects {r.kafka_elects}, first in replica order: {gap}"
    if not r.listed:
        return f"{name}: no estimate, not in {source}; Kafka elects {r.kafka_elects}"
    if r.replica is None:
        return (
            f"{name}: no estimate, {source} shows no offset for its surviving replicas; "
            f"Kafka elects {r.kafka_elects}"
        )
    lag = "lag unknown" if r.lag_ms is None else f"caught up {r.lag_ms:,} ms before the status"
    offsets = "offsets at risk unknown" if r.offsets is None else f"{r.offsets:,} offsets at risk"
    return f"{name}: {offsets} electing {r.replica}, the most caught up ({lag}){elects}"


def kafka_picks(at_risk: DataAtRisk) -> str:
    """Which replica Kafka elects, and how many partitions it would elect a worse one for."""
    worse = sum(
        1
        for r in at_risk.partitions
        if r.replica is not None
        and r.kafka_elects != r.replica
        and (r.kafka_elects_offsets is None or r.kafka_elects_offsets > (r.offsets or 0))
    )
    text = (
        "note: Kafka picks the new leader itself: an unclean election elects the first live "
        "replica in the partition's replica order, not the most caught-up one the estimates "
        f"name (estimates from {at_risk.replica_status}, taken before the failure)"
    )
    if worse:
        text += (
            f'; for {worse:,} partition(s) that replica is further behind ("Kafka elects" '
            "above): bring the failed brokers back, or reorder the replicas so that the most "
            "caught-up one comes first, before electing"
        )
    return text


def _ids(ids: list[int], limit: int = 12) -> str:
    shown = ", ".join(map(str, ids[:limit]))
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _survivors(u: UncleanPartition) -> str:
    """The replicas an unclean election can elect: ``observers 5, 6; out of sync 7``."""
    parts = []
    if u.observers:
        parts.append(f"observers {_ids(u.observers)}")
    if u.lagging:
        parts.append(f"out of sync {_ids(u.lagging)}")
    return "; ".join(parts)


def _isr_line(report: SimulateReport) -> str:
    """What the ISR was taken to be, and what was failing before the failure."""
    t = report.totals
    if report.isr == "assumed":
        basis = "ISR assumed: every sync replica counts as in sync (--assume-in-sync)"
    elif t.isr_unknown == t.partitions:
        basis = "no ISR recorded: every sync replica counts as in sync"
    elif t.isr_unknown:
        basis = (
            f"ISR as recorded; {t.isr_unknown:,} partition(s) have none recorded: their sync "
            "replicas count as in sync"
        )
    else:
        basis = "ISR as recorded"
    return (
        f"{basis}\nbefore the failure (no broker down): {t.offline_before:,} offline, "
        f"{t.under_min_isr_before:,} under min ISR; the failure breaks {t.broken:,} more"
    )


def _render_risk(console: Console, at_risk: DataAtRisk) -> None:
    """The data at risk per topic (most offsets first), and the riskiest partitions."""
    from rich.table import Table

    from .render import cell

    t = at_risk.totals
    if not t.partitions:
        return
    table = Table(
        title=cell(f"data at risk in an unclean election, estimated from {at_risk.replica_status}"),
        title_justify="left",
    )
    table.add_column("topic")
    for col in ("partitions", "offsets at risk", "max lag (ms)", "no estimate"):
        table.add_column(col, justify="right")
    topics = sorted(at_risk.topics, key=lambda x: (-x.offsets, x.topic))
    console.print()
    for x in topics[:SHOWN_TOPICS]:
        table.add_row(
            cell(x.topic),
            f"{x.partitions:,}",
            f"{x.offsets:,}",
            "unknown" if x.max_lag_ms is None else f"{x.max_lag_ms:,}",
            f"{x.unknown:,}",
        )
    console.print(table)
    if len(topics) > SHOWN_TOPICS:
        console.print(f"… and {len(topics) - SHOWN_TOPICS:,} more topics (--format json)")
    console.print("riskiest first:")
    for r in at_risk.partitions[:10]:
        console.print(cell(f"  {risk_line(r, at_risk.replica_status)}"))


def _step_line(s: BatchStep) -> str:
    t = s.totals
    risk = "" if s.data_at_risk is None else f", {s.data_at_risk.offsets:,} offsets at risk"
    return (
        f"{t.offline:,} offline, {t.under_min_isr:,} under min ISR, {t.promoted:,} promoted{risk}"
    )


def _render_steps(console: Console, steps: list[BatchStep]) -> None:
    """The steps of a batch directory, worst first; the state before any batch and after
    the last; why a batch in flight needs no row; then what follows is the last step."""
    from rich.table import Table

    from .render import cell

    table = Table(
        title=f"{len(steps):,} steps, worst first (each with the steps before it completed)",
        title_justify="left",
    )
    table.add_column("step")
    risk = steps[0].data_at_risk is not None
    heads = ["order", "reassigned", "available", "promoted", "under min ISR", "offline"]
    for col in [*heads, "unclean", "lost", *(["offsets at risk"] if risk else [])]:
        table.add_column(col, justify="right")
    for s in steps[:SHOWN_TOPICS]:
        t = s.totals
        values = [s.order, s.reassigned, t.available, t.promoted, t.under_min_isr, t.offline]
        values += [t.unclean, t.lost, *([s.data_at_risk.offsets] if s.data_at_risk else [])]
        table.add_row(cell(s.step), *(f"{v:,}" for v in values))
    console.print(table)
    if len(steps) > SHOWN_TOPICS:
        console.print(f"… and {len(steps) - SHOWN_TOPICS:,} more steps (--format json)")
    by_order = sorted(steps, key=lambda s: s.order)
    first, last = by_order[0], by_order[-1]
    console.print(
        cell(
            f"before any batch: {_step_line(first)}; after the last step ({last.step}): "
            f"{_step_line(last)}; worst: {steps[0].step}"
        )
    )
    console.print(
        "a batch in flight keeps its old in-sync replicas until it completes: a failure "
        "then is no worse than at the step before it",
        markup=False,
    )
    console.print()
    console.print(cell(f"after the last step ({last.step}):"))


def render(report: SimulateReport) -> None:
    from rich.console import Console
    from rich.table import Table

    from placement.simulate.failure import worse_first

    from .render import cell  # rack, topic and plan names: escaped, no markup

    # a pipe or a file gets whole rows, a terminal its own width
    console = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 160)
    f = report.failure
    after = f", after {report.plan}" if report.plan else ""
    if report.batches:
        after = f", at each step of {report.plan}"
    if f.rack is not None:
        console.print(cell(f'rack "{f.rack}" down: brokers {_ids(f.brokers)}{after}'))
    else:
        console.print(cell(f"brokers {_ids(f.brokers)} down{after}"))
    if report.batches:
        _render_steps(console, report.batches)
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
    console.print(_isr_line(report))
    hit = [x for x in report.topics if x.partitions != x.available]
    hit.sort(key=lambda x: (*worse_first(x), x.topic))
    if hit:
        console.print(_affected(report, hit))
        if len(hit) > SHOWN_TOPICS:
            console.print(f"… and {len(hit) - SHOWN_TOPICS:,} more topics (--format json)")
    else:
        console.print("every partition stays available")
    if report.unclean_sample:
        console.print(
            f"\nonly an unclean election onto a replica outside the ISR brings back "
            f"{t.unclean:,} partition(s) (--unclean-out writes them all), e.g.:"
        )
        for u in report.unclean_sample[:10]:
            console.print(cell(f"  {u.topic}-{u.partition}: {_survivors(u)}"))
    if report.data_at_risk is not None:
        _render_risk(console, report.data_at_risk)
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


def _affected(report: SimulateReport, hit: list[TopicCounts]) -> Table:
    """The table of the topics ``hit``, worst first (the first `SHOWN_TOPICS`)."""
    from rich.table import Table
    from rich.text import Text

    from .render import cell

    per = Table(title="topics affected, worst first", title_justify="left")
    for col in ("topic", "policy", "min ISR", "partitions", "promoted", "under min ISR"):
        per.add_column(col, justify="left" if col in ("topic", "policy") else "right")
    per.add_column("offline (unclean/lost)", justify="right")
    before = report.writes_failed_before > 0
    if before:
        per.add_column("failing before", justify="right")
    for x in hit[:SHOWN_TOPICS]:
        row: list[str | Text] = [
            cell(x.topic),
            cell(x.policy),
            str(x.min_isr),
            f"{x.partitions:,}",
            f"{x.promoted:,}",
            f"{x.under_min_isr:,}",
            f"{x.offline:,} ({x.unclean:,}/{x.lost:,})",
        ]
        if before:
            row.append(f"{x.offline_before + x.under_min_isr_before:,}")
        per.add_row(*row)
    return per
