"""Charts as inline SVG, drawn by matplotlib in process: no JavaScript, no font file, no
request, and the same bytes for the same input.

matplotlib is imported here only, inside the functions, so nothing loads it before a
command asked for a report. Every figure is drawn under fixed settings: text stays text
(``svg.fonttype: none``, the reader's sans-serif draws it), a ``$`` in a rack name is not
TeX (``text.parse_math``), the salt of the ids is the chart's name and the metadata
(creator, date) is left out. The ids an SVG refers to (clip paths, tick markers) are
prefixed with the chart's name so that several charts live in one document; the others
are dropped.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
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
