"""Write files atomically: readers see the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

from placement.errors import UsageError


def write_atomic(path: str | Path, data: str | bytes) -> None:
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with open_atomic(path) as fh:
        fh.write(payload)


@contextlib.contextmanager
def open_atomic(path: str | Path) -> Iterator[BinaryIO]:
    """A binary file for writing in pieces (a stream too big to hold in memory): it
    replaces ``path`` complete when the block ends, and nothing changes if the block
    raises."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp creates 0600; give the file the mode a plain open() would
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_dir_atomic(path: str | Path, files: Mapping[str, str], *, marker: str) -> None:
    """Write ``files`` (name -> text) as the directory ``path``, all or nothing.

    The files go to a hidden sibling directory first, then one rename puts it in place. An
    existing ``path`` must be empty or an earlier output of the same kind, recognised by
    its ``marker`` file; that one is replaced whole, so no stale file from a longer run
    stays behind.
    """
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} exists and is not a directory", "choose another --out-dir")
    if target.is_dir() and any(target.iterdir()) and not (target / marker).exists():
        raise UsageError(
            f"{target} is not empty and holds no {marker}: not overwriting it",
            "choose a new or empty directory",
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    old = None
    try:
        for name, text in files.items():
            with open(tmp / name, "wb") as fh:
                fh.write(text.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o777 & ~_umask())
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.parent))
            os.rename(target, old / "d")
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and not target.exists():
            os.rename(old / "d", target)  # put the earlier output back
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
