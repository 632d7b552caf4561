"""The frame every HTML report shares: one self-contained document, tables whose numbers a
script (or a test) can read back, and the formats of the figures in them.

A report is mailed around and opened on machines without network, so the page holds every
style and script inline and its Content-Security-Policy forbids any request: a stray
reference fails closed instead of reaching for a host. Untrusted text (topic, rack and file
names) goes through `text`: made visible by `diagnostics.escape.escape`, then HTML-escaped.

Each number in a table carries its exact value in ``data-v`` (JSON text, ``null`` when
unknown) and, where it comes straight from the JSON report of the same run, where it is:
``data-k`` holds a JSON pointer, on the cell or on its column's header with ``*`` standing
for the row's ``data-i``. The sort script orders rows by ``data-v``; the tests compare
every pointed-at value with the JSON report.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from html import escape as html_escape

from placement.diagnostics.escape import escape

JsonScalar = int | float | str | bool | None
# what a cell can stand for: a scalar, or a short list (a partition's observers)
JsonValue = JsonScalar | list[int] | list[str]


def text(value: object) -> str:
    """Untrusted text as HTML: control and bidi characters made visible, markup escaped."""
    return html_escape(escape(str(value)), quote=True)


def pointer(*parts: str | int) -> str:
    """A JSON pointer (RFC 6901) to ``parts``: ``pointer("a", 0, "b/c")`` -> ``/a/0/b~1c``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def rebase(html: str, root: str) -> str:
    """``html`` drawn for one JSON document, shown for another that holds the first at
    ``root`` (a pointer): every ``data-k`` gets that prefix. Text and attribute values are
    escaped (a quote is ``&quot;``), so ``data-k="`` occurs in markup only."""
    return html.replace(' data-k="/', f' data-k="{text(root)}/')


# -- the figures as shown -------------------------------------------------------------------


def count(n: int | float | None) -> str:
    if n is None:
        return "unknown"
    return f"{n:,}" if isinstance(n, int) else f"{n:,.1f}"


def size(n: int | float | None) -> str:
    """Bytes in binary units, as `plan show` prints them; "unknown" for None."""
    if n is None:
        return "unknown"
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n:,.0f} B"


def duration(seconds: float | None) -> str:
    """A duration as 1h02m03s / 2m03s; "-" when there is none (no throttle, no size)."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    s = round(seconds)
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s"
    return f"{s // 60}m{s % 60:02d}s"


def decimal(x: float | None, places: int = 1) -> str:
    return "unknown" if x is None else f"{x:,.{places}f}"


# -- tables ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One table cell: ``shown`` (plain text, escaped on output), the exact ``value`` behind
    it (``data-v``; omitted for text cells, which sort by what they show) and, when it is a
    figure of the JSON report, its ``key`` (a JSON pointer)."""

    shown: str
    value: JsonValue = None
    has_value: bool = False
    key: str | None = None
    title: str | None = None
    wrap: bool = False  # long text: wraps instead of widening the table

    def html(self, tag: str = "td") -> str:
        attrs = ""
        if self.has_value:
            attrs += f' data-v="{text(json.dumps(self.value))}"'
        if self.key is not None:
            attrs += f' data-k="{text(self.key)}"'
        if self.title is not None:
            attrs += f' title="{text(self.title)}"'
        if self.has_value and isinstance(self.value, int | float | type(None)):
            attrs += ' class="n"'
        elif self.wrap:
            attrs += ' class="w"'
        return f"<{tag}{attrs}>{text(self.shown)}</{tag}>"


def label(shown: object, title: str | None = None, *, wrap: bool = False) -> Cell:
    return Cell(str(shown), title=title, wrap=wrap)


def num(value: int | float | None, key: str | None = None, shown: str | None = None) -> Cell:
    """A number (``shown`` defaults to `count`); ``key``: its pointer in the JSON report."""
    return Cell(count(value) if shown is None else shown, value, True, key)


def nbytes(value: int | float | None, key: str | None = None) -> Cell:
    return num(value, key, size(value))


@dataclass(frozen=True)
class Column:
    """A column: its title, what it means (shown on hover and in the legend below the
    table) and, for a column of report figures, the pointer of each row's value with ``*``
    for the row's index (``data-i``)."""

    title: str
    help: str | None = None
    key: str | None = None


def table(
    columns: Sequence[Column],
    rows: Iterable[tuple[int | str | None, Sequence[Cell]]],
    *,
    name: str,
    sortable: bool = True,
    caption: str | None = None,
    legend: bool = False,
) -> str:
    """A table (in a scrolling box); ``rows``: (the row's index or key for the columns'
    pointers, already a pointer token; its cells). ``legend``: the columns' meanings below."""
    head = []
    for c in columns:
        attrs = ' scope="col"'
        if c.key:
            attrs += f' data-k="{text(c.key)}"'
        if c.help:
            attrs += f' title="{text(c.help)}"'
        head.append(f"<th{attrs}>{text(c.title)}</th>")
    body = []
    for index, cells in rows:
        row_attr = "" if index is None else f' data-i="{text(index)}"'
        body.append(f"<tr{row_attr}>" + "".join(c.html() for c in cells) + "</tr>")
    cls = "sortable" if sortable else "plain"
    cap = f"<caption>{text(caption)}</caption>" if caption else ""
    out = (
        f'<div class="scroll"><table class="{cls}" data-table="{text(name)}">{cap}'
        f"<thead><tr>{''.join(head)}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )
    if legend:
        items = "".join(
            f"<dt>{text(c.title)}</dt><dd>{text(c.help)}</dd>" for c in columns if c.help
        )
        out += f'<dl class="legend">{items}</dl>'
    return out


def facts(items: Iterable[tuple[str, Cell]], name: str) -> str:
    """A short list of headline figures (label: value)."""
    body = "".join(
        f'<div class="fact"><span class="what">{text(what)}</span>{cell.html("span")}</div>'
        for what, cell in items
    )
    return f'<div class="facts" data-facts="{text(name)}">{body}</div>'


def paragraph(content: str) -> str:
    return f"<p>{text(content)}</p>"


# -- the document ---------------------------------------------------------------------------

# Sorting on a header click or Enter: by data-v (numbers as numbers, unknown last), else by
# the text; a second click reverses. Written here, no library: the page needs nothing else.
SORT_SCRIPT = """
(function () {
  "use strict";
  function key(td) {
    var v = td.getAttribute("data-v");
    if (v === null) { return td.textContent; }
    var parsed = JSON.parse(v);
    return parsed;
  }
  function compare(a, b) {
    if (a[0] === null || b[0] === null) {
      return a[0] === b[0] ? a[1] - b[1] : (a[0] === null ? 1 : -1);
    }
    if (typeof a[0] === "number" && typeof b[0] === "number") {
      return a[0] - b[0] || a[1] - b[1];
    }
    return String(a[0]).localeCompare(String(b[0])) || a[1] - b[1];
  }
  function sort(table, column, th) {
    var body = table.tBodies[0];
    var descending = th.getAttribute("aria-sort") === "ascending";
    var heads = table.tHead.rows[0].cells;
    for (var h = 0; h < heads.length; h++) { heads[h].removeAttribute("aria-sort"); }
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var rows = [];
    for (var i = 0; i < body.rows.length; i++) {
      rows.push([key(body.rows[i].cells[column]), i, body.rows[i]]);
    }
    rows.sort(compare);
    if (descending) {
      var unknown = rows.filter(function (r) { return r[0] === null; });
      rows = rows.filter(function (r) { return r[0] !== null; }).reverse().concat(unknown);
    }
    var fragment = document.createDocumentFragment();
    rows.forEach(function (r) { fragment.appendChild(r[2]); });
    body.appendChild(fragment);
  }
  var tables = document.querySelectorAll("table.sortable");
  Array.prototype.forEach.call(tables, function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, column) {
      th.tabIndex = 0;
      th.addEventListener("click", function () { sort(table, column, th); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(table, column, th); }
      });
    });
  });
})();
"""

_SCRIPT_HASH = base64.b64encode(hashlib.sha256(SORT_SCRIPT.encode()).digest()).decode()
# no request of any kind; only the one script above runs
CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
    f"script-src 'sha256-{_SCRIPT_HASH}'; base-uri 'none'; form-action 'none'"
)

STYLE = """
:root { color-scheme: light; --line: #d0d7de; --muted: #57606a; --head: #f6f8fa; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  margin: 0 auto; max-width: 1200px; padding: 1rem 1.5rem 3rem; color: #1f2328; }
h1 { font-size: 1.5rem; margin: .5rem 0; }
h2 { font-size: 1.2rem; margin: 2rem 0 .5rem; border-bottom: 1px solid var(--line); }
h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
p, .note { max-width: 60rem; }
.note { color: var(--muted); }
.facts { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; margin: .5rem 0 1rem; }
.fact { display: flex; flex-direction: column; min-width: 7rem; }
.fact .what { color: var(--muted); font-size: .8rem; }
.fact span.n, .fact span:last-child { font-size: 1.15rem; font-weight: 600; }
.scroll { max-height: 32rem; overflow: auto; border: 1px solid var(--line); margin: .5rem 0; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; min-width: 100%; }
caption { text-align: left; padding: .3rem .5rem; color: var(--muted); }
th, td { padding: .2rem .6rem; border-bottom: 1px solid var(--line); text-align: left;
  white-space: nowrap; }
td.n { text-align: right; }
td.w { white-space: normal; min-width: 20rem; }
thead th { position: sticky; top: 0; background: var(--head); z-index: 1; }
table.sortable thead th { cursor: pointer; }
th[aria-sort=ascending]::after { content: " \\25B2"; }
th[aria-sort=descending]::after { content: " \\25BC"; }
tbody tr:hover { background: #f0f6ff; }
figure.chart { margin: 1rem 0; }
figure.chart svg { max-width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: .85rem; }
dl.legend { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem;
  font-size: .85rem; color: var(--muted); }
dl.legend dt { font-weight: 600; }
dl.legend dd { margin: 0; }
code { background: var(--head); padding: 0 .2rem; }
"""


@dataclass
class Page:
    """A report being assembled: its sections in order, then `render`."""

    title: str
    kind: str  # score, plan, simulate, …: data-report on <body>
    subtitle: str = ""
    parts: list[str] = field(default_factory=list)

    def add(self, html: str) -> None:
        self.parts.append(html)

    def section(self, heading: str, *html: str, name: str) -> None:
        self.add(
            f'<section data-section="{text(name)}"><h2>{text(heading)}</h2>{"".join(html)}'
            "</section>"
        )

    def render(self) -> str:
        sub = f'<p class="note">{text(self.subtitle)}</p>' if self.subtitle else ""
        return (
            "<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<meta name="generator" content="mrc-plan">'
            f"<title>{text(self.title)}</title><style>{STYLE}</style></head>"
            f'<body data-report="{text(self.kind)}"><h1>{text(self.title)}</h1>{sub}'
            + "".join(self.parts)
            + f"<script>{SORT_SCRIPT}</script></body></html>\n"
        )
