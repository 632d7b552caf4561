"""`assign` as one call: a request of everything the command's flags mean, in, and a
result of everything it produces, out (the plan, its rollback and election files, the
batches of an --out-dir, the --policy-dir files, the summary).

The CLI maps flags to an `AssignRequest`, calls `run`, and writes what the result holds
through its outputs; nothing here prints or writes a file. Notes come back as data, and
also as they arise through ``AssignRequest.notify`` so that a run that fails later has
shown the notes it got to. The HTML page (`placement.html.assign.render_assign`) is drawn
from `AssignResult.summary` a layer above this one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from placement.diagnostics.jsonout import report_json
from placement.io.current import CurrentState
from placement.model.assignment import Key, PartitionAssignment
from placement.plan.assign import AssignOutcome
from placement.rules.base import CheckContext
from placement.solver.engine import Options

if TYPE_CHECKING:  # pyarrow loads only when a snapshot is read
    import re

    from placement.io.snapshot import Snapshot
    from placement.plan.summary import AssignSummary


@dataclass(frozen=True)
class Batching:
    """--out-dir and its caps: ``bytes`` in bytes, ``throttle`` in bytes per second."""

    out_dir: Path
    size: int | None = None  # partitions per batch
    moves_per_broker: int | None = None
    bytes: int | None = None
    throttle: int | None = None


@dataclass(frozen=True)
class AssignRequest:
    """What `mrc-plan assign` is asked, flags already parsed. ``current``: the --current
    path, or the snapshot read from a live cluster (None: a fresh layout)."""

    inventory: Path | None = None
    topics: Path | None = None
    root: Path | None = None  # where --topics' placement files are resolved
    current: Path | Snapshot | None = None
    sizes: Path | None = None
    drain: Sequence[int] = ()
    exclude: Sequence[int] = ()
    options: Options = field(default_factory=Options)
    default_policy: Path | None = None
    repair: bool = False
    only_topics: re.Pattern[str] | None = None
    first_rack: bool = False  # --leaders-in-first-rack
    batching: Batching | None = None
    # each note as it arises (the result holds them all too)
    notify: Callable[[str], None] | None = None


@dataclass(frozen=True)
class AssignResult:
    """The outcome and everything drawn from it; files are rendered when asked for (a
    rollback of a large plan is as big as the plan)."""

    outcome: AssignOutcome
    sizes: Mapping[Key, int]  # the partition sizes the plan and batches used
    notes: list[str]
    batching: Batching | None = None
    # the --out-dir files by name and their summary.json document (None: no --out-dir)
    batch_files: dict[str, str] | None = None
    batches: dict[str, Any] | None = None

    @property
    def plan(self) -> list[PartitionAssignment]:
        return self.outcome.plan

    @cached_property
    def plan_text(self) -> str | None:
        """The reassignment JSON (None: nothing to do)."""
        from placement.io.reassignment import render_reassignment

        return render_reassignment(self.outcome.plan) if self.outcome.plan else None

    def rollback_text(self) -> str | None:
        """The current assignment of the partitions the plan changes that exist already."""
        from placement.io.reassignment import render_reassignment

        rollback = self.outcome.rollback
        return render_reassignment(rollback) if rollback else None

    def election_text(self) -> str | None:
        """The kafka-leader-election file: partitions whose preferred leader changes."""
        from placement.io.reassignment import render_election

        election = self.outcome.election
        return render_election(election) if election else None

    def policy_files(self) -> dict[str, str]:
        """The --policy-dir files by name (empty: no policy to change)."""
        from placement.plan.policies import render_policy_dir

        return render_policy_dir(self.outcome.policy_changes)

    @cached_property
    def summary(self) -> AssignSummary:
        """The JSON summary's model; with --out-dir it holds the batches as `plan show`
        reads them."""
        view = None
        if self.batches is not None and self.batching is not None:
            from placement.io.summary import batches_view

            view = batches_view(self.batches, self.batching.out_dir)
        return self.outcome.summary(view)

    def summary_json(self) -> str:
        return report_json(self.summary)


class _Notes(list[str]):
    def __init__(self, notify: Callable[[str], None] | None) -> None:
        super().__init__()
        self.notify = notify

    def say(self, note: str) -> None:
        self.append(note)
        if self.notify is not None:
            self.notify(note)


def run(request: AssignRequest) -> AssignResult:
    """Read the inputs, plan, check the plan independently, split it into batches when
    asked. Failures raise (`placement.errors`); the plan is checked before it returns."""
    from placement.plan.assign import Ask, assign
    from placement.plan.inputs import DefaultPolicies, read_default_policy, read_inputs

    notes = _Notes(request.notify)
    inputs = read_inputs(request.inventory, request.topics, request.current, request.root)
    for note in inputs.notes:
        notes.say(note)
    state = _state(request.current, request.sizes, notes)
    if request.topics is not None:  # a count left out, or a topic the cluster lacks
        from placement.plan.honest import check_topics

        check_topics(inputs.topics, request.topics, state)
    defaults = (
        read_default_policy(request.default_policy, CheckContext(inputs.loaded.inventory))
        if request.default_policy is not None
        else DefaultPolicies()
    )
    outcome = assign(
        inputs.loaded,
        inputs.topics,
        state,
        drain=request.drain,
        exclude=request.exclude,
        options=request.options,
        policies_known=inputs.policies_known,
        brokers_from=inputs.brokers_from,
        ask=Ask(request.repair, request.only_topics, request.first_rack, defaults),
    )
    sizes = state.sizes if state is not None else {}
    result = AssignResult(outcome, sizes, notes, request.batching)
    if request.batching is None:
        return result
    files, doc = _batches(outcome, sizes, request.batching, notes)
    return replace(result, batch_files=files, batches=doc)


def _state(
    current: Path | Snapshot | None, sizes: Path | None, notes: _Notes
) -> CurrentState | None:
    """The current state, its partition sizes from ``sizes`` when given (they replace a
    snapshot's); what the sizes file says about itself and how it fits, as notes."""
    if current is None:
        return None
    from placement.io.convert import coverage_notes, load_sizes
    from placement.io.current import read_current, snapshot_state

    state = read_current(current) if isinstance(current, Path) else snapshot_state(current)
    if sizes is None:
        return state
    loaded = load_sizes(sizes)
    keys = {a.key for a in state.assignments}
    where = "--current" if isinstance(current, Path) else current.source
    said = loaded.notes + coverage_notes(loaded.sizes, keys, str(sizes), where)
    if state.sizes:
        snapshot = f"the snapshot {current}" if isinstance(current, Path) else current.source
        said.insert(0, f"--sizes {sizes} replaces the partition sizes in {snapshot}")
    for note in said:
        notes.say(note)
    return replace(state, sizes={k: v for k, v in loaded.sizes.items() if k in keys})


def _batches(
    outcome: AssignOutcome, sizes: Mapping[Key, int], batching: Batching, notes: _Notes
) -> tuple[dict[str, str], dict[str, Any]]:
    """Split the plan under the caps, check the batches independently, render the
    directory's files; the batches that are one oversized partition each, as a note."""
    from placement.plan.batches import render_files, split_checked, summary

    batches = split_checked(
        outcome.plan,
        {a.key: a for a in outcome.rollback},
        sizes,
        batch_size=batching.size,
        max_moves_per_broker=batching.moves_per_broker,
        batch_bytes=batching.bytes,
        current_leaders=outcome.senders,
    )
    files = render_files(batches, batching.throttle)
    doc = summary(batches, batching.throttle)
    alone = [row["file"] for row in doc["batches"] if row["oversized"]]
    if alone:
        listed = ", ".join(alone[:5]) + (f" and {len(alone) - 5:,} more" if len(alone) > 5 else "")
        notes.say(
            f"{len(alone):,} partition(s) copy more than --batch-bytes {batching.bytes:,} "
            f"bytes on their own: each is a batch alone ({listed})"
        )
    return files, doc
