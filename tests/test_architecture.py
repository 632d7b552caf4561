"""Dependency direction (STYLE.md, Layout): cli -> placement -> libraries, never back.

placement/ is a library: no typer/rich/click, no printing, no exits; pyspark only in
placement/score/. The CLI imports ortools, pyspark and pandas only in the commands
that need them, so `--help` and `validate` start fast.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PLACEMENT = REPO / "placement"
MODULES = sorted(PLACEMENT.rglob("*.py"))
UI_LIBRARIES = {"typer", "rich", "click"}
CLI_PACKAGES = {"cli", "mrc_plan_cli"}
HEAVY = ["ortools", "pyspark", "pandas"]


def imported_modules(tree: ast.AST) -> Iterator[tuple[str, int]]:
    """Absolute module names imported anywhere in ``tree`` (functions included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, node.lineno
        elif (  # importlib.import_module("x") / __import__("x") with a literal name
            isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id == "__import__")
            )
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value, node.lineno


def parse(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def test_the_walk_sees_the_library() -> None:
    names = {rel(p) for p in MODULES}
    assert {"placement/validate.py", "placement/io/jsonsrc.py"} <= names


def test_placement_never_imports_ui_libraries_or_the_cli() -> None:
    offences = [
        f"{rel(path)}:{line}: import {name}"
        for path in MODULES
        for name, line in imported_modules(parse(path))
        if name.split(".")[0] in UI_LIBRARIES | CLI_PACKAGES
    ]
    assert not offences, "placement/ is a library; move UI code to cli/:\n" + "\n".join(offences)


def test_pyspark_only_in_placement_score() -> None:
    score = PLACEMENT / "score"
    offences = [
        f"{rel(path)}:{line}: import {name}"
        for path in MODULES
        if score not in path.parents
        for name, line in imported_modules(parse(path))
        if name.split(".")[0] == "pyspark"
    ]
    assert not offences, "pyspark belongs in placement/score/ only:\n" + "\n".join(offences)


def test_placement_does_not_print_or_exit() -> None:
    offences = []
    for path in MODULES:
        for node in ast.walk(parse(path)):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = (
                f.id
                if isinstance(f, ast.Name)
                else f"{f.value.id}.{f.attr}"
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                else ""
            )
            if name in {"print", "exit", "quit", "sys.exit", "os._exit", "pprint"}:
                offences.append(f"{rel(path)}:{node.lineno}: {name}()")
    assert not offences, "the library returns data or raises:\n" + "\n".join(offences)


def test_the_checker_catches_an_offence() -> None:
    tree = ast.parse(
        "import rich.console\nfrom typer import Typer\n"
        "def f():\n    import pyspark.sql\n    importlib.import_module('click')\n"
    )
    assert [n for n, _ in imported_modules(tree)] == [
        "rich.console",
        "typer",
        "pyspark.sql",
        "click",
    ]


def _modules_after(code: str) -> list[str]:
    """Run ``code`` in a fresh interpreter; return which HEAVY modules it loaded."""
    probe = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO.parent,  # not the repo: import what is installed
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_importing_the_cli_loads_no_heavy_library() -> None:
    assert _modules_after("import mrc_plan_cli.main") == []


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        [
            "validate",
            str(REPO / "examples" / "placement"),
            "--inventory",
            str(REPO / "examples" / "inventory.json"),
            "--min-insync-replicas",
            "2",
        ],
        ["validate", "--format", "sarif", str(REPO / "examples")],
    ],
    ids=["help", "validate", "validate-sarif"],
)
def test_fast_commands_load_no_heavy_library(args: list[str]) -> None:
    code = (
        "import contextlib, io\nfrom mrc_plan_cli.main import app\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    try:\n        app({args!r})\n    except SystemExit:\n        pass"
    )
    assert _modules_after(code) == []
