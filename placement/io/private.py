"""Files and directories only this user may use: the per-user cache, the JVM's log and
the state of a local Spark cluster. No Spark here: the driver-side checks use the cache
before (or without) a Spark session."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from placement.errors import UsageError
from placement.io.cache import cache_path


def cache_dir() -> Path:
    """`placement.io.cache.cache_path`, made private (0700) if it is not yet there."""

    return private_dir(cache_path())


def private_dir(path: Path) -> Path:
    """``path`` as a directory only this user can enter: created with mode 0700, or, if it
    exists, accepted only when it is a real directory (not a symbolic link) owned by this
    user that no one else can write to. A usage error (exit 2) otherwise, nothing touched."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise UsageError(f"{path}: cannot create the directory ({exc.strerror})") from None
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror}") from None
    hint = "remove it, or choose another directory (it must be yours, mode 0700)"
    if stat.S_ISLNK(st.st_mode):
        raise UsageError(f"{path}: is a symbolic link, not a private directory", hint)
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{path}: exists and is not a directory", hint)
    if st.st_uid != os.getuid():
        raise UsageError(f"{path}: belongs to uid {st.st_uid}, not to you", hint)
    if st.st_mode & 0o022:
        raise UsageError(
            f"{path}: others can write to it (mode {stat.S_IMODE(st.st_mode):04o})", hint
        )
    return path


def open_private(
    path: Path, flags: int = os.O_WRONLY | os.O_CREAT | os.O_TRUNC, *, secret: bool = True
) -> int:
    """Open ``path`` without following a symbolic link (new files get mode 0600); refuse
    (usage error) anything but a regular file of ours that only we can write to and, if
    ``secret``, only we can read."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o600)
    except OSError as exc:
        raise UsageError(f"{path}: cannot open ({exc.strerror})") from None
    st = os.fstat(fd)
    others = 0o077 if secret else 0o022
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & others:
        os.close(fd)
        raise UsageError(
            f"{path}: not a private regular file of yours (mode {'0600' if secret else '0644'})",
            "remove it; mrc-plan writes it again",
        )
    os.set_blocking(fd, True)
    return fd


def read_private(path: Path, *, secret: bool = True) -> str:
    fd = open_private(path, os.O_RDONLY, secret=secret)
    with open(fd, encoding="utf-8") as f:
        try:
            return f.read()
        except UnicodeDecodeError:
            raise UsageError(
                f"{path}: not UTF-8 text", "remove it; mrc-plan writes it again"
            ) from None


def write_private(path: Path, text: str) -> None:
    fd = open_private(path)
    with open(fd, "w", encoding="utf-8") as f:
        f.write(text)


def runtime_dir() -> Path:
    """``$TMPDIR/mrc-plan-UID``: this user's private (0700) directory for what a run keeps
    while it lasts (the JVM's log, the local cluster's state, staged snapshot files)."""
    import tempfile

    return private_dir(Path(tempfile.gettempdir()) / f"mrc-plan-{os.getuid()}")
