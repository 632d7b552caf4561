"""The check cache of snapshot partitions tables: a table that passed is not checked again.

``cache_dir()/checked/KEY.json`` holds the facts of a Parquet table that passed, KEY being
the SHA-256 of `CHECKS_VERSION`, the versions of mrc-plan and pyarrow, and each part file's
name, size and SHA-256 as hashed while it was copied (0.08 s for 5M partitions, against
3-4 s for the check). A hit returns the recorded facts (and marks the entry used, its
mtime); a miss checks the copies and records the facts if they passed. The key, the check
and Spark all read the same private copies (`placement.io.snapshot.stage_partitions`), so
an entry can only say "passed" of bytes that were checked. Entries are written to a
temporary file and renamed into place, 0600 in 0700 directories; those unused for 30 days
are removed when another is written. ``MRC_PLAN_CHECK_CACHE=0`` turns the cache off (no
reads, no writes). The cache never fails a command: a cache directory that is not private
(a link, writable by others), an entry that cannot be read, is not JSON or does not hold
two non-negative integers, or any error of the file system is a miss or a skipped write.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from pathlib import Path
from typing import NamedTuple

import placement
from placement.errors import UsageError
from placement.io.private import cache_dir, open_private, private_dir
from placement.io.staging import Copied


class PartitionFacts(NamedTuple):
    """What `verify_partitions` learns on its way through the partitions."""

    unsized: int  # partitions without a size (null ``size_bytes``)
    longest: int  # brokers in the longest ``replicas`` or ``observers`` list


# The version of what the checks accept: bump it whenever `check_rows`, `_check_lists` or
# the duplicate check of `snapshot._check_partitions` change what they accept (or the facts they
# return), so that no table checked under the old rules is passed on an old verdict.
# 2: entries are keyed by the bytes staged for Spark; those of 1 were keyed by a hash of
# the user's files taken apart from the check, and may vouch for bytes never checked.
# 4: the `adding` and `removing` lists are checked like the others, and `removing` may not
# name every replica (the partition would be left with none).
CHECKS_VERSION = 4
CHECK_CACHE_ENV = "MRC_PLAN_CHECK_CACHE"  # "0": every partitions table is checked in full
_UNUSED_CHECKED = 30 * 24 * 3600.0  # an entry not used for this long is removed
_STALE_TEMPORARY = 24 * 3600.0  # a temporary entry older than this is from a killed run
_CHECKED_ENTRY = re.compile(r"[0-9a-f]{64}\.json")
_ENTRY_BYTES = 4096  # an entry is a few dozen bytes: a larger file is not one of ours


def enabled() -> bool:
    """Whether the cache is used (``MRC_PLAN_CHECK_CACHE=0``: every table is checked)."""
    return os.environ.get(CHECK_CACHE_ENV, "1") != "0"


def cache_key(path: Path, copied: list[Copied]) -> str:
    """The cache key of the table ``path`` whose files were ``copied`` (see the
    module's docstring): from the sizes and digests of the bytes copied, not read again."""
    import hashlib

    import pyarrow as pa

    parts = []
    for c in copied:
        name = os.fsencode(c.source.name if c.source == path else c.source.relative_to(path))
        parts.append((name, c.size, c.digest))
    parts.sort()
    described = (CHECKS_VERSION, placement.__version__, pa.__version__, parts)
    return hashlib.sha256(repr(described).encode()).hexdigest()


def entries_dir() -> Path | None:
    """``cache_dir()/checked``, private; None if it is not (or cannot be made) private."""
    try:
        return private_dir(cache_dir() / "checked")
    except (UsageError, OSError, RuntimeError, ValueError):  # RuntimeError: no home
        return None


def recorded_facts(where: Path, key: str) -> PartitionFacts | None:
    """The facts recorded under ``key`` in ``where`` (the entry now marked used), or None:
    no entry, or one that is not a private regular file of ours holding two non-negative
    integers."""

    entry = where / f"{key}.json"

    try:
        fd = open_private(entry, os.O_RDONLY)
    except (UsageError, OSError):
        return None
    try:
        with open(fd, "rb") as fh:
            content = fh.read(_ENTRY_BYTES + 1)
            if len(content) > _ENTRY_BYTES:
                return None
            data = json.loads(content)
            if not isinstance(data, dict) or set(data) != {"unsized", "longest"}:
                return None
            values = (data["unsized"], data["longest"])
            # bool is an int subclass: only an exact int, as json.loads makes them
            if not all(type(v) is int and 0 <= v < 2**63 for v in values):
                return None
            with contextlib.suppress(OSError):
                os.utime(fh.fileno())  # in use
    except (OSError, ValueError, RecursionError):  # ValueError: not UTF-8, not JSON
        return None
    return PartitionFacts(*values)


def record(where: Path, key: str, facts: PartitionFacts) -> None:
    """Record ``facts`` as ``where/KEY.json`` (a private file, renamed into place), then
    remove entries unused for 30 days; any failure leaves things as they were."""
    import secrets

    text = json.dumps({"unsized": facts.unsized, "longest": facts.longest}) + "\n"
    temporary = where / f".{key}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        fd = open_private(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except (UsageError, OSError):
        return
    try:
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(temporary, where / f"{key}.json")
    except BaseException as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        if not isinstance(exc, OSError):
            raise
        return
    prune(where)


def prune(where: Path) -> None:
    """Remove the entries of ``where`` not used for 30 days, and temporary files that a
    killed run left (older than a day)."""

    now = time.time()
    with contextlib.suppress(OSError), os.scandir(where) as entries:
        for e in entries:
            if _CHECKED_ENTRY.fullmatch(e.name):
                unused = _UNUSED_CHECKED
            elif e.name.startswith(".") and e.name.endswith(".tmp"):
                unused = _STALE_TEMPORARY
            else:
                continue
            with contextlib.suppress(OSError):
                if now - e.stat(follow_symlinks=False).st_mtime > unused:
                    os.unlink(e.path)
