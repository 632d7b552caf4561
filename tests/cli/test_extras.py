"""The base install (`pip install mrc-plan`, no extras) validates policies, server.properties,
inventories and topics files; a command that needs an extra (numpy and pyarrow, ortools,
matplotlib, pyspark) says which in one line and exits 2. Before, it was exit 101 and an
"internal error" naming the missing module.

The base install is simulated in a process of its own whose imports of the optional modules
fail as they do where they are not installed (ModuleNotFoundError)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import typer
from _base_install import BASE_INSTALL

from mrc_plan_cli.errors import EXIT_BUG, EXIT_USAGE, handle_errors
from placement.errors import EXTRAS, OPTIONAL_MODULES, MissingExtraError, missing_extra

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]

FULL_INSTALL = "import sys; sys.argv[0] = 'mrc-plan'\nfrom mrc_plan_cli.main import run\nrun()\n"


def _env() -> dict[str, str]:
    drop = ("GITHUB_ACTIONS", "MRC_PLAN_DEBUG", "FORCE_COLOR", "COLUMNS", "TTY_COMPATIBLE")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["NO_COLOR"] = "1"
    env["MRC_PLAN_CHECK_CACHE"] = "0"
    return env


BASE = ("numpy", "pyarrow", "ortools", "matplotlib", "pyspark")  # what the base install lacks


def mrc_plan(
    *args: str | Path, base: bool = True, missing: tuple[str, ...] = BASE
) -> subprocess.CompletedProcess[str]:
    """`mrc-plan ARGS` on the base install (``missing``: the modules not installed), or
    on the full one."""
    cmd = ["-c", BASE_INSTALL, ",".join(missing)] if base else ["-c", FULL_INSTALL]
    return subprocess.run(
        [sys.executable, *cmd, *map(str, args)],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


VALIDATED_ON_BASE = {
    "policies": ["validate", "examples/placement"],
    "server.properties": ["validate", "examples/server.properties"],
    "inventory JSON": ["validate", "examples/inventory.json"],
    "broken policies": ["validate", "examples/broken", "--min-insync-replicas", "2"],
    "--inventory CSV, json": [
        *("validate", "examples/placement", "--inventory", "examples/inventory.csv"),
        *("--format", "json"),
    ],
    "--inventory from kafka-configs": [
        *("validate", "examples/placement", "--inventory", "examples/inventory-configs.txt"),
    ],
    "topics file, sarif": ["validate", "examples/topics.json", "--format", "sarif"],
}


@pytest.mark.parametrize("case", list(VALIDATED_ON_BASE))
def test_validate_works_on_the_base_install_as_on_the_full_one(case: str) -> None:
    base = mrc_plan(*VALIDATED_ON_BASE[case])
    full = mrc_plan(*VALIDATED_ON_BASE[case], base=False)
    assert base.returncode in (0, 1), base.stderr
    assert (base.returncode, base.stdout, base.stderr) == (
        full.returncode,
        full.stdout,
        full.stderr,
    )


@pytest.mark.parametrize("args", [["--help"], ["validate", "--help"], ["assign", "--help"]])
def test_help_works_on_the_base_install(args: list[str]) -> None:
    r = mrc_plan(*args)
    assert r.returncode == 0, r.stderr
    assert "Usage" in r.stdout


NEEDS_AN_EXTRA = {
    "validate describe output": (["validate", "examples/describe.txt"], "cluster"),
    "validate policies and describe output": (
        ["validate", "examples/placement", "examples/describe.txt"],
        "cluster",
    ),
    "snapshot show": (["snapshot", "show", "examples"], "cluster"),
    "plan show": (["plan", "show", "examples/topics.json"], "cluster"),
    "simulate": (
        [
            *("simulate", "--inventory", "examples/inventory.json"),
            *("--current", "examples/describe.txt", "--fail-rack", "us-east"),
        ],
        "cluster",
    ),
    "assign": (
        ["assign", "--inventory", "examples/inventory.json", "--topics", "examples/topics.json"],
        "plan",
    ),
    "score": (["score", "--snapshot", "examples"], "spark"),
}


@pytest.mark.parametrize("case", list(NEEDS_AN_EXTRA))
def test_a_command_needing_an_extra_names_it_in_one_line(case: str) -> None:
    args, extra = NEEDS_AN_EXTRA[case]
    r = mrc_plan(*args)
    assert r.returncode == EXIT_USAGE, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert "internal error" not in r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: ")
    assert f"pip install 'mrc-plan[{extra}]'" in lines[0]
    for module in EXTRAS[extra]:  # every module of the extra is missing here
        assert module in lines[0]


def test_validate_on_a_directory_with_a_plan_among_policies_asks_for_the_extra(
    tmp_path: Path,
) -> None:
    """The policies alone pass on the base install; the reassignment JSON beside them is
    read with numpy: the whole run fails naming the extra, rather than passing it over."""
    for policy in (EXAMPLES / "placement").glob("*.json"):
        (tmp_path / policy.name).write_bytes(policy.read_bytes())
    assert mrc_plan("validate", tmp_path).returncode == 0
    plan = '{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2]}]}'
    (tmp_path / "moves.json").write_text(plan, encoding="utf-8")
    assert mrc_plan("validate", tmp_path, base=False).returncode == 0
    r = mrc_plan("validate", tmp_path)
    assert r.returncode == EXIT_USAGE, r.stderr
    assert "pip install 'mrc-plan[cluster]'" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    "command",
    [
        (
            "assign",
            "--inventory",
            EXAMPLES / "inventory.json",
            "--topics",
            EXAMPLES / "topics.json",
        ),
        ("simulate", "--current", EXAMPLES / "describe.txt", "--fail-rack", "us-west"),
    ],
    ids=["assign", "simulate"],
)
def test_a_report_without_its_extra_is_refused_before_any_work(
    tmp_path: Path, command: tuple[object, ...]
) -> None:
    page, out = tmp_path / "page.html", tmp_path / "plan.json"
    more = ("--out", out) if command[0] == "assign" else ()
    r = mrc_plan(*command, *more, "--report", page, missing=("matplotlib",))
    assert r.returncode == EXIT_USAGE, r.stderr
    expected = (
        "error: --report (the page's charts) needs matplotlib: pip install 'mrc-plan[report]'\n"
    )
    assert r.stderr == expected
    assert not page.exists() and not out.exists()


def test_validate_says_what_needs_the_extra() -> None:
    r = mrc_plan("validate", "examples/describe.txt")
    assert "describe output" in r.stderr
    assert "numpy and pyarrow" in r.stderr


def test_the_extras_declared_are_the_ones_the_errors_name() -> None:
    extras = PYPROJECT["optional-dependencies"]

    def names(requirements: list[str]) -> set[str]:
        out = set()
        for r in requirements:
            name = r.split(";")[0].split("[")[0]
            for sep in "<>=!~ ":
                name = name.split(sep)[0]
            out.add(name)
        return out

    for extra, modules in EXTRAS.items():
        assert names(extras[extra]) == set(modules), extra
    assert not names(PYPROJECT["dependencies"]) & OPTIONAL_MODULES
    assert set(EXTRAS) <= set(extras["all"][0].split("[")[1].rstrip("]").split(","))
    assert "dev" not in extras["all"][0]


def test_a_missing_module_of_our_own_is_still_a_bug() -> None:
    @handle_errors
    def validate() -> None:
        raise ModuleNotFoundError("No module named 'placement.nowhere'", name="placement.nowhere")

    with pytest.raises(typer.Exit) as exc:
        validate()
    assert exc.value.exit_code == EXIT_BUG


def test_a_missing_optional_module_is_a_usage_error() -> None:
    @handle_errors
    def assign() -> None:
        raise ModuleNotFoundError("No module named 'ortools.sat'", name="ortools.sat")

    with pytest.raises(typer.Exit) as exc:
        assign()
    assert exc.value.exit_code == EXIT_USAGE


def test_the_module_names_its_own_extra_whatever_the_command() -> None:
    found = missing_extra(
        ModuleNotFoundError(name="matplotlib.figure"), "`mrc-plan assign`", "plan"
    )
    assert isinstance(found, MissingExtraError)
    assert found.extra == "report"
    assert found.message == ("`mrc-plan assign` needs matplotlib: pip install 'mrc-plan[report]'")
    assert missing_extra(ModuleNotFoundError(name="yaml"), "x") is None
    assert missing_extra(ImportError("cannot import name 'x'", name="numpy"), "x") is None
