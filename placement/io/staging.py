"""Staging: a table's files copied once into a private directory, so that the bytes the
driver checks are the bytes Spark reads.

Spark reads the partitions table itself, after the driver checked it. Reading the user's
files twice (once to check, once in Spark) lets whoever can write them change them in
between, and lets Spark read files the check never saw (Spark reads `_x=1.parquet`; the
check, as pyarrow, skips it). So each file of the table is opened once, copied in chunks
into a directory only this user can enter (0700, files 0600), hashed while it is copied,
and checked to be unchanged (size, mtime, inode, device) from before the first byte to
after the last. The check, the check cache and Spark then use only the copies, under names
chosen here (`part-00000.parquet`...), never the user's path again.

Where: a fresh directory (`tempfile.mkdtemp`) under ``MRC_PLAN_STAGING_DIR`` when set (a
directory the executors of a cluster on other machines see at the same path; it must be
the user's and not writable by others), else under the user's private runtime directory
(`placement.io.private.runtime_dir`). It is removed when the command ends, however it ends
(`staging_area`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from placement.errors import InputError
from placement.io.private import private_dir, runtime_dir

STAGING_ENV = "MRC_PLAN_STAGING_DIR"
CHUNK_BYTES = 1 << 20  # a copy holds one chunk in memory, never a whole file
_CHANGED_HINT = "something is writing the snapshot: run again once it is complete"


@dataclass(frozen=True)
class Copied:
    """A file copied into the staging directory: the user's file (what messages name),
    the private copy, and the size and SHA-256 of the bytes copied."""

    source: Path
    path: Path
    size: int
    digest: str


def staging_parent() -> Path:
    """The directory staging directories are made in: ``MRC_PLAN_STAGING_DIR`` (made 0700
    if missing; refused, exit 2, if it is a link, not the user's, or writable by others),
    else the private runtime directory."""
    named = os.environ.get(STAGING_ENV)
    return private_dir(Path(named)) if named else runtime_dir()


def is_shared() -> bool:
    """Whether the staging directories are under a directory the user named
    (``MRC_PLAN_STAGING_DIR``): for a Spark cluster on other machines."""
    return bool(os.environ.get(STAGING_ENV))


_PREFIX = "staged-"
_STALE = 24 * 3600.0  # a staging directory this old is left by a run that was killed


@contextlib.contextmanager
def staging_area() -> Iterator[Path]:
    """A fresh private (0700) directory for the copies; removed with all it holds when the
    block ends (success, failure, Ctrl-C, SIGTERM). Those that killed runs left (older
    than a day) are removed first."""
    parent = staging_parent()
    _remove_stale(parent)
    path = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=parent))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _remove_stale(parent: Path) -> None:

    now = time.time()
    with contextlib.suppress(OSError), os.scandir(parent) as entries:
        for e in entries:
            if not e.name.startswith(_PREFIX):
                continue
            with contextlib.suppress(OSError):
                st = e.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode) and now - st.st_mtime > _STALE:
                    shutil.rmtree(e.path, ignore_errors=True)


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


def copy_in(source: Path, target: Path) -> Copied:
    """Copy ``source`` to the new file ``target`` (0600) through one descriptor, in chunks,
    hashing them. Refused, naming ``source``: anything
    but a regular file, a file that cannot be read, and a file whose size, mtime, inode or
    device changed while it was read, or that ended at another size than it had."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below
        fd = os.open(source, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        raise InputError(str(source), f"cannot open the file ({exc.strerror})") from None
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise InputError(
                str(source), "not a regular file", "a snapshot table holds regular files only"
            )
        os.set_blocking(fd, True)
        digest = hashlib.sha256()
        copied = 0
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with open(out, "wb") as sink:
            while True:
                try:
                    chunk = os.read(fd, CHUNK_BYTES)
                except OSError as exc:
                    raise InputError(
                        str(source), f"cannot read the file ({exc.strerror})"
                    ) from None
                if not chunk:
                    break
                digest.update(chunk)
                sink.write(chunk)
                copied += len(chunk)
        after = os.fstat(fd)
    finally:
        os.close(fd)
    if _identity(before) != _identity(after) or copied != before.st_size:
        raise InputError(str(source), "the file changed while it was read", _CHANGED_HINT)
    return Copied(source, target, copied, digest.hexdigest())
