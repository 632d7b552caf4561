"""The wheel installs `placement` and `mrc_plan_cli` (never a top-level `cli`) and works in a
clean venv, away from the source tree and the editable install."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
# what `make clean` removes, plus VCS data and the venv: everything else is what a user clones
NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    "out",
)


def run(cmd: list[str | Path], cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        [str(c) for c in cmd],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, f"{cmd} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.pop("MRC_PLAN_DEBUG", None)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build from a copy of the tree, so no build/ or egg-info lands in the checkout."""
    src = tmp_path_factory.mktemp("src") / "mrc-plan"
    shutil.copytree(REPO, src, ignore=NOT_SOURCE)
    out = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", out, src], cwd=src)
    (whl,) = out.glob("mrc_plan-*.whl")
    return whl


@pytest.fixture(scope="module")
def names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as zf:
        return zf.namelist()


def test_wheel_holds_both_packages(names: list[str]) -> None:
    for required in (
        "mrc_plan_cli/__init__.py",
        "mrc_plan_cli/main.py",
        "mrc_plan_cli/errors.py",
        "placement/__init__.py",
        "placement/rules/validate.py",
        "placement/py.typed",
    ):
        assert required in names


def test_wheel_has_no_generic_top_level_names(names: list[str]) -> None:
    top = {n.split("/")[0] for n in names}
    assert not {"cli", "tests", "examples", "schemas", "bench"} & top
    assert {t for t in top if not t.endswith(".dist-info")} == {"placement", "mrc_plan_cli"}


def test_wheel_holds_every_source_module(names: list[str]) -> None:
    """A module left out of [tool.setuptools] packages would be missing here."""
    expected = {
        f"placement/{p.relative_to(REPO / 'placement').as_posix()}"
        for p in (REPO / "placement").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    expected |= {
        f"mrc_plan_cli/{p.relative_to(REPO / 'cli').as_posix()}"
        for p in (REPO / "cli").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    missing = expected - set(names)
    assert not missing, f"not in the wheel (add the package to pyproject): {sorted(missing)}"


def test_entry_point(wheel: Path, names: list[str]) -> None:
    (ep_name,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read(ep_name).decode()
    entry_points = configparser.ConfigParser()
    entry_points.read_string(text)
    assert dict(entry_points["console_scripts"]) == {"mrc-plan": "mrc_plan_cli.main:run"}


def test_every_placement_package_is_declared() -> None:
    declared = set(PYPROJECT["tool"]["setuptools"]["packages"])
    on_disk = {
        ".".join(d.relative_to(REPO).parts)
        for d in [REPO / "placement", *(REPO / "placement").rglob("*")]
        if d.is_dir() and (d / "__init__.py").is_file()
    }
    assert on_disk <= declared, f"add to [tool.setuptools] packages: {sorted(on_disk - declared)}"
    assert "mrc_plan_cli" in declared
    assert PYPROJECT["tool"]["setuptools"]["package-dir"]["mrc_plan_cli"] == "cli"


def test_no_module_outside_a_package() -> None:
    """A directory of modules without __init__.py would silently drop out of the wheel."""
    orphans = sorted(
        d.relative_to(REPO).as_posix()
        for d in (REPO / "placement").rglob("*")
        if d.is_dir()
        and d.name != "__pycache__"
        and any(d.glob("*.py"))
        and not (d / "__init__.py").is_file()
    )
    assert not orphans, f"add __init__.py: {orphans}"


def test_wheel_runs_in_a_clean_venv(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
    site = Path(
        run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            cwd=tmp_path,
        ).strip()
    )
    # the dependencies already installed here, without the network; a plain path line does not
    # run that directory's .pth files, so the editable-install finder stays inactive
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            python,
            "install",
            "--no-deps",
            "--no-index",
            "--quiet",
            wheel,
        ],
        cwd=tmp_path,
    )

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = clean_env()
    mrc_plan = venv / "bin" / "mrc-plan"
    result = subprocess.run(
        [mrc_plan, "validate", "--format", "json", REPO / "examples" / "placement"],
        cwd=outside,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert '"invalid_files": 0' in result.stdout

    assert run([mrc_plan, "--version"], cwd=outside, env=env).strip() == "mrc-plan 0.1.0"

    where = run(
        [
            python,
            "-c",
            "import sys, placement, mrc_plan_cli.main\n"
            "print(placement.__file__)\nprint(mrc_plan_cli.main.__file__)\n"
            "print(any('editable' in m for m in sys.modules))",
        ],
        cwd=outside,
        env=env,
    ).split()
    assert Path(where[0]).is_relative_to(site), where
    assert Path(where[1]).is_relative_to(site), where
    assert where[2] == "False"
