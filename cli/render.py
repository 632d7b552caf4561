"""The human `text` rendering of a validation report (rich; readable with colour off), and the
helpers every command uses to show untrusted text (names, paths, input) through rich.

Without colour (a pipe, a file, NO_COLOR) the report is the same text without rich: `validate`
is run once per file by editors and hooks, and rich's console costs ~30 ms to import.
`_plain` is what rich prints for the markup below, tags dropped: the two are held equal by
tests/cli/test_render_plain.py.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from placement.diagnostics.escape import escape as escape_controls
from placement.diagnostics.quoting import may_excerpt
from placement.diagnostics.rollup import roll_up

if TYPE_CHECKING:  # every command imports the helpers below: no pydantic, no rich at import
    from rich.text import Text

    from placement.model.diagnostic import Diagnostic, ValidationReport

_LINE_END = re.compile(r"\r\n|\r|\n")


def safe(value: object) -> str:
    """An untrusted value (a rack, topic or file name, input text) as one printable line:
    control characters, bidi overrides and undecodable bytes as visible escapes. For text
    that rich prints with ``markup=False, emoji=False``, or that goes to a plain stream."""
    return escape_controls(str(value))


def escape(value: object) -> str:
    """`safe`, then rich's markup escape: for an untrusted value inside a markup string."""
    from rich.markup import escape as markup_escape

    return markup_escape(safe(value))


def cell(value: object) -> Text:
    """An untrusted value, or a one-line message that quotes one, for a rich table cell, a
    title or ``console.print``: `safe`, and a Text, so rich reads no markup (``[red]``) and no
    emoji code (``:smile:``) in it."""
    from rich.text import Text

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
    if not may_excerpt(d):  # not the format validate expected: no line of it is shown
        return []
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


def _markup(report: ValidationReport, markup_escape: Callable[[str], str]) -> Iterator[str]:
    """The report as lines of rich markup, one `console.print` each; ``markup_escape`` is
    rich's escape, or `_escape_markup` (the same) where rich is not loaded."""

    def escape(value: object) -> str:
        return markup_escape(safe(value))

    for f in report.files:
        if not f.diagnostics:
            yield f"[green]PASS[/] {escape(f.path)}"
            continue
        status = "[green]PASS[/]" if f.valid else "[bold red]FAIL[/]"
        yield f"{status} {escape(f.path)}"
        for rolled in roll_up(f.diagnostics):  # one line per cause, at its first finding
            d = rolled.first
            # the message and its context escaped as one text: escaped apart, a message
            # ending "[/" and a context holding "]" made a closing tag across the two
            where = f" (in {d.context})" if d.context else ""
            yield (
                f"  {escape(d.file)}:{d.line}:{d.column}: "
                f"[{STYLE[d.severity.value]}]{d.severity.value}[/] {d.code} "
                f"[dim]\\[{d.name}][/] {escape(d.message + where + rolled.suffix())}"
            )
            for line in _excerpt(d):
                yield f"  [dim]{markup_escape(line)}[/]"
            if d.hint:
                yield f"    [cyan]hint:[/] {escape(d.hint)}"
    yield _summary(report, "[bold red]failed[/]", "[bold green]passed[/]")


def _summary(report: ValidationReport, failed: str, passed: str) -> str:
    s = report.summary
    verdict = failed if s.invalid_files else passed
    return (
        f"\n{s.files} file{'s' * (s.files != 1)} checked, {s.files - s.invalid_files} passed, "
        f"{s.invalid_files} failed ({s.errors} error{'s' * (s.errors != 1)}, "
        f"{s.warnings} warning{'s' * (s.warnings != 1)}{', strict' if report.strict else ''}): "
        f"{verdict}"
    )


def render_rich(report: ValidationReport, *, color: bool) -> str:
    """The report through rich's console: colour, or (``color=False``) what `_plain` makes."""
    from rich.console import Console
    from rich.markup import escape as markup_escape

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
    for line in _markup(report, markup_escape):
        console.print(line)
    return buf.getvalue()


# rich's markup tags (rich.markup.RE_TAGS), the tags its escape neutralises, and the
# control codes its Text strips (rich.control)
_TAGS = re.compile(r"((\\*)\[([a-z#/@][^[]*?)])")
_ESCAPABLE = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")
_STRIPPED = dict.fromkeys((7, 8, 11, 12, 13))
# the tags `_markup` writes; any other is made by untrusted text next to a value that closes
# it (a message ending "[/", a context holding "]"), and is left to rich (which may refuse it)
_OUR_TAGS = frozenset({"/", "green", "bold red", "bold yellow", "bold green", "dim", "cyan"})


class _NotPlainError(Exception):
    """The markup holds a tag `_plain` does not know: rich must render it."""


def _escape_markup(text: str) -> str:
    """rich.markup.escape: a backslash before each tag (the backslashes already there
    doubled), and one more after a lone backslash at the end."""
    text = _ESCAPABLE.sub(lambda m: f"{m[1]}{m[1]}\\{m[2]}", text)
    if text.endswith("\\") and not text.endswith("\\\\"):
        text += "\\"
    return text


def _plain(markup: str) -> str:
    """What rich prints for ``markup`` (soft wrap, no emoji, no colour), less tabs: the text
    between tags (``\\[`` read as ``[``), each run of backslashes before a tag halved, and
    an escaped tag as text (rich.markup._parse and render). `_NotPlainError` for a tag that is
    not one of ours."""
    if "[" not in markup:
        return markup.translate(_STRIPPED)
    out: list[str] = []
    position = 0
    for match in _TAGS.finditer(markup):
        full, escapes, tag = match.groups()
        start, end = match.span()
        if start > position:
            out.append(markup[position:start].replace("\\[", "["))
        position = end
        backslashes, escaped = divmod(len(escapes), 2)
        out.append("\\" * backslashes)
        if escaped:
            out.append(full[len(escapes) :])
        elif tag not in _OUR_TAGS:
            raise _NotPlainError(tag)
    if position < len(markup):
        out.append(markup[position:].replace("\\[", "["))
    return "".join(out).translate(_STRIPPED)


def _expand_tabs(line: str) -> str:
    """rich's Text.expand_tabs at 8 cells: a tab is a space, then spaces to the next stop."""
    from rich.cells import cell_len

    out: list[str] = []
    position = 0
    *parts, last = line.split("\t")
    for part in parts:
        position += cell_len(part) + 1
        out.append(part + " " * (1 + (-position % 8)))
        position += -position % 8
    out.append(last)
    return "".join(out)


def render_text(report: ValidationReport, *, color: bool = False) -> str:
    if color:
        return render_rich(report, color=True)
    out: list[str] = []
    try:
        for markup in _markup(report, _escape_markup):
            for line in _plain(markup).split("\n"):
                out.append(_expand_tabs(line) if "\t" in line else line)
                out.append("\n")
    except _NotPlainError:
        return render_rich(report, color=False)
    return "".join(out)
