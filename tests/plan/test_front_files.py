"""`placement.api.assign` from Python: every file `mrc-plan assign` writes for the same flags
(the plan, its rollback and election files, the summary, the batches of --out-dir, the
--policy-dir files) is the result's, byte for byte."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from placement import api
from placement.plan.front import Batching

Cli = Callable[..., Result]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INVENTORY = EXAMPLES / "inventory.json"
TOPICS = EXAMPLES / "topics-describe.json"
DESCRIBE = EXAMPLES / "describe.txt"
SIZES = EXAMPLES / "log-dirs.txt"


def _files(top: Path) -> dict[str, bytes]:
    return {p.relative_to(top).as_posix(): p.read_bytes() for p in top.rglob("*") if p.is_file()}


def _text(path: Path) -> str | None:
    """What the command wrote at ``path``; None: no file (it had nothing to write)."""
    return path.read_text() if path.exists() else None


def test_a_drain_writes_what_the_result_holds(cli: Cli, tmp_path: Path) -> None:
    out = {name: tmp_path / f"{name}.json" for name in ("out", "rollback", "election", "summary")}
    args = ["assign", "--inventory", INVENTORY, "--topics", TOPICS, "--current", DESCRIBE]
    args += ["--sizes", SIZES, "--drain", "4,8", "--balance-leaders"]
    for name, path in out.items():
        args += [f"--{name}", path]
    r = cli(args)
    assert r.exit_code == 0, r.output
    from placement.solver.engine import Options

    result = api.assign(
        api.AssignRequest(
            INVENTORY,
            TOPICS,
            current=DESCRIBE,
            sizes=SIZES,
            drain=(4, 8),
            options=Options(balance_leaders=True),
        )
    )
    assert result.plan_text is not None and result.rollback_text() is not None
    assert result.plan_text == _text(out["out"])
    assert result.rollback_text() == _text(out["rollback"])
    assert result.election_text() == _text(out["election"])  # none: no file
    assert result.summary_json() == _text(out["summary"])
    # the notes of the inputs come first on stderr, before the summary says its own
    lines = r.stderr.splitlines()[: len(result.notes)]
    assert result.notes and lines == [f"note: {n}" for n in result.notes]


def test_the_batches_are_the_results(cli: Cli, tmp_path: Path) -> None:
    batches = tmp_path / "batches"
    args = ["assign", "--inventory", INVENTORY, "--topics", TOPICS, "--current", DESCRIBE]
    args += ["--sizes", SIZES, "--drain", "4,8", "--out-dir", batches]
    args += ["--max-moves-per-broker", "1", "--batch-bytes", "1GB", "--throttle", "50MB"]
    r = cli(args)
    assert r.exit_code == 0, r.output
    batching = Batching(batches, moves_per_broker=1, bytes=10**9, throttle=50 * 10**6)
    result = api.assign(
        api.AssignRequest(
            INVENTORY, TOPICS, current=DESCRIBE, sizes=SIZES, drain=(4, 8), batching=batching
        )
    )
    assert result.batch_files is not None
    assert {n: t.encode() for n, t in result.batch_files.items()} == _files(batches)


def test_the_policy_files_are_the_results(cli: Cli, tmp_path: Path) -> None:
    policies, plan = tmp_path / "policies", tmp_path / "plan.json"
    changes = EXAMPLES / "topics-changes.json"
    args = ["assign", "--inventory", INVENTORY, "--current", DESCRIBE, "--topics", changes]
    r = cli([*args, "--out", plan, "--policy-dir", policies])
    assert r.exit_code == 0, r.output
    result = api.assign(api.AssignRequest(INVENTORY, changes, current=DESCRIBE))
    files = result.policy_files()
    assert files, "topics-changes.json changes policies"
    assert {n: t.encode() for n, t in files.items()} == _files(policies)
    assert result.plan_text == plan.read_text()
