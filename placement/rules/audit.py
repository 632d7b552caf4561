"""The audit of a cluster's state (the MRC9xx rules) as findings.

`kafka-topics --describe` output and snapshots are audited alike: both become a snapshot's
tables, and the rules' vectorised checks answer for every partition at once (policy
violations, offline, under min ISR, under-replicated: placement/rules/partitions.py, which
`snapshot show` counts with too). Findings are built only for the
partitions a report can list: at most `DIAGNOSTICS_PER_FILE` of them, errors first, and
one more to say where the count of the rest (MRC801) sits. A million broken partitions
cost four numpy passes and a hundred messages, not a million of each. Describe output
can also show partitions being reassigned (`DescribedSnapshot.in_flight`): they get one
MRC905 finding for the file, not MRC901, and a broker being added to them is not lagging.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from placement.io.describe import Describe
from placement.io.limits import DIAGNOSTICS_PER_FILE
from placement.io.positions import LineIndex, Position
from placement.io.snapshot import (
    BROKERS,
    PARTITIONS,
    TOPICS,
    Snapshot,
    arrow_owned,
    parquet_files,
    table_path,
)
from placement.model.diagnostic import Diagnostic, Severity
from placement.model.inventory import Inventory
from placement.model.policy import PlacementPolicy
from placement.model.shapes import InventoryLike
from placement.rules.base import Rule
from placement.rules.partitions import (
    IsrState,
    explain_rows,
    isr_state,
    rack_map,
    violation_mask,
)
from placement.rules.state import (
    Audit,
    OfflinePartition,
    ReassignmentInProgress,
    ReplicasBreakPolicy,
    UnderMinIsr,
    UnderReplicated,
    Unlisted,
)


@dataclass(frozen=True, slots=True)
class Hit:
    """One finding about one partition row, before it is located in a file."""

    row: int
    rule: type[Rule]
    message: str
    hint: str


# where a finding points on a describe partition line: the field it is about
FIELD: dict[type[Rule], str] = {
    ReplicasBreakPolicy: "Replicas",
    OfflinePartition: "Leader",
    UnderMinIsr: "Isr",
    UnderReplicated: "Isr",
    ReassignmentInProgress: "Replicas",
}


@dataclass(frozen=True)
class DescribedSnapshot(Snapshot):
    """Describe output as a snapshot, with what the snapshot tables do not hold: the
    partitions being reassigned, row -> the brokers being added to it."""

    in_flight: dict[int, tuple[int, ...]] = field(default_factory=dict)


Locate = Callable[[Sequence[Hit]], list[tuple[str, Position]]]


def _ids(values: Iterable[int] | None) -> str:
    return ",".join(map(str, values or ())) or "none"


def _hits(
    snap: Snapshot,
    rows: np.ndarray,
    found: Sequence[tuple[type[Rule], np.ndarray]],
    state: IsrState,
    policies: Mapping[str, PlacementPolicy],
    where: str,
    in_flight: Mapping[int, tuple[int, ...]],
) -> list[Hit]:
    """The findings of ``rules``, for the partition ``rows`` (any rule true there)."""
    if not rows.size:
        return []
    columns = ("topic", "partition", "replicas", "observers", "isr")
    taken = snap.partitions.select(columns).take(pa.array(rows, pa.int64())).to_pylist()
    broken = dict(found).get(ReplicasBreakPolicy)
    why: dict[int, list[str]] = {}
    rack_of: Mapping[int, str | None] = {}
    if broken is not None:
        why = {v.row: v.problems for v in explain_rows(snap, rows[broken[rows]], policies, where)}
        rack_of = rack_map(snap.brokers)
    out = []
    for row, p in zip(rows.tolist(), taken, strict=True):
        name = f"{p['topic']}-{p['partition']}"
        isr, m = p["isr"] or [], int(state.min_isr[row])
        for rule, mask in found:
            if not mask[row]:
                continue
            if rule is ReplicasBreakPolicy:
                hint = (
                    "give every broker its rack in the inventory; a broker that is gone "
                    "needs its replicas reassigned"
                    if any(not rack_of.get(b) for b in p["replicas"])
                    else "reassign the partition to fit the policy (mrc-plan assign "
                    "--current plans the moves); changing a policy moves no data"
                )
                message = f"{name} breaks its topic's placement policy: " + "; ".join(why[row])
            elif rule is OfflinePartition:
                message = (
                    f"{name} is offline: no leader (replicas {_ids(p['replicas'])}, "
                    f"last ISR {_ids(isr)})"
                )
                hint = (
                    "bring back a broker of its last ISR; failing that, an unclean leader "
                    "election onto a surviving replica (kafka-leader-election "
                    "--election-type UNCLEAN) loses what that replica had not copied"
                )
            elif rule is UnderMinIsr:
                message = (
                    f"{name} has {len(isr)} in-sync replica(s) ({_ids(isr)}), fewer than "
                    f"min.insync.replicas={m}: acks=all writes fail"
                )
                hint = (
                    "bring the replicas outside the ISR back (a broker down, a replica too "
                    "slow to catch up); automatic observer promotion adds observers to the "
                    "ISR only once they have caught up"
                )
            else:
                sync = p["replicas"][: len(p["replicas"]) - len(p["observers"] or ())]
                adding = in_flight.get(row, ())  # still copying: not lagging
                lagging = [b for b in sync if b not in isr and b not in adding]
                message = (
                    f"{name} is under-replicated: sync replica(s) {_ids(lagging)} out of the "
                    f"ISR ({_ids(isr)}); writes go on with {len(isr)} in sync, "
                    f"min.insync.replicas={m}"
                )
                hint = (
                    "find out why the replica lags (broker down or restarting, slow disk, "
                    "network) before taking anything else down"
                )
            out.append(Hit(row, rule, message, hint))
    return out


def audit(
    snap: Snapshot,
    policies: Mapping[str, PlacementPolicy],
    locate: Locate,
    *,
    default_min_isr: int | None,
    racks: bool,
    where: str,
) -> Audit:
    """The MRC9xx findings of ``snap``'s partitions, located by ``locate``.

    ``policies``: topic -> its valid policy; ``racks``: whether the brokers table holds
    the brokers' racks (without them, MRC901 is not checked); ``where``: what a broker
    missing from the brokers table is missing from, for messages.
    """
    cap = DIAGNOSTICS_PER_FILE.value()
    state = isr_state(snap, default_min_isr)
    n = snap.partitions.num_rows
    broken = violation_mask(snap, policies) if racks else np.zeros(n, dtype=bool)
    in_flight = snap.in_flight if isinstance(snap, DescribedSnapshot) else {}
    if in_flight:  # old and new replicas together: no final layout to judge yet
        broken = broken.copy()
        broken[list(in_flight)] = False
        state = replace(state, under_replicated=_settled(snap, state, in_flight))
    errors = (
        (ReplicasBreakPolicy, broken),
        (OfflinePartition, state.offline),
        (UnderMinIsr, state.under_min_isr),
    )
    warnings = ((UnderReplicated, state.under_replicated),)
    n_errors = sum(int(mask.sum()) for _, mask in errors)
    n_warnings = int(state.under_replicated.sum())
    # one row holds one to three errors: cap + 1 rows are enough to fill the list and
    # find the first finding left out
    rows = np.flatnonzero(broken | state.offline | state.under_min_isr)[: cap + 1]
    hits = _hits(snap, rows, errors, state, policies, where, in_flight)
    if len(hits) <= cap:
        rows = np.flatnonzero(state.under_replicated)[: cap + 1 - len(hits)]
        hits += _hits(snap, rows, warnings, state, policies, where, in_flight)
    if in_flight:
        hits.append(_in_flight_hit(snap, in_flight))
        n_warnings += 1
    diagnostics = [
        Diagnostic(
            code=hit.rule.code,
            name=hit.rule.name,
            severity=hit.rule.severity,
            message=hit.message,
            file=file,
            pointer="",
            line=pos.line,
            column=pos.column,
            hint=hit.hint,
        )
        for hit, (file, pos) in zip(hits, locate(hits), strict=True)
    ]
    ranked = sorted(diagnostics, key=lambda d: (d.severity is not Severity.ERROR, d.sort_key()))
    listed, rest = ranked[:cap], ranked[cap:]
    if not rest:
        return Audit(listed, None)
    listed_errors = sum(d.severity is Severity.ERROR for d in listed)
    unlisted = Unlisted(
        n_errors - listed_errors, n_warnings - (len(listed) - listed_errors), rest[0]
    )
    return Audit(listed, unlisted)


def _settled(
    snap: Snapshot, state: IsrState, in_flight: Mapping[int, tuple[int, ...]]
) -> np.ndarray:
    """`state.under_replicated`, where a partition being reassigned is under-replicated
    only when a sync replica that is not being added is out of its ISR."""
    mask = state.under_replicated.copy()
    rows = [r for r in in_flight if mask[r]]
    if not rows:
        return mask
    columns = ("replicas", "observers", "isr")
    taken = snap.partitions.select(columns).take(pa.array(rows, pa.int64())).to_pylist()
    for row, p in zip(rows, taken, strict=True):
        sync = p["replicas"][: len(p["replicas"]) - len(p["observers"] or ())]
        isr = p["isr"] or []
        mask[row] = any(b not in isr and b not in in_flight[row] for b in sync)
    return mask


def _in_flight_hit(snap: Snapshot, in_flight: Mapping[int, tuple[int, ...]]) -> Hit:
    """The one MRC905 finding of a file: how many partitions are being reassigned, at
    the first of them."""
    first = min(in_flight)
    p = snap.partitions.select(("topic", "partition")).slice(first, 1).to_pylist()[0]
    count = len(in_flight)
    what = "1 partition is" if count == 1 else f"{count:,} partitions are"
    return Hit(
        first,
        ReassignmentInProgress,
        f"{what} being reassigned (the first: {p['topic']}-{p['partition']}): their "
        "replicas list the old and the new brokers together, so they are not checked "
        "against their topics' placement policies until the reassignment ends",
        "describe the topics again once kafka-reassign-partitions --verify says the "
        "reassignment is complete; plan no other move of these partitions before then",
    )


def brokers_table(inventory: InventoryLike) -> pa.Table:
    """An inventory's brokers as a snapshot's brokers table."""
    return pa.table(
        {
            "broker_id": [b.id for b in inventory.brokers],
            "rack": [b.rack for b in inventory.brokers],
            "capacity_bytes": [b.capacity_bytes for b in inventory.brokers],
        },
        schema=BROKERS,
    )


def describe_snapshot(describe: Describe, inventory: InventoryLike | None) -> Snapshot:
    """The state ``describe`` reports, as snapshot tables in the file's order (row i is
    ``describe.partitions[i]``), with the inventory's brokers (none without one). Unlike
    `snapshot from-describe`, which sorts the partitions, so rows map back to lines.
    The partitions being reassigned are its ``in_flight`` rows (MRC905)."""
    parts = describe.partitions
    topics = list(describe.topics.values())
    return DescribedSnapshot(
        brokers_table(inventory or Inventory(brokers=[])),
        pa.table(
            {
                "topic": [t.name for t in topics],
                "placement": pa.nulls(len(topics), pa.string()),  # the caller's policies
                "min_isr": [t.min_isr for t in topics],
            },
            schema=TOPICS,
        ),
        pa.table(
            {
                "topic": [p.topic for p in parts],
                "partition": [p.partition for p in parts],
                "replicas": [p.replicas for p in parts],
                "observers": [p.observers for p in parts],
                "isr": [p.isr for p in parts],
                "leader": [p.leader for p in parts],
                "size_bytes": pa.nulls(len(parts), pa.int64()),
            },
            schema=PARTITIONS,
        ),
        in_flight={i: p.adding for i, p in enumerate(parts) if p.reassigning},
    )


def describe_locator(
    describe: Describe, text: str, line_starts: Sequence[int], file: str, physical: LineIndex
) -> Locate:
    """Where a finding about a describe row points: its partition line, at the value of
    the field the rule is about (`FIELD`). ``line_starts``: the offset in ``text`` of each
    line as the describe reader numbers them; positions are ``physical``'s."""

    def locate(hits: Sequence[Hit]) -> list[tuple[str, Position]]:
        out = []
        for hit in hits:
            line = describe.partitions[hit.row].line
            start, end = line_starts[line - 1], line_starts[line]
            label = re.compile(rf"(?:^|(?<=\s)){FIELD[hit.rule]}:[ \t]*").search(text, start, end)
            offset = label.end() if label else start
            out.append((file, physical.position(offset)))
        return out

    return locate


def table_files(root: Path, name: str) -> list[Path]:
    """The files holding snapshot table ``name``, in the order its rows are read: its
    JSON Lines file, or its Parquet file(s)."""
    path = table_path(root, name)
    return [path] if path.suffix == ".jsonl" else parquet_files(path)


def table_locator(root: Path, name: str) -> Callable[[int], tuple[str, int]]:
    """Where row ``i`` (from 0) of snapshot table ``name`` is: the file holding it and its
    row there (from 1), as the snapshot reader names rows; a table of part files is
    read in `parquet_files` order."""
    files = table_files(root, name)
    if files[0].suffix == ".jsonl":
        counts = [0]  # one file: every row is in it
    else:
        counts = []
        for f in files:
            with open(f, "rb") as fh:  # a file object: pyarrow cannot open every path
                counts.append(pq.ParquetFile(arrow_owned(fh)).metadata.num_rows)
    starts = np.cumsum([0, *counts[:-1]])

    def where(row: int) -> tuple[str, int]:
        i = int(np.searchsorted(starts, row, side="right")) - 1
        return str(files[i]), row - int(starts[i]) + 1

    return where


def snapshot_locator(root: Path) -> Locate:
    """Findings about partitions point at their row of the partitions table."""
    where = table_locator(root, "partitions")

    def locate(hits: Sequence[Hit]) -> list[tuple[str, Position]]:
        out = []
        for hit in hits:
            file, row = where(hit.row)
            out.append((file, Position(row, 1)))
        return out

    return locate
