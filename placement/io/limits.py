"""Documented caps: inputs that would eat the machine fail fast, before the work starts.

Every cap has a name, a default and an environment variable that overrides it
(`MRC_PLAN_MAX_...=N`), for the rare real cluster beyond it. The defaults sit far above
what Kafka clusters run (Kafka has no hard partition cap; past ~200,000 partitions per
cluster is already extreme) and far below what exhausts a laptop.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from placement.errors import InputError, UsageError

MiB = 2**20


@dataclass(frozen=True, slots=True)
class Limit:
    name: str  # the environment variable that overrides it
    default: int
    what: str  # what is counted, for messages and the README

    def value(self) -> int:
        raw = os.environ.get(self.name, "").strip()
        if not raw:
            return self.default
        if not raw.isascii() or not raw.isdigit() or int(raw) < 1:
            raise UsageError(
                f"{self.name}={raw!r} is not a positive integer",
                f"unset it to use the default ({self.default:,})",
            )
        return int(raw)

    def hint(self) -> str:
        return (
            f"the cap is {self.value():,} {self.what}; raise it with {self.name}=N if this is right"
        )


# sizes of input files, per kind, checked before reading
POLICY_BYTES = Limit("MRC_PLAN_MAX_POLICY_BYTES", 1 * MiB, "bytes per placement policy file")
PROPERTIES_BYTES = Limit("MRC_PLAN_MAX_PROPERTIES_BYTES", 16 * MiB, "bytes per .properties file")
TOPICS_BYTES = Limit("MRC_PLAN_MAX_TOPICS_BYTES", 256 * MiB, "bytes per topics file")
INVENTORY_BYTES = Limit("MRC_PLAN_MAX_INVENTORY_BYTES", 64 * MiB, "bytes per inventory file")
DESCRIBE_BYTES = Limit(
    "MRC_PLAN_MAX_DESCRIBE_BYTES", 2048 * MiB, "bytes of kafka-topics --describe output"
)
SIZES_BYTES = Limit("MRC_PLAN_MAX_SIZES_BYTES", 2048 * MiB, "bytes per sizes file")
# a JSON document takes more memory per byte than a CSV: ~3 GB to read 1 GiB of it
LOGDIRS_BYTES = Limit(
    "MRC_PLAN_MAX_LOGDIRS_BYTES", 1024 * MiB, "bytes of kafka-log-dirs output (a sizes file)"
)
PLAN_BYTES = Limit("MRC_PLAN_MAX_PLAN_BYTES", 4096 * MiB, "bytes per reassignment or plan file")
REPLICA_STATUS_BYTES = Limit(
    "MRC_PLAN_MAX_REPLICA_STATUS_BYTES", 1024 * MiB, "bytes of kafka-replica-status output"
)

# JSON values in one placement policy (a real one has a few dozen)
POLICY_VALUES = Limit("MRC_PLAN_MAX_POLICY_VALUES", 10_000, "JSON values per placement policy")

# sizes of clusters
PARTITIONS_PER_TOPIC = Limit("MRC_PLAN_MAX_PARTITIONS_PER_TOPIC", 1_000_000, "partitions per topic")
PARTITIONS_TOTAL = Limit("MRC_PLAN_MAX_PARTITIONS", 50_000_000, "partitions in one cluster")
BROKERS = Limit("MRC_PLAN_MAX_BROKERS", 100_000, "brokers in one cluster")
TOPICS = Limit("MRC_PLAN_MAX_TOPICS", 10_000_000, "topics in one cluster")

# findings
DIAGNOSTICS_PER_FILE = Limit("MRC_PLAN_MAX_DIAGNOSTICS_PER_FILE", 100, "findings reported per file")

ALL_LIMITS: tuple[Limit, ...] = (
    POLICY_BYTES,
    PROPERTIES_BYTES,
    TOPICS_BYTES,
    INVENTORY_BYTES,
    DESCRIBE_BYTES,
    SIZES_BYTES,
    LOGDIRS_BYTES,
    PLAN_BYTES,
    REPLICA_STATUS_BYTES,
    POLICY_VALUES,
    PARTITIONS_PER_TOPIC,
    PARTITIONS_TOTAL,
    BROKERS,
    TOPICS,
    DIAGNOSTICS_PER_FILE,
)


def check_count(limit: Limit, count: int, what: str) -> None:
    """Refuse ``count`` above ``limit`` (a usage error: nothing was read yet)."""
    cap = limit.value()
    if count > cap:
        raise UsageError(
            f"{what}: {count:,} is above the cap of {cap:,} {limit.what}", limit.hint()
        )


def too_large(path: str, limit: Limit, size: int | None = None) -> InputError:
    shown = f"{size:,} bytes" if size is not None else "more bytes"
    return InputError(
        path,
        f"file is too large ({shown}; the cap is {limit.value():,} {limit.what})",
        f"raise it with {limit.name}=N if the file is right",
    )


CHUNK = 1 * MiB  # what a read of a pipe or a /proc file asks for at a time


def read_capped(fh: BinaryIO, path: str, limit: Limit) -> bytes:
    """Read an open file, refusing it before reading when it is larger than ``limit``.

    A regular file is read as large as fstat says, then a byte more is asked for (a file
    that grew meanwhile is read on). Pipes and /proc files (their size is unknown) are
    read a chunk at a time, to their end or one byte past the cap. What is asked for never
    scales with the cap: a cap of 4 GiB read at once needs 4 GiB of address space, which
    `ulimit -v` may not give even for a file of a few KB.
    """
    cap = limit.value()
    try:
        st = os.fstat(fh.fileno())
    except (OSError, AttributeError, ValueError):
        st = None
    chunks: list[bytes] = []
    if st is not None and stat.S_ISREG(st.st_mode):
        if st.st_size > cap:
            raise too_large(path, limit, st.st_size)
        data = fh.read(st.st_size) if st.st_size else b""
        probe = fh.read(1)
        if not probe:
            return data
        chunks += (data, probe)
    total = sum(map(len, chunks))
    while total <= cap:
        chunk = fh.read(min(CHUNK, cap + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > cap:
        raise too_large(path, limit)
    return b"".join(chunks)


def read_bytes_capped(path: str | Path, limit: Limit, what: str = "the file") -> bytes:
    """``Path.read_bytes`` with a size cap; OS errors become exit-2 errors naming the file."""
    p = Path(path)
    try:
        with p.open("rb") as fh:
            return read_capped(fh, str(p), limit)
    except OSError as exc:
        raise InputError(str(p), f"cannot read {what}: {exc.strerror or exc}") from None
