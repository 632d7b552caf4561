"""The `summary.json` of a batch directory (docs/formats.md, batch directory), read back
for `plan show`: `plan.batches` writes it; this checks every field `plan show` prints has
the type `assign` writes, so a hand-edited file is an error naming the line, never a crash.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from placement.errors import InputError
from placement.io.jsonsrc import is_json_int, parse_json_file
from placement.io.textfile import fits, read_text
from placement.model.assignment import PartitionAssignment
from placement.model.kafka import INT64_MAX
from placement.model.planview import (
    BatchView,
    CapsView,
    LeadersView,
    PlanView,
    ReassignmentView,
    TotalView,
)

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
    is_int = is_json_int(value) and 0 <= value <= INT64_MAX
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
    text = read_text(path, "the summary")
    hint = "it is written by `assign --out-dir`: write the directory again"
    doc = parse_json_file(text, str(path), hint)
    problem = _problem(doc.value)
    if problem is not None:
        pos = doc.locate(problem[0])
        raise InputError(str(path), problem[1], hint, line=pos.line, column=pos.column)
    value: dict[str, Any] = doc.value
    return value


def batches_view(doc: dict[str, Any], where: Path, only: str | None = None) -> PlanView:
    """`plan show --format json` of an --out-dir (``only``: one of its files, its row).
    ``doc`` passed `read_summary`; what that leaves unchecked (a sender's bytes, the
    optional counts) is an `InputError` here, never a crash."""
    from pydantic import ValidationError

    try:
        return _batches_view(doc, where, only)
    except ValidationError as exc:
        error = exc.errors()[0]
        # a key of the file is named only when short (it may be anything, a secret too)
        where_in = "/".join(str(p) if fits(str(p)) else "…" for p in error["loc"])
        raise InputError(
            str(where / "summary.json"),
            f"{where_in}: {error['msg']}",
            "it is written by `assign --out-dir`: write the directory again",
        ) from None


def _batches_view(doc: dict[str, Any], where: Path, only: str | None) -> PlanView:
    batches = [b for b in doc["batches"] if only is None or only in (b["file"], b["rollback"])]
    caps = doc.get("caps")  # absent from directories written before the byte cap
    caps_view = CapsView.model_validate(caps) if caps is not None else None
    if only is not None:
        return PlanView(
            path=str(where / only),
            kind="batch",
            throttle_bytes_per_s=doc.get("throttle_bytes_per_s"),
            caps=caps_view,
            batches=[_batch_view(b) for b in batches],
        )
    leaders = doc.get("leaders")
    return PlanView(
        path=str(where),
        kind="batches",
        throttle_bytes_per_s=doc.get("throttle_bytes_per_s"),
        caps=caps_view,
        total=TotalView.model_validate(doc["total"]),
        order=doc["order"],
        batches=[_batch_view(b) for b in batches],
        leaders=LeadersView.model_validate(leaders) if leaders else None,
    )


def _batch_view(row: dict[str, Any]) -> BatchView:
    """One batch; a broker's bytes are unknown (null) when the batch's are: `assign`
    writes 0 for a sender or receiver of partitions without a size."""
    view = BatchView.model_validate(row)
    if view.bytes is not None:
        return view
    senders = [r.model_copy(update={"bytes": None}) for r in view.senders]
    receivers = [r.model_copy(update={"bytes": None}) for r in view.receivers]
    return view.model_copy(update={"senders": senders, "receivers": receivers})


def reassignment_view(path: Path, entries: list[PartitionAssignment]) -> PlanView:
    """`plan show --format json` of a reassignment file with no summary beside it."""
    replicas = [b for a in entries for b in a.replicas]
    return PlanView(
        path=str(path),
        kind="reassignment",
        reassignment=ReassignmentView(
            partitions=len(entries),
            topics=len({a.topic for a in entries}),
            replicas=len(replicas),
            brokers=len(set(replicas)),
        ),
    )
