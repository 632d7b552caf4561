"""The text report of `mrc-plan score`: the plans side by side, best first, and per plan
bars of replicas per broker for the brokers that change most."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from placement.score.report import ScoreReport, Stats


def _stats(s: Stats, unit: float = 1, suffix: str = "") -> str:
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


def render(report: ScoreReport, bars: int = 20) -> None:
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
