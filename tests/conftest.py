"""Shared fixtures: repository paths, a clean environment, a CLI runner (in-process, or the
console script in a process of its own), and small synthetic snapshots."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    # every test checks a snapshot's partitions in full and leaves nothing in the user's
    # cache; tests/test_checked_cache.py turns the cache on, in a cache of its own
    monkeypatch.setenv("MRC_PLAN_CHECK_CACHE", "0")


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


def run_process(
    cmd: Sequence[str | Path], *, traceback_ok: bool = False, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` (the console script, or a shell or interpreter that starts it) and check
    that no traceback reached its stderr, unless ``traceback_ok`` or it ran with
    MRC_PLAN_DEBUG on (in ``env``), which asks for one. ``kwargs`` go to subprocess.run,
    over text output captured, no check and a two-minute timeout."""
    options: dict[str, Any] = {"capture_output": True, "text": True, "check": False}
    options |= {"timeout": 120, **kwargs}
    done: subprocess.CompletedProcess[str] = subprocess.run([str(c) for c in cmd], **options)
    env: Mapping[str, str] = options.get("env") or {}
    debug = env.get("MRC_PLAN_DEBUG", "") not in ("", "0")
    if not (traceback_ok or debug) and isinstance(done.stderr, str):
        assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.fixture(scope="session")
def process() -> Callable[..., subprocess.CompletedProcess[str]]:
    """`process(cmd, **kwargs)`: ``run_process``, a command in a process of its own whose
    stderr must hold no traceback."""
    return run_process


def _synth_args(
    out: Path,
    *extra: str | Path,
    brokers: int = 6,
    racks: int = 3,
    topics: int = 3,
    per_topic: int = 4,
) -> list[str | Path]:
    sizes = [brokers, racks, topics, per_topic]
    flags = ["--brokers", "--racks", "--topics", "--partitions-per-topic"]
    named = [x for flag, n in zip(flags, sizes, strict=True) for x in (flag, str(n))]
    return ["snapshot", "synth", *named, *extra, "--out", out]


def _synth_snapshot(out: Path, *extra: str | Path, **sizes: int) -> Path:
    result = run_cli(_synth_args(out, *extra, **sizes))
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="session")
def synth_args() -> Callable[..., list[str | Path]]:
    """`synth_args(out, *extra, brokers=6, racks=3, topics=3, per_topic=4)`: the
    arguments of `mrc-plan snapshot synth` writing that cluster to ``out``."""
    return _synth_args


@pytest.fixture(scope="session")
def synth_snapshot() -> Callable[..., Path]:
    """`synth_snapshot(out, *extra, **sizes)` runs `mrc-plan snapshot synth` (sizes as for
    ``synth_args``) and returns ``out``, the snapshot it wrote."""
    return _synth_snapshot


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


# a small written snapshot, for the tests of the partitions check, its cache and staging
@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small snapshot of two part files (77 partitions in row groups of 10)."""
    from placement.io.snapshot import write_snapshot
    from placement.snapshot.synth import SynthSpec, synth

    root = tmp_path_factory.mktemp("written") / "snap"
    write_snapshot(root, synth(SynthSpec(9, 3, 7, 11, seed=3)).snapshot, row_group_rows=10)
    return root


@pytest.fixture
def snap(written: Path, tmp_path: Path) -> Path:
    """A copy of `written` that a test may change."""
    return Path(shutil.copytree(written, tmp_path / "snap"))
