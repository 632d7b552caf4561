"""Reading an HTML report's figures back: every element with a pointer (``data-k`` on it, or
on its column's header with ``*`` for the row's ``data-i``), its value (``data-v``) and its
text; and holding them to the JSON report of the same run."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

from placement.diagnostics.escape import escape

Figure = tuple[str, str | None, str]  # pointer, data-v (None: a text cell), text shown

# the same walk in the browser, over the live DOM (after the page's script ran)
DOM_FIGURES_JS = """
() => Array.from(document.querySelectorAll("[data-k], td")).flatMap(el => {
  let k = el.getAttribute("data-k");
  if (k === null) {
    const table = el.closest("table");
    const th = table && table.tHead ? table.tHead.rows[0].cells[el.cellIndex] : null;
    k = th ? th.getAttribute("data-k") : null;
    if (k === null) { return []; }
    k = k.replace("*", el.parentElement.getAttribute("data-i"));
  }
  if (el.tagName === "TH") { return []; }
  return [[k, el.getAttribute("data-v"), el.textContent]];
})
"""


class _Walker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.figures: list[Figure] = []
        self.columns: list[str | None] = []
        self.in_head = False
        self.row: str | None = None
        self.cell = -1
        # the open td and span elements: (pointer or None, value, text)
        self.open: list[tuple[str | None, str | None, list[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self.columns = []
        elif tag == "thead":
            self.in_head = True
        elif tag == "tbody":
            self.in_head = False
        elif tag == "th" and self.in_head:
            self.columns.append(a.get("data-k"))
        elif tag == "tr":
            self.row, self.cell = a.get("data-i"), -1
        if tag == "td":
            self.cell += 1
        key = a.get("data-k")
        if key is None and tag == "td" and self.cell < len(self.columns):
            column = self.columns[self.cell]
            if column is not None and self.row is not None:
                key = column.replace("*", self.row)
        if tag in ("td", "span"):
            self.open.append((key, a.get("data-v"), []))

    def handle_data(self, data: str) -> None:
        for _, _, text in self.open:
            text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "span") and self.open:
            key, value, text = self.open.pop()
            if key is not None:
                self.figures.append((key, value, "".join(text)))


def figures(page: str) -> list[Figure]:
    walker = _Walker()
    walker.feed(page)
    return walker.figures


def resolve(doc: Any, pointer: str) -> Any:
    """The value at a JSON pointer (RFC 6901)."""
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        doc = doc[int(token)] if isinstance(doc, list) else doc[token]
    return doc


def mismatches(doc: Any, found: list[Figure]) -> list[str]:
    """Each figure whose value differs from the JSON report's at its pointer (numbers
    exactly, as doubles; a text cell shows the escaped string)."""
    out = []
    for key, value, text in found:
        try:
            want = resolve(doc, key)
        except (KeyError, IndexError, ValueError, TypeError):
            out.append(f"{key}: not in the JSON report")
            continue
        if value is None:
            if text != escape(str(want)):
                out.append(f"{key}: shows {text!r}, the JSON has {want!r}")
            continue
        got = json.loads(value)  # numbers compare as doubles: 16 == 16.0, nothing rounded
        if got != want or (got is None) != (want is None):
            out.append(f"{key}: data-v {value}, the JSON has {want!r}")
    return out
