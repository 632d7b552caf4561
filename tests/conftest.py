"""Shared fixtures: repository paths, a clean environment, and a CLI runner."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
SCHEMAS_DIR = REPO / "schemas"

# Variables that change what the CLI prints; a developer's shell or a CI runner may set them.
_ENV_THAT_CHANGES_OUTPUT = (
    "GITHUB_ACTIONS",
    "MRC_PLAN_DEBUG",
    "NO_COLOR",
    "FORCE_COLOR",
    "TTY_COMPATIBLE",
    "COLUMNS",
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _ENV_THAT_CHANGES_OUTPUT:
        monkeypatch.delenv(name, raising=False)


def assert_no_traceback(result: Result) -> None:
    """The command ended through its own exit path: no escaped exception, no traceback."""
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"exception escaped the command: {result.exception!r}\n{result.output}"
    )
    assert "Traceback" not in result.stdout
    assert "Traceback" not in result.stderr


def run_cli(args: Sequence[str | Path], *, traceback_ok: bool = False) -> Result:
    """Invoke `mrc-plan ARGS` in-process; stdout and stderr come back separately."""
    from mrc_plan_cli.main import app

    result = CliRunner().invoke(app, [str(a) for a in args])
    if not traceback_ok:
        assert_no_traceback(result)
    return result


@pytest.fixture(scope="session")
def cli() -> Callable[..., Result]:
    """`cli(args)` runs mrc-plan in-process and checks that no traceback escaped.

    A fixture rather than an import: test directories have no __init__.py, so a
    `from conftest import ...` could pick up another directory's conftest.
    """
    return run_cli


def _example_snapshot(out: Path) -> Path:
    describe, inventory = EXAMPLES / "describe.txt", EXAMPLES / "inventory.json"
    result = run_cli(
        ["snapshot", "from-describe", describe, "--inventory", inventory, "--out", out]
    )
    assert result.exit_code == 0, result.stderr
    return out


@pytest.fixture(scope="session")
def example_snapshot() -> Callable[[Path], Path]:
    """`example_snapshot(dir)` writes examples/describe.txt + examples/inventory.json as a
    snapshot at ``dir`` (no partition sizes: describe output has none) and returns it."""
    return _example_snapshot


@pytest.fixture
def policies(tmp_path: Path) -> Path:
    """A copy of examples/placement (valid) and examples/broken (invalid) in one directory."""
    root = tmp_path / "policies"
    shutil.copytree(EXAMPLES / "placement", root / "placement")
    shutil.copytree(EXAMPLES / "broken", root / "broken")
    return root


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local[2] SparkSession for every Spark test (STYLE: start it once)."""
    pytest.importorskip("pyspark")
    from placement.score.session import build_session

    session = build_session("local[2]", app="mrc-plan-tests")
    session.conf.set("spark.sql.shuffle.partitions", "2")
    yield session
    session.stop()
