"""Local means local, and only the user's: the driver listens on loopback only, the JVM log
and cluster secrets live in a private directory, and planted links are never followed."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _sockets import is_loopback, listening_addresses

from placement.errors import UsageError
from placement.score import session as spark_session

MRC_PLAN = str(Path(sys.executable).parent / "mrc-plan")


@pytest.mark.spark
def test_the_local_driver_listens_on_loopback_only(spark: Any) -> None:
    proc = spark.sparkContext._gateway.proc
    assert proc is not None, "the test session's JVM was not started by build_session"
    addresses = listening_addresses(proc.pid)
    assert addresses, "the JVM listens on nothing: the check is not looking at it"
    assert all(is_loopback(a) for a in addresses), addresses


@pytest.mark.spark
def test_a_local_session_authenticates(spark: Any) -> None:
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.authenticate") == "true"
    assert conf.get("spark.driver.bindAddress") == "127.0.0.1"


def test_loopback_masters() -> None:
    assert spark_session.is_local("local[2]") and spark_session.is_local("local")
    assert not spark_session.is_local("localhost")
    assert spark_session.on_loopback("spark://127.0.0.1:7077")
    assert spark_session.on_loopback("spark://localhost:7077")
    assert not spark_session.on_loopback("spark://10.0.0.1:7077")
    assert not spark_session.on_loopback("spark://127.0.0.1:7077,10.0.0.1:7077")


@pytest.fixture
def tmpdir_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$TMPDIR is ``tmp_path/tmp`` for this process and the commands it runs."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    return tmp


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim"
    path.write_text("precious\n")
    return path


def test_the_runtime_dir_is_private(tmpdir_is: Path) -> None:
    made = spark_session.runtime_dir()
    assert made == tmpdir_is / f"mrc-plan-{os.getuid()}"
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    log = spark_session.open_private(spark_session.jvm_log())
    os.close(log)
    assert stat.S_IMODE(spark_session.jvm_log().stat().st_mode) == 0o600


def planted(tmp: Path, victim: Path, how: str) -> None:
    runtime = tmp / f"mrc-plan-{os.getuid()}"
    old_log = tmp / f"mrc-plan-spark-{os.getuid()}.log"  # where the log used to go
    old_log.symlink_to(victim)
    if how == "the directory is a link":
        elsewhere = tmp / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        (elsewhere / "spark.log").symlink_to(victim)
        runtime.symlink_to(elsewhere)
    elif how == "others can write to the directory":
        runtime.mkdir()
        os.chmod(runtime, 0o777)
        (runtime / "spark.log").symlink_to(victim)
    elif how == "the log is a link":
        runtime.mkdir(mode=0o700)
        (runtime / "spark.log").symlink_to(victim)
    elif how == "the directory belongs to someone else":
        runtime.mkdir(mode=0o777)
        (runtime / "spark.log").symlink_to(victim)
        os.chown(runtime, 65534, 65534)


HOW = [
    "the directory is a link",
    "others can write to the directory",
    "the log is a link",
    "the directory belongs to someone else",
]


@pytest.mark.parametrize("how", HOW)
def test_a_planted_jvm_log_is_refused(tmpdir_is: Path, victim: Path, how: str) -> None:
    if how == "the directory belongs to someone else" and os.getuid() != 0:
        pytest.skip("only root can give a directory to another user")
    planted(tmpdir_is, victim, how)
    with pytest.raises(UsageError):
        os.close(spark_session.open_private(spark_session.jvm_log()))
    assert victim.read_text() == "precious\n"


@pytest.mark.slow
def test_score_refuses_a_planted_log_before_starting_spark(
    tmpdir_is: Path, victim: Path, tmp_path: Path, process: Callable[..., Any]
) -> None:
    """The command as a user runs it: exit 2 naming the path, the file it points to intact.
    (Before: the JVM's stderr was opened through the link, with O_TRUNC.)"""
    planted(tmpdir_is, victim, "the directory is a link")
    snap = tmp_path / "snap"
    synth = process(
        [MRC_PLAN, "snapshot", "synth", "--brokers", "3", "--racks", "3", "--topics", "1",
         "--partitions-per-topic", "3", "--out", str(snap)],
    )  # fmt: skip
    assert synth.returncode == 0, synth.stderr
    result = subprocess.run(
        [MRC_PLAN, "score", "--snapshot", str(snap), "--master", "local[1]"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"mrc-plan-{os.getuid()}" in result.stderr
    assert victim.read_text() == "precious\n"


def test_a_secret_file_must_be_private(
    tmp_path: Path, victim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "secret"
    secret.write_text("s3cr3t\n")
    os.chmod(secret, 0o600)
    monkeypatch.setenv(spark_session.SECRET_FILE_ENV, str(secret))
    assert spark_session.cluster_secret("spark://127.0.0.1:7077") == "s3cr3t"
    os.chmod(secret, 0o644)  # others could read it: not a secret any more
    with pytest.raises(UsageError, match="secret"):
        spark_session.cluster_secret("spark://127.0.0.1:7077")
    link = tmp_path / "link"
    link.symlink_to(victim)
    os.chmod(victim, 0o600)
    monkeypatch.setenv(spark_session.SECRET_FILE_ENV, str(link))
    with pytest.raises(UsageError, match="link"):
        spark_session.cluster_secret("spark://127.0.0.1:7077")


def test_a_secret_file_that_is_not_text_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"\xffs3cr3t\n")  # was a UnicodeDecodeError: exit 101
    os.chmod(secret, 0o600)
    monkeypatch.setenv(spark_session.SECRET_FILE_ENV, str(secret))
    with pytest.raises(UsageError, match="UTF-8") as err:
        spark_session.cluster_secret("spark://127.0.0.1:7077")
    assert str(secret) in err.value.message


def test_no_secret_is_looked_up_for_a_remote_master(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(spark_session.SECRET_FILE_ENV, raising=False)
    assert spark_session.cluster_secret("spark://10.0.0.1:7077") is None
