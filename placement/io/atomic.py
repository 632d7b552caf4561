"""Write one file or one directory atomically: readers see the old content or the new,
never half of it. Single-output conveniences over :mod:`placement.io.outputs` (a command
with several outputs, or inputs to protect, uses :class:`~placement.io.outputs.Outputs`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path

from placement.io.outputs import Outputs, Writable, staged_output


def write_atomic(path: str | Path, data: str | bytes, *, flag: str = "output") -> None:
    outputs = Outputs()
    out = outputs.add(flag, path)
    with outputs:
        out.write(data)
        outputs.commit()


@contextlib.contextmanager
def open_atomic(path: str | Path, *, flag: str = "output") -> Iterator[Writable]:
    """A file for writing in pieces (a stream too big to hold in memory): it replaces
    ``path`` complete when the block ends, and nothing changes if the block raises.

    ``path`` may be the staged file of an :class:`Outputs` of this process (a command
    hands it to library code): that file is written, and the command commits it."""
    staged = staged_output(path)
    if staged is not None:
        with staged.open() as fh:
            yield fh
        return
    outputs = Outputs()
    out = outputs.add(flag, path)
    with outputs:
        with out.open() as fh:
            yield fh
        outputs.commit()


def write_dir_atomic(
    path: str | Path, files: Mapping[str, str], *, marker: str, flag: str = "output"
) -> None:
    """Write ``files`` (name -> text) as the directory ``path``, all or nothing.

    An existing ``path`` must be empty or an earlier output of the same kind, recognised
    by its ``marker`` file; that one is replaced whole, so no stale file from a longer run
    stays behind. Anything else there is a UsageError, and is left untouched.
    """
    outputs = Outputs()
    out = outputs.add_dir(flag, path, marker=marker)
    with outputs:
        out.files(files)
        outputs.commit()
