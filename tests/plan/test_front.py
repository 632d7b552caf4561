"""`assign` used from Python through its front door, `placement.plan.front.run`: the
same plan and figures as the command, checked by the independent checker."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from placement.errors import InputError
from placement.io.current import CurrentState, read_current
from placement.model.inventory import Inventory
from placement.plan.checker import PlanContext, check_plan
from placement.plan.front import AssignRequest, AssignResult, Batching, run
from placement.plan.topics import read_topics
from placement.rules.base import CheckContext

Cli = Callable[..., Result]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INVENTORY = EXAMPLES / "inventory.json"
TOPICS = EXAMPLES / "topics.json"


@pytest.fixture(scope="module")
def current(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example cluster laid out from scratch, as the demo's first step does."""
    fresh = run(AssignRequest(INVENTORY, TOPICS))
    assert fresh.plan_text is not None and fresh.rollback_text() is None
    path = tmp_path_factory.mktemp("front") / "current.json"
    path.write_text(fresh.plan_text)
    return path


def _drain(current: Path, **kw: object) -> AssignResult:
    return run(AssignRequest(INVENTORY, TOPICS, current=current, drain=(4, 8), **kw))  # type: ignore[arg-type]


def test_a_drain_passes_the_independent_checker(current: Path) -> None:
    result = _drain(current)
    inventory = Inventory.model_validate_json(INVENTORY.read_text())
    specs = read_topics(TOPICS, CheckContext(inventory))
    state = read_current(current)
    context = PlanContext(
        inventory,
        {s.name: s.policy for s in specs},
        {a.key: a for a in state.assignments},
        drained=frozenset({4, 8}),
    )
    assert result.plan, "brokers 4 and 8 hold replicas: the drain moves them"
    assert check_plan(result.plan, context) == []
    after = {a.key: a for a in state.assignments} | {a.key: a for a in result.plan}
    assert not any({4, 8} & set(a.replicas) for a in after.values())
    # the rollback restores exactly the partitions the plan changes, as they are now
    rollback = json.loads(result.rollback_text() or "{}")["partitions"]
    assert {(p["topic"], p["partition"]) for p in rollback} == {a.key for a in result.plan}
    assert all(tuple(p["replicas"]) == replicas_now(state, p) for p in rollback)


def replicas_now(state: CurrentState, entry: dict[str, object]) -> tuple[int, ...]:
    (now,) = (a for a in state.assignments if a.key == (entry["topic"], entry["partition"]))
    return now.replicas


def test_the_summary_is_the_commands(cli: Cli, current: Path, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    args = ["assign", "--inventory", INVENTORY, "--topics", TOPICS, "--current", current]
    r = cli([*args, "--drain", "4,8", "--out", out, "--format", "json"])
    assert r.exit_code == 0, r.output
    result = _drain(current)
    assert json.loads(result.summary_json()) == json.loads(r.stdout)
    assert result.summary.replicas_added == result.outcome.replicas_added > 0
    assert out.read_text() == result.plan_text


def test_batches_are_the_out_dirs_files(cli: Cli, current: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "batches"
    args = ["assign", "--inventory", INVENTORY, "--topics", TOPICS, "--current", current]
    caps = ["--out-dir", out_dir, "--max-moves-per-broker", "2"]
    r = cli([*args, "--drain", "4,8", *caps, "--format", "json"])
    assert r.exit_code == 0, r.output
    result = _drain(current, batching=Batching(out_dir, moves_per_broker=2))
    assert result.batch_files is not None and len(result.batch_files) > 2
    assert result.batch_files == {p.name: p.read_text() for p in out_dir.iterdir()}
    assert json.loads(result.summary_json()) == json.loads(r.stdout)


def test_notes_come_as_data_and_as_they_arise(tmp_path: Path) -> None:
    sizes = tmp_path / "sizes.csv"
    sizes.write_text("topic,partition,size_bytes\norders,0,1000\n")
    heard: list[str] = []
    result = run(
        AssignRequest(
            INVENTORY,
            EXAMPLES / "topics-describe.json",
            current=EXAMPLES / "describe.txt",
            sizes=sizes,
            drain=(4,),
            notify=heard.append,
        )
    )
    assert result.notes == heard
    assert any("sizes.csv" in n for n in heard), heard  # the partitions it leaves out


def test_a_failure_raises_the_libraries_error(tmp_path: Path) -> None:
    bad = tmp_path / "inventory.json"
    bad.write_text("not an inventory")
    with pytest.raises(InputError):
        run(AssignRequest(bad, TOPICS))


def test_a_bad_broker_id_is_refused_before_any_input_is_read(cli: Cli, tmp_path: Path) -> None:
    """The request holds parsed flags: a typo in --drain is said before the inputs are
    read (or a live cluster is), even when an input would fail too."""
    missing = tmp_path / "nowhere.json"
    r = cli(["assign", "--inventory", missing, "--topics", TOPICS, "--drain", "4,x"])
    assert r.exit_code == 2, r.output
    assert "--drain" in r.stderr and "nowhere.json" not in r.stderr
