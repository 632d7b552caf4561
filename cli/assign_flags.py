"""The checks of `mrc-plan assign`'s flags that span several of them, made before any
work: each failure is a usage error naming the flags."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from placement.errors import UsageError

from .assign_options import SummaryFormat, parse_size
from .cluster_options import Live

if TYPE_CHECKING:
    from placement.plan.front import Batching


def report_outside(page: Path | None, out_dir: Path | None) -> None:
    """--report inside --out-dir, said plainly (`Outputs` refuses any output inside
    another, links included; this names why)."""
    if page is None or out_dir is None:
        return
    try:
        inside = out_dir.resolve() in page.resolve().parents
    except (OSError, RuntimeError):  # a loop of links, a name too long: Outputs names it
        return
    if inside:
        raise UsageError(
            f"--report {page} is inside --out-dir {out_dir}: that directory is replaced as "
            "a whole and holds only the plan's files, so the page must lie outside it",
            f"e.g. --report {out_dir.name or 'plan'}.html beside it",
        )


def summary_flags(
    policy_dir: Path | None,
    current: Path | Live | None,
    format: SummaryFormat,
    out: Path | None,
    out_dir: Path | None,
) -> None:
    """--policy-dir needs the cluster's policies; --format json needs stdout free."""
    from placement.plan.inputs import current_kind

    if policy_dir is not None and (
        current is None or (isinstance(current, Path) and current_kind(current) == "reassignment")
    ):
        raise UsageError(
            "--policy-dir compares --topics with the cluster's policies: --current must be "
            "kafka-topics --describe output or a snapshot",
            "e.g. --current describe.txt --topics changes.json --policy-dir policy-changes",
        )
    if format is SummaryFormat.JSON and out is None and out_dir is None:
        raise UsageError(
            "--format json prints the summary on stdout, where the plan goes without --out",
            "add --out PLAN.json (or --out-dir DIR), or write the JSON with --summary FILE",
        )


def sizes_flag(sizes: Path | None, current: Path | Live | None) -> None:
    if sizes is not None and current is None:
        raise UsageError(
            "--sizes gives the sizes of the current partitions: use it with --current "
            "or --bootstrap-server",
            "e.g. --current describe.txt --sizes log-dirs.txt",
        )


def batching_of(
    out_dir: Path | None,
    caps: tuple[int | None, int | None, str | None],
    throttle: str | None,
    current: tuple[Path | Live | None, Path | None],
) -> Batching | None:
    """--out-dir with ``caps`` (--batch-size, --max-moves-per-broker, --batch-bytes) and
    --throttle, checked and parsed; None without --out-dir."""
    from placement.plan.front import Batching

    rate, cap = _batch_flags(out_dir, *caps, throttle, current)
    if out_dir is None:
        return None
    return Batching(out_dir, caps[0], caps[1], cap, rate)


def _batch_flags(
    out_dir: Path | None,
    batch_size: int | None,
    max_moves_per_broker: int | None,
    batch_bytes: str | None,
    throttle: str | None,
    current: tuple[Path | Live | None, Path | None],
) -> tuple[int | None, int | None]:
    """The batching options go together; the throttle in bytes/s and the byte cap, if
    given. ``current``: the --current and --sizes paths. A byte cap without --sizes needs
    a snapshot (the split refuses one without sizes), before any planning."""
    caps = (batch_size, max_moves_per_broker, batch_bytes)
    if any(c is not None for c in caps) != (out_dir is not None):
        raise UsageError(
            "--out-dir and a cap per batch (--batch-size, --max-moves-per-broker, "
            "--batch-bytes) go together",
            "e.g. --out-dir drain-plan --max-moves-per-broker 5 --batch-bytes 200GiB "
            "--throttle 50MB",
        )
    if throttle is not None and out_dir is None:
        raise UsageError("--throttle sets the ETA of batches: use it with --out-dir")
    rate = None
    if throttle is not None:
        rate = parse_size(throttle, "--throttle", ("50000000", "50MB", "48MiB"), rate=True)
    if batch_bytes is None:
        return rate, None
    cap = parse_size(batch_bytes, "--batch-bytes", ("200GiB", "500GB", "1.5TiB"))
    path, sizes = current
    if sizes is None:
        from placement.plan.inputs import current_kind

        # a live cluster is read as a snapshot: the split says if it has no sizes
        if path is None or (isinstance(path, Path) and current_kind(path) != "snapshot"):
            from placement.plan.batches import need_sizes

            raise need_sizes()
    return rate, cap


def pattern(raw: str | None) -> re.Pattern[str] | None:
    """--only-topics as a compiled regular expression (a bad one is a usage error)."""
    if raw is None:
        return None

    try:
        return re.compile(raw)
    except re.error as exc:
        shown = raw if len(raw) <= 40 else raw[:37] + "..."
        raise UsageError(
            f"--only-topics: {shown!r} is not a regular expression ({exc.msg})",
            "e.g. --only-topics 'orders|payments-.*'",
        ) from None
