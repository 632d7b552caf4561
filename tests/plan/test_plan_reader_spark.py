"""The Spark paths read plans through the same strict reader: `score --plan` and
`simulate --snapshot --plan` refuse what Kafka would refuse, exit 2 with file:line.

Before, Spark read plans itself: a corrupt line dropped its partition, a cut plan scored
(and ranked best), entries for topics, partitions or brokers the snapshot lacks were
ignored; all exit 0.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _bad_plans import BAD_PLANS, FOREIGN
from typer.testing import Result

pytestmark = pytest.mark.spark

Cli = Callable[..., Result]


@pytest.fixture(scope="module")
def snapshot(
    tmp_path_factory: pytest.TempPathFactory, example_snapshot: Callable[[Path], Path]
) -> Path:
    """examples/describe.txt + examples/inventory.json as a snapshot."""
    snap = tmp_path_factory.mktemp("plans") / "snap"
    example_snapshot(snap)
    return snap


def _score(cli: Cli, snap: Path, plan: Path) -> Result:
    return cli(["score", "--snapshot", snap, "--plan", plan, "--format", "json"])


def _simulate(cli: Cli, snap: Path, plan: Path, out: Path) -> Result:
    return cli(
        [
            "simulate",
            "--snapshot",
            snap,
            "--fail-rack",
            "us-east",
            "--plan",
            plan,
            "--unclean-out",
            out,
            "--format",
            "json",
        ]
    )


@pytest.mark.parametrize("kind", sorted(BAD_PLANS))
def test_score_and_simulate_refuse_a_bad_plan(
    spark: Any, cli: Cli, snapshot: Path, tmp_path: Path, kind: str
) -> None:
    text, line = BAD_PLANS[kind]
    plan = tmp_path / "plan.json"
    plan.write_text(text)
    r = _score(cli, snapshot, plan)
    assert r.exit_code == 2, r.stdout + r.stderr
    assert f"plan.json:{line}:" in r.stderr
    out = tmp_path / "unclean.json"
    r = _simulate(cli, snapshot, plan, out)
    assert r.exit_code == 2, r.stdout + r.stderr
    assert f"plan.json:{line}:" in r.stderr
    assert not out.exists()


@pytest.mark.parametrize("kind", sorted(FOREIGN))
def test_score_and_simulate_refuse_a_plan_for_another_cluster(
    spark: Any, cli: Cli, snapshot: Path, tmp_path: Path, kind: str
) -> None:
    text, line, named = FOREIGN[kind]
    plan = tmp_path / "plan.json"
    plan.write_text(text)
    r = _score(cli, snapshot, plan)
    assert r.exit_code == 2, r.stdout + r.stderr
    assert f"plan.json:{line}:" in r.stderr and named in r.stderr
    out = tmp_path / "unclean.json"
    r = _simulate(cli, snapshot, plan, out)
    assert r.exit_code == 2, r.stdout + r.stderr
    assert f"plan.json:{line}:" in r.stderr and named in r.stderr
    assert not out.exists()
