"""An input path the system refuses (a name too long, a loop of symbolic links) is exit 2
naming it, on every command: readers map the usual errors themselves, and the CLI maps any
other OSError that names a file. Before, `Path.is_dir()` raised ENAMETOOLONG: exit 101."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INV, TOPICS = EXAMPLES / "inventory.json", EXAMPLES / "topics.json"
Cli = Callable[..., Result]

COMMANDS: dict[str, Callable[[Path], list[str | Path]]] = {
    "validate": lambda p: ["validate", p],
    "validate --inventory": lambda p: ["validate", EXAMPLES / "placement", "--inventory", p],
    "assign --inventory": lambda p: ["assign", "--inventory", p, "--topics", TOPICS],
    "assign --current": lambda p: [
        "assign",
        "--inventory",
        INV,
        "--topics",
        TOPICS,
        "--current",
        p,
    ],
    "score --snapshot": lambda p: ["score", "--snapshot", p],
    "simulate --snapshot": lambda p: ["simulate", "--snapshot", p, "--fail-rack", "us-east"],
    "snapshot show": lambda p: ["snapshot", "show", p],
    "snapshot export": lambda p: ["snapshot", "export", p],
    "plan show": lambda p: ["plan", "show", p],
    "plan show --format json": lambda p: ["plan", "show", p, "--format", "json"],
    "snapshot apply SNAPSHOT": lambda p: ["snapshot", "apply", p, TOPICS, "--out", p.parent / "n"],
    "assign --sizes": lambda p: [
        *("assign", "--inventory", INV, "--topics", TOPICS),
        *("--current", EXAMPLES / "describe.txt", "--sizes", p),
    ],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", ["name too long", "loop of links"])
def test_an_unusable_input_path_is_exit_2_naming_it(
    cli: Cli, tmp_path: Path, command: str, kind: str
) -> None:
    if kind == "name too long":
        path = tmp_path / ("a" * 300)
    else:
        path = tmp_path / "loop"
        os.symlink(path, path)
    r = cli(COMMANDS[command](path))
    assert r.exit_code == 2, r.output
    assert "internal error" not in r.stderr
    assert path.name[:40] in r.stderr


@pytest.mark.parametrize("kind", ["name too long", "loop of links"])
def test_an_unusable_plan_for_snapshot_apply_is_exit_2_naming_it(
    cli: Cli, tmp_path: Path, kind: str, synth_snapshot: Callable[..., Path]
) -> None:
    snap = synth_snapshot(tmp_path / "snap")
    if kind == "name too long":
        path = tmp_path / ("a" * 300)
    else:
        path = tmp_path / "loop"
        os.symlink(path, path)
    out = tmp_path / "after"
    r = cli(["snapshot", "apply", snap, path, "--out", out])
    assert r.exit_code == 2, r.output
    assert "internal error" not in r.stderr
    assert path.name[:40] in r.stderr
    assert not out.exists()
