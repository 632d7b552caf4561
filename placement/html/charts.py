"""Charts as inline SVG, drawn by matplotlib in process: no JavaScript, no font file, no
request, and the same bytes for the same input.

matplotlib is imported here only, inside the functions, so nothing loads it before a
command asked for a report. Every figure is drawn under fixed settings: text stays text
(``svg.fonttype: none``, the reader's sans-serif draws it), a ``$`` in a rack name is not
TeX (``text.parse_math``), the salt of the ids is the chart's name and the metadata
(creator, date) is left out. The ids an SVG refers to (clip paths, tick markers) are
prefixed with the chart's name so that several charts live in one document; the others
are dropped.

Two charts serve every page that shows load per broker: `draw_ranges` (per rack, the
fewest, the median and the most per broker, one bar per state) and `draw_histogram` (how
many brokers hold how many replicas). At 1,000 brokers neither draws a bar per broker.
"""

from __future__ import annotations

import io
import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from placement.diagnostics.escape import escape
from placement.html.page import text

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# the outcome colours every report uses (colour-blind safe: Okabe-Ito)
COLOURS = {
    "available": "#009E73",
    "promoted": "#56B4E9",
    "under_min_isr": "#E69F00",
    "offline": "#D55E00",
    "before": "#999999",
    "after": "#0072B2",
    "bound": "#D55E00",
}
SERIES = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442"]

_SETTINGS: dict[str, Any] = {
    "svg.fonttype": "none",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 9,
    "text.parse_math": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e5e5e5",
    "axes.axisbelow": True,
    "legend.frameon": False,
    "path.simplify": True,
}
# per broker, by its index: one metric's values in one state (None: not counted there)
Values = Sequence[int | float | None]
State = tuple[str, Mapping[str, Values]]  # its name; metric -> values

_ID = re.compile(r'\sid="([^"]*)"')
_REF = re.compile(r'(url\(#|href="#)([^)"]*)')


def chart(
    name: str, caption: str, size: tuple[float, float], draw: Callable[[Figure], None]
) -> str:
    """A ``<figure>`` holding the SVG that ``draw`` makes on a figure of ``size`` inches;
    ``name`` (plain: letters, digits, dashes) identifies it in the page."""
    import matplotlib
    from matplotlib.figure import Figure

    settings: Any = {**_SETTINGS, "svg.hashsalt": f"mrc-plan-{name}"}  # typed by key there
    with matplotlib.rc_context(settings):
        fig = Figure(figsize=size, layout="constrained")
        draw(fig)
        out = io.StringIO()
        fig.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    svg = inline(out.getvalue(), name)
    return (
        f'<figure class="chart" data-chart="{text(name)}">{svg}'
        f"<figcaption>{text(caption)}</figcaption></figure>"
    )


def inline(svg: str, name: str) -> str:
    """matplotlib's SVG document as an element of an HTML page (see the module docstring)."""
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, flags=re.S)
    used = {m.group(2) for m in _REF.finditer(svg)}
    svg = _ID.sub(lambda m: f' id="{name}-{m.group(1)}"' if m.group(1) in used else "", svg)
    svg = _REF.sub(lambda m: f"{m.group(1)}{name}-{m.group(2)}", svg)
    return svg.replace("<svg ", f'<svg role="img" aria-label="{text(name)}" ', 1).strip()


def axis_label(name: str, limit: int = 28) -> str:
    """An untrusted name for an axis or a legend: controls made visible (matplotlib
    escapes the markup), whole when short, else its start and end."""
    name = escape(name)
    return name if len(name) <= limit else f"{name[: limit - 10]}…{name[-9:]}"


def by_rack(racks: Iterable[str | None]) -> dict[str, list[int]]:
    """Rack -> the indexes of its brokers (``-`` for brokers without a rack), racks sorted."""
    out: dict[str, list[int]] = {}
    for i, rack in enumerate(racks):
        out.setdefault(rack if rack is not None else "-", []).append(i)
    return dict(sorted(out.items()))


def draw_ranges(
    fig: Figure,
    racks: Mapping[str, Sequence[int]],
    states: Sequence[State],
    metrics: Sequence[str],
) -> None:
    """One panel per metric: per rack and state, a bar from the fewest to the most per
    broker with a dot at the median; the first state grey. Values that are None are left
    out, and a rack with none in a state draws nothing there. Bytes are drawn in GiB."""
    axes = fig.subplots(len(metrics), 1, sharex=True, squeeze=False)[:, 0]
    width = 0.8 / len(states)
    for ax, metric in zip(axes, metrics, strict=True):
        scale, unit = (2**30, " (GiB)") if metric == "bytes" else (1, "")
        for s, (state, values) in enumerate(states):
            xs, lows, highs, mids = [], [], [], []
            for r, members in enumerate(racks.values()):
                known = [v / scale for i in members if (v := values[metric][i]) is not None]
                if not known:
                    continue
                xs.append(r - 0.4 + width * (s + 0.5))
                lows.append(min(known))
                highs.append(max(known))
                mids.append(statistics.median(known))
            colour = COLOURS["before"] if s == 0 else SERIES[(s - 1) % len(SERIES)]
            ax.vlines(xs, lows, highs, colors=colour, linewidth=max(1.5, 40 * width / len(racks)))
            # ends marked too: a rack whose brokers all hold the same draws no bar
            for ends in (lows, highs):
                ax.plot(xs, ends, "_", color=colour, markersize=8, markeredgewidth=2)
            ax.plot(xs, mids, "o", color="black", markersize=3)
            ax.plot([], [], color=colour, linewidth=4, label=axis_label(state))
        ax.set_ylabel(f"{metric} per broker{unit}")
    axes[-1].set_xticks(range(len(racks)), [axis_label(r, 16) for r in racks])
    if len(racks) > 8:
        axes[-1].tick_params(axis="x", labelrotation=60)
    axes[0].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)


def draw_histogram(
    fig: Figure, states: Sequence[tuple[str, Sequence[int]]], xlabel: str = "replicas per broker"
) -> None:
    """How many brokers hold how many: one panel per state after the first, each over
    the first state's outline (one panel for a first state alone)."""
    base_name, base = states[0]
    panels = list(states[1:]) or [states[0]]
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    everything = [v for _, values in states for v in values] or [0]
    low, high = min(everything), max(everything)
    bins = max(1, min(40, high - low + 1))
    for ax, (state, values) in zip(axes, panels, strict=True):
        ax.hist(
            base,
            bins=bins,
            range=(low, high + 1),
            histtype="step",
            color=COLOURS["before"],
            linewidth=1.5,
            label=axis_label(base_name),
        )
        if len(states) > 1:
            ax.hist(
                values,
                bins=bins,
                range=(low, high + 1),
                histtype="stepfilled",
                alpha=0.6,
                color=COLOURS["after"],
                label="after",
            )
        ax.set_title(axis_label(state), fontsize=9)
        ax.set_xlabel(xlabel)
    axes[0].set_ylabel("brokers")
    axes[0].legend(fontsize=8)
