"""The human `text` rendering of a validation report (rich; readable with colour off)."""

from __future__ import annotations

import io
import re
from functools import lru_cache
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from placement.diagnostics.model import Diagnostic, Severity, ValidationReport

_LINE_END = re.compile(r"\r\n|\r|\n")
STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "bold yellow"}


@lru_cache(maxsize=64)
def _lines(path: str) -> list[str]:
    try:
        text = Path(path).read_text(encoding="utf-8-sig", errors="replace")
    except OSError:
        return []
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
    pad = "".join("\t" if c == "\t" else " " for c in src[: col - 1])
    return [f" {gutter} | {src}", f" {' ' * len(gutter)} | {pad}^"]


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
                f"  {escape(d.file)}:{d.line}:{d.column}: [{STYLE[d.severity]}]{d.severity.value}"
                f"[/] {d.code} [dim]\\[{d.name}][/] {escape(d.message)}{where}"
            )
            for line in _excerpt(d):
                console.print(f"  [dim]{escape(line)}[/]")
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
