"""Standard output that cannot be written (a full disk, a closed descriptor, a reader that
went away) is exit 2 naming it, never an internal error or a traceback; a command whose
output goes to files still runs with no standard output. Through the console script (its
entry point installs the guard), in processes of their own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

MRC_PLAN = str(Path(sys.executable).parent / "mrc-plan")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
Done = subprocess.CompletedProcess[str]
Process = Callable[..., Done]


@pytest.fixture
def sh(process: Process) -> Callable[..., Done]:
    """`sh(script, *args)` runs ``script`` with $0 = mrc-plan and $1... = args under
    /bin/sh; no traceback may reach its stderr (the `process` fixture checks)."""

    def run(script: str, *args: str | Path) -> Done:
        return process(["/bin/sh", "-c", script, MRC_PLAN, *args])

    return run


def refused(done: Done, reason: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "internal error" not in done.stderr, done.stderr  # nor a traceback: `process`
    assert "standard output" in done.stderr and reason in done.stderr, done.stderr


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["rules"], ["rules", "MRC102"], ["--help"], ["--version"]])
def test_a_full_disk_on_standard_output(sh: Callable[..., Done], args: list[str]) -> None:
    refused(sh('"$0" "$@" >/dev/full', *args), "No space left on device")


def test_closed_standard_output(sh: Callable[..., Done], tmp_path: Path) -> None:
    refused(sh('"$0" rules >&-'), "closed")
    out = tmp_path / "plan.json"
    inputs = ["--inventory", EXAMPLES / "inventory.json", "--topics", EXAMPLES / "topics.json"]
    done = sh('"$0" assign "$@" >&-', *inputs, "--out", out)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["version"] == 1  # nothing meant for stdout in it


@pytest.mark.parametrize("args", [["rules"], ["--help"]])
def test_a_reader_that_went_away(process: Process, args: list[str]) -> None:
    read, write = os.pipe()
    os.close(read)  # as `mrc-plan rules | head -1` once head has exited
    try:
        done = process(
            [MRC_PLAN, *args], stdout=write, capture_output=False, stderr=subprocess.PIPE
        )
    finally:
        os.close(write)
    refused(done, "Broken pipe")


@pytest.mark.parametrize("redirect", ["2>&-", "2>/dev/full"])
@pytest.mark.slow  # the fast tier leaves it to make test
def test_unwritable_standard_error_leaves_the_exit_code_alone(
    sh: Callable[..., Done], tmp_path: Path, redirect: str
) -> None:
    """Messages that cannot be written are lost; the command's exit code is still the
    command's (before, the failed write was an exception of its own: exit 1)."""
    if "full" in redirect and not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    assert sh(f'"$0" rules no-such-rule {redirect}').returncode == 2
    out = tmp_path / "plan.json"
    inputs = ["--inventory", EXAMPLES / "inventory.json", "--topics", EXAMPLES / "topics.json"]
    done = sh(f'"$0" assign "$@" {redirect}', *inputs, "--out", out)
    assert done.returncode == 0
    assert json.loads(out.read_text())["version"] == 1
