"""`mrc-plan cache show` and `cache clear`: mrc-plan's own files in $XDG_CACHE_HOME/mrc-plan
(Spark class-data archives, the snapshot check cache), and nothing else there."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

Cli = Callable[..., Result]

ARCHIVE = "spark-classes-0123456789abcdef.jsa"
OTHER_ARCHIVE = "spark-classes-fedcba9876543210.jsa"
ENTRY = "ab" * 32 + ".json"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$XDG_CACHE_HOME`` is ``tmp_path/xdg``; returns mrc-plan's directory in it (not made)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "mrc-plan"


def _plant(cache: Path) -> dict[str, int]:
    """Two archives, an unfinished one (its process long gone) and two checked entries,
    as mrc-plan writes them; their sizes by name."""
    (cache / "checked").mkdir(mode=0o700, parents=True)
    files = {
        ARCHIVE: 3000,
        OTHER_ARCHIVE: 5000,
        f"{ARCHIVE}.4194305.part": 700,  # above any pid_max: not running
        f"checked/{ENTRY}": 31,
        f"checked/{'cd' * 32}.json": 29,
    }
    for name, size in files.items():
        (cache / name).write_bytes(b"x" * size)
    return files


def _plant_foreign(cache: Path, tmp_path: Path) -> list[Path]:
    """Files that are not mrc-plan's: a stranger's file, one named almost like an archive,
    and links named like ours whose targets lie outside; returns the paths that must stay."""
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "precious.jsa"
    target.write_bytes(b"keep me")
    (outside / ENTRY).write_bytes(b"keep me too")
    (cache / "notes.txt").write_text("mine, not mrc-plan's\n")
    (cache / "spark-classes-short.jsa").write_bytes(b"not ours: not a 16-digit key")
    (cache / "spark-classes-aaaaaaaaaaaaaaaa.jsa").symlink_to(target)
    (cache / "checked" / "readme").write_text("someone else's\n")
    (cache / "checked" / ("ef" * 32 + ".json")).symlink_to(outside / ENTRY)
    return [
        target,
        outside / ENTRY,
        cache / "notes.txt",
        cache / "spark-classes-short.jsa",
        cache / "spark-classes-aaaaaaaaaaaaaaaa.jsa",
        cache / "checked" / "readme",
        cache / "checked" / ("ef" * 32 + ".json"),
    ]


def test_show_lists_archives_and_checked_entries_with_sizes(cli: Cli, cache: Path) -> None:
    files = _plant(cache)
    r = cli(["cache", "show", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["directory"] == str(cache)
    assert {f["name"]: f["bytes"] for f in doc["files"]} == files
    assert doc["total_bytes"] == sum(files.values()) == 8760
    kinds = {f["name"]: f["kind"] for f in doc["files"]}
    assert kinds[ARCHIVE] == "Spark class-data archive"
    assert kinds[f"{ARCHIVE}.4194305.part"] == "unfinished Spark class-data archive"
    assert kinds[f"checked/{ENTRY}"] == "check cache entry"

    text = cli(["cache", "show"])
    assert text.exit_code == 0, text.output
    assert f"2.9 KiB  {ARCHIVE} (Spark class-data archive)" in text.stdout
    assert f"4.9 KiB  {OTHER_ARCHIVE}" in text.stdout
    assert "60 B  checked/: 2 check cache entries" in text.stdout
    assert "8.6 KiB  in all (5 files)" in text.stdout


def test_show_lists_nothing_that_is_not_mrc_plans(cli: Cli, cache: Path, tmp_path: Path) -> None:
    files = _plant(cache)
    _plant_foreign(cache, tmp_path)
    doc = json.loads(cli(["cache", "show", "--format", "json"]).stdout)
    assert {f["name"] for f in doc["files"]} == set(files)


def test_clear_removes_only_mrc_plans_files(cli: Cli, cache: Path, tmp_path: Path) -> None:
    files = _plant(cache)
    kept = _plant_foreign(cache, tmp_path)
    r = cli(["cache", "clear"])
    assert r.exit_code == 0, r.output
    assert "freed 8.6 KiB" in r.stdout
    assert "2 Spark class-data archives" in r.stdout and "2 check cache entries" in r.stdout
    for name in files:
        assert not (cache / name).exists(), name
    for path in kept:
        assert path.is_symlink() or path.exists(), path
    assert (tmp_path / "outside" / "precious.jsa").read_bytes() == b"keep me"
    assert (cache / "checked").is_dir()  # someone else's files are still in it
    after = json.loads(cli(["cache", "show", "--format", "json"]).stdout)
    assert after["files"] == [] and after["total_bytes"] == 0


def test_clear_removes_the_emptied_check_cache_directory(cli: Cli, cache: Path) -> None:
    _plant(cache)
    assert cli(["cache", "clear"]).exit_code == 0
    assert sorted(os.listdir(cache)) == []


def test_a_cache_directory_that_is_a_link_is_not_followed(
    cli: Cli, cache: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    _plant(elsewhere)
    cache.parent.mkdir()
    cache.symlink_to(elsewhere)
    for args in (["cache", "show"], ["cache", "clear"]):
        r = cli(args)
        assert r.exit_code == 2, r.output
        assert "symbolic link" in r.stderr
    assert (elsewhere / ARCHIVE).stat().st_size == 3000


def test_a_checked_directory_that_is_a_link_is_not_entered(
    cli: Cli, cache: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / ENTRY).write_bytes(b"{}")
    cache.mkdir(parents=True, mode=0o700)
    (cache / ARCHIVE).write_bytes(b"x")
    (cache / "checked").symlink_to(elsewhere)
    r = cli(["cache", "clear"])
    assert r.exit_code == 0, r.output
    assert "1 Spark class-data archive " in r.stdout
    assert (elsewhere / ENTRY).exists() and (cache / "checked").is_symlink()


@pytest.mark.parametrize("made", [False, True], ids=["missing", "empty"])
def test_an_empty_or_missing_cache_has_nothing_to_clear(cli: Cli, cache: Path, made: bool) -> None:
    if made:
        cache.mkdir(parents=True, mode=0o700)
    r = cli(["cache", "clear"])
    assert r.exit_code == 0, r.output
    assert "nothing to clear" in r.stdout
    shown = cli(["cache", "show", "--format", "json"])
    assert shown.exit_code == 0
    assert json.loads(shown.stdout)["total_bytes"] == 0
    assert cache.exists() == made  # show and clear create nothing


def test_help_lists_the_cache_command(cli: Cli) -> None:
    r = cli(["--help"])
    assert r.exit_code == 0
    assert any(line.split()[:1] == ["cache"] for line in r.stdout.splitlines())


def test_clear_while_a_run_maps_an_archive(cli: Cli, cache: Path) -> None:
    """A JVM maps its archive: removing the name leaves the mapping whole."""
    import mmap

    _plant(cache)
    with open(cache / ARCHIVE, "rb") as fh, mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ) as m:
        r = cli(["cache", "clear"])
        assert r.exit_code == 0, r.output
        assert not (cache / ARCHIVE).exists()
        assert m[:] == b"x" * 3000
