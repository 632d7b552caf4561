"""Shell completion, asked the way an installed completion script asks: through the console
script with the `_MRC_PLAN_COMPLETE` variable set. What the shells get back must name the
commands, the options and the registries' choices, and `rules` completes rule codes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

MRC_PLAN = str(Path(sys.executable).parent / "mrc-plan")

Process = Callable[..., subprocess.CompletedProcess[str]]


def _bash(process: Process, line: str) -> list[str]:
    """The words bash would offer after ``line`` (completing its last word)."""
    words = line.split(" ")
    env = {
        **os.environ,
        "_MRC_PLAN_COMPLETE": "complete_bash",
        "COMP_WORDS": line,
        "COMP_CWORD": str(len(words) - 1),
    }
    done = process([MRC_PLAN], env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_commands_complete(process: Process) -> None:
    assert _bash(process, "mrc-plan sn") == ["snapshot"]
    assert {"validate", "assign", "simulate", "score"} <= set(_bash(process, "mrc-plan "))


def test_options_complete(process: Process) -> None:
    assert set(_bash(process, "mrc-plan simulate --fail-")) == {"--fail-rack", "--fail-brokers"}


def test_choices_complete(process: Process) -> None:
    offered = _bash(process, "mrc-plan schema ")
    assert {"placement", "inventory", "diagnostics", "rules"} <= set(offered)


def test_rule_codes_and_names_complete(process: Process) -> None:
    codes = _bash(process, "mrc-plan rules MRC1")
    assert codes and all(c.startswith("MRC1") for c in codes)
    assert "MRC101" in codes
    assert _bash(process, "mrc-plan rules json-com") == ["json-comment"]
    assert _bash(process, "mrc-plan rules nothing-like-this") == []


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_shell_gets_a_script(process: Process, shell: str) -> None:
    """The script `--show-completion` prints for the shell it finds among the process's
    ancestors, asked for by name (under CI or a test runner no shell may be among them)."""
    env = {**os.environ, "_MRC_PLAN_COMPLETE": f"source_{shell}"}
    done = process([MRC_PLAN], env=env)
    assert done.returncode == 0, done.stderr
    assert "_MRC_PLAN_COMPLETE" in done.stdout and f"complete_{shell}" in done.stdout


def test_show_completion_prints_the_script_of_the_calling_shell(process: Process) -> None:
    done = process(["bash", "-c", f"'{MRC_PLAN}' --show-completion; exit $?"])
    assert done.returncode == 0, done.stderr
    assert "complete_bash" in done.stdout
