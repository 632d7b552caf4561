"""Every file a command writes goes through here, so that what the user had is never
destroyed and nothing stale is left behind.

A command names its inputs, then registers each output path the user gave
(:meth:`Outputs.add` for a file, :meth:`Outputs.add_dir` for a directory). Before any
work, the paths are checked: an output that is an input (same resolved path or same
inode), two outputs on one path, a directory where a file goes, a missing parent, a name
too long, a directory that is not ours to replace: each a :class:`UsageError` naming the
flag, the path and the reason. An output path that is a symbolic link is refused too:
nothing is ever written, replaced or removed through a link (a link committed in a pull
request must not aim the output at a file elsewhere); the directories above it may be
links. Entering the ``with`` block cleans up what killed runs left next to each target and
creates this run's temporary files (so an unwritable directory fails before the work,
too). Content is staged into those temporary files; then
:meth:`Outputs.commit` puts everything in place together: every output path holds this
run's result, or, on any failure, every path is as it was before. An output the run has
nothing for loses the file at its path (an old plan must not be run by a script that
expected a new one). Each I/O failure is a :class:`UsageError` naming the path.

Temporary files are named ``.NAME.mrc-plan-PID.tmp`` (``.old``: the previous content,
kept until every rename succeeded). The next run writing ``NAME`` looks at those whose
process is gone, and only those: it removes the ones this user owns, leaves anyone
else's alone, and puts an ``.old`` of ours back at a missing ``NAME`` only in a
directory nobody else can write to (:func:`_only_ours`; never in /tmp); a run that then
fails moves it back to where it was. What it did or left alone is said in
:attr:`Outputs.notes`; the notes no command read are :func:`unread_notes`, which the CLI
prints whatever way a command ends.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Literal, Protocol

from placement.errors import UsageError

TAG = "mrc-plan"
PID_DIGITS = 10  # room kept in a temporary name for any pid
PATH_MAX = 4096
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

# the marker every snapshot carries (placement.io.snapshot writes it)
SNAPSHOT_MARKER = "_mrc-plan-snapshot.json"
# what readers pick up from a directory input: validate (*.json, *.properties), a
# directory inventory (*.properties)
READ_FROM_DIRECTORIES = frozenset({".json", ".properties"})

Kind = Literal["file", "dir"]
Action = Literal["wrote", "removed", "absent"]


class Writable(Protocol):
    def write(self, data: bytes, /) -> int: ...


@dataclass(frozen=True)
class Outcome:
    """What happened at one output path: ``wrote``, ``removed`` (a stale file: nothing to
    write this run) or ``absent`` (nothing to write, and no file there)."""

    flag: str
    path: Path
    action: Action

    @property
    def message(self) -> str:
        if self.action == "wrote":
            return f"wrote {self.path}"
        if self.action == "removed":
            return f"removed stale {self.path}: nothing to write this run"
        return f"{self.path}: nothing to write this run, no file left there (not written)"


def _name_max(directory: Path) -> int:
    try:
        return int(os.pathconf(directory, "PC_NAME_MAX"))
    except (OSError, ValueError):
        return 255


def _stem(name: str, name_max: int = 255) -> str:
    """The fixed part of the temporary names of target ``name``: ``.NAME``, or a shortened
    name and a digest when the whole would not fit in a file name."""
    room = name_max - len(f".{TAG}-.tmp") - PID_DIGITS
    stem = f".{name}"
    if len(os.fsencode(stem)) <= room:
        return stem
    digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:16]
    keep = os.fsencode(name)[: room - len(digest) - 2]
    return f".{keep.decode('utf-8', 'ignore')}~{digest}"


def temp_name(name: str, pid: int, kind: Literal["tmp", "old"], name_max: int = 255) -> str:
    return f"{_stem(name, name_max)}.{TAG}-{pid}.{kind}"


def _leftover_pattern(name: str, name_max: int) -> re.Pattern[str]:
    return re.compile(re.escape(_stem(name, name_max)) + rf"\.{TAG}-([0-9]+)\.(tmp|old)")


def _umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def _alive(pid: int) -> bool:
    if pid <= 0:
        return True  # not a pid we could have written: leave it alone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # e.g. EPERM: it exists, as another user's process
    return True


def _only_ours(directory: Path) -> bool:
    """Nobody but this user (and root) can add, rename or remove entries in ``directory``:
    it is owned by us or by root and neither its group nor others may write to it. A
    sticky world-writable directory such as /tmp is not: anyone can create a file there
    under any name, and a file we own there may be a hard link someone else made."""
    try:
        st = os.stat(directory)
    except OSError:
        return False
    shared = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return st.st_uid in (os.geteuid(), 0) and not shared


def _remove(path: Path) -> None:
    """Remove a file or a real directory (never follows a link)."""
    st = os.lstat(path)
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


def _is_link(path: Path) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


class _Writer:
    """A staged file open for writing: a failed write names the file (and so the output)."""

    def __init__(self, path: Path, *, create: bool = False) -> None:
        self.path = path
        flags = os.O_WRONLY | os.O_TRUNC | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        if create:
            flags |= os.O_CREAT | os.O_EXCL
        fd = os.open(path, flags, 0o666)
        try:
            self._fh = os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            raise

    def write(self, data: bytes, /) -> int:
        try:
            return self._fh.write(data)
        except OSError as exc:
            raise OSError(exc.errno, _reason(exc), str(self.path)) from exc

    def close(self) -> None:
        try:
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except OSError as exc:
            raise OSError(exc.errno, _reason(exc), str(self.path)) from exc
        finally:
            with contextlib.suppress(OSError):
                self._fh.close()


# the Outputs of this process with notes no command has read (see unread_notes)
_UNREAD: list[Outputs] = []

# staged paths of the Outputs now open in this process: `open_atomic` writes into them
# directly (a library function handed a staged path by the command that owns it)
_STAGED: dict[Path, Output] = {}


@dataclass(eq=False)
class Output:
    """One output path of a command. Stage its content with :meth:`write`, :meth:`open`,
    :meth:`files` or :meth:`staged`; or say :meth:`nothing` is to be written."""

    flag: str
    given: Path  # as the user wrote it: the name in every message
    target: Path  # absolute, links resolved: where the result goes
    kind: Kind
    marker: str | None = None
    recognise: Callable[[Path], bool] | None = None
    tmp: Path | None = None
    state: Literal["pending", "written", "nothing"] = "pending"

    def _tmp(self) -> Path:
        if self.tmp is None:
            raise RuntimeError(f"{self.flag}: stage outputs inside `with outputs:`")
        return self.tmp

    def error(self, exc: OSError, doing: str = "cannot write it") -> UsageError:
        return UsageError(
            f"{self.flag} {self.given}: {doing}: {_reason(exc)}",
            "check the directory exists, is writable and has space; nothing was changed",
        )

    def write(self, data: str | bytes) -> None:
        """The whole content of a file output."""
        payload = data.encode("utf-8") if isinstance(data, str) else data
        with self.open() as fh:
            fh.write(payload)

    @contextlib.contextmanager
    def open(self) -> Iterator[Writable]:
        """Write a file output in pieces (a stream too big to hold)."""
        if self.kind != "file":
            raise TypeError(f"{self.flag} is a directory output")
        with self._writing(self._tmp()) as writer:
            yield writer
        self.state = "written"

    @contextlib.contextmanager
    def _writing(self, path: Path, *, create: bool = False) -> Iterator[Writable]:
        """``path`` (staged) open for writing; opening or closing it fails as this output."""
        try:
            writer = _Writer(path, create=create)
        except OSError as exc:
            raise self.error(exc) from None
        try:
            yield writer
        finally:
            try:
                writer.close()
            except OSError as exc:
                raise self.error(exc) from None

    def files(self, contents: Mapping[str, str | bytes]) -> None:
        """The files of a directory output (name -> content)."""
        if self.kind != "dir":
            raise TypeError(f"{self.flag} is a file output")
        tmp = self._tmp()
        for name, data in contents.items():
            if Path(name).name != name or name in (".", ".."):
                raise ValueError(f"not a plain file name: {name!r}")
            try:
                with self._writing(tmp / name, create=True) as writer:
                    writer.write(data.encode("utf-8") if isinstance(data, str) else data)
            except OSError as exc:
                raise self.error(exc) from None
        self.state = "written"

    def staged(self) -> Path:
        """The temporary file or directory to fill by other means; what is there when
        the outputs are committed is the result (call :meth:`nothing` to write none).
        An OSError naming a path under it becomes this output's error."""
        self.state = "written"
        return self._tmp()

    def nothing(self) -> None:
        """This run has nothing for this path: a stale file there is removed at commit."""
        self.state = "nothing"

    def owns(self, filename: object) -> bool:
        if self.tmp is None or not isinstance(filename, str | bytes | os.PathLike):
            return False
        try:
            p = Path(os.fsdecode(filename)).absolute()
        except (TypeError, ValueError):
            return False
        return p == self.tmp or self.tmp in p.parents


@dataclass(frozen=True)
class _Restored:
    """A backup of a killed run put back at its target: moved back if this run fails."""

    out: Output
    leftover: Path
    dev: int
    ino: int


@dataclass
class _Step:
    out: Output
    backup: Path | None = None
    linked: bool = False  # the backup is a hard link: the target is still in place
    placed: bool = False


@dataclass
class Outputs:
    """The outputs of one command run; see the module docstring."""

    inputs: list[tuple[str, Path]] = field(default_factory=list)
    outputs: list[Output] = field(default_factory=list)
    _notes: list[str] = field(default_factory=list)
    _read: int = 0  # how many of the notes a command has read
    _restored: list[_Restored] = field(default_factory=list)
    _entered: bool = False
    _done: bool = False

    @property
    def notes(self) -> list[str]:
        """What was done with the leftovers of killed runs (removed, put back, moved back
        after a failure) or why one was left alone, for the command to print. Reading
        them hands them over: the ones no command read are :func:`unread_notes`."""
        self._read = len(self._notes)
        return list(self._notes)

    def _note(self, text: str) -> None:
        self._notes.append(text)
        if not any(o is self for o in _UNREAD):
            _UNREAD.append(self)

    def _unread(self) -> list[str]:
        notes = self._notes[self._read :]
        self._read = len(self._notes)
        return notes

    @classmethod
    def of(cls, inputs: Iterable[tuple[str, str | Path | None]] = ()) -> Outputs:
        """``inputs``: (flag, path) of every file or directory the command reads."""
        return cls([(flag, Path(p)) for flag, p in inputs if p is not None])

    # -- registration and the checks up front -----------------------------------------

    def add(self, flag: str, path: str | Path) -> Output:
        """A file output: replaced whole (or removed when this run has nothing for it)."""
        return self._add(flag, Path(path), "file", None, None)

    def add_dir(
        self,
        flag: str,
        path: str | Path,
        *,
        marker: str,
        recognise: Callable[[Path], bool] | None = None,
    ) -> Output:
        """A directory output, replaced whole. An existing directory there must be empty,
        hold ``marker`` (an earlier output of the same kind) or pass ``recognise``."""
        return self._add(flag, Path(path), "dir", marker, recognise)

    def _add(
        self,
        flag: str,
        given: Path,
        kind: Kind,
        marker: str | None,
        recognise: Callable[[Path], bool] | None,
    ) -> Output:
        if self._entered:
            raise RuntimeError("add every output before `with outputs:`")

        def refuse(reason: str, hint: str = "") -> UsageError:
            return UsageError(f"{flag} {given}: {reason}", hint)

        try:
            target = Path(os.path.realpath(given))
        except OSError as exc:  # e.g. a symbolic link loop
            raise refuse(_reason(exc)) from None
        if _is_link(given):
            # a link to an input is named as that input; any other is refused as a link
            probe = Output(flag, given, target, kind)
            for in_flag, in_path in self.inputs:
                self._check_input(probe, in_flag, in_path, None, refuse)
            raise refuse(
                "is a symbolic link: mrc-plan does not write, replace or remove an output "
                "through a link",
                "remove the link, or name its target as the output",
            )
        parent = target.parent
        name = target.name
        if len(os.fsencode(str(target))) >= PATH_MAX:
            raise refuse(os.strerror(errno.ENAMETOOLONG), "use a shorter path")
        try:
            pst = os.stat(parent)
        except FileNotFoundError:
            raise refuse(f"its directory {parent} does not exist", "create it first") from None
        except NotADirectoryError:
            raise refuse(f"{parent} is not a directory") from None
        except OSError as exc:
            raise refuse(f"cannot use its directory {parent}: {_reason(exc)}") from None
        if not stat.S_ISDIR(pst.st_mode):
            raise refuse(f"{parent} is not a directory")
        if name == "":
            raise refuse("is the root directory")
        limit = _name_max(parent)
        if len(os.fsencode(name)) > limit:
            raise refuse(
                f"{os.strerror(errno.ENAMETOOLONG)} ({len(os.fsencode(name))} bytes, "
                f"the limit is {limit})",
                "use a shorter file name",
            )
        out = Output(flag, given, target, kind, marker, recognise)
        try:
            st: os.stat_result | None = os.lstat(target)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise refuse(_reason(exc)) from None
        if st is not None and kind == "file":
            if stat.S_ISDIR(st.st_mode):
                raise refuse("is a directory", "name a file in it")
            if not stat.S_ISREG(st.st_mode):
                raise refuse("is not a regular file (a device, a pipe or a socket)")
        for in_flag, in_path in self.inputs:
            self._check_input(out, in_flag, in_path, st, refuse)
        for other in self.outputs:
            self._check_pair(out, other, st, refuse)
        if kind == "dir":
            self._check_dir(out, st, refuse)
        self.outputs.append(out)
        return out

    def _check_dir(
        self, out: Output, st: os.stat_result | None, refuse: Callable[..., UsageError]
    ) -> None:
        target = out.target
        try:
            cwd = Path.cwd().resolve()
        except OSError:  # the current directory was removed: there is none to hold
            cwd = None
        if cwd is not None and (target == cwd or target in cwd.parents):
            raise refuse(
                "is the current directory or holds it: not overwriting it",
                "name a new or empty directory",
            )
        if st is None:
            return
        if not stat.S_ISDIR(st.st_mode):
            raise refuse("exists and is not a directory: not overwriting it", "choose another path")
        try:
            entries = os.listdir(target)
        except OSError as exc:
            raise refuse(_reason(exc)) from None
        ours = (
            not entries
            or (out.marker is not None and out.marker in entries)
            or (out.recognise is not None and out.recognise(target))
        )
        if not ours:
            what = f"holds no {out.marker}" if out.marker else "was not written by mrc-plan"
            raise refuse(
                f"is not empty and {what}: not overwriting it",
                "choose a new or empty directory (only an earlier output of this kind is replaced)",
            )

    @staticmethod
    def _check_input(
        out: Output,
        in_flag: str,
        in_path: Path,
        st: os.stat_result | None,
        refuse: Callable[..., UsageError],
    ) -> None:
        try:
            real = Path(os.path.realpath(in_path))
        except OSError:
            return
        if real == out.target:
            raise refuse(
                f"is also the input {in_flag}: writing it would destroy the input",
                "write to another path",
            )
        if out.kind == "dir" and out.target in real.parents:
            raise refuse(
                f"holds the input {in_flag} {in_path}: replacing it would destroy the input",
                "write to another directory",
            )
        if real in out.target.parents and real.is_dir():
            Outputs._check_inside_input_dir(out, in_flag, in_path, real, st, refuse)
        if st is not None and stat.S_ISREG(st.st_mode):
            try:
                ist = os.stat(in_path)
            except OSError:
                return
            if (ist.st_dev, ist.st_ino) == (st.st_dev, st.st_ino):
                raise refuse(
                    f"is the same file as the input {in_flag} {in_path} (a hard link): "
                    "writing it would destroy the input",
                    "write to another path",
                )

    @staticmethod
    def _check_inside_input_dir(
        out: Output,
        in_flag: str,
        in_path: Path,
        real: Path,
        st: os.stat_result | None,
        refuse: Callable[..., UsageError],
    ) -> None:
        """An output inside a directory the command reads. A snapshot is read whole, so
        nothing may be written into it; elsewhere, an existing file of a kind the readers
        pick up from a directory (policies, properties) is one of this run's inputs."""
        if (real / SNAPSHOT_MARKER).exists() or (real / "partitions").is_dir():
            raise refuse(
                f"is inside the snapshot {in_flag} {in_path}: writing there would change "
                "the snapshot",
                "write outside the snapshot directory",
            )
        if st is not None and out.target.suffix.lower() in READ_FROM_DIRECTORIES:
            raise refuse(
                f"is one of the files read from the input {in_flag} {in_path}: writing it "
                "would destroy an input",
                "write to a path outside that directory, or with another suffix",
            )

    @staticmethod
    def _check_pair(
        out: Output, other: Output, st: os.stat_result | None, refuse: Callable[..., UsageError]
    ) -> None:
        same = other.target == out.target
        if not same and st is not None and stat.S_ISREG(st.st_mode):
            with contextlib.suppress(OSError):
                ost = os.stat(other.target)
                same = (ost.st_dev, ost.st_ino) == (st.st_dev, st.st_ino)
        if same:
            raise refuse(
                f"is also the output {other.flag} {other.given}: two outputs on one path",
                "give each output its own path",
            )
        for a, b in ((out, other), (other, out)):
            if a.kind == "dir" and a.target in b.target.parents:
                raise refuse(
                    f"{b.flag} {b.given} is inside the output directory {a.flag} {a.given}",
                    "give each output its own path",
                )

    # -- staging ------------------------------------------------------------------------

    def __enter__(self) -> Outputs:
        self._entered = True
        try:
            for out in self.outputs:
                self._clean_leftovers(out)
                self._create_tmp(out)
        except BaseException:
            self._abort()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        owner = None
        if isinstance(exc, OSError):
            owner = next(
                (o for o in self.outputs if o.owns(exc.filename) or o.owns(exc.filename2)), None
            )
        if not self._done:
            self._abort()
        if owner is not None and isinstance(exc, OSError):
            raise owner.error(exc) from None

    def _clean_leftovers(self, out: Output) -> None:
        """Remove the temporary files a killed run of this user left for this target (its
        process is gone); a backup (``.old``) whose target is missing is put back instead,
        if no one else can write to the directory. Another user's are left alone."""
        parent, name = out.target.parent, out.target.name
        pattern = _leftover_pattern(name, _name_max(parent))
        try:
            entries = os.listdir(parent)
        except OSError:
            return
        me, uid = os.getpid(), os.geteuid()
        for entry in sorted(entries):
            m = pattern.fullmatch(entry)
            if m is None:
                continue
            pid = int(m.group(1))
            if pid == me or _alive(pid):
                continue
            path = parent / entry
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                continue  # not something we write (a link, a pipe): leave it
            if st.st_uid != uid:
                self._note(
                    f"left {path} alone: named like what an interrupted run leaves, but it "
                    f"belongs to another user (uid {st.st_uid})"
                )
                continue
            with contextlib.suppress(OSError):
                if m.group(2) == "old" and not _exists(out.target):
                    self._restore(out, path, st)
                else:
                    _remove(path)
                    self._note(f"removed {path}, left by an interrupted run")

    def _restore(self, out: Output, leftover: Path, st: os.stat_result) -> None:
        """Put back the content a killed run had moved aside from ``out``'s path."""
        parent = out.target.parent
        if not _only_ours(parent):
            self._note(
                f"left {leftover} alone: {out.given} is missing and this may be its earlier "
                f"content, but others can write to {parent}, so it is not put back (move it "
                "back yourself if it is yours)"
            )
            return
        os.rename(leftover, out.target)
        self._restored.append(_Restored(out, leftover, st.st_dev, st.st_ino))
        self._note(f"restored {out.given} from {leftover.name}, left by an interrupted run")

    def _unrestore(self) -> None:
        """This run failed: what :meth:`_restore` put back goes back where it was."""
        while self._restored:
            r = self._restored.pop()
            try:
                st = os.lstat(r.out.target)
                if (st.st_dev, st.st_ino) != (r.dev, r.ino) or _exists(r.leftover):
                    continue
                os.rename(r.out.target, r.leftover)
            except OSError as exc:
                self._note(
                    f"{r.out.given} stays restored from {r.leftover.name} although this "
                    f"run failed: cannot move it back ({_reason(exc)})"
                )
                continue
            self._note(
                f"undid the restore of {r.out.given}: this run failed, so it is "
                f"{r.leftover.name} again and the path is missing, as the run found it"
            )

    def _create_tmp(self, out: Output) -> None:
        parent = out.target.parent
        tmp = parent / temp_name(out.target.name, os.getpid(), "tmp", _name_max(parent))
        for attempt in (1, 2):
            try:
                if out.kind == "dir":
                    # private while it is written: nobody can plant a file in it or
                    # write to it before it is in place, whatever the umask
                    os.mkdir(tmp, 0o700)
                else:
                    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
                    os.close(os.open(tmp, flags | getattr(os, "O_CLOEXEC", 0), 0o600))
                break
            except FileExistsError:
                if attempt == 2:
                    raise out.error(OSError(errno.EEXIST, os.strerror(errno.EEXIST))) from None
                # the name holds our own pid: an earlier run of this process left it
                with contextlib.suppress(OSError):
                    _remove(tmp)
            except OSError as exc:
                raise out.error(exc) from None
        out.tmp = tmp
        _STAGED[tmp] = out

    def _abort(self) -> None:
        for out in self.outputs:
            with contextlib.suppress(OSError):
                _unstage(out, remove=True)
        self._unrestore()

    # -- commit -------------------------------------------------------------------------

    def commit(self) -> list[Outcome]:
        """Put every output in place, all or nothing; what happened at each path."""
        if not self._entered or self._done:
            raise RuntimeError("commit once, inside `with outputs:`")
        steps: list[_Step] = []
        outcomes: list[Outcome] = []
        current: Output | None = None
        try:
            for out in self.outputs:
                current = out
                step = _Step(out)
                steps.append(step)
                if out.state == "written":
                    self._place(step)
                    outcomes.append(Outcome(out.flag, out.given, "wrote"))
                else:
                    outcomes.append(Outcome(out.flag, out.given, self._clear(step)))
        except BaseException as exc:
            for step in reversed(steps):
                with contextlib.suppress(OSError):
                    self._undo(step)
            self._abort()
            self._done = True
            if isinstance(exc, OSError) and current is not None:
                writing = current.state == "written"
                doing = "cannot put it in place" if writing else "cannot remove the stale file"
                raise current.error(exc, doing) from None
            raise
        self._done = True
        self._restored.clear()  # in place for good: replaced, or removed as stale
        for step in steps:
            if step.backup is not None:
                with contextlib.suppress(OSError):
                    _remove(step.backup)
        for parent in {out.target.parent for out in self.outputs}:
            _fsync_dir(parent)
        return outcomes

    @staticmethod
    def _backup_name(out: Output) -> Path:
        parent = out.target.parent
        backup = parent / temp_name(out.target.name, os.getpid(), "old", _name_max(parent))
        if _exists(backup):
            _remove(backup)  # our own pid: an earlier run of this process left it
        return backup

    def _place(self, step: _Step) -> None:
        out = step.out
        tmp = out._tmp()
        # the mode a plain create would have given it, now that it is complete
        os.chmod(tmp, (0o777 if out.kind == "dir" else 0o666) & ~_umask())
        if out.kind == "file":
            if _exists(out.target):
                step.backup = self._backup_name(out)
                try:
                    os.link(out.target, step.backup, follow_symlinks=False)
                    step.linked = True
                except OSError:  # no hard links here: move it aside instead
                    os.rename(out.target, step.backup)
            os.replace(tmp, out.target)
        else:
            if _exists(out.target):
                step.backup = self._backup_name(out)
                os.rename(out.target, step.backup)
            os.rename(tmp, out.target)
        step.placed = True
        _unstage(out, remove=False)

    def _clear(self, step: _Step) -> Action:
        out = step.out
        _unstage(out, remove=True)
        try:
            st = os.lstat(out.target)
        except FileNotFoundError:
            return "absent"
        if out.kind == "file" and not stat.S_ISREG(st.st_mode):
            return "absent"
        step.backup = self._backup_name(out)
        os.rename(out.target, step.backup)
        return "removed"

    @staticmethod
    def _undo(step: _Step) -> None:
        out = step.out
        if out.kind == "dir" and step.placed:
            aside = out.target.parent / temp_name(
                out.target.name, os.getpid(), "tmp", _name_max(out.target.parent)
            )
            os.rename(out.target, aside)
            shutil.rmtree(aside, ignore_errors=True)
            if step.backup is not None:
                os.rename(step.backup, out.target)
        elif step.placed:
            if step.backup is not None:
                os.replace(step.backup, out.target)
            else:
                os.unlink(out.target)
        elif step.backup is not None:
            if step.linked:
                os.unlink(step.backup)
            else:
                os.rename(step.backup, out.target)
        step.backup = None


def _unstage(out: Output, *, remove: bool) -> None:
    """``out`` has no staged file any more (``remove``: delete what is at its name)."""
    if out.tmp is not None:
        _STAGED.pop(out.tmp, None)
        if remove:
            _remove(out.tmp)
        out.tmp = None


def staged_output(path: str | Path) -> Output | None:
    """The output whose staged temporary file ``path`` is, in this process."""
    return _STAGED.get(Path(path).absolute())


def notes_mark() -> int:
    """A mark to pass to :func:`unread_notes` later: only notes of Outputs that got their
    first unread note after it are taken then."""
    return len(_UNREAD)


def unread_notes(since: int = 0) -> list[str]:
    """The notes that no command read (see :attr:`Outputs.notes`), of the Outputs noted
    since the mark ``since``; they count as read from now on."""
    taken = [note for outputs in _UNREAD[since:] for note in outputs._unread()]
    del _UNREAD[since:]
    return taken
