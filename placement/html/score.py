"""The `score --report` page: the plans side by side, best first, each metric with what it
means; the load per broker as it stands and after each plan, per rack; what each rack's
failure does.

At 1,000 brokers no chart draws a bar per broker: per rack, the fewest, the median and the
most per broker, and the spread of all brokers as a histogram. The table below them has
every broker (it scrolls and sorts). The figures come from the `ScoreReport` unchanged;
those the page derives (medians per rack) carry their value but no pointer.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING

from placement.html.charts import (
    COLOURS,
    SERIES,
    State,
    axis_label,
    by_rack,
    chart,
    draw_histogram,
    draw_ranges,
)
from placement.html.page import (
    Cell,
    Column,
    Page,
    count,
    decimal,
    facts,
    label,
    nbytes,
    num,
    paragraph,
    pointer,
    size,
    table,
    text,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from placement.score.report import BrokerLoad, PlanScore, ScoreReport

# states drawn in a chart: as it stands and the best few plans (the tables have all)
CHART_PLANS = 4
METRICS = ("replicas", "leaders", "bytes")

# the metrics in our words; docs/definitions.md has them in full
DEFINITIONS = {
    "score": "At most 100, higher is better: 100 minus 50 x the share of partitions still "
    "breaking their policy, 20 x the share of replicas added, 20 x the spread of replicas "
    "per broker (stddev over mean, at most 1), 10 x the share of partitions a rack failure "
    "leaves offline or under min ISR, over every rack.",
    "partitions changed": "Partitions whose replica list the plan changes, order included.",
    "replicas added": "Brokers a partition gains; reordering or swapping roles adds none.",
    "replicas removed": "Brokers a partition loses.",
    "bytes to move": "Each partition's size times the replicas it gains, over the "
    "partitions whose size is known (a lower bound when some are not).",
    "cross-rack bytes": "Of the bytes to move, those copied into a rack that held none of "
    "the partition's replicas before.",
    "partitions of unknown size": "Partitions gaining replicas whose size the snapshot "
    "does not know: the bytes above leave them out.",
    "violations": "Partitions breaking their topic's placement policy: a wrong count of "
    "sync replicas or observers in some rack, a broker twice, or a broker of unknown rack.",
    "per broker": "Over every broker of the snapshot (one without replicas counts as 0): "
    "the fewest, the most, the mean and the population standard deviation. Leaders are "
    "preferred leaders (the first replica).",
    "offline": "That rack down, no in-sync replica survives: the partition has no leader.",
    "under min ISR": "That rack down, fewer in-sync replicas survive than min.insync.replicas "
    "and no observer is promoted: acks=all writes fail.",
    "promoted": "That rack down, observers join the ISR (policy v2 promotes them) and writes "
    "go on.",
}


def render_score(report: ScoreReport, *, source: str = "") -> str:
    """The whole page; ``source``: how the run was asked for (shown under the title)."""
    snap = report.snapshot
    page = Page(
        "mrc-plan score report",
        "score",
        source or f"{snap.brokers:,} brokers, {snap.partitions:,} partitions; plans best first",
    )
    names = [_plan_name(j, p) for j, p in enumerate(report.plans)]
    page.add(
        facts(
            [
                ("brokers", num(snap.brokers, "/snapshot/brokers")),
                ("topics", num(snap.topics, "/snapshot/topics")),
                ("partitions", num(snap.partitions, "/snapshot/partitions")),
                ("replicas", num(snap.replicas, "/snapshot/replicas")),
                (
                    "partitions without a size",
                    num(snap.partitions_without_size, "/snapshot/partitions_without_size"),
                ),
                ("plans", num(len(report.plans))),
            ],
            "snapshot",
        )
    )
    page.section("Plans, best first", *_plans(report, names), name="plans")
    page.section("Load per rack", *_racks(report, names), name="racks")
    page.section(
        "Rack failures, from the recorded ISR",
        *_failures(report, names),
        name="failures",
    )
    page.section("Every broker", *_brokers(report, names), name="brokers")
    return page.render()


def _plan_name(j: int, p: PlanScore) -> str:
    return f"{j + 1}. {PurePath(p.plan).name or p.plan}"


def _sizes_known(report: ScoreReport) -> bool:
    snap = report.snapshot
    return snap.partitions_without_size < snap.partitions or snap.partitions == 0


def _plans(report: ScoreReport, names: list[str]) -> list[str]:
    base, plans = report.baseline, report.plans
    columns = [Column("metric"), Column("as it stands")] + [
        Column(n, p.plan) for n, p in zip(names, plans, strict=True)
    ]
    rows: list[Sequence[Cell]] = []
    none = label("-", "not a figure of the snapshot alone")

    def plan_row(what: str, field: str, show: Callable[[PlanScore, float], str]) -> None:
        cells = [
            num(getattr(p, field), pointer("plans", j, field), show(p, getattr(p, field)))
            for j, p in enumerate(plans)
        ]
        rows.append([label(what, DEFINITIONS.get(what)), none, *cells])

    def moved(p: PlanScore, value: float) -> str:
        return f"≥ {size(value)}" if p.bytes_unknown_partitions else size(value)

    plan_row("score", "score", lambda _, v: f"{v:.3f}")
    for what in ("partitions changed", "replicas added", "replicas removed"):
        plan_row(what, what.replace(" ", "_"), lambda _, v: count(v))
    plan_row("bytes to move", "bytes_to_move", moved)
    plan_row("cross-rack bytes", "cross_rack_bytes", moved)
    plan_row("partitions of unknown size", "bytes_unknown_partitions", lambda _, v: count(v))
    rows.append(
        [
            label("violations", DEFINITIONS["violations"]),
            num(base.violations, "/baseline/violations"),
            *(
                num(p.violations_after, pointer("plans", j, "violations_after"))
                for j, p in enumerate(plans)
            ),
        ]
    )
    for metric in METRICS:
        if metric == "bytes" and not _sizes_known(report):
            continue
        for stat in ("min", "max", "mean", "stddev"):
            fmt = nbytes if metric == "bytes" else _stat_cell
            rows.append(
                [
                    label(f"{metric} per broker, {stat}", DEFINITIONS["per broker"]),
                    fmt(
                        getattr(getattr(base.balance, metric), stat), _bal("baseline", metric, stat)
                    ),
                    *(
                        fmt(getattr(getattr(p.balance, metric), stat), _bal(j, metric, stat))
                        for j, p in enumerate(plans)
                    ),
                ]
            )
    body = [
        table(
            columns,
            ((None, r) for r in rows),
            name="plans",
            sortable=False,
            caption="hover a metric for its definition",
        ),
        _definitions(report),
    ]
    if plans:
        body.insert(
            0,
            chart(
                "plans",
                "score and bytes to move per plan",
                _plans_size(plans),
                lambda f: _draw_plans(f, report, names),
            ),
        )
    else:
        body.insert(0, paragraph("No plan was given: the snapshot as it stands."))
    return body


def _bal(where: str | int, metric: str, stat: str) -> str:
    if where == "baseline":
        return pointer("baseline", "balance", metric, stat)
    return pointer("plans", where, "balance", metric, stat)


def _stat_cell(value: float, key: str) -> Cell:
    return num(value, key, decimal(value, 0 if float(value).is_integer() else 2))


def _definitions(report: ScoreReport) -> str:
    items = "".join(
        f"<dt>{text(what)}</dt><dd>{text(meaning)}</dd>" for what, meaning in DEFINITIONS.items()
    )
    unsized = report.snapshot.partitions_without_size
    note = ""
    if not _sizes_known(report):
        note = '<p class="note">No partition has a size: bytes per broker are left out.</p>'
    elif unsized:
        note = (
            f'<p class="note">{unsized:,} partitions have no size: bytes per broker count '
            "only the others.</p>"
        )
    return f'<dl class="legend" data-legend="definitions">{items}</dl>{note}'


def _plans_size(plans: Sequence[PlanScore]) -> tuple[float, float]:
    return (9.0, 1.2 + 0.32 * min(len(plans), 12))


def _draw_plans(fig: Figure, report: ScoreReport, names: list[str]) -> None:
    shown = report.plans[:12]
    labels = [axis_label(n) for n in names[: len(shown)]]
    y = list(range(len(shown)))[::-1]
    left, right = fig.subplots(1, 2, sharey=True)
    left.barh(y, [p.score for p in shown], color=SERIES[0])
    left.set_yticks(y, labels)
    left.set_xlim(min(0.0, *(p.score for p in shown)), 100)
    left.set_title("score (higher is better)")
    gib = 2**30
    right.barh(y, [p.bytes_to_move / gib for p in shown], color=COLOURS["before"], label="all")
    right.barh(
        y, [p.cross_rack_bytes / gib for p in shown], color=COLOURS["after"], label="cross-rack"
    )
    right.set_title("GiB to move")
    right.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)


# -- per rack ------------------------------------------------------------------------------


def _states(report: ScoreReport, names: list[str]) -> list[tuple[str, Sequence[BrokerLoad]]]:
    states: list[tuple[str, Sequence[BrokerLoad]]] = [("as it stands", report.baseline.brokers)]
    return states + [(n, p.brokers) for n, p in zip(names, report.plans, strict=True)]


def _racks(report: ScoreReport, names: list[str]) -> list[str]:
    racks = by_rack(b.rack for b in report.baseline.brokers)
    if not racks:
        return [paragraph("The snapshot lists no broker.")]
    states = _states(report, names)
    metrics = [m for m in METRICS if m != "bytes" or _sizes_known(report)]
    columns = [
        Column("rack"),
        Column("state", "as it stands, or after the plan"),
        Column("brokers"),
    ]
    for m in metrics:
        columns += [
            Column(f"{m} {s}", f"{m} per broker of the rack: {s}") for s in ("min", "median", "max")
        ]
    rows = []
    for rack, members in racks.items():
        for state, brokers in states:
            cells: list[Cell] = [label(rack), label(state), num(len(members))]
            for m in metrics:
                values = [getattr(brokers[i], m) for i in members]
                fmt = nbytes if m == "bytes" else num
                cells += [fmt(min(values)), fmt(statistics.median(values)), fmt(max(values))]
            rows.append((None, cells))
    drawn = states[: CHART_PLANS + 1]
    height = 1.0 + 2.0 * len(metrics)
    width = min(14.0, max(7.0, 0.5 + 0.45 * len(racks) * len(drawn)))
    which = "each plan" if len(states) <= CHART_PLANS + 1 else f"the {CHART_PLANS} best plans"
    return [
        paragraph(
            "Per rack, the fewest, the median and the most per broker, as the snapshot stands "
            f"and after {which} (the table has every plan)."
        ),
        chart(
            "racks",
            "per rack: min-max range per broker, dot at the median",
            (width, height),
            lambda f: draw_ranges(f, racks, [_values(s, metrics) for s in drawn], metrics),
        ),
        chart(
            "histogram",
            "replicas per broker over every broker: how many brokers hold how many replicas",
            (9.0, 2.6),
            lambda f: draw_histogram(f, [(n, [b.replicas for b in bs]) for n, bs in drawn]),
        ),
        table(columns, rows, name="racks"),
    ]


def _values(state: tuple[str, Sequence[BrokerLoad]], metrics: list[str]) -> State:
    name, brokers = state
    return name, {m: [getattr(b, m) for b in brokers] for m in metrics}


# -- rack failures --------------------------------------------------------------------------

OUTCOMES = (("offline", "offline"), ("under_min_isr", "under min ISR"), ("promoted", "promoted"))


def _failures(report: ScoreReport, names: list[str]) -> list[str]:
    base, plans = report.baseline, report.plans
    racks = sorted(base.rack_failure)
    states: list[tuple[str, str]] = [("as it stands", "/baseline")] + [
        (n, pointer("plans", j)) for j, n in enumerate(names)
    ]
    columns = [Column("rack down")]
    for state, where in states:
        for field, title in OUTCOMES:
            columns.append(
                Column(f"{title} · {state}", DEFINITIONS[title], f"{where}/rack_failure/*/{field}")
            )
    rows = []
    for rack in racks:
        cells: list[Cell] = [label(rack)]
        for failure in [base.rack_failure[rack]] + [p.rack_failure[rack] for p in plans]:
            cells += [num(getattr(failure, field)) for field, _ in OUTCOMES]
        rows.append((pointer(rack)[1:], cells))
    if not racks:
        return [paragraph("No rack has brokers: no rack failure to show.")]
    drawn = states[: CHART_PLANS + 1]
    return [
        paragraph(
            "Each rack taken down in turn, as the snapshot stands and after each plan, from "
            "the ISR the snapshot records (after a plan, the ISR its completed reassignment "
            "leaves), as simulate counts it: the partitions left offline, under min ISR, or "
            "served by promoted observers."
        ),
        chart(
            "failures",
            "per rack down, from the recorded ISR: offline, under min ISR, promoted",
            (min(14.0, max(7.0, 0.6 * len(racks) * len(drawn))), 3.0),
            lambda f: _draw_failures(f, report, racks, len(drawn)),
        ),
        table(columns, rows, name="failures"),
    ]


def _draw_failures(fig: Figure, report: ScoreReport, racks: list[str], states: int) -> None:
    ax = fig.subplots()
    failures = [report.baseline.rack_failure] + [p.rack_failure for p in report.plans]
    width = 0.8 / states
    for s in range(states):
        xs = [r - 0.4 + width * (s + 0.5) for r in range(len(racks))]
        bottom = [0] * len(racks)
        for field, title in OUTCOMES:
            values = [getattr(failures[s][rack], field) for rack in racks]
            ax.bar(
                xs,
                values,
                width * 0.9,
                bottom=bottom,
                color=COLOURS[field],
                label=title if s == 0 else None,
                edgecolor="white",
                linewidth=0.3,
            )
            bottom = [a + b for a, b in zip(bottom, values, strict=True)]
    ax.set_xticks(range(len(racks)), [axis_label(r, 16) for r in racks])
    ax.set_ylabel("partitions")
    ax.set_xlabel("rack down (bars: as it stands, then each plan, best first)")
    ax.legend(fontsize=8)


# -- every broker ---------------------------------------------------------------------------


def _brokers(report: ScoreReport, names: list[str]) -> list[str]:
    base = report.baseline.brokers
    metrics = [m for m in METRICS if m != "bytes" or _sizes_known(report)]
    columns = [Column("broker", key="/baseline/brokers/*/broker"), Column("rack")]
    order = [{b.broker: k for k, b in enumerate(p.brokers)} for p in report.plans]
    for m in metrics:
        columns.append(Column(f"{m} · as it stands", key=f"/baseline/brokers/*/{m}"))
        for j, n in enumerate(names):
            columns.append(
                Column(f"{m} · {n}", report.plans[j].plan, pointer("plans", j) + f"/brokers/*/{m}")
            )
    rows = []
    for i, b in enumerate(base):
        cells: list[Cell] = [num(b.broker, shown=str(b.broker)), label(b.rack or "-")]
        for m in metrics:
            fmt = nbytes if m == "bytes" else num
            cells.append(fmt(getattr(b, m)))
            for j, p in enumerate(report.plans):
                k = order[j].get(b.broker, i)
                key = None if k == i else pointer("plans", j, "brokers", k, m)
                cells.append(fmt(getattr(p.brokers[k], m), key))
        rows.append((i, cells))
    return [
        paragraph(f"All {count(len(base))} brokers of the snapshot; click a header to sort."),
        table(columns, rows, name="brokers"),
    ]
