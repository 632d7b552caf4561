"""The `simulate --report` page: what one failure does, overall and per topic (outcomes as
in docs/definitions.md, rack-failure outcomes), the partitions only an unclean election
brings back, and the KRaft quorum; with `--plan DIR`, the same failure at each step of the
batch directory.

The counts are read from the report's own models field by field, with the descriptions the
schema gives them, so a count the simulation learns to report (the state before the failure,
data at risk) shows up here without a change. A top-level field this page does not know is
shown as a table of its own under "More of the report" for the same reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, get_args

from pydantic import BaseModel

from placement.html.charts import COLOURS, axis_label, chart
from placement.html.page import (
    Cell,
    Column,
    Page,
    facts,
    label,
    nbytes,
    num,
    paragraph,
    pointer,
    table,
    text,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from placement.simulate.failure import BatchStep, Counts, SimulateReport
    from placement.simulate.risk import DataAtRisk

# the topics drawn, worst first (the table has every topic)
CHART_TOPICS = 30
OUTCOMES = ("available", "promoted", "under_min_isr", "offline")
TITLES = {
    "under_min_isr": "under min ISR",
    "under_min_isr_before": "under min ISR before",
    "min_isr": "min ISR",
    "min_insync_replicas": "min.insync.replicas",
    "isr": "ISR",
    "isr_unknown": "ISR unknown",
    "lag_ms": "lag (ms)",
    "max_lag_ms": "max lag (ms)",
}
MEANINGS = {
    "partitions": "partitions of the topic",
    "available": "enough in-sync replicas survive: nothing changes for clients",
    "promoted": "observers join the ISR (policy v2 promotes them): acks=all writes go on",
    "under_min_isr": "too few in-sync replicas and no promotion: acks=all writes fail",
    "offline": "no in-sync replica survives: no leader",
}
# the fields the page shows in sections of their own; the other scalars go to the headline,
# anything else to "More of the report"
SHOWN = {"failure", "totals", "topics", "unclean_sample", "quorum", "data_at_risk", "batches"}
# partitions listed under data at risk, riskiest first (the JSON report has every one)
RISK_ROWS = 1000


def _title(field: str) -> str:
    return TITLES.get(field, field.replace("_", " "))


def _meaning(model: type[BaseModel], field: str) -> str | None:
    info = model.model_fields.get(field)
    return MEANINGS.get(field) or (info.description if info is not None else None)


def render_simulate(report: SimulateReport) -> str:
    """The whole page for one simulated failure."""
    f = report.failure
    what = f'rack "{f.rack}" down' if f.rack is not None else "brokers down"
    after = f", after {report.plan}" if report.plan else ", as the cluster stands"
    if report.batches:
        after = f", at each step of {report.plan}"
    page = Page(f"mrc-plan simulate: {what}", "simulate", f"{what}{after}; engine {report.engine}")
    page.add(facts(_headline(report), "failure"))
    if report.batches:
        page.section("Steps of the plan", *_steps(report.batches), name="steps")
    page.section("Outcomes", *_outcomes(report), name="outcomes")
    page.section("Per topic", *_topics(report), name="topics")
    page.section("Unclean elections", *_unclean(report), name="unclean")
    if report.data_at_risk is not None:
        page.section("Data at risk", *_risk(report.data_at_risk), name="risk")
    extra = [k for k in type(report).model_fields if k not in SHOWN and not _scalar(report, k)]
    if extra:
        page.section(
            "More of the report", *(_any(k, getattr(report, k)) for k in extra), name="more"
        )
    return page.render()


def _headline(report: SimulateReport) -> list[tuple[str, Cell]]:
    f = report.failure
    down = ", ".join(map(str, f.brokers[:20])) + (
        f" and {len(f.brokers) - 20:,} more" if len(f.brokers) > 20 else ""
    )
    out: list[tuple[str, Cell]] = [("brokers down", label(down or "-"))]
    if f.unknown_rack:
        out.append(("of unknown rack (down too)", num(len(f.unknown_rack))))
    out += [
        ("partitions", num(report.totals.partitions, "/totals/partitions")),
        ("writes fail (offline or under min ISR)", num(report.writes_fail)),
    ]
    if report.batches:
        worst = report.batches[0].step
        out.append(("worst step of the plan", Cell(worst, key=pointer("batches", 0, "step"))))
    for k in type(report).model_fields:
        if k not in SHOWN and _scalar(report, k):
            out.append((_title(k), _value(getattr(report, k), pointer(k), k)))
    q = report.quorum
    if q is not None:
        kept = "kept" if q.kept else "LOST"
        out.append(
            (
                "KRaft quorum",
                label(f"{kept}: {q.surviving} of {q.controllers} (majority {q.majority})"),
            )
        )
    return out


def _scalar(report: BaseModel, field: str) -> bool:
    value = getattr(report, field)
    return value is None or isinstance(value, str | int | float)


def _numeric(annotation: object) -> bool:
    """Whether a field annotated so holds a number (or null): int, float, int | None…"""
    args = get_args(annotation) or (annotation,)
    return all(a in (int, float, type(None)) for a in args) and args != (type(None),)


def _count_fields(model: type[BaseModel]) -> list[str]:
    """The counts of ``model`` (Counts or a subclass), in their declared order."""
    return [
        k for k, info in model.model_fields.items() if _numeric(info.annotation) and k != "min_isr"
    ]


def _outcomes(report: SimulateReport) -> list[str]:
    totals = report.totals
    fields = _count_fields(type(totals))
    columns = [Column("count"), Column("partitions"), Column("what it means")]
    rows = [
        (
            None,
            [
                label(_title(k)),
                _value(getattr(totals, k), pointer("totals", k), k),
                label(_meaning(type(totals), k) or "", wrap=True),
            ],
        )
        for k in fields
    ]
    return [
        chart(
            "outcomes",
            "every partition by its outcome",
            (9.0, 1.6),
            lambda fig: _draw_bars(fig, [("all topics", totals)]),
        ),
        table(columns, rows, name="totals", sortable=False),
    ]


def _steps(steps: list[BatchStep]) -> list[str]:
    """Each step of a batch directory: the outcomes as bars in the order to run (the worst
    steps when there are many) and a table, worst first."""
    model = type(steps[0])
    intro = paragraph(
        "The failure before any batch and once each step completed (with every step before "
        "it), worst first; the sections below are the state after the last step. A batch in "
        "flight keeps its old in-sync replicas until it completes, so a failure then is no "
        "worse than at the step before it."
    )
    drawn = sorted(steps[:CHART_TOPICS], key=lambda s: s.order)
    caption = "every step by outcome, in the order to run"
    if len(drawn) < len(steps):
        caption = f"the {len(drawn)} worst steps by outcome, in the order to run"
    bars = chart(
        "steps",
        f"{caption} (the table has every step)",
        (9.0, 1.0 + 0.25 * len(drawn)),
        lambda fig: _draw_bars(fig, [(s.step, s.totals) for s in drawn]),
    )
    counts = _count_fields(type(steps[0].totals))
    columns = [
        Column(_title(k), _meaning(model, k), f"/batches/*/{k}")
        for k in ("step", "worst", "order", "reassigned")
    ]
    columns += [
        Column(_title(k), _meaning(type(steps[0].totals), k), f"/batches/*/totals/{k}")
        for k in counts
    ]
    if steps[0].data_at_risk is not None:
        meaning = _meaning(type(steps[0].data_at_risk), "offsets")
        columns.append(Column("offsets at risk", meaning, "/batches/*/data_at_risk/offsets"))
    rows = []
    for i, s in enumerate(steps):
        cells: list[Cell] = [label(s.step)]
        cells += [_value(getattr(s, k), None, k) for k in ("worst", "order", "reassigned")]
        cells += [_value(getattr(s.totals, k), None, k) for k in counts]
        if s.data_at_risk is not None:
            cells.append(_value(s.data_at_risk.offsets, None, "offsets"))
        rows.append((i, cells))
    return [intro, bars, table(columns, rows, name="steps", legend=True)]


def _draw_bars(fig: Figure, rows: Sequence[tuple[str, Counts]]) -> None:
    ax = fig.subplots()
    ys = list(range(len(rows)))[::-1]
    left = [0] * len(rows)
    for field in OUTCOMES:
        values = [getattr(c, field) for _, c in rows]
        ax.barh(ys, values, left=left, color=COLOURS[field], label=_title(field), height=0.7)
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_yticks(ys, [axis_label(name) for name, _ in rows])
    ax.set_xlabel("partitions")
    ax.legend(loc="lower right", ncols=4, fontsize=8, bbox_to_anchor=(1.0, 1.0))


def _topics(report: SimulateReport) -> list[str]:
    topics = report.topics
    if not topics:
        return [paragraph("No topic has partitions.")]
    model = type(topics[0])
    fields = ["policy", "min_isr", *_count_fields(model)]
    columns = [Column("topic", key="/topics/*/topic")] + [
        Column(_title(k), _meaning(model, k), f"/topics/*/{k}") for k in fields
    ]
    rows = []
    for i, t in enumerate(topics):
        cells: list[Cell] = [label(t.topic)]
        cells += [_value(getattr(t, k), None, k) for k in fields]
        rows.append((i, cells))
    worst = sorted(
        topics,
        key=lambda t: (-(t.offline + t.under_min_isr), -t.promoted, t.topic),
    )[:CHART_TOPICS]
    hit = [t for t in worst if t.partitions != t.available]
    body = []
    if hit:
        body.append(
            chart(
                "topics",
                f"the {len(hit)} topic(s) hit hardest, by outcome (the table has every topic)",
                (9.0, 1.0 + 0.25 * len(hit)),
                lambda fig: _draw_bars(fig, [(t.topic, t) for t in hit]),
            )
        )
    else:
        body.append(paragraph("Every partition of every topic stays available."))
    body.append(table(columns, rows, name="topics", legend=True))
    return body


def _unclean(report: SimulateReport) -> list[str]:
    sample = report.unclean_sample
    unclean = report.totals.unclean
    if not sample:
        return [paragraph("No partition needs an unclean leader election.")]
    intro = paragraph(
        f"{unclean:,} partitions come back only through an unclean leader election onto a "
        f"surviving replica outside the ISR, losing what it had not copied; the first "
        f"{len(sample)} are listed (`--unclean-out` writes them all)."
    )
    return [intro, _models_table("unclean_sample", sample)]


def _risk(risk: DataAtRisk) -> list[str]:
    """What the unclean elections would truncate, estimated from kafka-replica-status:
    the totals, per topic, and the partitions riskiest first."""
    t = risk.totals
    intro = paragraph(
        f"Estimated from {risk.replica_status}, taken before the failure: electing the most "
        "caught-up surviving replica of each partition drops the offsets it had not copied. "
        "Kafka elects the first surviving replica in replica order, which may be further "
        "behind (the last columns)."
    )
    head = facts(
        [(_title(k), _value(v, pointer("data_at_risk", "totals", k), k)) for k, v in t],
        "data_at_risk",
    )
    body = [intro, head]
    if risk.topics:
        body += [
            "<h3>Per topic</h3>",
            _models_table("topics", risk.topics, prefix=("data_at_risk", "topics")),
        ]
    shown = risk.partitions[:RISK_ROWS]
    if shown:
        more = len(risk.partitions) - len(shown)
        body.append(
            "<h3>Partitions, riskiest first</h3>"
            + (
                paragraph(f"The first {len(shown):,}; {more:,} more in the JSON report.")
                if more
                else ""
            )
        )
        body.append(_models_table("partitions", shown, prefix=("data_at_risk", "partitions")))
    return body


def _models_table(
    field: str, rows: Sequence[BaseModel], *, prefix: tuple[str, ...] | None = None
) -> str:
    """A list of flat models as a table: one column per field, pointers to each value
    (under ``/field``, or under ``prefix`` when given)."""
    model = type(rows[0])
    # the names first (a subclass declares its own fields after those it inherits)
    keys = sorted(model.model_fields, key=lambda k: k not in ("topic", "partition"))
    base = pointer(*(prefix or (field,)))
    columns = [Column(_title(k), _meaning(model, k), f"{base}/*/{k}") for k in keys]
    body = []
    for i, r in enumerate(rows):
        body.append((i, [_value(getattr(r, k), None, k) for k in keys]))
    return table(columns, body, name="-".join(prefix) if prefix else field)


def _any(field: str, value: Any) -> str:
    """A field of the report this page has no section for, shown as it is."""
    if isinstance(value, list) and value and all(isinstance(v, BaseModel) for v in value):
        return f"<h3>{text(_title(field))}</h3>" + _models_table(field, value)
    if isinstance(value, BaseModel):
        cells = [
            (_title(k), num(v, pointer(field, k)) if _is_num(v) else label(v)) for k, v in value
        ]
        return f"<h3>{text(_title(field))}</h3>" + facts(cells, field)
    return facts([(_title(field), _value(value, pointer(field), field))], field)


def _is_num(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _value(value: object, key: str | None, field: str) -> Cell:
    """A figure of the report as a cell: bytes for a field that says so, a count for a
    number, "none" for null, "yes"/"no" for a flag, a list joined by commas (the last three
    with their JSON value in data-v), else the text."""
    if value is None:
        return Cell("none", None, True, key)
    if isinstance(value, bool):
        return Cell("yes" if value else "no", value, True, key)
    if isinstance(value, int | float):
        return nbytes(value, key) if "bytes" in field else num(value, key)
    if isinstance(value, list):
        return Cell(", ".join(map(str, value)), value, True, key)
    return label(str(value))
