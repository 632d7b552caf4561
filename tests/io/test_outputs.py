"""placement.io.outputs: the checks up front, staging, all-or-nothing commits, stale files,
I/O errors as UsageError, and the temporary files of killed runs."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from placement.errors import UsageError
from placement.io.atomic import open_atomic, write_atomic, write_dir_atomic
from placement.io.outputs import Outputs, temp_name
from placement.io.reassignment import write_election_stream


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def hidden(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def test_input_equal_to_output_by_path_link_or_inode(tmp_path: Path) -> None:
    src = tmp_path / "in.json"
    src.write_text("input")
    (tmp_path / "sym.json").symlink_to(src)
    os.link(src, tmp_path / "hard.json")
    for name in ("in.json", "sym.json", "hard.json", "./in.json"):
        outputs = Outputs.of([("--current", src)])
        with pytest.raises(UsageError, match=r"--out .*input --current") as err:
            outputs.add("--out", tmp_path / name)
        assert str(tmp_path / name) in err.value.message
    assert src.read_text() == "input"


def test_two_outputs_on_one_path_or_inside_an_output_directory(tmp_path: Path) -> None:
    outputs = Outputs.of()
    outputs.add("--out", tmp_path / "p.json")
    with pytest.raises(UsageError, match=r"--rollback .* --out .*two outputs"):
        outputs.add("--rollback", tmp_path / "p.json")
    (tmp_path / "d").mkdir()
    outputs.add_dir("--out-dir", tmp_path / "d", marker="summary.json")
    with pytest.raises(UsageError, match="inside the output directory --out-dir"):
        outputs.add("--election", tmp_path / "d" / "e.json")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("dir", "is a directory"),
        ("missing/p.json", "does not exist"),
        ("file/p.json", "not a directory"),
        ("x" * 256, "too long"),
        ("", "is a directory"),
    ],
)
def test_bad_file_targets_are_usage_errors(tmp_path: Path, name: str, message: str) -> None:
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match=message):
        Outputs.of().add("--out", tmp_path / name)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir", "file"]


def test_a_directory_output_replaces_only_its_own_kind(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "x").write_text("keep")
    with pytest.raises(UsageError, match="not overwriting"):
        write_dir_atomic(foreign, {"summary.json": "{}"}, marker="summary.json")
    a_file = tmp_path / "file"
    a_file.write_text("keep")
    with pytest.raises(UsageError, match="not a directory"):
        write_dir_atomic(a_file, {"summary.json": "{}"}, marker="summary.json")
    recognised = tmp_path / "recognised"
    recognised.mkdir()
    (recognised / "old-layout").write_text("")
    outputs = Outputs.of()
    out = outputs.add_dir("--out", recognised, marker="m", recognise=lambda p: True)
    with outputs:
        out.files({"m": "1"})
        outputs.commit()
    assert [p.name for p in recognised.iterdir()] == ["m"]
    assert (foreign / "x").read_text() == "keep" and a_file.read_text() == "keep"
    assert hidden(tmp_path) == []


def test_a_failed_stream_changes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "e.json"
    target.write_text("old")

    def stream() -> None:
        with open_atomic(target) as fh:
            fh.write(b"half of it")
            raise RuntimeError("the source failed")

    with pytest.raises(RuntimeError):
        stream()
    assert target.read_text() == "old" and hidden(tmp_path) == []


def test_all_or_nothing_when_a_rename_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, stale = tmp_path / "a.json", tmp_path / "b", tmp_path / "stale.json"
    a.write_text("old a")
    b.mkdir()
    (b / "summary.json").write_text("old b")
    stale.write_text("old stale")
    rename = os.rename

    def failing(src: str | Path, dst: str | Path) -> None:
        if Path(dst) == b and str(src).endswith(".tmp"):  # putting the new one in place
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))
        rename(src, dst)

    monkeypatch.setattr(os, "rename", failing)
    outputs = Outputs.of()
    out_a = outputs.add("--out", a)
    out_stale = outputs.add("--rollback", stale)
    out_b = outputs.add_dir("--out-dir", b, marker="summary.json")

    def run() -> None:
        with outputs:
            out_a.write("new a")
            out_stale.nothing()
            out_b.files({"summary.json": "new b"})
            outputs.commit()

    with pytest.raises(UsageError, match=f"--out-dir {b}: cannot put it in place"):
        run()
    assert a.read_text() == "old a" and stale.read_text() == "old stale"
    assert (b / "summary.json").read_text() == "old b"
    assert hidden(tmp_path) == []


def test_outcomes_say_what_happened(tmp_path: Path) -> None:
    (tmp_path / "stale.json").write_text("old")
    outputs = Outputs.of()
    new = outputs.add("--out", tmp_path / "new.json")
    stale = outputs.add("--rollback", tmp_path / "stale.json")
    absent = outputs.add("--election", tmp_path / "absent.json")
    with outputs:
        new.write("x")
        stale.nothing()
        absent.nothing()
        done = outputs.commit()
    assert [o.action for o in done] == ["wrote", "removed", "absent"]
    assert "removed stale" in done[1].message and "nothing to write" in done[2].message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.json"]


def test_an_os_error_naming_a_staged_file_becomes_a_usage_error(tmp_path: Path) -> None:
    outputs = Outputs.of()
    out = outputs.add("--unclean-out", tmp_path / "u.json")

    def run() -> None:
        with outputs:
            staged = out.staged()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(staged))

    with pytest.raises(UsageError, match=r"--unclean-out .*u\.json: .*No space left"):
        run()
    assert hidden(tmp_path) == []


def test_library_writers_fill_a_staged_file(tmp_path: Path) -> None:
    outputs = Outputs.of()
    out = outputs.add("--unclean-out", tmp_path / "u.json")
    with outputs:
        assert write_election_stream(out.staged(), iter([("t", 0)])) == 1
        assert not (tmp_path / "u.json").exists()  # not before the commit
        outputs.commit()
    assert '"topic":"t"' in (tmp_path / "u.json").read_text()
    assert hidden(tmp_path) == []


def test_a_full_disk_while_staging(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "p.json"
    target.write_text("old")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(UsageError, match=r"output .*p\.json: cannot write it: No space left"):
        write_atomic(target, "new")
    assert target.read_text() == "old" and hidden(tmp_path) == []


def test_leftovers_dead_removed_live_kept_and_a_moved_aside_file_put_back(
    tmp_path: Path,
) -> None:
    dead = dead_pid()
    names = {
        "dead": f".p.json.mrc-plan-{dead}.tmp",
        "live": f".p.json.mrc-plan-{os.getppid()}.tmp",
        "other": f".q.json.mrc-plan-{dead}.tmp",
        "foreign": ".p.json.mrc-plan-x.tmp",
    }
    for name in names.values():
        (tmp_path / name).write_text("x")
    (tmp_path / f".p.json.mrc-plan-{dead}.old").write_text("the user's plan")
    link = tmp_path / f".p.json.mrc-plan-{dead + 1}.tmp"
    link.symlink_to(tmp_path / "elsewhere")
    outputs = Outputs.of()
    out = outputs.add("--out", tmp_path / "p.json")
    with outputs:
        # p.json was missing: the killed run had moved it aside; it is back
        assert (tmp_path / "p.json").read_text() == "the user's plan"
        out.write("new")
        outputs.commit()
    assert (tmp_path / "p.json").read_text() == "new"
    left = set(hidden(tmp_path))
    assert names["dead"] not in left
    assert {names["live"], names["other"], names["foreign"], link.name} <= left
    assert any("restored" in n for n in outputs.notes)


def test_temporary_names_fit_and_are_recognised(tmp_path: Path) -> None:
    long = "n" * 255
    tmp = temp_name(long, 4_294_967_295, "tmp")
    assert len(tmp.encode()) <= 255 and tmp.startswith(".n")
    write_atomic(tmp_path / long, "x")
    assert (tmp_path / long).read_text() == "x" and hidden(tmp_path) == []
    dead = dead_pid()
    leftover = tmp_path / temp_name(long, dead, "tmp")
    leftover.write_text("")
    write_atomic(tmp_path / long, "y")
    assert not leftover.exists()


def test_a_removed_current_directory_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    write_dir_atomic(tmp_path / "d", {"m": "1"}, marker="m")
    assert (tmp_path / "d" / "m").read_text() == "1"


def foreign(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``path`` belongs to another user (nobody, as root; else our uid is made another)."""
    if os.geteuid() == 0:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    else:
        uid = os.geteuid()
        monkeypatch.setattr(os, "geteuid", lambda: uid + 1)


@pytest.mark.parametrize("kind", ["tmp", "old"])
def test_another_users_leftover_is_left_alone_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    theirs = tmp_path / f".p.json.mrc-plan-{dead_pid()}.{kind}"
    theirs.write_text("theirs")
    foreign(theirs, monkeypatch)
    outputs = Outputs.of()
    out = outputs.add("--out", tmp_path / "p.json")
    with outputs:
        assert not (tmp_path / "p.json").exists()  # an .old of theirs is not put in place
        out.write("new")
        outputs.commit()
    assert theirs.read_text() == "theirs" and (tmp_path / "p.json").read_text() == "new"
    assert [n for n in outputs.notes if str(theirs) in n and "another user" in n]


def test_a_restore_is_undone_when_the_run_fails(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    old = tmp_path / f".p.json.mrc-plan-{dead_pid()}.old"
    old.write_text("the user's plan")
    outputs = Outputs.of()
    outputs.add("--out", tmp_path / "p.json")

    def run() -> None:
        with outputs:
            assert (tmp_path / "p.json").read_text() == "the user's plan"
            raise RuntimeError("the work failed")

    with pytest.raises(RuntimeError):
        run()
    assert not (tmp_path / "p.json").exists() and old.read_text() == "the user's plan"
    assert hidden(tmp_path) == [old.name]
    assert any("undid the restore" in n for n in outputs.notes)


def test_no_restore_where_others_can_write(tmp_path: Path) -> None:
    for mode in (0o1777, 0o770, 0o757):
        d = tmp_path / f"d{mode:o}"
        d.mkdir()
        d.chmod(mode)
        old = d / f".p.json.mrc-plan-{dead_pid()}.old"
        old.write_text("someone's plan")
        outputs = Outputs.of()
        out = outputs.add("--out", d / "p.json")
        with outputs:
            assert not (d / "p.json").exists()
            out.write("new")
            outputs.commit()
        assert old.read_text() == "someone's plan", oct(mode)
        assert any(str(old) in n and "not put back" in n for n in outputs.notes)


def test_an_output_that_is_a_link_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "summary.json").write_text("theirs")
    (tmp_path / "f.json").symlink_to(victim / "summary.json")
    (tmp_path / "d").symlink_to(victim, target_is_directory=True)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for flag, name, add in (
        ("--out", "f.json", Outputs.add),
        ("--out", "dangling", Outputs.add),
        ("--out-dir", "d", lambda o, f, p: o.add_dir(f, p, marker="summary.json")),
    ):
        with pytest.raises(UsageError, match=f"{flag} .*{name}: is a symbolic link") as err:
            add(Outputs.of(), flag, tmp_path / name)
        assert "remove the link" in err.value.hint
    assert (victim / "summary.json").read_text() == "theirs"
    assert not (tmp_path / "nowhere").exists()


def test_a_staged_output_is_private_until_it_is_in_place(tmp_path: Path) -> None:
    """Under umask 0 a staged file or directory would be writable by anyone while it is
    filled (a planted file would land in the output); it is 0600/0700 until the rename,
    then gets the mode a plain create would have given it."""
    old = os.umask(0)
    try:
        outputs = Outputs()
        f = outputs.add("--out", tmp_path / "plan.json")
        d = outputs.add_dir("--out-dir", tmp_path / "batches", marker="summary.json")
        with outputs:
            f.write("{}")
            d.files({"summary.json": "{}"})
            assert (f.staged().stat().st_mode & 0o777) == 0o600
            assert (d.staged().stat().st_mode & 0o777) == 0o700
            outputs.commit()
    finally:
        os.umask(old)
    assert ((tmp_path / "plan.json").stat().st_mode & 0o777) == 0o666
    assert ((tmp_path / "batches").stat().st_mode & 0o777) == 0o777
