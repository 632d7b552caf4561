"""Every command's outputs: nothing the user had is destroyed, nothing stale is left.

The guard (an output that is an input, two outputs on one path, a directory that is not
ours), the stale-output rule (nothing to write: no file left, and stderr says so),
all-or-nothing commits, I/O failures as exit 2 naming the path, and the temporary files
of killed runs cleaned by the next run. Root runs these tests, so unwritable places are
made of missing parents, files used as directories, or a monkeypatched os call.
"""

from __future__ import annotations

import errno
import os
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


def usage_error(r: Result, *needles: str) -> None:
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    for needle in needles:
        assert needle in r.stderr, r.stderr


def dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def read_only_target(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """Renaming a file onto ``target`` fails as on a read-only file system (the last step
    of committing it); every other rename works."""
    replace = os.replace

    def failing(src: str | Path, dst: str | Path, **kw: object) -> None:
        if Path(dst) == target:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(dst))
        replace(src, dst)

    monkeypatch.setattr(os, "replace", failing)


def hidden(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


@pytest.fixture
def current(cli: Cli, tmp_path: Path) -> Path:
    """A fresh layout of examples/topics.json: a current assignment with nothing to do."""
    path = tmp_path / "current.json"
    r = cli([*ASSIGN, "--out", path])
    assert r.exit_code == 0, r.output
    return path


def synth_args(out: Path) -> list[str | Path]:
    sizes = ["--brokers", "6", "--racks", "3", "--topics", "2", "--partitions-per-topic", "3"]
    return ["snapshot", "synth", *sizes, "--out", out]


# -- the guard: inputs, shared paths, directories that are not ours ----------------------


def test_output_equal_to_an_input_is_refused_and_the_input_kept(
    cli: Cli, current: Path, tmp_path: Path
) -> None:
    before = current.read_bytes()
    r = cli([*ASSIGN, "--current", current, "--drain", "4", "--out", current])
    usage_error(r, "--out", str(current), "--current")
    assert current.read_bytes() == before
    inv = tmp_path / "inv.json"
    inv.write_bytes(INV.read_bytes())
    r = cli(["assign", "--inventory", inv, "--topics", TOPICS, "--rollback", inv])
    usage_error(r, "--rollback", "--inventory")
    assert inv.read_bytes() == INV.read_bytes()


def test_a_hard_link_or_a_symlink_to_an_input_is_the_input(
    cli: Cli, current: Path, tmp_path: Path
) -> None:
    before = current.read_bytes()
    link = tmp_path / "hard.json"
    os.link(current, link)
    r = cli([*ASSIGN, "--current", current, "--drain", "4", "--out", link])
    usage_error(r, "--out", str(link), "hard link")
    sym = tmp_path / "sym.json"
    sym.symlink_to(current)
    r = cli([*ASSIGN, "--current", current, "--drain", "4", "--rollback", sym])
    usage_error(r, "--rollback", str(sym))
    assert current.read_bytes() == before


def test_two_outputs_on_one_path_are_refused(cli: Cli, current: Path, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    r = cli([*ASSIGN, "--current", current, "--drain", "4", "--out", out, "--rollback", out])
    usage_error(r, "--out", "--rollback", "two outputs")
    assert not out.exists()


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(
            [
                "simulate",
                "--current",
                "{cur}",
                "--inventory",
                INV,
                "--fail-rack",
                "us-west",
                "--unclean-out",
                "{cur}",
            ],
            id="simulate",
        ),
        pytest.param(["validate", "{cur}", "-o", "{cur}"], id="validate"),
        pytest.param(
            ["score", "--snapshot", "{dir}", "--plan", "{cur}", "--out", "{cur}"], id="score"
        ),
    ],
)
def test_every_command_refuses_to_write_over_its_input(
    cli: Cli, current: Path, tmp_path: Path, args: list[str | Path]
) -> None:
    before = current.read_bytes()
    fill = {"{cur}": str(current), "{dir}": str(tmp_path)}
    r = cli([fill.get(str(a), a) for a in args])
    usage_error(r, str(current), "input")
    assert current.read_bytes() == before


def test_snapshot_out_never_replaces_a_foreign_directory(cli: Cli, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    (mine / "sub").mkdir(parents=True)
    (mine / "notes.txt").write_text("keep me")
    (mine / "sub" / "more.txt").write_text("and me")
    r = cli(synth_args(mine))
    usage_error(r, "--out", str(mine), "not overwriting")
    assert (mine / "notes.txt").read_text() == "keep me"
    assert (mine / "sub" / "more.txt").read_text() == "and me"
    assert hidden(tmp_path) == []


def test_snapshot_out_never_replaces_a_regular_file(cli: Cli, tmp_path: Path) -> None:
    f = tmp_path / "snap"
    f.write_text("a file")
    describe = ["snapshot", "from-describe", EXAMPLES / "describe.txt", "--inventory", INV]
    usage_error(cli([*describe, "--out", f]), "--out", str(f), "not a directory")
    assert f.read_text() == "a file"
    assert hidden(tmp_path) == []


def test_snapshot_out_dot_and_ancestors_are_exit_2(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "keep.txt").write_text("x")
    monkeypatch.chdir(work)
    describe = ["snapshot", "from-describe", EXAMPLES / "describe.txt", "--inventory", INV]
    usage_error(cli([*describe, "--out", "."]), "--out", "current directory")
    usage_error(cli([*describe, "--out", ".."]), "--out", "current directory")
    assert (work / "keep.txt").read_text() == "x"
    # a directory holding an input is no output either
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    inv = inputs / "inv.json"
    inv.write_bytes(INV.read_bytes())
    r = cli(
        [
            "snapshot",
            "from-describe",
            EXAMPLES / "describe.txt",
            "--inventory",
            inv,
            "--out",
            inputs,
        ]
    )
    usage_error(r, "--out", "holds the input")
    assert inv.read_bytes() == INV.read_bytes()


def test_snapshot_out_replaces_an_earlier_snapshot_and_an_empty_directory(
    cli: Cli, tmp_path: Path
) -> None:
    snap = tmp_path / "snap"
    snap.mkdir()
    assert cli(synth_args(snap)).exit_code == 0  # empty: fine
    assert cli(synth_args(snap)).exit_code == 0  # an earlier snapshot: fine
    assert (snap / "_mrc-plan-snapshot.json").is_file()
    # written before the marker existed: exactly the tables, recognised
    (snap / "_mrc-plan-snapshot.json").unlink()
    r = cli(synth_args(snap))
    assert r.exit_code == 0, r.output
    assert hidden(tmp_path) == []


# -- the stale-output rule ---------------------------------------------------------------


def test_assign_with_nothing_to_do_removes_old_outputs_and_says_so(
    cli: Cli, current: Path, tmp_path: Path
) -> None:
    old = {n: tmp_path / f"{n}.json" for n in ("out", "rollback", "election")}
    for path in old.values():
        path.write_text('{"version":1,"partitions":[{"topic":"orders","partition":0}]}')
    r = cli([*ASSIGN, "--current", current] + [x for n, p in old.items() for x in (f"--{n}", p)])
    assert r.exit_code == 0, r.output
    assert "nothing to do" in r.stderr
    for path in old.values():
        assert not path.exists(), path
        assert f"removed stale {path}" in r.stderr
    # again, with nothing there: says no file is left
    r = cli([*ASSIGN, "--current", current, "--out", old["out"]])
    assert r.exit_code == 0 and not old["out"].exists()
    assert f"{old['out']}: nothing to write" in r.stderr


def test_a_fresh_layout_removes_an_old_rollback(cli: Cli, tmp_path: Path) -> None:
    rollback = tmp_path / "rollback.json"
    rollback.write_text("old")
    r = cli([*ASSIGN, "--out", tmp_path / "plan.json", "--rollback", rollback])
    assert r.exit_code == 0, r.output
    assert not rollback.exists() and (tmp_path / "plan.json").is_file()
    assert f"removed stale {rollback}" in r.stderr and f"wrote {tmp_path / 'plan.json'}" in r.stderr


def test_simulate_without_unclean_partitions_removes_an_old_unclean_file(
    cli: Cli, current: Path, tmp_path: Path
) -> None:
    unclean = tmp_path / "unclean.json"
    unclean.write_text('{"version":1,"partitions":[{"topic":"orders","partition":0}]}')
    r = cli(
        [
            "simulate",
            "--current",
            current,
            "--inventory",
            INV,
            "--topics",
            TOPICS,
            "--fail-brokers",
            "1",
            "--unclean-out",
            unclean,
        ],
    )
    assert r.exit_code in (0, 1), r.output
    assert "no partition needs an unclean election" in r.stderr
    assert not unclean.exists()
    assert f"removed stale {unclean}" in r.stderr


# -- all or nothing ------------------------------------------------------------------


def test_an_unwritable_second_output_leaves_the_first_unwritten(
    cli: Cli, current: Path, tmp_path: Path
) -> None:
    ok = tmp_path / "ok.json"
    a_file = tmp_path / "file"
    a_file.write_text("")
    args = [*ASSIGN, "--current", current, "--drain", "4", "--out", ok]
    r = cli([*args, "--rollback", a_file / "rollback.json"])
    usage_error(r, "--rollback", "not a directory")
    assert not ok.exists()
    r = cli([*args, "--rollback", tmp_path / "missing" / "rollback.json"])
    usage_error(r, "--rollback", "does not exist")
    assert not ok.exists() and not (tmp_path / "missing").exists()


def test_a_failure_while_committing_restores_every_output(
    cli: Cli, current: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, rollback = tmp_path / "plan.json", tmp_path / "rollback.json"
    out.write_text("old plan")
    rollback.write_text("old rollback")
    read_only_target(monkeypatch, rollback)
    r = cli([*ASSIGN, "--current", current, "--drain", "4", "--out", out, "--rollback", rollback])
    usage_error(r, str(rollback), "Read-only file system")
    assert out.read_text() == "old plan" and rollback.read_text() == "old rollback"
    assert hidden(tmp_path) == []


def test_a_stale_file_that_cannot_be_removed_is_named_and_kept(
    cli: Cli, current: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = tmp_path / "plan.json"
    stale.write_text("old plan")
    rename = os.rename

    def failing(src: str | Path, dst: str | Path, **kw: object) -> None:
        if Path(src) == stale:
            raise OSError(errno.EACCES, os.strerror(errno.EACCES), str(src))
        rename(src, dst)

    monkeypatch.setattr(os, "rename", failing)
    r = cli([*ASSIGN, "--current", current, "--out", stale])
    usage_error(r, "--out", str(stale), "cannot remove the stale file", "Permission denied")
    assert stale.read_text() == "old plan" and hidden(tmp_path) == []


def test_a_plan_on_stdout_is_not_printed_when_its_rollback_fails(
    cli: Cli, current: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rollback = tmp_path / "rollback.json"
    read_only_target(monkeypatch, rollback)
    r = cli([*ASSIGN, "--current", current, "--drain", "4", "--rollback", rollback])
    usage_error(r, str(rollback), "Read-only file system")
    assert r.stdout == "" and not rollback.exists()


# -- I/O failures: exit 2 naming the path ---------------------------------------------


def test_a_directory_as_an_output_file_is_exit_2(cli: Cli, current: Path, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    usage_error(cli([*ASSIGN, "--out", tmp_path / "d"]), str(tmp_path / "d"), "is a directory")
    usage_error(cli(["snapshot", "export", tmp_path, "--out", "."]), "is a directory")


def test_a_missing_directory_is_exit_2_and_not_created(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "no" / "such" / "plan.json"
    usage_error(cli([*ASSIGN, "--out", out]), str(out), "does not exist")
    assert not (tmp_path / "no").exists()


def test_a_name_too_long_is_exit_2(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / ("p" * 300 + ".json")
    usage_error(cli([*ASSIGN, "--out", out]), "--out", "too long")
    # a long name that fits is fine, temporary names included
    fits = tmp_path / ("q" * 250 + ".json")
    r = cli([*ASSIGN, "--out", fits])
    assert r.exit_code == 0, r.output
    assert fits.is_file() and hidden(tmp_path) == []


def test_plan_show_of_a_name_too_long_is_exit_2(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / ("p" * 300 + ".json")
    usage_error(cli(["plan", "show", path]), str(path), "too long")


def test_a_full_disk_is_exit_2_and_leaves_the_old_file(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "plan.json"
    out.write_text("old plan")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    usage_error(cli([*ASSIGN, "--out", out]), str(out), "No space left on device")
    assert out.read_text() == "old plan"
    assert hidden(tmp_path) == []


def test_a_read_only_directory_is_exit_2_before_the_work(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    real_open = os.open

    def read_only(path: str | Path, flags: int, *args: int, **kw: object) -> int:
        if Path(path).parent == ro and flags & os.O_CREAT:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", read_only)
    r = cli(["validate", EXAMPLES / "placement", "-o", ro / "report.txt"])
    usage_error(r, str(ro / "report.txt"), "Read-only file system")
    assert list(ro.iterdir()) == []


# -- temporary files of killed runs ----------------------------------------------------


def test_leftovers_of_a_killed_run_are_removed_and_nothing_else(cli: Cli, tmp_path: Path) -> None:
    dead, alive = dead_pid(), os.getppid()
    out = tmp_path / "plan.json"
    stale = tmp_path / f".plan.json.mrc-plan-{dead}.tmp"
    stale_old = tmp_path / f".plan.json.mrc-plan-{dead}.old"
    running = tmp_path / f".plan.json.mrc-plan-{alive}.tmp"
    other_target = tmp_path / f".other.json.mrc-plan-{dead}.tmp"
    not_ours = tmp_path / ".plan.json.a1b2c3.tmp"
    out.write_text("previous plan")
    for p in (stale, stale_old, running, other_target, not_ours):
        p.write_text("x")
    r = cli([*ASSIGN, "--out", out])
    assert r.exit_code == 0, r.output
    assert not stale.exists() and not stale_old.exists()
    assert running.exists() and other_target.exists() and not_ours.exists()
    assert str(stale) in r.stderr
    assert out.read_text() != "previous plan"


def test_a_snapshot_moved_aside_by_a_killed_run_is_put_back(cli: Cli, tmp_path: Path) -> None:
    """Killed between moving the old snapshot aside and renaming the new one in. A run
    that fails after putting it back moves it aside again (it changes nothing), and says
    so; a run that succeeds replaces it."""
    snap = tmp_path / "snap"
    assert cli(synth_args(snap)).exit_code == 0
    aside = tmp_path / f".snap.mrc-plan-{dead_pid()}.old"
    snap.rename(aside)
    bad = tmp_path / "bad-policy.json"
    bad.write_text("not a policy")
    r = cli([*synth_args(snap), "--policy", bad])  # fails, after putting the snapshot back
    usage_error(r, str(bad), f"restored {snap}", "undid the restore")
    assert not snap.exists() and (aside / "_mrc-plan-snapshot.json").is_file()
    r = cli(synth_args(snap))
    assert r.exit_code == 0, r.output
    assert f"restored {snap}" in r.stderr
    assert not aside.exists() and (snap / "_mrc-plan-snapshot.json").is_file()
    assert hidden(tmp_path) == []


def test_an_output_inside_an_input_directory_never_replaces_what_is_read(
    cli: Cli, tmp_path: Path
) -> None:
    """A snapshot is read whole: nothing is written into it. A policy or properties file
    inside a directory that is read is an input too. Other outputs there are fine."""
    snap = tmp_path / "snap"
    assert cli(synth_args(snap)).exit_code == 0
    table = snap / "brokers.parquet"
    before = table.read_bytes()
    usage_error(cli(["snapshot", "export", snap, "--out", table]), "inside the snapshot")
    usage_error(cli(["snapshot", "export", snap, "--out", snap / "new.json"]), "snapshot")
    assert table.read_bytes() == before and not (snap / "new.json").exists()

    policies = tmp_path / "policies"
    policies.mkdir()
    policy = policies / "orders.json"
    policy.write_bytes((EXAMPLES / "placement" / "orders.json").read_bytes())
    text = policy.read_bytes()
    usage_error(cli(["validate", policies, "-o", policy]), "read from the input")
    assert policy.read_bytes() == text
    r = cli(["validate", policies, "--format", "sarif", "-o", policies / "report.sarif"])
    assert r.exit_code == 0, r.output
    assert (policies / "report.sarif").is_file()
