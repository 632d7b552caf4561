"""The text report without colour is made without rich (cli/render.py): it must be
exactly what rich's console prints for the same markup, whatever the names and files hold."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrc_plan_cli.render import _escape_markup, render_rich, render_text
from placement.model.diagnostic import Diagnostic, Severity, build_report

# what markup, escapes, tab stops and cell widths turn on
ALPHABET = st.sampled_from(
    [
        *"ab/@#z[]\\ \t:=.-",
        *["[/]", "[red]", "\\[", "[@click]", "[#fff]", ":smile:", "漢", "é", "e\u0301", "\u200b"],
        *["\x07", "\x08", "\x0b", "\x0c", "\r", "\n", "\x1b", "\x85", "\u202e", "\udcff", "\ud800"],
    ]
)
TEXT = st.lists(ALPHABET, max_size=12).map("".join)


@st.composite
def reports(draw: st.DrawFn, tmp: Path) -> object:
    by_file: dict[str, list[Diagnostic]] = {}
    for i in range(draw(st.integers(1, 3))):
        # a file of random lines, so that findings quote them (tabs included)
        lines = draw(st.lists(TEXT, min_size=1, max_size=4))
        path = tmp / f"{i}-{abs(hash(draw(TEXT))) % 1000}.json"
        path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))  # bad UTF-8 too
        # a name that is not on disk: no excerpt (a file system hands over no lone \ud800)
        name = str(path) + draw(TEXT.filter(lambda t: "\ud800" not in t))
        shown = draw(st.sampled_from([str(path), name]))
        by_file[shown] = [
            Diagnostic(
                code=f"MRC{draw(st.integers(100, 999))}",
                name=draw(st.sampled_from(["json-comment", "unknown-rack"])),
                severity=draw(st.sampled_from(list(Severity))),
                message=draw(TEXT),
                file=shown,
                pointer="",
                line=draw(st.integers(1, 5)),
                column=draw(st.integers(1, 200)),
                hint=draw(TEXT),
                context=draw(st.none() | TEXT),
            )
            for _ in range(draw(st.integers(0, 3)))
        ]
    return build_report(by_file, strict=draw(st.booleans()), tool_version="0")


@pytest.mark.parametrize(
    "text", ["", "a", "\\", "a\\", "a\\\\", "[red]", "\\[red]", "[/]x\\", "[a=b]", "[[", "x[y"]
)
def test_the_markup_escape_is_richs(text: str) -> None:
    from rich.markup import escape

    assert _escape_markup(text) == escape(text)


@given(st.text(max_size=20) | TEXT)
def test_the_markup_escape_is_richs_whatever_the_text(text: str) -> None:
    from rich.markup import escape

    assert _escape_markup(text) == escape(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
@pytest.mark.slow  # the fast tier leaves it to make test
def test_plain_text_is_what_rich_prints(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    report = data.draw(reports(tmp_path_factory.mktemp("files")))
    # the same text, or the same refusal
    assert _outcome(render_text, report) == _outcome(render_rich, report, color=False)


def _outcome(render: Callable[..., str], *args: Any, **kwargs: Any) -> tuple[object, ...]:
    try:
        return ("text", render(*args, **kwargs))
    except Exception as exc:  # any refusal, as long as both make it
        return ("refused", type(exc), str(exc))


def test_plain_text_expands_tabs_by_cell_width(tmp_path: Path) -> None:
    path = tmp_path / "tabs.json"
    path.write_text('{\n\t"v":\t2,\n漢\t\té\u0301\tx\n}\n', encoding="utf-8")
    findings = [
        Diagnostic(
            code="MRC202",
            name="invalid-version",
            severity=Severity.ERROR,
            message="m",
            file=str(path),
            pointer="/version",
            line=line,
            column=3,
        )
        for line in (2, 3)
    ]
    report = build_report({str(path): findings}, strict=False, tool_version="0")
    text = render_text(report)
    assert "\t" not in text
    assert text == render_rich(report, color=False)


def test_no_tag_is_made_across_a_message_and_its_context() -> None:
    finding = Diagnostic(
        code="MRC204",
        name="unknown-field",
        severity=Severity.ERROR,
        message='unknown key "[/x"',
        file="p.json",
        pointer="",
        line=1,
        column=1,
        context="a]",
    )
    report = build_report({"p.json": [finding]}, strict=False, tool_version="0")
    text = render_text(report)
    assert text == render_rich(report, color=False)
    assert 'unknown key "[/x" (in a])' in text
