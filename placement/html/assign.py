"""The `assign --report` page: what a plan does to a cluster, for a change review. Every
figure the summary reports next to its lower bound; per rack, replicas, bytes and
preferred leaders per broker before and after; the bytes each rack sends to each rack;
with --out-dir the batches on a timeline (the `plan show` sections); the policy changes
to make first; every broker.

Drawn from the `AssignSummary` that `assign --format json` prints, unchanged. At 1,000
brokers no chart draws a bar per broker: per rack the fewest, the median and the most,
and a histogram; the table of every broker scrolls and sorts. The per-rack figures point
at the broker whose value they are (the median is the middle broker's, the lower of the
two middle ones for an even count), so they too can be checked against the JSON.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from placement.html.charts import (
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
    facts,
    label,
    nbytes,
    num,
    paragraph,
    pointer,
    rebase,
    size,
    table,
    text,
)
from placement.html.plan import sections, totals
from placement.plan.summary import cross_rack_bytes, crosses_racks
from placement.solver.goals import figure_about, figure_name

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from placement.plan.summary import AssignSummary

METRICS = ("replicas", "bytes", "leaders")
STATES = ("before", "after")
# up to this many racks the rack-to-rack chart writes each figure in its cell
ANNOTATE_RACKS = 12

# the `plan show` sections, as this page names them
BATCH_HEADINGS = {
    "timeline": "Batches on a timeline",
    "batches": "Batch by batch",
    "brokers": "Brokers over the batches",
}
COUNTED = {
    "replicas": ("active", "excluded"),
    "bytes": ("active", "excluded"),
    "leaders": ("active",),
}


def render_assign(summary: AssignSummary, *, source: str = "") -> str:
    """The whole page; ``source``: how the run was asked for (shown under the title)."""
    page = Page("mrc-plan assign: the plan", "assign", source or summary.engine)
    page.add(facts(_headline(summary), "summary"))
    page.add(_notes(summary))
    page.section("Every figure and its lower bound", _goals(summary), name="goals")
    page.section("Load per rack, before and after", *_racks(summary), name="racks")
    page.section("Data from rack to rack", *_flows(summary), name="flows")
    if summary.topics or summary.left_alone:
        page.section("Per topic", *_topics(summary), name="topics")
    view = summary.batches
    if view is not None:
        where = paragraph(f"The batches written to {view.path}, as `plan show` prints them.")
        page.section("Batches", where, rebase(totals(view), "/batches"), name="batch-totals")
        for name, heading, parts in sections(view):
            page.section(
                BATCH_HEADINGS.get(name, heading),
                *(rebase(p, "/batches") for p in parts),
                name=f"batch-{name}",
            )
    if summary.policy_changes:
        page.section(
            "Policy changes, before the reassignment", *_policies(summary), name="policies"
        )
    page.section("Every broker", *_brokers(summary), name="brokers")
    return page.render()


def _goal_index(summary: AssignSummary, name: str) -> int | None:
    return next((i for i, g in enumerate(summary.goals) if g.name == name), None)


def _headline(summary: AssignSummary) -> list[tuple[str, Cell]]:
    s = summary
    out: list[tuple[str, Cell]] = [
        ("partitions changed", num(s.partitions_changed, "/partitions_changed")),
        ("replicas added", num(s.replicas_added, "/replicas_added")),
    ]
    i = _goal_index(s, figure_name("moves"))
    if i is not None:
        out.append(("lower bound on added", num(s.goals[i].bound, pointer("goals", i, "bound"))))
    out += [
        ("replicas removed", num(s.replicas_removed, "/replicas_removed")),
        ("data to copy", nbytes(s.bytes_to_move, "/bytes_to_move")),
        ("leadership changes", num(s.leadership_changes, "/leadership_changes")),
    ]
    i = _goal_index(s, figure_name("leadership"))
    if i is not None and s.goals[i].bound is not None:
        bound = num(s.goals[i].bound, pointer("goals", i, "bound"))
        out.append(("lower bound on changes", bound))
    if s.batches is not None and s.batches.total is not None:
        t = s.batches.total
        out.append(("batches", num(t.batches, "/batches/total/batches")))
        if t.batches_lower_bound is not None:
            where = "/batches/total/batches_lower_bound"
            out.append(("lower bound on batches", num(t.batches_lower_bound, where)))
    out.append(("brokers", num(len(s.brokers))))
    return out


def _notes(summary: AssignSummary) -> str:
    """What the text summary says besides its figures: topics left alone or missing,
    where the brokers came from."""
    s = summary
    engine = f'<p class="note">engine: <span data-k="/engine">{text(s.engine)}</span></p>'
    lines = []
    if s.brokers_from == "snapshot":
        lines.append("Brokers and racks come from the snapshot's brokers table.")
    rules = s.topic_rules
    if rules:
        lines.append(
            f"Topics per rule: {rules.get('policy', 0):,} with a policy of their own, "
            f"{rules.get('default', 0):,} on the cluster default, "
            f"{rules.get('rack-aware', 0):,} on Kafka's rack-aware rule (no policy)."
        )
    if s.scope == "asked":
        lines.append(
            "Scope: only partitions on drained or dead brokers and the topics --topics sets "
            "were changed; partitions elsewhere that break their rule are listed below, "
            "left alone (--repair changes them)."
        )
    if s.replicas_left_on_drained:
        lines.append(
            f"{s.replicas_left_on_drained:,} replica(s) stay on drained brokers "
            "(--only-topics or offline partitions keep them there)."
        )
    if s.offline_kept:
        lines.append(f"{s.offline_kept:,} offline partition(s) (no leader) are never moved.")
    if s.in_flight_kept:
        lines.append(
            f"{s.in_flight_kept:,} partition(s) being reassigned are left alone until the "
            "reassignment completes."
        )
    if s.missing_topics:
        lines.append(
            f"{len(s.missing_topics):,} topic(s) in --topics are not in the cluster (create "
            f"them first): {_listed(s.missing_topics)}."
        )
    if not s.cluster_policies_known:
        lines.append(
            "No policy of the cluster is known (reassignment JSON as --current, or a fresh "
            "layout): policy changes cannot be told."
        )
    unknown = sum(1 for b in s.brokers if b.bytes_before is None or b.bytes_after is None)
    if "bytes" not in _metrics(s) and unknown:
        lines.append("No partition has a known size: bytes per broker are left out.")
    elif "bytes" not in _metrics(s):
        lines.append("The partitions hold no data: bytes per broker are left out.")
    elif unknown:
        lines.append(
            f"{unknown:,} broker(s) hold partitions of unknown size: their bytes are unknown."
        )
    return engine + "".join(f'<p class="note">{text(line)}</p>' for line in lines)


def _listed(names: Sequence[str], limit: int = 20) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit:,} more" if len(names) > limit else "")


# -- goals --------------------------------------------------------------------------------


def _goals(summary: AssignSummary) -> str:
    columns = [
        Column("goal", "in the goal order (README: how a plan is chosen)", "/goals/*/name"),
        Column("before", "before the plan (balance goals)", "/goals/*/before"),
        Column("after", "after the plan", "/goals/*/value"),
        Column("lower bound", "no plan does better; - where none is computed", "/goals/*/bound"),
        Column("above the bound", "after minus the lower bound: 0 is the best any plan can do"),
        Column("forced", "leadership changes forced by the old leader leaving", "/goals/*/forced"),
    ]
    rows = []
    for i, g in enumerate(summary.goals):
        gap = g.value - g.bound if g.value is not None and g.bound is not None else None
        rows.append(
            (
                i,
                [
                    Cell(g.name, title=figure_about(g.name), wrap=True),
                    _maybe(g.before),
                    _maybe(g.value),
                    _maybe(g.bound),
                    _maybe(gap),
                    _maybe(g.forced),
                ],
            )
        )
    return table(columns, rows, name="goals", sortable=False, legend=True)


def _maybe(value: int | float | None) -> Cell:
    """A figure that may be absent: "-" (a null in the JSON, not an unknown)."""
    if value is None:
        return num(None, shown="-")
    return num(value, shown=count(value) if float(value).is_integer() else f"{value:,.2f}")


# -- per rack -----------------------------------------------------------------------------


def _counted(summary: AssignSummary) -> dict[str, set[int]]:
    """Per metric, the brokers (by index) the rack figures count: replicas and bytes the
    brokers that stay, preferred leaders those of a lead rack that may take new replicas."""
    lead = {r.rack for r in summary.racks if r.leaders_before is not None}
    return {
        m: {
            i
            for i, b in enumerate(summary.brokers)
            if b.status in COUNTED[m] and (m != "leaders" or b.rack in lead)
        }
        for m in METRICS
    }


def _values(summary: AssignSummary, state: str, counted: dict[str, set[int]]) -> State:
    """Each broker's value of each metric in ``state``; None where it is not counted or
    unknown (what the chart leaves out)."""
    values: dict[str, list[int | None]] = {}
    for m in METRICS:
        field = f"{m}_{state}"
        values[m] = [
            getattr(b, field) if i in counted[m] else None for i, b in enumerate(summary.brokers)
        ]
    return state, values


def _metrics(summary: AssignSummary) -> list[str]:
    """The metrics worth showing: bytes where some are known, leaders where a rack leads."""
    out = ["replicas"]
    if any(b.bytes_after or b.bytes_before for b in summary.brokers):
        out.append("bytes")
    if any(r.leaders_before is not None for r in summary.racks):
        out.append("leaders")
    return out


def _racks(summary: AssignSummary) -> list[str]:
    counted = _counted(summary)
    racks = {
        r: members
        for r, members in by_rack(b.rack for b in summary.brokers).items()
        if any(i in counted["replicas"] for i in members)
    }
    if not racks:
        return [paragraph("No broker can take replicas: nothing to show per rack.")]
    metrics = _metrics(summary)
    states = [_values(summary, s, counted) for s in STATES]
    kept = sorted(counted["replicas"])
    return [
        paragraph(
            "Per rack, the fewest, the median and the most per broker, before and after the "
            "plan. Replicas and bytes count the brokers that stay (drained ones are emptied); "
            "preferred leaders the brokers of each lead rack that may take new replicas."
        ),
        chart(
            "racks",
            "per rack: min-max range per broker, dot at the median",
            (min(14.0, max(7.0, 0.5 + 0.9 * len(racks))), 1.0 + 2.0 * len(metrics)),
            lambda f: draw_ranges(f, racks, states, metrics),
        ),
        chart(
            "histogram",
            "replicas per broker over the brokers that stay: how many hold how many",
            (9.0, 2.6),
            lambda f: draw_histogram(
                f, [(s, [_replicas(summary, i, s) for i in kept]) for s in STATES]
            ),
        ),
        _rack_table(summary, racks, counted, metrics),
    ]


def _replicas(summary: AssignSummary, i: int, state: str) -> int:
    b = summary.brokers[i]
    return b.replicas_before if state == "before" else b.replicas_after


def _rack_table(
    summary: AssignSummary,
    racks: dict[str, list[int]],
    counted: dict[str, set[int]],
    metrics: list[str],
) -> str:
    columns = [Column("rack"), Column("state"), Column("brokers", "brokers that stay")]
    for m in metrics:
        columns += [
            Column(f"{m} min", f"{m} per broker of the rack: the fewest"),
            Column(f"{m} median", f"{m} per broker: the middle broker's (of two, the lower)"),
            Column(f"{m} max", f"{m} per broker of the rack: the most"),
        ]
    index = {r.rack: j for j, r in enumerate(summary.racks)}
    rows = []
    for rack, members in racks.items():
        for state in STATES:
            stay = [i for i in members if i in counted["replicas"]]
            cells: list[Cell] = [label(rack), label(state), num(len(stay))]
            for m in metrics:
                who = [i for i in members if i in counted[m]]
                cells += _stats(summary, m, state, who, index.get(rack))
            rows.append((None, cells))
    return table(columns, rows, name="racks")


def _stats(
    summary: AssignSummary, metric: str, state: str, members: list[int], rack: int | None
) -> list[Cell]:
    """min, median and max over ``members``, each pointing at a broker holding it (the
    min and max of replicas and leaders at the rack's own figure). Bytes are unknown when
    one broker's are; "-" where no broker is counted (a rack that leads no topic)."""
    fmt = nbytes if metric == "bytes" else num
    if not members:
        return [num(None, shown="-")] * 3
    field = f"{metric}_{state}"
    known = [(v, i) for i in members if (v := getattr(summary.brokers[i], field)) is not None]
    if len(known) < len(members):
        return [fmt(None)] * 3
    ordered = sorted(known)
    picked = (ordered[0], statistics.median_low(ordered), ordered[-1])
    cells = [fmt(v, pointer("brokers", i, field)) for v, i in picked]
    if metric != "bytes" and rack is not None:
        cells[0] = fmt(picked[0][0], pointer("racks", rack, field, 0))
        cells[2] = fmt(picked[2][0], pointer("racks", rack, field, 1))
    return cells


# -- rack to rack -------------------------------------------------------------------------


def _flows(summary: AssignSummary) -> list[str]:
    flows = summary.rack_to_rack
    if not flows:
        return [paragraph("No existing partition gains a replica: no data moves.")]
    sized = all(f.bytes is not None for f in flows)
    if sized:
        moved = sum(f.bytes or 0 for f in flows)
        crossing = cross_rack_bytes(flows) or 0
        share = f"{size(crossing)} of {size(moved)} cross from one rack to another."
    else:
        share = "Some partitions have no known size: the chart counts replicas instead of bytes."
    columns = [
        Column(
            "from rack", "the rack of the partition's current leader", "/rack_to_rack/*/from_rack"
        ),
        Column("to rack", "the rack of the broker gaining the replica", "/rack_to_rack/*/to_rack"),
        Column("replicas", "replicas added", "/rack_to_rack/*/replicas"),
        Column("data", "bytes of those replicas", "/rack_to_rack/*/bytes"),
        Column("across racks", "whether the data leaves its rack"),
    ]
    rows = []
    for i, f in enumerate(flows):
        cells = [
            _rack_cell(f.from_rack, pointer("rack_to_rack", i, "from_rack")),
            _rack_cell(f.to_rack, pointer("rack_to_rack", i, "to_rack")),
            num(f.replicas),
            nbytes(f.bytes),
            label("yes" if crosses_racks(f.from_rack, f.to_rack) else "no"),
        ]
        rows.append((i, cells))
    racks = sorted({r for f in flows for r in (f.from_rack, f.to_rack)}, key=_rack_order)
    return [
        paragraph(
            "Each replica the plan adds to an existing partition copies its data from the "
            "partition's current leader (the batches' sender; the first replica where no "
            "leader is recorded): from that broker's rack to "
            f"the new broker's. {share}"
        ),
        chart(
            "flows",
            "from rack (rows) to rack (columns): " + ("bytes" if sized else "replicas added"),
            (min(12.0, 3.0 + 0.6 * len(racks)), min(10.0, 1.6 + 0.45 * len(racks))),
            lambda f: _draw_flows(f, summary, racks, sized),
        ),
        table(columns, rows, name="flows", legend=True),
    ]


def _rack_order(rack: str | None) -> tuple[bool, str]:
    return (rack is None, rack or "")


def _rack_cell(rack: str | None, key: str) -> Cell:
    """A rack's name, pointing at the JSON; a null shows "-" with no pointer."""
    if rack is None:
        return label("-", "no rack: the broker has none, or is not in the inventory")
    return Cell(rack, key=key)


def _draw_flows(fig: Figure, summary: AssignSummary, racks: list[str | None], sized: bool) -> None:
    """A heat map of the rack-to-rack matrix, drawn as vector cells (no raster image)."""
    import numpy as np

    at = {r: k for k, r in enumerate(racks)}
    grid = np.zeros((len(racks), len(racks)))
    for f in summary.rack_to_rack:
        grid[at[f.from_rack], at[f.to_rack]] += (f.bytes or 0) if sized else f.replicas
    ax = fig.subplots()
    ax.grid(False)
    scale = 2**30 if sized else 1  # the colours in GiB; each cell says its exact size
    mesh = ax.pcolormesh(
        np.ma.masked_equal(grid, 0) / scale, cmap="Blues", edgecolors="white", linewidth=0.5
    )
    names = [axis_label(r if r is not None else "-", 16) for r in racks]
    ticks = [k + 0.5 for k in range(len(racks))]
    ax.set_xticks(ticks, names, rotation=60 if len(racks) > 6 else 0)
    ax.set_yticks(ticks, names)
    ax.set_xlim(0, len(racks))
    ax.set_ylim(len(racks), 0)
    ax.set_xlabel("to rack (the new replica's)")
    ax.set_ylabel("from rack (the leader's)")
    bar = fig.colorbar(mesh, ax=ax, label="GiB" if sized else "replicas added")
    if bar.solids is not None:  # an image would be a data: URI in the page
        bar.solids.set_rasterized(False)
    if len(racks) <= ANNOTATE_RACKS:
        top = grid.max() or 1
        for (r, c), v in np.ndenumerate(grid):
            if v:
                ax.text(
                    c + 0.5,
                    r + 0.5,
                    size(v) if sized else count(int(v)),
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if v > 0.6 * top else "black",
                )


# -- policy changes -----------------------------------------------------------------------


def _policies(summary: AssignSummary) -> list[str]:
    columns = [
        Column("topic", key="/policy_changes/*/topic"),
        Column(
            "action",
            "alter: kafka-configs --alter; create: kafka-topics --create",
            "/policy_changes/*/action",
        ),
        Column("file", "its policy file in --policy-dir", "/policy_changes/*/file"),
        Column("partitions", "create: the partition count", "/policy_changes/*/partitions"),
        Column("min ISR", "create: min.insync.replicas", "/policy_changes/*/min_isr"),
        Column("policy now", "what the cluster has (none: no policy set, or no topic)"),
        Column("policy asked for", "what --topics sets"),
    ]
    doc = summary.model_dump(mode="json", include={"policy_changes"})["policy_changes"]
    rows = []
    for i, (c, d) in enumerate(zip(summary.policy_changes, doc, strict=True)):
        cells = [
            Cell(c.topic),
            Cell(c.action),
            Cell(c.file),
            _maybe(c.partitions),
            _maybe(c.min_isr),
            label(_compact(d["before"]), wrap=True),
            label(_compact(d["after"]), wrap=True),
        ]
        rows.append((i, cells))
    return [
        paragraph(
            "These topics' policy in --topics is not the cluster's. Set it first (it moves "
            "no data): until then the partitions the plan moves break the policy the cluster "
            "has. --policy-dir writes the files and the commands."
        ),
        table(columns, rows, name="policies"),
    ]


def _topics(summary: AssignSummary) -> list[str]:
    columns = [
        Column("topic", key="/topics/*/topic"),
        Column("rule", "policy, cluster default, or rack-aware (no policy)", "/topics/*/rule"),
        Column("partitions", "partitions changed", "/topics/*/partitions_changed"),
        Column("added", "replicas added", "/topics/*/replicas_added"),
        Column("removed", "replicas removed", "/topics/*/replicas_removed"),
        Column("bytes", "bytes of the replicas added", "/topics/*/bytes_to_move"),
        Column("leaders", "leadership changes", "/topics/*/leadership_changes"),
    ]
    rows = [
        (
            i,
            [
                Cell(t.topic),
                Cell(t.rule),
                _maybe(t.partitions_changed),
                _maybe(t.replicas_added),
                _maybe(t.replicas_removed),
                _maybe(t.bytes_to_move),
                _maybe(t.leadership_changes),
            ],
        )
        for i, t in enumerate(summary.topics)
    ]
    out = [
        paragraph("What the plan changes in each topic, largest first."),
        table(columns, rows, name="topics"),
    ]
    if summary.left_alone:
        alone = [
            Column("topic", key="/left_alone/*/topic"),
            Column("rule", key="/left_alone/*/rule"),
            Column("partitions", "breaking their rule, left alone", "/left_alone/*/partitions"),
        ]
        rows = [
            (i, [Cell(t.topic), Cell(t.rule), _maybe(t.partitions)])
            for i, t in enumerate(summary.left_alone)
        ]
        out += [
            paragraph(
                "Outside what the plan was asked to change, these partitions break their "
                "rule and were left as they are; --repair changes them."
            ),
            table(alone, rows, name="left-alone"),
        ]
    return out


def _compact(policy: object) -> str:
    return "none" if policy is None else json.dumps(policy, separators=(",", ":"))


# -- every broker -------------------------------------------------------------------------


def _brokers(summary: AssignSummary) -> list[str]:
    brokers = summary.brokers
    if not brokers:
        return [paragraph("No broker.")]
    columns = [
        Column("broker", key="/brokers/*/broker"),
        Column("rack"),
        Column(
            "status",
            "drained: emptied; excluded: takes no new replica; absent: not in "
            "the inventory (emptied)",
            "/brokers/*/status",
        ),
    ]
    metrics = [m for m in METRICS if m != "bytes" or "bytes" in _metrics(summary)]
    for m in metrics:
        columns += [
            Column(f"{m} before", key=f"/brokers/*/{m}_before"),
            Column(f"{m} after", key=f"/brokers/*/{m}_after"),
            Column(f"{m} change", "after minus before"),
        ]
    rows = []
    for i, b in enumerate(brokers):
        cells = [
            num(b.broker, shown=str(b.broker)),
            _rack_cell(b.rack, pointer("brokers", i, "rack")),
            Cell(b.status),
        ]
        for m in metrics:
            fmt: Callable[[int | None], Cell] = nbytes if m == "bytes" else num
            old, new = getattr(b, f"{m}_before"), getattr(b, f"{m}_after")
            change = None if old is None or new is None else new - old
            cells += [fmt(old), fmt(new), fmt(change)]
        rows.append((i, cells))
    return [
        paragraph(f"All {count(len(brokers))} brokers; click a header to sort."),
        table(columns, rows, name="brokers"),
    ]
