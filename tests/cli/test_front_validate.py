"""`placement.api.validate` from Python: the same report as `mrc-plan validate` writes for the
same flags."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

import placement
from placement import api
from placement.diagnostics.reporters import REPORTERS

Cli = Callable[..., Result]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INVENTORY = EXAMPLES / "inventory.json"


def test_the_report_is_the_one_the_command_writes(cli: Cli, tmp_path: Path) -> None:
    paths = [EXAMPLES / "placement", EXAMPLES / "broken", EXAMPLES / "describe-drifted.txt"]
    out = tmp_path / "report.json"
    flags = ["--inventory", INVENTORY, "--min-insync-replicas", "2", "--ibp", "3.2"]
    r = cli(["validate", *paths, *flags, "--format", "json", "--output", out])
    assert r.exit_code == 1, r.output
    result = api.validate(
        api.ValidateRequest(paths, INVENTORY, 2, "3.2", tool_version=placement.__version__)
    )
    assert result.failed
    assert REPORTERS["json"](result.report) == out.read_text()
    assert json.loads(out.read_text())["files"], "the example files are in the report"


def test_strict_and_the_notes_are_the_commands(cli: Cli, tmp_path: Path) -> None:
    """Describe output without --inventory: the note the command prints on stderr (its
    replicas unchecked against their policies) is the result's; --strict fails as the
    result says."""
    describe = tmp_path / "describe.txt"
    describe.write_text((EXAMPLES / "describe-drifted.txt").read_text())
    paths = [describe, EXAMPLES / "placement"]
    r = cli(["validate", *paths, "--strict", "--format", "text"])
    result = api.validate(api.ValidateRequest(paths, strict=True))
    assert result.notes, "describe output without racks: a note says what was not checked"
    assert r.exit_code == (1 if result.failed else 0)
    notes = [line for line in r.stderr.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: {n}" for n in result.notes]
