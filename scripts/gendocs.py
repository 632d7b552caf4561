"""Write docs/cli.md and docs/rules.md from the code: the typer app's commands and the
rule registry; and the generated parts of hand-written pages, each between
`<!-- name -->` and `<!-- /name -->`: the goal order (placement/solver/goals) in README.md,
docs/assign.md and docs/definitions.md, the input formats (placement/io/formats.py) in
docs/formats.md. `--check` writes nothing and exits 1 naming the pages that differ
(tests/test_generated_docs.py fails on the same drift).

The pages are rendered from the Click objects and the rule classes, never from captured
`--help` output, so they do not depend on the terminal's width or colours. Text from the
code is escaped where Markdown would read it as markup (a help line starting with `- `
would become a list), and `|` is escaped inside table cells, code spans included, as
GitHub-flavoured Markdown requires.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTICE = "*Generated from the code by `make docs` (scripts/gendocs.py); do not edit by hand.*"

# outside code spans: characters that open emphasis, HTML, entities, strikethrough or math
_INLINE_SPECIAL = re.compile(r"[\\*<&~$]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
# a paragraph that Markdown would take for a heading, quote, list item or rule
_BLOCK_START = re.compile(r"^(#{1,6}(?=\s|$)|>|[-+*](?=\s|$)|\d{1,9}(?=[.)](\s|$))|=+\s*$|-+\s*$)")
_CODE_SPAN = re.compile(r"`[^`\n]+`")
# the paragraphs of a rule's documentation (STYLE.md: What it does / Why / Example / Fix)
_DOC_LABELS = ("What it does:", "Why:", "Example:", "Fix:")


def _escape_text(text: str) -> str:
    return _INLINE_SPECIAL.sub(lambda m: "\\" + m.group(), text).replace("`", "\\`")


def inline(text: str, *, cell: bool = False) -> str:
    """``text`` as Markdown inline content: code spans kept, markup characters escaped
    elsewhere; for a table ``cell``, on one line and with every `|` escaped."""
    if cell:
        text = " ".join(text.split())
    out: list[str] = []
    end = 0
    for span in _CODE_SPAN.finditer(text):
        out += [_escape_text(text[end : span.start()]), span.group()]
        end = span.end()
    out.append(_escape_text(text[end:]))
    joined = "".join(out)
    return joined.replace("|", "\\|") if cell else joined


def block(text: str) -> str:
    """Plain paragraphs (blank-line separated) as Markdown paragraphs, each on one line:
    a code span may run over a line break of the source, and no line but the first can
    then be read as the start of a list or a heading."""
    paragraphs = []
    for paragraph in re.split(r"\n\s*\n", inspect.cleandoc(text)):
        line = inline(" ".join(paragraph.split()))
        marker = _BLOCK_START.match(line)
        if marker:
            at = marker.end() if marker.group()[0].isdigit() else 0
            line = f"{line[:at]}\\{line[at:]}"
        paragraphs.append(line)
    return "\n\n".join(paragraphs)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured Markdown table; cells are already inline Markdown."""
    for row in rows:
        if len(row) != len(header):
            raise ValueError(f"a row of {len(row)} cells in a table of {len(header)} columns")
    lines = [header, ["---"] * len(header), *rows]
    return "\n".join("| " + " | ".join(cells) + " |" for cells in lines)


def anchor(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


# --- the CLI ---------------------------------------------------------------------------


def _commands(command: Any, parent: Any = None, name: str = "mrc-plan") -> Iterator[Any]:
    """Each visible command's Click context, in the order `--help` lists them."""
    ctx = command.context_class(command, info_name=name, parent=parent, **command.context_settings)
    yield ctx
    for sub_name, sub in getattr(command, "commands", {}).items():
        if not sub.hidden:
            yield from _commands(sub, ctx, sub_name)


def _range(param_type: Any) -> str:
    """`x>=1`, `0.0<=x<=1.0`: the bounds of an int or float range, as `--help` gives them."""
    if not hasattr(param_type, "min_open"):
        return ""
    low, high = param_type.min, param_type.max
    lop = "<" if param_type.min_open else "<="
    hop = "<" if param_type.max_open else "<="
    if low is None:
        return f"x{hop}{high}"
    if high is None:
        return f"x{'>' if param_type.min_open else '>='}{low}"
    return f"{low}{lop}x{hop}{high}"


def _value(param: Any, ctx: Any) -> str:
    """The metavar (choices included) and the range of a parameter that takes a value."""
    if getattr(param, "is_flag", False):
        return ""
    if param.param_type_name == "argument":  # Typer's metavar of an argument is its name
        metavar = param.metavar or param.type.get_metavar(param=param, ctx=ctx)
        metavar = metavar or f"<{param.type.name.strip('<>')}>"
    else:
        metavar = param.make_metavar(ctx)
    bounds = _range(param.type)
    return inline(f"`{metavar}`" + (f" `{bounds}`" if bounds else ""), cell=True)


def _default(param: Any, ctx: Any) -> str:
    """The default `--help` shows (Typer's rules), or `required`."""
    if param.required:
        return "required"
    if isinstance(param.show_default, str):
        return inline(f"({param.show_default})", cell=True)
    if not (param.show_default or ctx.show_default):
        return ""
    value = param.get_default(ctx, call=False)
    if callable(value):  # its repr would change from run to run
        return "(dynamic)"
    if getattr(param, "is_bool_flag", False):
        if param.secondary_opts:  # `--strict / --no-strict`: the name of the side taken
            side = param.opts if value else param.secondary_opts
            return _code(side[0].lstrip("-/"))
        return _code(str(value)) if value else ""
    if isinstance(value, Enum):
        value = value.value
    if value is None or value == ():  # `()`: a repeatable option given no default
        return ""
    return inline(_code(str(value)), cell=True)


def _names(param: Any) -> str:
    def joined(opts: Sequence[str]) -> str:
        short_first = sorted(opts, key=lambda o: len(o) - len(o.lstrip("-/")))
        return ", ".join(f"`{o}`" for o in short_first)

    if param.param_type_name == "argument":
        return _code(param.name + ("..." if param.nargs != 1 else ""))
    names = joined(param.opts)
    return f"{names} / {joined(param.secondary_opts)}" if param.secondary_opts else names


def _help_text(text: str | None) -> str:
    return inspect.cleandoc(text or "").partition("\f")[0]


def _command_section(ctx: Any) -> str:
    command = ctx.command
    level = "###" if ctx.command_path.count(" ") > 1 else "##"  # subcommands under groups
    usage = " ".join([ctx.command_path, *command.collect_usage_pieces(ctx)])
    parts = [f"{level} {ctx.command_path}", f"```text\n{usage}\n```"]
    if command.help:
        parts.append(block(_help_text(command.help)))
    params = [p for p in command.get_params(ctx) if not p.hidden]
    header = ["Value", "Default", "Description"]
    for kind, title in (("argument", "Arguments"), ("option", "Options")):
        rows = [
            [_names(p), _value(p, ctx), _default(p, ctx), inline(p.help or "", cell=True)]
            for p in params
            if p.param_type_name == kind
        ]
        if rows:
            parts += [f"**{title}**", table([title[:-1], *header], rows)]
    if command.epilog:
        parts.append(block(_help_text(command.epilog)))
    return "\n\n".join(parts)


def cli_reference() -> str:
    """docs/cli.md: every visible command, its usage, help, arguments and options."""
    import typer

    # the installed name of cli/ (pyproject), which mypy cannot follow from a path
    app = importlib.import_module("mrc_plan_cli.main").app
    contexts = list(_commands(typer.main.get_command(app)))
    toc = [
        "  " * ctx.command_path.count(" ") + f"- [{ctx.command_path}](#{anchor(ctx.command_path)})"
        for ctx in contexts
    ]
    intro = (
        "Every command and option of `mrc-plan`, in the order `mrc-plan --help` lists them. "
        "Each command's `--help` prints the same; the rules `validate` applies are in "
        "[rules.md](rules.md)."
    )
    sections = [_command_section(ctx) for ctx in contexts]
    return (
        "\n\n".join(["# Command-line reference", NOTICE, intro, "\n".join(toc), *sections]) + "\n"
    )


# --- the rules -------------------------------------------------------------------------


def _rule_doc(doc: str) -> str:
    paragraphs = block(doc).split("\n\n")
    for i, paragraph in enumerate(paragraphs):
        label = next((lb for lb in _DOC_LABELS if paragraph.startswith(lb)), None)
        if label:
            paragraphs[i] = f"**{label}**{paragraph[len(label) :]}"
    return "\n\n".join(paragraphs)


def rules_reference() -> str:
    """docs/rules.md: the table of every rule, then each rule's documentation under a
    heading of its own code, so that `rules.md#mrc101` leads to it."""
    from placement.rules.registry import ALL_RULES

    intro = (
        "Every check `mrc-plan validate` applies. `mrc-plan rules` prints the table, "
        "`mrc-plan rules CODE` (or its name) one rule's section, and `mrc-plan rules --format "
        "json` both as data. A code is never reused; the hundreds digit names the category."
    )
    rows = [
        [
            f"[{r.code}](#{r.code.lower()})",
            _code(r.name),
            r.severity.value,
            r.family(),
            inline(r.summary(), cell=True),
        ]
        for r in ALL_RULES
    ]
    sections = [
        f"## {r.code}\n\n`{r.name}` ({r.severity.value}, {r.family()})\n\n{_rule_doc(r.doc())}"
        for r in ALL_RULES
    ]
    index = table(["Code", "Name", "Severity", "Category", "Summary"], rows)
    return "\n\n".join(["# Rules", NOTICE, intro, index, *sections]) + "\n"


PAGES: dict[str, Callable[[], str]] = {
    "docs/cli.md": cli_reference,
    "docs/rules.md": rules_reference,
}


def _goal_list() -> str:
    from placement.solver.goals import markdown_list

    return markdown_list()


def _goal_table() -> str:
    from placement.solver.goals import markdown_table

    return markdown_table()


def _format_table() -> str:
    from placement.io.formats import markdown_table

    return markdown_table("")


# (page, name, render): the text between <!-- name --> and <!-- /name --> on the page
FRAGMENTS: list[tuple[str, str, Callable[[], str]]] = [
    ("README.md", "goals", _goal_list),
    ("docs/assign.md", "goals", _goal_list),
    ("docs/definitions.md", "goal-table", _goal_table),
    ("docs/formats.md", "formats", _format_table),
]


def fill(text: str, name: str, body: str, page: str) -> str:
    """``text`` with its one ``name`` fragment replaced by ``body``."""
    start, end = f"<!-- {name} -->\n", f"<!-- /{name} -->"
    if text.count(start) != 1 or text.count(end) != 1:
        raise SystemExit(f"{page}: needs exactly one {start.strip()} ... {end} pair")
    head, rest = text.split(start)
    tail = rest.split(end)[1]
    return f"{head}{start}{body.rstrip(chr(10))}\n{end}{tail}"


def rendered(root: Path = ROOT) -> dict[str, str]:
    """Every generated page and every page with fragments, as the code makes them now."""
    out = {name: render() for name, render in PAGES.items()}
    for page, name, render in FRAGMENTS:
        text = out.get(page) or (root / page).read_text(encoding="utf-8")
        out[page] = fill(text, name, render(), page)
    return out


def stale(root: Path = ROOT) -> list[str]:
    """The pages under ``root`` that differ from what the code generates now."""
    differ = []
    for name, text in rendered(root).items():
        path = root / name
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current != text:
            differ.append(name)
    return differ


def main(argv: Sequence[str] | None = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a page differs"
    )
    args = parser.parse_args(argv)
    if args.check:
        differ = stale(root)
        for name in differ:
            print(f"{name} differs from the code: run `make docs`", file=sys.stderr)
        return 1 if differ else 0
    for name, text in rendered(root).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
