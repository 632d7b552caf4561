"""`placement.api.simulate` from Python, in process: the same report and unclean partitions as
`mrc-plan simulate --current` writes for the same flags."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from placement import api
from placement.diagnostics.jsonout import report_json
from placement.errors import UsageError

Cli = Callable[..., Result]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INVENTORY = EXAMPLES / "inventory.json"
DESCRIBE = EXAMPLES / "describe.txt"
STATUS = EXAMPLES / "replica-status.json"


def test_the_report_and_the_unclean_file_are_the_commands(cli: Cli, tmp_path: Path) -> None:
    unclean = tmp_path / "unclean.json"
    args = ["--current", DESCRIBE, "--inventory", INVENTORY, "--fail-rack", "us-west"]
    args += ["--replica-status", STATUS, "--min-insync-replicas", "2"]
    r = cli(["simulate", *args, "--format", "json", "--unclean-out", unclean])
    request = api.SimulateRequest(
        fail_rack="us-west",
        current=DESCRIBE,
        inventory=INVENTORY,
        replica_status=STATUS,
        min_insync_replicas=2,
    )
    result = api.simulate(request)
    assert r.exit_code == (1 if result.failed else 0)
    assert report_json(result.report) == r.stdout
    mine = tmp_path / "mine.json"
    written = result.write_unclean(mine)
    assert written == json.loads(r.stdout)["totals"]["unclean"] > 0
    assert mine.read_bytes() == unclean.read_bytes()


def test_brokers_after_a_plan_as_the_command(cli: Cli, tmp_path: Path) -> None:
    """A plan from `placement.api.assign`, then brokers down after it: the report the command
    prints for the plan the command wrote."""
    plan = tmp_path / "drain.json"
    flags = ["--inventory", INVENTORY, "--topics", EXAMPLES / "topics-describe.json"]
    r = cli(["assign", *flags, "--current", DESCRIBE, "--drain", "4", "--out", plan])
    assert r.exit_code == 0, r.output
    drained = api.assign(
        api.AssignRequest(
            INVENTORY, EXAMPLES / "topics-describe.json", current=DESCRIBE, drain=(4,)
        )
    )
    assert drained.plan_text == plan.read_text()
    args = ["--current", DESCRIBE, "--inventory", INVENTORY, "--fail-brokers", "5,6"]
    r = cli(["simulate", *args, "--plan", plan, "--format", "json", "--exit-zero"])
    request = api.SimulateRequest(
        fail_brokers=[5, 6], current=DESCRIBE, inventory=INVENTORY, plan=plan
    )
    assert report_json(api.simulate(request).report) == r.stdout


def test_a_current_without_an_inventory_is_refused_before_any_work() -> None:
    request = api.SimulateRequest(fail_rack="us-west", current=DESCRIBE)
    with pytest.raises(UsageError, match="--current needs --inventory"):
        api.simulate(request)
