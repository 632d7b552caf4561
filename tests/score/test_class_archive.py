"""The driver JVM's class-data sharing archive: where it lives, when it is used, and that a
run that was cut short never leaves a half-written archive under the name a later JVM
maps. No JVM is started here; the archive's effect is measured by `bench/`."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
from pathlib import Path

import pytest

from placement.score import session


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$XDG_CACHE_HOME`` is ``tmp_path/cache``; archives chosen here are forgotten after."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(session.CDS_ENV, raising=False)
    monkeypatch.setattr(session, "_PENDING", [])
    monkeypatch.setattr(session, "_DUMPS", {})
    return tmp_path / "cache" / "mrc-plan"


def test_the_archive_lives_in_a_private_cache_dir(cache: Path) -> None:
    path = session._archive_path()
    assert path is not None and path.parent == cache
    assert path.name.startswith("spark-classes-") and path.suffix == ".jsa"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert session._archive_path() == path  # the same Spark, Java and options: the same name


def test_the_archive_can_be_turned_off(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(session.CDS_ENV, "0")
    assert session._archive_path() is None
    assert session._class_archive_options() == ""


def test_other_options_name_another_archive(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = session._archive_path()
    monkeypatch.setattr(session, "JVM_OPTIONS", session.JVM_OPTIONS + " -Xss4m")
    assert session._archive_path() not in (None, first)


def test_a_path_the_options_cannot_carry_means_no_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "my cache"))
    monkeypatch.delenv(session.CDS_ENV, raising=False)
    assert session._archive_path() is None


def test_a_first_run_writes_a_part_and_a_later_run_maps_the_archive(cache: Path) -> None:
    options = session._class_archive_options()
    path = session._archive_path()
    assert path is not None
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    assert f"-XX:ArchiveClassesAtExit={part}" in options
    assert "-XX:+IgnoreUnrecognizedVMOptions" in options  # another JVM starts as before
    assert [(part, path)] == session._PENDING
    path.write_bytes(b"archive")
    path.chmod(0o400)
    assert f"-XX:SharedArchiveFile={path}" in session._class_archive_options()


@pytest.mark.parametrize("how", ["others can write to it", "a link", "empty"])
def test_an_archive_that_is_not_ours_alone_is_not_mapped(
    cache: Path, tmp_path: Path, how: str
) -> None:
    path = session._archive_path()
    assert path is not None
    if how == "a link":
        target = tmp_path / "elsewhere.jsa"
        target.write_bytes(b"archive")
        path.symlink_to(target)
    else:
        path.write_bytes(b"" if how == "empty" else b"archive")
        path.chmod(0o666 if how == "others can write to it" else 0o600)
        os.chmod(path, 0o666 if how == "others can write to it" else 0o600)
    assert "SharedArchiveFile" not in session._class_archive_options()


def _exited(code: int) -> subprocess.Popen[bytes]:
    """A process that has ended the way a JVM would: its own exit code, or a signal."""
    proc = subprocess.Popen(["sh", "-c", f"exit {code}" if code >= 0 else "kill -9 $$"])
    proc.wait()
    return proc


@pytest.mark.parametrize(
    ("code", "kept"),
    [(0, True), (128 + signal.SIGTERM, True), (-signal.SIGKILL, False), (1, False)],
)
def test_only_an_archive_written_to_the_end_gets_its_name(
    cache: Path, code: int, kept: bool
) -> None:
    path = session._archive_path()
    assert path is not None
    part = path.with_name(f"{path.name}.123.part")
    part.write_bytes(b"archive")
    proc = _exited(code)
    session._DUMPS[proc.pid] = (part, path)
    session._archive_written(proc)
    assert not part.exists()
    assert path.exists() is kept
    if kept:
        assert stat.S_IMODE(path.stat().st_mode) == 0o400
    assert proc.pid not in session._DUMPS


def test_a_part_left_by_a_killed_run_is_removed_later(cache: Path) -> None:
    path = session._archive_path()
    assert path is not None
    # both writers still run (the first process, and this one's parent): only age tells
    stale, fresh = (path.with_name(f"{path.name}.{pid}.part") for pid in (1, os.getppid()))
    for p in (stale, fresh):
        p.write_bytes(b"half")
    day_ago = stale.stat().st_mtime - 2 * session._STALE_PART
    os.utime(stale, (day_ago, day_ago))
    session._class_archive_options()
    assert not stale.exists() and fresh.exists()  # another run may still be writing that one


def test_a_part_whose_writer_has_ended_is_removed_at_once(cache: Path) -> None:
    path = session._archive_path()
    assert path is not None
    ended = subprocess.Popen(["true"])
    ended.wait()
    orphan = path.with_name(f"{path.name}.{ended.pid}.part")
    orphan.write_bytes(b"half of 180 MB")
    session._class_archive_options()
    assert not orphan.exists()


def test_archives_unused_for_a_month_are_removed(cache: Path) -> None:
    path = session._archive_path()
    assert path is not None
    old, recent = cache / "spark-classes-0000000000000000.jsa", cache / "spark-classes-1.jsa"
    for p in (old, recent, path):
        p.write_bytes(b"archive")
        p.chmod(0o400)
    long_ago = old.stat().st_mtime - 2 * session._UNUSED_ARCHIVE
    for p in (old, path):
        os.utime(p, (long_ago, long_ago))
    assert "SharedArchiveFile" in session._class_archive_options()
    assert not old.exists() and recent.exists()
    assert path.exists() and path.stat().st_mtime > long_ago  # the one in use is kept


def test_another_installation_of_spark_names_another_archive(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another venv's Spark has the same jars elsewhere: the JVM would refuse the archive
    (its class path differs), so that Spark gets one of its own."""
    import pyspark

    first = session._archive_path()
    other = tmp_path / "venv" / "pyspark"
    (other / "jars").mkdir(parents=True)
    for name in os.listdir(Path(pyspark.__file__).parent / "jars"):
        (other / "jars" / name).touch()
    monkeypatch.setattr(pyspark, "__file__", str(other / "__init__.py"))
    assert session._archive_path() not in (None, first)


def test_executors_on_this_machine_map_a_finished_archive_and_never_write_one(
    cache: Path,
) -> None:
    path = session._archive_path()
    assert path is not None
    assert session._executor_archive_options() == ""  # none yet: no dump from an executor
    assert session._PENDING == []
    path.write_bytes(b"archive")
    path.chmod(0o600)
    options = session._executor_archive_options()
    assert f"-XX:SharedArchiveFile={path}" in options
    assert "-XX:+IgnoreUnrecognizedVMOptions" in options and "ArchiveClassesAtExit" not in options
    path.chmod(0o666)  # not ours alone: not mapped
    assert session._executor_archive_options() == ""


@pytest.mark.parametrize(
    ("master", "mapped"),
    [("spark://127.0.0.1:7077", True), ("spark://spark.example.com:7077", False)],
)
def test_only_executors_on_the_loopback_interface_are_given_the_archive(
    cache: Path, monkeypatch: pytest.MonkeyPatch, master: str, mapped: bool
) -> None:
    """The options `build_session` hands Spark (the session itself is not started)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    path = session._archive_path()
    assert path is not None
    path.write_bytes(b"archive")
    path.chmod(0o400)
    seen: dict[str, str] = {}

    class StopError(Exception):
        pass

    def config(self: object, key: str, value: str) -> object:
        seen[key] = value
        return self

    def get_or_create(self: object) -> object:
        raise StopError

    monkeypatch.setattr(SparkContext, "_gateway", object())  # a JVM is up: none launched
    monkeypatch.setattr(SparkSession.Builder, "config", config)
    monkeypatch.setattr(SparkSession.Builder, "getOrCreate", get_or_create)
    monkeypatch.setattr(session, "cluster_secret", lambda master: None)
    with pytest.raises(session.UsageError):
        session.build_session(master)
    executor = seen["spark.executor.extraJavaOptions"]
    assert executor.startswith(session.JVM_OPTIONS)
    assert (f"-XX:SharedArchiveFile={path}" in executor) is mapped


def test_at_most_two_other_installations_keep_their_archive(cache: Path) -> None:
    """Each installation of Spark or Java (each virtualenv) writes an archive of 150-180 MB;
    besides the one in use, only the two used most recently stay."""
    path = session._archive_path()
    assert path is not None
    others = [cache / f"spark-classes-{i:016d}.jsa" for i in range(5)]
    for age, p in enumerate(others):  # others[0] used last
        p.write_bytes(b"archive")
        p.chmod(0o400)
        when = p.stat().st_mtime - 3600 * (age + 1)
        os.utime(p, (when, when))
    path.write_bytes(b"archive")
    path.chmod(0o400)
    assert "SharedArchiveFile" in session._class_archive_options()
    assert [p.exists() for p in others] == [True, True, False, False, False]
    assert path.exists()
