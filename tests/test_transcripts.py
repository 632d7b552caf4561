"""Every `$ mrc-plan` block in README.md and docs/ is what the command prints today:
scripts/transcripts.py regenerates them, and its --check fails on a stale one."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "transcripts.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("transcripts", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["transcripts"] = module
    spec.loader.exec_module(module)
    return module


def _check(spark: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--spark", spark],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_trim_rules_mark_what_they_leave_out() -> None:
    t = _script()
    lines = [f"line {n}" for n in range(10)]
    assert t._trim(t.Step("x", head=2, tail=1), lines) == ["line 0", "line 1", "[...]", "line 9"]
    assert t._trim(t.Step("x", head=2), lines) == ["line 0", "line 1", "[...]"]
    assert t._trim(t.Step("x", keep=r"[05]$"), lines) == ["line 0", "[...]", "line 5", "[...]"]
    assert t._trim(t.Step("x", quiet=True), lines) == []
    assert t._trim(t.Step("x", head=20), lines) == lines
    assert t.TIMING.sub("", "engine: fresh (rings); 0.01 s") == "engine: fresh (rings)"


def test_a_block_outside_the_markers_is_found() -> None:
    t = _script()
    text = (
        "<!-- transcript: a -->\n```text\n$ mrc-plan rules\n```\n<!-- /transcript -->\n\n"
        "```text\n$ mrc-plan validate x.json\nPASS x.json\n```\n"
        "```sh\nmrc-plan validate x.json   # a command alone is no transcript\n```\n"
    )
    assert [name for name, _, _ in t.blocks(text)] == ["a"]
    assert t.unmarked(text) == [7]


@pytest.mark.slow
def test_the_transcripts_are_up_to_date() -> None:
    result = _check("skip")
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
@pytest.mark.spark
def test_the_spark_transcripts_are_up_to_date() -> None:
    result = _check("only")
    assert result.returncode == 0, result.stderr
