"""The human `text` rendering of a validation report (rich; readable with colour off), and the
helpers every command uses to show untrusted text (names, paths, input) through rich."""

from __future__ import annotations

import io
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape as markup_escape
from rich.text import Text

from placement.diagnostics.escape import escape as escape_controls

if TYPE_CHECKING:  # every command imports the helpers below: no pydantic at import time
    from placement.model.diagnostic import Diagnostic, ValidationReport

_LINE_END = re.compile(r"\r\n|\r|\n")


def safe(value: object) -> str:
    """An untrusted value (a rack, topic or file name, input text) as one printable line:
    control characters, bidi overrides and undecodable bytes as visible escapes. For text
    that rich prints with ``markup=False, emoji=False``, or that goes to a plain stream."""
    return escape_controls(str(value))


def escape(value: object) -> str:
    """`safe`, then rich's markup escape: for an untrusted value inside a markup string."""
    return markup_escape(safe(value))


def cell(value: object) -> Text:
    """An untrusted value, or a one-line message that quotes one, for a rich table cell, a
    title or ``console.print``: `safe`, and a Text, so rich reads no markup (``[red]``) and no
    emoji code (``:smile:``) in it."""
    return Text(safe(value))


STYLE = {"error": "bold red", "warning": "bold yellow"}  # by Severity value


@lru_cache(maxsize=64)
def _lines(path: str) -> list[str]:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return []
    if b"\0" in data:  # a binary file (a snapshot's Parquet): its "lines" are rows, no text
        return []
    text = data.decode("utf-8-sig", errors="replace")
    # the same line ends as placement.io.positions.LineIndex (splitlines knows more)
    return _LINE_END.split(text)


def _excerpt(d: Diagnostic) -> list[str]:
    lines = _lines(d.file)
    if not 0 < d.line <= len(lines):
        return []
    src = lines[d.line - 1]
    if len(src) > 160:  # one-line files: show a window around the column
        start = max(0, d.column - 60)
        src, col = src[start : start + 120], d.column - start
    else:
        col = d.column
    gutter = str(d.line)
    # the file's own text is untrusted too: escaped, with the caret under the escaped column
    shown = escape_controls(src, keep="\t")
    before = escape_controls(src[: col - 1], keep="\t")
    pad = "".join("\t" if c == "\t" else " " for c in before)
    return [f" {gutter} | {shown}", f" {' ' * len(gutter)} | {pad}^"]


def render_text(report: ValidationReport, *, color: bool = False) -> str:
    buf = io.StringIO()
    console = Console(
        file=buf,
        highlight=False,
        soft_wrap=True,
        emoji=False,
        width=120,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
    )
    for f in report.files:
        if not f.diagnostics:
            console.print(f"[green]PASS[/] {escape(f.path)}")
            continue
        status = "[green]PASS[/]" if f.valid else "[bold red]FAIL[/]"
        console.print(f"{status} {escape(f.path)}")
        for d in f.diagnostics:
            where = f" (in {escape(d.context)})" if d.context else ""
            console.print(
                f"  {escape(d.file)}:{d.line}:{d.column}: "
                f"[{STYLE[d.severity.value]}]{d.severity.value}[/] {d.code} "
                f"[dim]\\[{d.name}][/] {escape(d.message)}{where}"
            )
            for line in _excerpt(d):
                console.print(f"  [dim]{markup_escape(line)}[/]")
            if d.hint:
                console.print(f"    [cyan]hint:[/] {escape(d.hint)}")
    s = report.summary
    verdict = "[bold red]failed[/]" if s.invalid_files else "[bold green]passed[/]"
    console.print(
        f"\n{s.files} file{'s' * (s.files != 1)} checked, {s.files - s.invalid_files} passed, "
        f"{s.invalid_files} failed ({s.errors} error{'s' * (s.errors != 1)}, "
        f"{s.warnings} warning{'s' * (s.warnings != 1)}{', strict' if report.strict else ''}): "
        f"{verdict}"
    )
    return buf.getvalue()
