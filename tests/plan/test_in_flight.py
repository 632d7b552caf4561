"""`assign --current` with a reassignment in flight: describe output or a snapshot taken
during the move is read, the moving partitions start from the layout the move leads to
(Replicas less Removing Replicas) and are left alone, the rest is planned, and the
summary says how many were left alone and why."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from placement.io.current import read_current
from placement.io.inventory import load_inventory
from placement.io.reassignment import read_reassignment
from placement.model.scope import Scope
from placement.plan.assign import assign
from placement.plan.checker import PlanCheckError, PlanContext, verify_plan
from tests.io.test_snapshot_in_flight import write_inputs

Cli = Callable[..., Result]


def test_the_current_state_is_the_moves_target(tmp_path: Path) -> None:
    describe, _ = write_inputs(tmp_path)
    state = read_current(describe)
    layout = {a.partition: a.replicas for a in state.assignments}
    assert layout == {0: (1, 2, 3), 1: (4, 2, 3), 2: (1, 5, 3), 3: (6, 4, 5)}
    assert state.in_flight == {("ledger", 1), ("ledger", 2)}


def test_assign_leaves_the_moving_partitions_alone(tmp_path: Path) -> None:
    """Draining broker 1 moves ledger-0 off it; ledger-2, which is gaining broker 1, is
    not moved again (its replica there stays, and is counted on the drained broker)."""
    describe, inventory = write_inputs(tmp_path)
    loaded = load_inventory(inventory)
    state = read_current(describe)
    outcome = assign(loaded, [], state, drain=[1])
    changed = {a.key: a.replicas for a in outcome.plan}
    assert set(changed) == {("ledger", 0)}
    assert 1 not in changed[("ledger", 0)]
    assert outcome.in_flight_kept == 2 and outcome.offline_kept == 0
    summary = outcome.summary()
    assert summary.in_flight_kept == 2
    assert summary.replicas_left_on_drained == 1  # ledger-2's incoming replica
    # the independent checker passes the plan, and refuses one touching a move in flight
    before = {a.key: a for a in state.assignments}
    context = PlanContext(
        loaded.inventory,
        {},
        before,
        frozenset({1}),
        scope=Scope(frozen=state.in_flight),
    )
    verify_plan(outcome.plan, context)
    moved = before[("ledger", 1)].with_broker(4, 6)
    with pytest.raises(PlanCheckError, match="ledger"):
        verify_plan([*outcome.plan, moved], context)


def _json(r: Result) -> dict[str, Any]:
    assert r.exit_code == 0, r.output
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


def test_assign_reads_describe_output_and_snapshots_in_flight(cli: Cli, tmp_path: Path) -> None:
    describe, inventory = write_inputs(tmp_path)
    snap = tmp_path / "snap"
    made = cli(["snapshot", "from-describe", describe, "--inventory", inventory, "--out", snap])
    assert made.exit_code == 0, made.output
    for current in (describe, snap):
        out = tmp_path / f"{current.name}.json"
        args = ["assign", "--inventory", inventory, "--current", current, "--drain", "1"]
        doc = _json(cli([*args, "--out", out, "--format", "json"]))
        assert doc["in_flight_kept"] == 2
        assert {(a.topic, a.partition) for a in read_reassignment(out)} == {("ledger", 0)}


def test_the_text_summary_says_what_is_in_flight(cli: Cli, tmp_path: Path) -> None:
    describe, inventory = write_inputs(tmp_path)
    out = tmp_path / "plan.json"
    args = ["assign", "--inventory", inventory, "--current", describe, "--drain", "1"]
    r = cli([*args, "--out", out, "--format", "text"])
    assert r.exit_code == 0, r.output
    assert "partitions not moved: 2 (a reassignment is in progress" in r.stdout + r.stderr
