"""The `plan show --report` page: a batched plan's batches on a timeline, each with its ETA
under the throttle and the broker that bounds it, the totals next to the lower bound on the
number of batches, and what each broker sends and receives over the whole plan.

A batch takes as long as its busiest broker needs to send or receive its bytes at the
throttle (the ETA `assign` computes; the sender is the partition's current leader); the
busiest receiver and sender are named in each row. The figures come from the
`PlanView` that `plan show --format json` prints, unchanged; the start of each batch on the
timeline and the per-broker sums are derived and carry no pointer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from placement.html.charts import COLOURS, SERIES, chart
from placement.html.page import (
    Cell,
    Column,
    Page,
    count,
    duration,
    facts,
    label,
    nbytes,
    num,
    paragraph,
    pointer,
    size,
    table,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from placement.model.planview import BatchView, BrokerBytes, PlanView

# up to this many batches the timeline draws one bar per batch; beyond, one curve
GANTT_LIMIT = 60


def render_plan(view: PlanView) -> str:
    """The whole page for a `plan show` of a batch directory, one batch or a lone file."""
    page = Page(f"mrc-plan plan: {view.path}", "plan", _subtitle(view))
    if view.kind == "reassignment" and view.reassignment is not None:
        r = view.reassignment
        page.add(
            facts(
                [
                    ("partitions", num(r.partitions, "/reassignment/partitions")),
                    ("topics", num(r.topics, "/reassignment/topics")),
                    ("replicas", num(r.replicas, "/reassignment/replicas")),
                    ("brokers", num(r.brokers, "/reassignment/brokers")),
                ],
                "reassignment",
            )
        )
        page.add(
            paragraph(
                "A reassignment file alone: what it moves depends on the current assignment. "
                "`assign --out-dir` writes a summary.json with replicas added, data and ETA "
                "per batch."
            )
        )
        return page.render()
    page.add(totals(view))
    for name, heading, parts in sections(view):
        page.section(heading, *parts, name=name)
    return page.render()


def totals(view: PlanView) -> str:
    """The headline figures of batches: the throttle, and their totals and lower bound."""
    return facts(_totals(view), "total")


def sections(view: PlanView) -> list[tuple[str, str, list[str]]]:
    """(name, heading, parts) of each section on batches, after `totals`: the timeline,
    the batches and, for a whole directory, the brokers. `assign --report` shows them too."""
    starts = _starts(view.batches)
    out = [
        ("timeline", "Timeline", _timeline(view, starts)),
        ("batches", "Batches", [_batch_table(view, starts), *_leaders(view)]),
    ]
    if view.kind == "batches":
        out.append(("brokers", "Brokers over the whole plan", _brokers(view)))
    return out


def _subtitle(view: PlanView) -> str:
    what = {
        "batches": "a batch directory written by `assign --out-dir`",
        "batch": "one batch of a batch directory",
        "reassignment": "a reassignment file",
    }[view.kind]
    rate = view.throttle_bytes_per_s
    throttle = f"throttle {size(rate)}/s" if rate else "no throttle given: no ETA"
    return f"{what}; {throttle}" if view.kind != "reassignment" else what


def _totals(view: PlanView) -> list[tuple[str, Cell]]:
    rate = view.throttle_bytes_per_s
    out: list[tuple[str, Cell]] = [
        ("throttle / s", num(rate, "/throttle_bytes_per_s", size(rate) if rate else "none"))
    ]
    t = view.total
    if t is None:  # one batch: its row is the whole story
        return out
    out.append(("batches", num(t.batches, "/total/batches")))
    if t.batches_lower_bound is not None:
        out.append(
            ("batches, lower bound", num(t.batches_lower_bound, "/total/batches_lower_bound"))
        )
    out += [
        ("partitions", num(t.partitions, "/total/partitions")),
        ("replicas added", num(t.replicas_added, "/total/replicas_added")),
        ("data to copy", nbytes(t.bytes, "/total/bytes")),
        ("ETA, all batches", num(t.eta_seconds, "/total/eta_seconds", duration(t.eta_seconds))),
    ]
    if view.leaders is not None:
        out.append(("then leaders only", num(view.leaders.partitions, "/leaders/partitions")))
    return out


def _starts(batches: Sequence[BatchView]) -> list[float | None]:
    """When each batch starts, run one after the other (None from the first unknown ETA)."""
    out: list[float | None] = []
    at: float | None = 0.0
    for b in batches:
        out.append(at)
        at = None if at is None or b.eta_seconds is None else at + b.eta_seconds
    return out


def bound_by(batch: BatchView) -> tuple[int, BrokerBytes] | None:
    """The broker whose bytes set the batch's ETA: the busiest receiver, or the busiest
    sender (the current leader, through its leader-side throttle) when it moves more."""
    got = busiest(batch.receivers)
    sent = busiest(batch.senders)
    if sent is not None and (got is None or (sent[1].bytes or 0) > (got[1].bytes or 0)):
        return sent
    return got


def busiest(rows: Sequence[BrokerBytes]) -> tuple[int, BrokerBytes] | None:
    """The broker moving the most bytes (ties: the first listed) and its index; None when
    there is none or the bytes are unknown."""
    known = [(i, r) for i, r in enumerate(rows) if r.bytes is not None]
    if not known:
        return None
    return max(known, key=lambda ir: (ir[1].bytes or 0, -ir[0]))


def _timeline(view: PlanView, starts: list[float | None]) -> list[str]:
    batches = view.batches
    if not batches:
        return [paragraph("No batch: the plan moves no data.")]
    timed = all(b.eta_seconds is not None for b in batches)
    intro = (
        "Batches run one after the other; each takes the most bytes one broker sends (as "
        "the current leader) or receives, over the throttle."
        if timed
        else "No ETA (no throttle given, or sizes unknown): the batches by their size instead."
    )
    height = 1.2 + 0.22 * len(batches) if timed and len(batches) <= GANTT_LIMIT else 3.0
    return [
        paragraph(intro),
        chart(
            "timeline",
            "batches over time (ETA under the throttle)" if timed else "batches by size",
            (9.0, min(height, 14.0)),
            lambda f: _draw_timeline(f, view, starts, timed),
        ),
    ]


def _draw_timeline(fig: Figure, view: PlanView, starts: list[float | None], timed: bool) -> None:
    batches = view.batches
    names = [str(b.batch if b.batch is not None else i + 1) for i, b in enumerate(batches)]
    ax = fig.subplots()
    total = sum(b.eta_seconds or 0 for b in batches)
    scale, unit = (3600.0, "hours") if total >= 7200 else (60.0, "minutes")
    if timed and len(batches) <= GANTT_LIMIT:
        ys = list(range(len(batches)))[::-1]
        for y, b, at in zip(ys, batches, starts, strict=True):
            begin, length = (at or 0) / scale, (b.eta_seconds or 0) / scale
            ax.broken_barh([(begin, length)], (y - 0.4, 0.8), facecolors=SERIES[0])
            top = bound_by(b)
            if top is not None:
                ax.text(begin + length, y, f" {top[1].broker}", va="center", fontsize=7)
        ax.set_yticks(ys, [f"batch {n}" for n in names])
        ax.set_xlabel(f"{unit} from the start; at each bar's end, the broker that bounds it")
        return
    xs = list(range(1, len(batches) + 1))
    if timed:
        ends = [
            ((at or 0) + (b.eta_seconds or 0)) / scale
            for b, at in zip(batches, starts, strict=True)
        ]
        ax.step(xs, ends, where="post", color=SERIES[0])
        ax.set_ylabel(f"{unit} until the batch is done")
    else:
        known = [b.bytes for b in batches]
        if all(v is not None for v in known):
            ax.bar(xs, [(v or 0) / 2**30 for v in known], color=SERIES[0], width=1.0)
            ax.set_ylabel("GiB per batch")
        else:
            ax.bar(xs, [b.replicas_added for b in batches], color=COLOURS["before"], width=1.0)
            ax.set_ylabel("replicas added per batch")
    ax.set_xlabel("batch")


def _batch_table(view: PlanView, starts: list[float | None]) -> str:
    columns = [
        Column("batch", "its number in the order to apply", "/batches/*/batch"),
        Column("file", "the reassignment file of the batch"),
        Column("partitions", "partitions it changes", "/batches/*/partitions"),
        Column("replicas added", "replicas new brokers copy", "/batches/*/replicas_added"),
        Column("data", "bytes of the replicas added", "/batches/*/bytes"),
        Column("senders", "brokers sending (the current leaders new replicas copy from)"),
        Column("receivers", "brokers receiving new replicas"),
        Column("busiest receiver", "the broker receiving the most bytes in this batch"),
        Column("its data", "bytes the busiest receiver copies in this batch"),
        Column("busiest sender", "the current leader sending the most bytes in this batch"),
        Column("sends", "bytes the busiest sender sends in this batch"),
        Column(
            "max moves",
            "the most moves any broker takes part in",
            "/batches/*/max_moves_per_broker",
        ),
        Column(
            "ETA",
            "the most bytes one broker sends or receives, over the throttle",
            "/batches/*/eta_seconds",
        ),
        Column("starts at", "the batches before it, one after the other"),
        Column("rollback", "the file that undoes the batch"),
    ]
    rows = []
    for i, b in enumerate(view.batches):
        cells: list[Cell] = [
            num(b.batch, shown=str(b.batch) if b.batch is not None else "-"),
            label(b.file),
            num(b.partitions),
            num(b.replicas_added),
            nbytes(b.bytes),
            num(len(b.senders)),
            num(len(b.receivers)),
        ]
        for field, rows_of in (("receivers", b.receivers), ("senders", b.senders)):
            top = busiest(rows_of)
            if top is None:
                cells += [label("-"), nbytes(None)]
                continue
            j, r = top
            where = pointer("batches", i, field, j)
            cells += [
                num(r.broker, f"{where}/broker", str(r.broker)),
                nbytes(r.bytes, f"{where}/bytes"),
            ]
        at = starts[i]
        cells += [
            num(b.max_moves_per_broker),
            num(b.eta_seconds, shown=duration(b.eta_seconds)),
            num(at, shown=duration(at)),
            label(b.rollback or "-"),
        ]
        rows.append((i, cells))
    return table(columns, rows, name="batches", legend=True)


def _leaders(view: PlanView) -> list[str]:
    out = []
    if view.leaders is not None:
        le = view.leaders
        out.append(
            facts(
                [
                    ("leaders step", label(le.file)),
                    ("partitions", num(le.partitions, "/leaders/partitions")),
                    ("then elect with", label(le.election or "-")),
                ],
                "leaders",
            )
        )
    if view.order:
        out.append(paragraph("Apply in order: " + ", ".join(view.order)))
    return out


def _brokers(view: PlanView) -> list[str]:
    """Per broker over every batch: bytes received and sent, and how often it bounds."""
    received: dict[int, int | None] = {}
    sent: dict[int, int | None] = {}
    batches: dict[int, int] = {}
    bounds: dict[int, int] = {}
    for b in view.batches:
        for r in b.receivers:
            previous = received.get(r.broker, 0)
            received[r.broker] = None if previous is None or r.bytes is None else previous + r.bytes
            batches[r.broker] = batches.get(r.broker, 0) + 1
        for r in b.senders:
            previous = sent.get(r.broker, 0)
            sent[r.broker] = None if previous is None or r.bytes is None else previous + r.bytes
        top = bound_by(b)
        if top is not None:
            bounds[top[1].broker] = bounds.get(top[1].broker, 0) + 1
    brokers = sorted(set(received) | set(sent))
    if not brokers:
        return [paragraph("No broker receives or sends data.")]
    columns = [
        Column("broker"),
        Column("receives", "bytes it copies over all batches"),
        Column("batches receiving", "batches in which it gains replicas"),
        Column("bounds", "batches whose ETA it sets (the most bytes sent or received)"),
        Column("sends", "bytes it serves as leader over all batches"),
    ]
    rows = [
        (
            None,
            [
                num(broker, shown=str(broker)),
                nbytes(received.get(broker, 0)),
                num(batches.get(broker, 0)),
                num(bounds.get(broker, 0)),
                nbytes(sent.get(broker, 0)),
            ],
        )
        for broker in brokers
    ]
    return [
        paragraph(f"{count(len(brokers))} brokers send or receive; click a header to sort."),
        table(columns, rows, name="plan-brokers", legend=True),
    ]
