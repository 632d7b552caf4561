"""The README's command list is the CLI's: every command and subcommand typer registers,
and the choices it shows for --format and schema NAME are the registries' keys."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parent.parent / "README.md"


def _commands(command: Any, prefix: str = "") -> Iterator[str]:
    subs = getattr(command, "commands", None)
    if not subs:
        yield prefix.strip()
        return
    for name, sub in subs.items():
        yield from _commands(sub, f"{prefix}{name} ")


def _block() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Commands\n", 1)[1]
    return section.split("```text\n", 1)[1].split("```", 1)[0]


def test_the_command_list_names_every_command() -> None:
    import typer

    from mrc_plan_cli.main import app

    registered = set(_commands(typer.main.get_command(app)))
    groups = {c.split()[0] for c in registered if " " in c}
    shown: set[str] = set()
    for line in _block().splitlines():
        words = line.split()[1:] if line.startswith("mrc-plan ") else []
        if not words or words[0].startswith("-"):
            continue
        if words[0] in groups:  # `snapshot synth|from-describe|...`
            shown |= {f"{words[0]} {sub}" for sub in words[1].split("|")}
        else:
            shown.add(words[0])
    assert registered - shown == set(), "commands the README's list leaves out"
    assert shown - registered == set(), "commands the README lists that do not exist"


def test_the_command_list_shows_the_registries_choices() -> None:
    from placement.diagnostics.reporters import REPORTERS
    from placement.schemas import SCHEMAS

    block = _block()
    formats = re.search(r"--format ([a-z|]+)\]", block)
    assert formats is not None
    assert set(formats[1].split("|")) == {"auto", "text", *REPORTERS}
    names = re.search(r"mrc-plan schema ([a-z|-]+)\n", block)
    assert names is not None
    assert names[1].split("|") == list(SCHEMAS)
