"""Outputs in places other users share: a leftover of a killed run that someone else
planted is never installed as an output, a restore does not outlive a failed run, what
was done with leftovers is said on every exit, and no output is written through a link.

Root runs these tests (the sandbox and CI containers): another user's file is made with
os.chown; elsewhere the effective uid is monkeypatched instead.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
INV = EXAMPLES / "inventory.json"
TOPICS = EXAMPLES / "topics.json"
Cli = Callable[..., Result]
ASSIGN = ["assign", "--inventory", INV, "--topics", TOPICS]
INFEASIBLE = ["--drain", "1,2,3,4"]  # us-west emptied: exit 1, inside the outputs' block
DESCRIBED = ["--current", EXAMPLES / "describe.txt"]
NOBODY = 65534


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# -- links where an output goes -------------------------------------------------------


def refused_link(r: Result, link: Path) -> None:
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert str(link) in r.stderr and "symbolic link" in r.stderr
    assert "remove the link" in r.stderr


def test_validate_output_through_a_link_leaves_its_target(cli: Cli, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "authorized_keys"
    victim.write_text("ssh-ed25519 AAAA admin\n")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    link = checkout / "results.sarif"
    link.symlink_to(victim)
    r = cli(["validate", EXAMPLES / "placement", "--format", "sarif", "-o", link])
    refused_link(r, link)
    assert victim.read_text() == "ssh-ed25519 AAAA admin\n"
    assert link.is_symlink()


def test_a_dangling_link_is_no_output_either(cli: Cli, tmp_path: Path) -> None:
    link = tmp_path / "results.sarif"
    link.symlink_to(tmp_path / "outside" / "new-file")
    (tmp_path / "outside").mkdir()
    refused_link(cli(["validate", EXAMPLES / "placement", "-o", link]), link)
    assert not (tmp_path / "outside" / "new-file").exists()


def test_a_stale_output_that_is_a_link_is_refused_and_its_target_kept(
    cli: Cli, tmp_path: Path
) -> None:
    """Nothing to roll back: the old --rollback would be removed; through a link, never."""
    victim = tmp_path / "victim.json"
    victim.write_text("keep")
    link = tmp_path / "rollback.json"
    link.symlink_to(victim)
    r = cli([*ASSIGN, "--rollback", link])
    refused_link(r, link)
    assert victim.read_text() == "keep" and link.is_symlink()


@pytest.mark.parametrize("command", ["synth", "out-dir"])
def test_a_directory_output_that_is_a_link_leaves_its_target(
    cli: Cli, tmp_path: Path, command: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "summary.json").write_text("someone's batches")  # looks like ours
    (outside / "_mrc-plan-snapshot.json").write_text("{}")
    before = sorted(p.name for p in outside.iterdir())
    link = tmp_path / "out"
    link.symlink_to(outside, target_is_directory=True)
    if command == "synth":
        sizes = ["--brokers", "6", "--racks", "3", "--topics", "2", "--partitions-per-topic", "3"]
        r = cli(["snapshot", "synth", *sizes, "--out", link])
    else:
        r = cli([*ASSIGN, "--drain", "4", "--max-moves-per-broker", "5", "--out-dir", link])
    refused_link(r, link)
    assert sorted(p.name for p in outside.iterdir()) == before
    assert (outside / "summary.json").read_text() == "someone's batches"
    assert link.is_symlink()


def test_a_link_in_the_directory_part_is_followed(cli: Cli, tmp_path: Path) -> None:
    """Only the last component is the output; the directory it is in may be reached
    through a link (a home or a mount point often is)."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "via").symlink_to(real, target_is_directory=True)
    r = cli(["validate", EXAMPLES / "placement", "-o", tmp_path / "via" / "report.txt"])
    assert r.exit_code in (0, 1), r.output
    assert (real / "report.txt").is_file()
    assert stat.S_ISREG(os.lstat(real / "report.txt").st_mode)
