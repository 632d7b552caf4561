"""`mrc-plan rules`, `mrc-plan schema` and `mrc-plan --version`, via typer's CliRunner."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

import placement
from mrc_plan_cli.main import Format, SchemaName
from placement.diagnostics.reporters import REPORTERS
from placement.rules.registry import ALL_RULES
from placement.schemas import SCHEMAS, render_schema, schema_filename

REPO = Path(__file__).resolve().parents[2]
Cli = Callable[..., Result]


# -- rules ---------------------------------------------------------------------------


def test_rules_lists_every_rule(cli: Cli) -> None:
    result = cli(["rules"])
    assert result.exit_code == 0
    assert result.stderr == ""
    rows = {
        m[1]: line
        for line in result.stdout.splitlines()
        if (m := re.match(r"\s*(MRC\d{3})\s", line))
    }
    assert list(rows) == [r.code for r in ALL_RULES]  # registry order, each once
    for rule in ALL_RULES:
        row = rows[rule.code]
        assert rule.name in row
        assert rule.severity.value in row
        assert rule.family() in row
        assert rule.summary() in row  # a pipe gets full, grep-able rows
    assert "\x1b[" not in result.stdout


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_rules_code_prints_the_docstring(cli: Cli, rule: type) -> None:
    result = cli(["rules", rule.code])
    assert result.exit_code == 0
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0] == f"{rule.code} {rule.name} ({rule.severity.value}, {rule.family()})"
    assert rule.doc() in result.stdout
    for section in ("What it does:", "Why:", "Example:", "Fix:"):
        assert section in result.stdout
    assert "\x1b[" not in result.stdout


@pytest.mark.parametrize("key", ["MRC102", "mrc102", " MRC102 ", "json-comment", "JSON-Comment"])
def test_rules_lookup_by_code_or_name(cli: Cli, key: str) -> None:
    result = cli(["rules", key])
    assert result.exit_code == 0
    assert result.stdout.startswith("MRC102 json-comment (error, syntax)\n")
    assert "Confluent's documentation sketches the placement schema" in result.stdout


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("XYZ", "run `mrc-plan rules` to list them"),
        ("MRC999", "MRC"),
        ("json-coment", '"json-comment"'),
    ],
)
def test_rules_unknown_code_is_a_usage_error(cli: Cli, key: str, hint: str) -> None:
    result = cli(["rules", key])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: no rule {key!r}\n")
    assert re.search(r"^hint: .*" + re.escape(hint), result.stderr, re.MULTILINE)


# -- schema --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["placement", "inventory", "diagnostics"])
def test_schema_prints_the_checked_in_file(cli: Cli, name: str) -> None:
    result = cli(["schema", name])
    assert result.exit_code == 0
    assert result.stderr == ""
    checked_in = (REPO / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8")
    assert result.stdout == checked_in
    schema = json.loads(result.stdout)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["type"] == "object"


def test_schema_names_match_the_library() -> None:
    """The first seven, in their order; later ones follow them."""
    assert list(SCHEMAS)[:7] == [
        "placement",
        "inventory",
        "topics",
        "diagnostics",
        "score-report",
        "simulate-report",
        "rules",
    ]
    assert len(set(SCHEMAS)) == len(SCHEMAS)


def test_cli_choices_are_the_registries() -> None:
    """Adding a schema or a reporter to the library is the only step: the CLI offers it,
    in the registry's order (the order --help and the error messages list them in)."""
    assert [n.value for n in SchemaName] == list(SCHEMAS)
    assert [f.value for f in Format] == ["auto", "text", *REPORTERS]


@pytest.mark.parametrize("name", list(SCHEMAS))
def test_schema_accepts_every_registered_name(cli: Cli, name: str) -> None:
    result = cli(["schema", name])
    assert result.exit_code == 0
    assert result.stdout == render_schema(name)


@pytest.mark.parametrize("fmt", list(REPORTERS))
def test_validate_accepts_every_registered_reporter(cli: Cli, fmt: str) -> None:
    result = cli(["validate", "--format", fmt, REPO / "examples" / "placement"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout


def test_schema_write(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "out" / "schemas"
    out.mkdir(parents=True)  # a missing directory is a usage error
    result = cli(["schema", "--write", out])
    assert result.exit_code == 0
    assert result.stdout == ""
    assert sorted(p.name for p in out.iterdir()) == sorted(schema_filename(n) for n in SCHEMAS)
    for name in SCHEMAS:
        assert (out / schema_filename(name)).read_text(encoding="utf-8") == render_schema(name)


def test_schema_without_a_name_is_a_usage_error(cli: Cli) -> None:
    result = cli(["schema"])
    assert result.exit_code == 2
    assert result.stdout == ""
    *others, last = SCHEMAS
    assert f"error: name a schema: {', '.join(others)} or {last}\n" in result.stderr


def test_schema_unknown_name_is_a_usage_error(cli: Cli) -> None:
    result = cli(["schema", "policy"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "placement" in result.stderr


# -- version and help -------------------------------------------------------------------


def test_version(cli: Cli) -> None:
    result = cli(["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"mrc-plan {placement.__version__}\n"
    assert result.stderr == ""
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", placement.__version__)


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["validate", "--help"], ["rules", "-h"]])
def test_help(cli: Cli, args: list[str]) -> None:
    result = cli(args)
    assert result.exit_code == 0
    assert "Usage" in result.stdout
    assert result.stderr == ""


def test_help_documents_exit_codes(cli: Cli) -> None:
    out = re.sub(r"\s+", " ", cli(["--help"]).stdout)
    assert "101 internal error" in out


def test_unknown_command_is_a_usage_error(cli: Cli) -> None:
    result = cli(["valdate"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "valdate" in result.stderr


def test_rules_as_json_is_the_registry(cli: Callable[..., Result]) -> None:
    """`rules --format json` lists every registered rule in order, each with its whole
    documentation, and validates against the published `rules` schema."""
    import jsonschema

    from placement.rules.registry import ALL_RULES
    from placement.schemas import render_schema

    doc = json.loads(cli(["rules", "--format", "json"]).stdout)
    assert [r["code"] for r in doc["rules"]] == [r.code for r in ALL_RULES]
    assert all(r["doc"].startswith(r["summary"]) for r in doc["rules"])
    jsonschema.validate(doc, json.loads(render_schema("rules")))
    one = json.loads(cli(["rules", "json-comment", "--format", "json"]).stdout)
    assert [r["code"] for r in one["rules"]] == ["MRC102"]
    missing = cli(["rules", "MRC999", "--format", "json"])
    assert missing.exit_code == 2 and missing.stdout == ""
