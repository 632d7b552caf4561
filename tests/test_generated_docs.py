"""docs/cli.md and docs/rules.md are what scripts/gendocs.py makes from the code now (run
`make docs` after changing a command, an option or a rule), they name every command and
rule, and their tables render under GitHub-flavoured Markdown."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import typer
from markdown_it import MarkdownIt

from mrc_plan_cli.main import app
from placement.rules.registry import ALL_RULES

REPO = Path(__file__).resolve().parent.parent
PAGES = ("docs/cli.md", "docs/rules.md")


@pytest.fixture(scope="module")
def gendocs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gendocs", REPO / "scripts" / "gendocs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gendocs", module)
    spec.loader.exec_module(module)
    return module


def _page(name: str) -> str:
    return (REPO / name).read_text(encoding="utf-8")


def _contexts(command: Any, parent: Any = None, name: str = "mrc-plan") -> Iterator[Any]:
    ctx = command.context_class(command, info_name=name, parent=parent, **command.context_settings)
    yield ctx
    for sub_name, sub in getattr(command, "commands", {}).items():
        yield from _contexts(sub, ctx, sub_name)


def _section(text: str, command_path: str) -> str:
    """The part of docs/cli.md under the command's own heading, up to the next heading."""
    start = re.search(rf"^#+ {re.escape(command_path)}$", text, re.M)
    assert start is not None, f"no heading for {command_path}"
    rest = text[start.end() :]
    end = re.search(r"^#", rest, re.M)
    return rest[: end.start()] if end else rest


def _cells(row: str) -> list[str]:
    """A table row's cells: split at each `|` that no backslash escapes."""
    return re.split(r"(?<!\\)\|", row.strip())[1:-1]


def _tables(text: str) -> list[list[str]]:
    tables: list[list[str]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                tables.append([])
            tables[-1].append(line)
        previous = line
    return tables


@pytest.mark.parametrize("name", PAGES)
def test_the_page_is_what_the_code_generates(gendocs: ModuleType, name: str) -> None:
    assert _page(name) == gendocs.PAGES[name](), f"{name} is stale: run `make docs`"


def test_the_generated_parts_of_hand_written_pages_are_current(gendocs: ModuleType) -> None:
    for page, text in gendocs.rendered(REPO).items():
        assert _page(page) == text, f"{page} is stale: run `make docs`"


def test_check_names_the_stale_page_and_writes_nothing(
    gendocs: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the hand-written pages with generated parts, those parts emptied
    pages = {page for page, _, _ in gendocs.FRAGMENTS}
    for page in pages:
        text = _page(page)
        for p, name, _ in gendocs.FRAGMENTS:
            if p == page:
                text = gendocs.fill(text, name, "", page)
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text(text, encoding="utf-8")
    assert gendocs.main(["--check"], root=tmp_path) == 1  # neither generated page exists
    named = set(re.findall(r"(?:docs/)?[\w-]+\.md", capsys.readouterr().err))
    assert named == set(PAGES) | pages
    assert not (tmp_path / "docs" / "cli.md").exists()
    assert gendocs.main([], root=tmp_path) == 0
    for page in pages:
        assert (tmp_path / page).read_text(encoding="utf-8") == _page(page)
    assert gendocs.main(["--check"], root=tmp_path) == 0
    rules = tmp_path / "docs" / "rules.md"
    rules.write_text(rules.read_text(encoding="utf-8").replace("MRC101", "MRC100"))
    assert gendocs.main(["--check"], root=tmp_path) == 1
    assert re.findall(r"docs/\w+\.md", capsys.readouterr().err) == ["docs/rules.md"]
    assert "MRC100" in rules.read_text(encoding="utf-8")


def test_the_pages_do_not_depend_on_the_terminal(
    gendocs: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "30")
    monkeypatch.setenv("TERM", "dumb")
    for name in PAGES:
        assert gendocs.PAGES[name]() == _page(name)


def test_every_command_has_a_section_with_every_visible_option() -> None:
    text = _page("docs/cli.md")
    contexts = list(_contexts(typer.main.get_command(app)))
    assert len(contexts) > 10
    hidden = set()
    for ctx in contexts:
        section = _section(text, ctx.command_path)
        usage = " ".join([ctx.command_path, *ctx.command.collect_usage_pieces(ctx)])
        assert f"```text\n{usage}\n```" in section
        for param in ctx.command.get_params(ctx):
            if param.hidden:
                hidden |= set(param.opts)
                continue
            if param.param_type_name == "argument":
                row = f"| `{param.name}"
            else:  # every name, short forms included
                row = "| " + ", ".join(f"`{o}`" for o in sorted(param.opts, key=len))
            assert row in section, (ctx.command_path, param.name)
            record = param.get_help_record(ctx)
            assert record is not None
            default = re.search(r"\[default: ([^;\]]+)", record[1])
            line = next(ln for ln in section.splitlines() if ln.startswith(row))
            if default:  # the default --help shows
                assert f"| `{default[1]}` |" in line, (ctx.command_path, param.name)
    assert "--default-min-isr" in hidden  # a deprecated name, left out
    assert all(name not in text for name in hidden)


def test_the_table_of_contents_leads_to_every_command(gendocs: ModuleType) -> None:
    text = _page("docs/cli.md")
    links = re.findall(r"^ *- \[([^]]+)\]\(#([\w-]+)\)$", text, re.M)
    commands = [ctx.command_path for ctx in _contexts(typer.main.get_command(app))]
    assert [title for title, _ in links] == commands
    headings = {gendocs.anchor(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}
    assert {target for _, target in links} <= headings


def test_every_rule_has_a_row_and_a_section_at_its_code() -> None:
    text = _page("docs/rules.md")
    rows = re.findall(r"^\| \[(MRC\d{3})\]\(#(mrc\d{3})\) \| `([\w-]+)` \|", text, re.M)
    assert rows == [(r.code, r.code.lower(), r.name) for r in ALL_RULES]
    for rule in ALL_RULES:  # `## MRC101`: GitHub's anchor for it is `#mrc101`
        section = _section(text, rule.code)
        assert f"`{rule.name}` ({rule.severity.value}, {rule.family()})" in section
        assert rule.summary() in section


@pytest.mark.parametrize("name", PAGES)
def test_every_table_has_one_cell_count(name: str) -> None:
    text = _page(name)
    tables = _tables(text)
    assert tables
    for lines in tables:
        counts = {len(_cells(line)) for line in lines}
        assert len(counts) == 1, (name, lines[0], counts)
        assert all(re.fullmatch(r" *:?-+:? *", c) for c in _cells(lines[1])), lines[1]
    # and a GFM parser reads the same tables, with that many columns in every row
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    assert sum(t.type == "table_open" for t in tokens) == len(tables)
    widths = []
    for token in tokens:
        if token.type == "tr_open":
            widths.append(0)
        elif token.type in ("th_open", "td_open"):
            widths[-1] += 1
    assert widths == [len(_cells(line)) for lines in tables for line in lines[:1] + lines[2:]]


def test_text_from_the_code_is_escaped(gendocs: ModuleType) -> None:
    """Help and docstrings are plain text: Markdown must not read them as markup."""
    assert gendocs.block("a `x|y` b\n- 20 x c") == "a `x|y` b - 20 x c"
    assert gendocs.block("first\n\n- 20 x c\n\n2. two\n\n# not a heading") == (
        "first\n\n\\- 20 x c\n\n2\\. two\n\n\\# not a heading"
    )
    assert gendocs.inline("local[*] <b> $HOME ~/x a_b _c_") == (
        "local[\\*] \\<b> \\$HOME \\~/x a_b \\_c\\_"
    )
    assert gendocs.inline("`a|b` c|d", cell=True) == "`a\\|b` c\\|d"
    html = (
        MarkdownIt("commonmark")
        .enable("table")
        .render(gendocs.table(["h"], [[gendocs.inline("`a|b` <i>x</i>", cell=True)]]))
    )
    assert "<code>a|b</code>" in html and "&lt;i&gt;" in html
