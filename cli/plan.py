"""`mrc-plan plan show`: what a batched plan (or one reassignment file) will do."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import typer

from .errors import handle_errors

INT64_MAX = 2**63 - 1  # as placement.model.kafka, without importing it for --help

app = typer.Typer(help="Inspect plans written by `assign`.", no_args_is_help=True)


def _size(n: int | None) -> str:
    """Bytes as a short figure; "?" for unknown, and for what no size can be (negative,
    beyond int64): never an exception, whatever a summary.json held."""
    if n is None or not isinstance(n, int) or not 0 <= n <= INT64_MAX:
        return "?"
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n:,} B"


def _eta(seconds: float | None) -> str:
    """A duration as h/m/s; "-" for none, "?" for what no duration can be (negative, not
    finite, beyond int64)."""
    if seconds is None:
        return "-"
    if not isinstance(seconds, int | float) or not 0 <= seconds <= INT64_MAX:
        return "?"  # NaN fails the comparison too
    s = round(seconds)
    return (
        f"{s // 3600}h{s % 3600 // 60:02d}m{s % 60:02d}s"
        if s >= 3600
        else f"{s // 60}m{s % 60:02d}s"
    )


def _brokers(rows: list[dict[str, Any]], limit: int = 4) -> str:
    ids = [str(r["broker"]) for r in rows]
    return ",".join(ids[:limit]) + (f" +{len(ids) - limit}" if len(ids) > limit else "")


def show_summary(
    doc: dict[str, Any], where: Path, *, stderr: bool = False, only: str | None = None
) -> None:
    """A rich table of a ``summary.json`` document (``only``: the row of that file)."""
    from rich.console import Console
    from rich.table import Table

    from .render import cell  # names from summary.json, paths: escaped, no markup

    console = Console(stderr=stderr, highlight=False, soft_wrap=True)
    rate = doc.get("throttle_bytes_per_s")
    total = doc["total"]
    batches = [b for b in doc["batches"] if only is None or only in (b["file"], b["rollback"])]
    what = f"{total['batches']} batches" if only is None else f"{only}, one of {total['batches']}"
    table = Table(
        title=cell(
            f"{where}: {what}"
            + (f", throttle {_size(rate)}/s" if rate else ", no throttle given (no ETA)")
        )
    )
    heads = ("file", "parts", "added", "data", "from", "to", "max moves", "ETA")
    for col in heads:
        table.add_column(col, justify="left" if col in ("file", "from", "to") else "right")
    table.columns[0].no_wrap = True
    for b in batches:
        table.add_row(
            cell(b["file"]),
            f"{b['partitions']:,}",
            f"{b['replicas_added']:,}",
            _size(b["bytes"]),
            cell(_brokers(b["senders"])),
            cell(_brokers(b["receivers"])),
            cell(b["max_moves_per_broker"]),
            _eta(b["eta_seconds"]),
        )
    if only is not None:
        console.print(table)
        return
    leaders = doc.get("leaders")
    if leaders:
        table.add_row(
            cell(leaders["file"]), f"{leaders['partitions']:,}", "0", "0 B", "-", "-", "-", "-"
        )
    table.add_row(
        "total",
        f"{total['partitions']:,}",
        f"{total['replicas_added']:,}",
        _size(total["bytes"]),
        "",
        "",
        "",
        _eta(total["eta_seconds"]),
        style="bold",
    )
    console.print(table)
    console.print(cell("apply in order: " + ", ".join(doc["order"])))
    if leaders and leaders.get("election"):
        console.print(
            cell(
                f"then elect: kafka-leader-election --election-type PREFERRED "
                f"--path-to-json-file {where / leaders['election']}"
            )
        )


@app.command("show")
@handle_errors
def show(
    path: Annotated[
        Path, typer.Argument(help="An --out-dir of `assign`, or one reassignment JSON.")
    ],
) -> None:
    """Print what a plan does: per batch the partitions, replicas added, data, the brokers
    that send and receive, and the ETA under the throttle."""
    from placement.errors import InputError

    try:
        is_dir = path.is_dir()
    except OSError:  # a name too long, a parent not searchable: the reader names it
        is_dir = False
    if is_dir:
        summary_path = path / "summary.json"
        if not summary_path.is_file():
            raise InputError(
                str(path), "no summary.json here", "pass an --out-dir written by `assign`"
            )
        show_summary(read_summary(summary_path), path)
        return
    _show_file(path)


_INT = "an integer from 0 to 2^63-1"
_SIZE = "an integer from 0 to 2^63-1, or null"
_ETA = "a finite number from 0 to 10^18, or null"
_NAME = "a file name"
_NAME_OR_NULL = "a file name or null"
_TOTAL = {
    "batches": _INT,
    "partitions": _INT,
    "replicas_added": _INT,
    "bytes": _SIZE,
    "eta_seconds": _ETA,
}
_BATCH = {
    "file": _NAME,
    "rollback": _NAME_OR_NULL,
    "partitions": _INT,
    "replicas_added": _INT,
    "bytes": _SIZE,
    "senders": "an array of {broker, bytes}",
    "receivers": "an array of {broker, bytes}",
    "max_moves_per_broker": _INT,
    "eta_seconds": _ETA,
}
_LEADERS = {"file": _NAME, "partitions": _INT, "election": _NAME_OR_NULL}


def _fits(value: Any, want: str) -> bool:
    """Numbers as `assign` writes them: integers within int64 (ids, counts, bytes; a
    300-digit "bytes" is no size), durations finite and below 10^18 s."""
    is_int = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= INT64_MAX
    if want == _INT:
        return is_int
    if want == _SIZE:
        return value is None or is_int
    if want == _ETA:
        finite = isinstance(value, float) and math.isfinite(value) and 0 <= value < 1e18
        return value is None or is_int or finite
    if want == _NAME:
        return isinstance(value, str) and bool(value)
    if want == _NAME_OR_NULL:
        return value is None or (isinstance(value, str) and bool(value))
    return isinstance(value, list) and all(
        isinstance(r, dict) and "broker" in r and _fits(r["broker"], _INT) for r in value
    )


def _problem(doc: Any) -> tuple[str, str] | None:
    """(JSON pointer, what is wrong) for the first way ``doc`` is not a summary."""
    if not isinstance(doc, dict):
        return "", "a summary.json is a JSON object"
    shapes: list[tuple[str, Any, dict[str, str]]] = [("/total", doc.get("total"), _TOTAL)]
    batches = doc.get("batches")
    if not isinstance(batches, list):
        return "/batches", '"batches" must be an array'
    shapes += [(f"/batches/{i}", b, _BATCH) for i, b in enumerate(batches)]
    if doc.get("leaders") is not None:
        shapes.append(("/leaders", doc["leaders"], _LEADERS))
    for ptr, value, fields in shapes:
        if not isinstance(value, dict):
            return ptr, f'"{ptr[1:]}" must be an object'
        for key, want in fields.items():
            if key not in value:
                return ptr, f'"{ptr[1:]}" lacks "{key}"'
            if not _fits(value[key], want):
                return f"{ptr}/{key}", f'"{key}" must be {want}'
    order = doc.get("order")
    if not isinstance(order, list) or not all(isinstance(o, str) for o in order):
        return "/order", '"order" must be an array of file names'
    if not _fits(doc.get("throttle_bytes_per_s"), _SIZE):
        return "/throttle_bytes_per_s", f'"throttle_bytes_per_s" must be {_SIZE}'
    return None


def read_summary(path: Path) -> dict[str, Any]:
    """A ``summary.json`` written by `assign --out-dir`, or an `InputError` naming the file
    (and the line) where it is not one."""
    from placement.errors import InputError
    from placement.io.jsonsrc import parse_json_file
    from placement.io.textfile import read_text

    text = read_text(path, "the summary")
    hint = "it is written by `assign --out-dir`: write the directory again"
    doc = parse_json_file(text, str(path), hint)
    problem = _problem(doc.value)
    if problem is not None:
        pos = doc.locate(problem[0])
        raise InputError(str(path), problem[1], hint, line=pos.line, column=pos.column)
    value: dict[str, Any] = doc.value
    return value


def _show_file(path: Path) -> None:
    from collections import Counter

    from rich.console import Console

    from placement.io.reassignment import read_reassignment

    from .render import cell

    entries = read_reassignment(path)  # strictly, even when the summary describes it
    summary = path.parent / "summary.json"
    if summary.is_file():  # one batch of an --out-dir: its row of the summary
        doc = read_summary(summary)
        if any(path.name in (b["file"], b["rollback"]) for b in doc["batches"]):
            show_summary(doc, path.parent, only=path.name)
            return
    per_broker = Counter(b for a in entries for b in a.replicas)
    console = Console(highlight=False, soft_wrap=True)
    console.print(
        cell(
            f"{path}: {len(entries):,} partitions of {len({a.topic for a in entries}):,} "
            f"topics, {sum(per_broker.values()):,} replicas on {len(per_broker):,} brokers"
        )
    )
    console.print(
        "what it moves depends on the current assignment: `assign --out-dir` writes a "
        "summary.json with replicas added, data and ETA per batch"
    )
