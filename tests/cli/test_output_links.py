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


def another_users(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``path`` belongs to someone else: chowned to nobody as root, else our uid is not
    its owner's."""
    if os.geteuid() == 0:
        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
        for sub in path.rglob("*") if path.is_dir() else ():
            os.chown(sub, NOBODY, NOBODY, follow_symlinks=False)
    else:
        uid = os.geteuid()
        monkeypatch.setattr(os, "geteuid", lambda: uid + 1)


def sticky_shared_dir(tmp_path: Path) -> Path:
    """A directory like /tmp: everyone may create files in it (sticky, world-writable)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    return shared


def plant(directory: Path, name: str, kind: str) -> Path:
    """A leftover named as a killed run's ``.old`` of ``name``: a plan file, or a policy
    directory holding a script."""
    old = directory / f".{name}.mrc-plan-{dead_pid()}.old"
    if kind == "file":
        old.write_text('{"version":1,"partitions":[{"topic":"evil","partition":0}]}')
    else:
        old.mkdir()
        (old / "policy-changes.sh").write_text("#!/bin/sh\nrm -rf /\n")
    return old


# -- leftovers that are not ours, or not in a private directory ------------------------


# --policy-dir wants describe output, whose partition counts examples/topics.json
# contradicts: exit 2, read inside the outputs' block as the infeasible drain is
FAILING = {"--out": ([*ASSIGN, *INFEASIBLE], 1), "--policy-dir": ([*ASSIGN, *DESCRIBED], 2)}


@pytest.mark.parametrize(
    ("flag", "name", "kind"),
    [("--out", "plan.json", "file"), ("--policy-dir", "policies", "dir")],
)
def test_another_users_old_file_in_a_shared_dir_is_never_installed(
    cli: Cli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    flag: str,
    name: str,
    kind: str,
) -> None:
    shared = sticky_shared_dir(tmp_path)
    planted = plant(shared, name, kind)
    another_users(planted, monkeypatch)
    target = shared / name
    args, code = FAILING[flag]
    r = cli([*args, flag, target])
    assert r.exit_code == code, r.output
    assert not os.path.lexists(target)
    assert planted.exists(), "another user's file is not ours to remove"
    assert str(planted) in r.stderr and "note:" in r.stderr
    assert "restored" not in r.stderr
    assert "rm -rf" not in r.stderr and "evil" not in r.stderr  # nothing of its content


def test_another_users_old_file_is_not_installed_by_a_successful_run_either(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = sticky_shared_dir(tmp_path)
    planted = plant(shared, "plan.json", "file")
    another_users(planted, monkeypatch)
    r = cli([*ASSIGN, "--drain", "4", "--out", shared / "plan.json"])
    assert r.exit_code == 0, r.output
    assert "evil" not in (shared / "plan.json").read_text()
    assert planted.exists() and str(planted) in r.stderr


def test_our_own_old_file_in_a_shared_dir_is_not_restored(cli: Cli, tmp_path: Path) -> None:
    """Ours by its owner, but anyone could have put it there (a hard link, a rename of a
    file we wrote elsewhere): without a private directory, no restore."""
    shared = sticky_shared_dir(tmp_path)
    planted = plant(shared, "plan.json", "file")
    r = cli([*ASSIGN, *INFEASIBLE, "--out", shared / "plan.json"])
    assert r.exit_code == 1, r.output
    assert not os.path.lexists(shared / "plan.json") and planted.exists()
    assert str(planted) in r.stderr and "restored" not in r.stderr


def test_another_users_temporary_file_is_not_removed(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = sticky_shared_dir(tmp_path)
    theirs = shared / f".plan.json.mrc-plan-{dead_pid()}.tmp"
    theirs.write_text("x")
    another_users(theirs, monkeypatch)
    r = cli([*ASSIGN, "--drain", "4", "--out", shared / "plan.json"])
    assert r.exit_code == 0, r.output
    assert theirs.exists() and str(theirs) in r.stderr
    assert (shared / "plan.json").is_file()


# -- our own leftovers, in a directory only we can write --------------------------------


def test_a_restore_is_undone_when_the_run_fails(cli: Cli, tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    old = private / f".plan.json.mrc-plan-{dead_pid()}.old"
    old.write_text("the previous plan")
    r = cli([*ASSIGN, *INFEASIBLE, "--out", private / "plan.json"])
    assert r.exit_code == 1, r.output
    assert not os.path.lexists(private / "plan.json")
    assert old.read_text() == "the previous plan"
    assert "restored" in r.stderr and str(old.name) in r.stderr  # said, then undone
    assert "undid the restore" in r.stderr


def test_a_restore_stands_when_the_run_succeeds(cli: Cli, tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    old = private / f".plan.json.mrc-plan-{dead_pid()}.old"
    old.write_text("the previous plan")
    r = cli([*ASSIGN, "--drain", "4", "--out", private / "plan.json"])
    assert r.exit_code == 0, r.output
    assert not old.exists() and "restored" in r.stderr
    assert (private / "plan.json").read_text() != "the previous plan"


@pytest.mark.parametrize("code", [1, 2])
def test_notes_are_printed_when_the_run_fails(cli: Cli, tmp_path: Path, code: int) -> None:
    stale = tmp_path / f".plan.json.mrc-plan-{dead_pid()}.tmp"
    stale.write_text("x")
    if code == 1:
        args = [*ASSIGN, *INFEASIBLE]
    else:
        bad = tmp_path / "topics.json"
        bad.write_text("not json")
        args = ["assign", "--inventory", INV, "--topics", bad]
    r = cli([*args, "--out", tmp_path / "plan.json"])
    assert r.exit_code == code, r.output
    assert not stale.exists()
    assert f"note: removed {stale}" in r.stderr


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
