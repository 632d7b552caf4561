"""What mrc-plan keeps in the user's cache directory (`placement.io.private.cache_dir`), and
removing it.

mrc-plan writes there:

- ``spark-classes-KEY.jsa``: the class-data archive of the Spark driver's JVM, one per
  installation of Spark and Java (placement/score/session.py), 150-180 MB each, and
  ``spark-classes-KEY.jsa.PID.part`` while a JVM writes one;
- ``checked/KEY.json``: the check cache of snapshots' partitions tables
  (placement/io/snapshot.py), and ``checked/.KEY.PID.HEX.tmp`` while an entry is written.

Only files named so are listed or removed: anything else in the directory is someone
else's. Nothing is followed: a symbolic link is never removed, listed or entered, and the
directories are opened without following one (a cache directory that is a link is
refused). Removing an archive a running JVM maps is safe: the JVM keeps its mapping, and
the next run writes a new one.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from placement.errors import UsageError

CHECKED = "checked"

# name -> what it is; KEY is hex (16 digits for an archive, 64 for a checked entry). A
# file still being written names the process writing it (PID): "unfinished" once that
# process has ended (killed before it could finish or remove it).
Patterns = tuple[tuple[re.Pattern[str], str], ...]
_TOP: Patterns = (
    (re.compile(r"spark-classes-[0-9a-f]{16}\.jsa"), "Spark class-data archive"),
    (
        re.compile(r"spark-classes-[0-9a-f]{16}\.jsa\.(?P<pid>[0-9]+)\.part"),
        "Spark class-data archive",
    ),
)
_IN_CHECKED: Patterns = (
    (re.compile(r"[0-9a-f]{64}\.json"), "check cache entry"),
    (re.compile(r"\.[0-9a-f]{64}\.(?P<pid>[0-9]+)\.[0-9a-f]+\.tmp"), "check cache entry"),
)
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def cache_path() -> Path:
    """Where `cache_dir` puts the cache, without creating it: ``$XDG_CACHE_HOME/mrc-plan``
    (else ``~/.cache/mrc-plan``)."""
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no HOME, no password entry
            raise UsageError(
                "no home directory to find the cache in", "set XDG_CACHE_HOME"
            ) from None
    return Path(base) / "mrc-plan"


@dataclass(frozen=True)
class CachedFile:
    """One file of mrc-plan's in the cache: its path relative to the cache directory."""

    name: str
    kind: str
    size: int


@dataclass(frozen=True)
class CacheContents:
    directory: Path
    files: tuple[CachedFile, ...]

    @property
    def total(self) -> int:
        return sum(f.size for f in self.files)


@dataclass(frozen=True)
class Cleared:
    """What `clear_cache` removed, and what it could not (name, reason)."""

    directory: Path
    removed: tuple[CachedFile, ...]
    failed: tuple[tuple[str, str], ...]

    @property
    def freed(self) -> int:
        return sum(f.size for f in self.removed)


@contextlib.contextmanager
def _open_dir(name: str | Path, shown: Path, dir_fd: int | None = None) -> Iterator[int | None]:
    """``name`` opened as a directory without following a link; None if it does not
    exist. A link, or anything but a directory of ours: a usage error."""
    try:
        fd = os.open(name, _DIRECTORY, dir_fd=dir_fd)
    except FileNotFoundError:
        fd = -1
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UsageError(
                f"{shown}: is not a directory (a symbolic link or a file); left as it is",
                "mrc-plan's cache is a directory of yours: remove or move this one",
            ) from None
        raise UsageError(f"{shown}: {exc.strerror}") from None
    if fd < 0:
        yield None
        return
    try:
        owner = os.fstat(fd).st_uid
        if owner != os.getuid():
            raise UsageError(f"{shown}: belongs to uid {owner}, not to you; left as it is")
        yield fd
    finally:
        os.close(fd)


def running(pid: int) -> bool:
    """Whether process ``pid`` exists (this user's or another's)."""
    if pid <= 0 or pid > 2**22:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: someone else's
        return True
    return True


def _matching(fd: int, patterns: Patterns, prefix: str) -> list[CachedFile]:
    """The regular files of the directory ``fd`` whose names ``patterns`` recognise."""
    found = []
    with os.scandir(fd) as entries:
        for e in entries:
            match, kind = next(
                ((m, k) for p, k in patterns if (m := p.fullmatch(e.name))), (None, "")
            )
            if match is None:
                continue
            pid = match.groupdict().get("pid")
            if pid is not None:
                kind = f"{kind} being written" if running(int(pid)) else f"unfinished {kind}"
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:  # removed meanwhile
                continue
            if stat.S_ISREG(st.st_mode):
                found.append(CachedFile(prefix + e.name, kind, st.st_size))
    return sorted(found, key=lambda f: f.name)


def _scan(root: int, directory: Path) -> tuple[list[CachedFile], list[CachedFile]]:
    """The files of ``root`` (the cache directory) and of its ``checked/``."""
    top = _matching(root, _TOP, "")
    checked: list[CachedFile] = []
    try:
        with _open_dir(CHECKED, directory / CHECKED, dir_fd=root) as fd:
            if fd is not None:
                checked = _matching(fd, _IN_CHECKED, f"{CHECKED}/")
    except UsageError:  # checked/ that is a link or someone else's: not ours to list
        pass
    return top, checked


def cache_contents(directory: Path | None = None) -> CacheContents:
    """What mrc-plan keeps in ``directory`` (default: `cache_path`), archives first."""
    directory = cache_path() if directory is None else directory
    with _open_dir(directory, directory) as root:
        if root is None:
            return CacheContents(directory, ())
        top, checked = _scan(root, directory)
    return CacheContents(directory, (*top, *checked))


_GONE = "gone"  # removed meanwhile by another run (pruned, a part renamed): not ours to count


def _unlink(name: str, dir_fd: int) -> str | None:
    """Remove ``name`` (never following a link; a file replaced by anything but a
    regular file is left); None once removed, else why not (`_GONE`: it no longer is)."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            return "no longer a regular file"
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return _GONE
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def clear_cache(directory: Path | None = None) -> Cleared:
    """Remove the files `cache_contents` lists (and ``checked/`` once empty); nothing
    else in ``directory``."""
    directory = cache_path() if directory is None else directory
    removed: list[CachedFile] = []
    failed: list[tuple[str, str]] = []

    def remove(files: list[CachedFile], fd: int, prefix: str) -> None:
        for f in files:
            why = _unlink(f.name[len(prefix) :], fd)
            if why is None:
                removed.append(f)
            elif why != _GONE:
                failed.append((f.name, why))

    with _open_dir(directory, directory) as root:
        if root is None:
            return Cleared(directory, (), ())
        remove(_matching(root, _TOP, ""), root, "")
        try:
            with _open_dir(CHECKED, directory / CHECKED, dir_fd=root) as fd:
                if fd is not None:
                    remove(_matching(fd, _IN_CHECKED, f"{CHECKED}/"), fd, f"{CHECKED}/")
        except UsageError:
            pass
        else:
            with contextlib.suppress(OSError):  # not empty (someone else's files), or gone
                os.rmdir(CHECKED, dir_fd=root)
    return Cleared(directory, tuple(removed), tuple(failed))
