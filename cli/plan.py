"""`mrc-plan plan show`: what a batched plan (or one reassignment file) will do."""

import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from placement.errors import InputError

from .errors import handle_errors
from .outputs import page_possible
from .outputs import report as report_outputs

if TYPE_CHECKING:
    from placement.model.assignment import PartitionAssignment
    from placement.model.planview import PlanView

INT64_MAX = 2**63 - 1  # as placement.model.kafka, without importing it for --help

app = typer.Typer(
    rich_markup_mode=None, help="Inspect plans written by `assign`.", no_args_is_help=True
)


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


class ShowFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


@app.command("show")
@handle_errors
def show(
    path: Annotated[
        Path, typer.Argument(help="An --out-dir of `assign`, or one reassignment JSON.")
    ],
    format: Annotated[
        ShowFormat,
        typer.Option("--format", help="text, or json (schema: `mrc-plan schema plan-view`)."),
    ] = ShowFormat.TEXT,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report",
            help="Also write an offline HTML page (FILE.html): the batches on a timeline, "
            "the broker that bounds each, the totals next to the lower bound.",
        ),
    ] = None,
) -> None:
    """Print what a plan does: per batch the partitions, replicas added, data, the brokers
    that send and receive, and the ETA under the throttle."""
    from placement.io.outputs import Outputs

    outputs = Outputs.of([("PATH", path)])
    page_possible(report)
    page = outputs.add("--report", report) if report is not None else None
    with outputs:
        shown = _read(path)
        if page is not None:
            from placement.html.plan import render_plan

            page.write(render_plan(shown.view()))
        written = outputs.commit()
    report_outputs(outputs, written)
    if format is ShowFormat.JSON:
        from placement.diagnostics.jsonout import report_json

        sys.stdout.write(report_json(shown.view()))
    else:
        shown.text()


@dataclass
class _Shown:
    """What `plan show` read: its JSON view (made once, for --format json and --report)
    and its text."""

    make_view: Callable[[], "PlanView"]
    text: Callable[[], None]
    _view: "PlanView | None" = None

    def view(self) -> "PlanView":
        if self._view is None:
            self._view = self.make_view()
        return self._view


def _read(path: Path) -> _Shown:
    from placement.io.summary import batches_view, read_summary

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
        doc = read_summary(summary_path)
        return _Shown(lambda: batches_view(doc, path), lambda: show_summary(doc, path))
    return _read_file(path)


def _read_file(path: Path) -> _Shown:
    from placement.io.reassignment import read_reassignment
    from placement.io.summary import batches_view, read_summary, reassignment_view

    entries = read_reassignment(path)  # strictly, even when the summary describes it
    summary = path.parent / "summary.json"
    if summary.is_file():  # one batch of an --out-dir: its row of the summary
        doc = read_summary(summary)
        if any(path.name in (b["file"], b["rollback"]) for b in doc["batches"]):
            return _Shown(
                lambda: batches_view(doc, path.parent, only=path.name),
                lambda: show_summary(doc, path.parent, only=path.name),
            )
    return _Shown(lambda: reassignment_view(path, entries), lambda: _show_entries(path, entries))


def _show_entries(path: Path, entries: list["PartitionAssignment"]) -> None:
    from rich.console import Console

    from .render import cell

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
