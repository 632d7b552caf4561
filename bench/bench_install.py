"""Install size: what `pip install mrc-plan` adds to a fresh venv (goal <= 60 MB), and with [all].

Builds the wheel from the source (a copy of what the build reads, so nothing lands in the
checkout), makes a venv in a temporary directory, and measures its site-packages (apparent
file sizes, MB = 10^6 bytes) before and after `pip install <wheel>`; then runs `mrc-plan
validate examples/placement` from that venv (it must pass) and `validate` on describe
output (it must ask for the cluster extra, exit 2). Then `pip install '<wheel>[all]'` into
the same venv, measured the same way, and the describe output validated for real.
Needs the package registry; heavy (pyspark alone is ~500 MB): run it by name,
`.venv/bin/python bench/run.py install`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import ROOT, clean_env, result

GOAL_MB = 60.0
# what the build reads: pyproject.toml's packages and readme
SOURCES = ("pyproject.toml", "README.md", "placement", "cli")


def _run(cmd: list[str | Path], *, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in cmd],
        cwd=ROOT,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _checked(cmd: list[str | Path], *, timeout: float = 1800) -> str:
    proc = _run(cmd, timeout=timeout)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{tail}")
    return proc.stdout


def _wheel(tmp: Path) -> Path:
    src = tmp / "src"
    src.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=ignore)
        else:
            shutil.copy2(path, src / name)
    out = tmp / "dist"
    _checked([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", out, src])
    (whl,) = out.glob("mrc_plan-*.whl")
    return whl


def _size(root: Path) -> int:
    total = 0
    for where, _dirs, files in os.walk(root):
        for name in files:
            path = Path(where) / name
            if not path.is_symlink():
                total += path.stat().st_size
    return total


def _largest(site: Path, before: set[str], count: int = 5) -> str:
    """The largest entries the install added to site-packages, for the detail."""
    sizes = []
    for entry in site.iterdir():
        if entry.name in before or entry.name.endswith((".dist-info", ".pth")):
            continue
        size = _size(entry) if entry.is_dir() else entry.stat().st_size
        sizes.append((size, entry.name))
    sizes.sort(reverse=True)
    return ", ".join(f"{name} {size / 1e6:.0f}" for size, name in sizes[:count] if size >= 5e5)


def _pip_install(python: Path, requirement: str) -> float:
    started = time.perf_counter()
    _checked(
        [
            python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            "--no-input", requirement,
        ]
    )  # fmt: skip
    return time.perf_counter() - started


def _timed(cmd: list[str | Path], expect: int) -> tuple[float, subprocess.CompletedProcess[str]]:
    started = time.perf_counter()
    proc = _run(cmd, timeout=300)
    seconds = time.perf_counter() - started
    if proc.returncode != expect:
        raise RuntimeError(
            f"{' '.join(map(str, cmd[1:]))} exited {proc.returncode}, not {expect}: "
            f"{proc.stderr.strip()[-300:]}"
        )
    return seconds, proc


def run() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="mrc-bench-install-") as tmp_name:
        tmp = Path(tmp_name)
        whl = _wheel(tmp)
        venv = tmp / "venv"
        _checked([sys.executable, "-m", "venv", venv])
        python = venv / "bin" / "python"
        site = Path(
            _checked(
                [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
            ).strip()
        )
        empty = _size(site)
        there = {e.name for e in site.iterdir()}

        took = _pip_install(python, str(whl))
        base = (_size(site) - empty) / 1e6
        rows.append(
            result(
                "pip install mrc-plan: site-packages growth", base, "MB", GOAL_MB,
                f"largest (MB): {_largest(site, there)}; install took {took:.0f} s",
            )
        )  # fmt: skip

        mrc_plan = venv / "bin" / "mrc-plan"
        placement = ROOT / "examples" / "placement"
        seconds, _ = _timed([mrc_plan, "validate", placement], 0)
        rows.append(
            result(
                "base install: validate examples/placement", seconds, "s",
                detail="exit 0, as with every extra",
            )
        )  # fmt: skip
        describe = ROOT / "examples" / "describe.txt"
        seconds, proc = _timed([mrc_plan, "validate", describe], 2)
        if "mrc-plan[cluster]" not in proc.stderr:
            raise RuntimeError(f"validate describe output did not name the extra: {proc.stderr}")
        rows.append(
            result(
                "base install: validate describe output asks for [cluster]", seconds, "s",
                detail=proc.stderr.strip().removeprefix("error: ")[:100],
            )
        )  # fmt: skip

        there = {e.name for e in site.iterdir()}
        took = _pip_install(python, f"{whl}[all]")
        full = (_size(site) - empty) / 1e6
        rows.append(
            result(
                "pip install 'mrc-plan[all]': site-packages growth", full, "MB",
                detail=f"added to the base (MB): {_largest(site, there, 6)}; "
                f"install took {took:.0f} s",
            )
        )  # fmt: skip
        seconds, _ = _timed([mrc_plan, "validate", describe, placement], 1)
        rows.append(
            result(
                "[all]: validate describe output and policies", seconds, "s",
                detail="exit 1: the example describe output has findings",
            )
        )  # fmt: skip
    return rows
