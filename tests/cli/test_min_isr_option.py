"""One name for the cluster's min.insync.replicas: `--min-insync-replicas` on every command
that takes it; `--default-min-isr`, its old name on score and simulate, still works (a
note on stderr, the same figures) and is not listed; the JSON reports carry the setting as
`min_insync_replicas`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

REPO = Path(__file__).resolve().parents[2]
SCHEMAS_DIR = REPO / "schemas"
INVENTORY = REPO / "examples" / "inventory.json"
NOTE = "note: --default-min-isr is now --min-insync-replicas"
Cli = Callable[..., Result]

# Two topics that set no min.insync.replicas, each with one replica per rack (inventory:
# us-west 1-4, us-east 5-8, eu-central 9-11): any rack down leaves 2 in sync, which is
# enough for a min ISR of 1 or 2 and not for 3.
DESCRIBE = (
    "Topic: clicks\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: \n"
    "\tTopic: clicks\tPartition: 0\tLeader: 1\tReplicas: 1,5,9\tIsr: 1,5,9\n"
    "\tTopic: clicks\tPartition: 1\tLeader: 6\tReplicas: 6,10,2\tIsr: 6,10,2\n"
    "Topic: audit-log\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: \n"
    "\tTopic: audit-log\tPartition: 0\tLeader: 11\tReplicas: 11,3,7\tIsr: 11,3,7\n"
)


@pytest.fixture
def describe(tmp_path: Path) -> Path:
    path = tmp_path / "describe.txt"
    path.write_text(DESCRIBE, encoding="utf-8")
    return path


def _validate(doc: dict[str, Any], name: str) -> None:
    import jsonschema

    schema = json.loads((SCHEMAS_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(doc, schema)


def _simulate(cli: Cli, describe: Path, *flags: str) -> Result:
    args = ["simulate", "--current", describe, "--inventory", INVENTORY]
    return cli([*args, "--fail-rack", "us-east", "--format", "json", *flags])


def test_simulate_takes_min_insync_replicas(cli: Cli, describe: Path) -> None:
    default = _simulate(cli, describe)
    assert default.exit_code == 0, default.stderr
    r = _simulate(cli, describe, "--min-insync-replicas", "3")
    assert r.exit_code == 1, r.stderr  # partitions under min ISR
    doc = json.loads(r.stdout)
    _validate(doc, "simulate-report")
    assert doc["min_insync_replicas"] == 3
    assert "default_min_isr" not in doc
    assert doc["totals"]["under_min_isr"] == 3
    assert json.loads(default.stdout)["min_insync_replicas"] == 1
    assert json.loads(default.stdout)["totals"]["under_min_isr"] == 0
    assert NOTE not in r.stderr and NOTE not in default.stderr


def test_the_old_name_gives_the_same_report_and_a_note(cli: Cli, describe: Path) -> None:
    new = _simulate(cli, describe, "--min-insync-replicas", "3")
    old = _simulate(cli, describe, "--default-min-isr", "3")
    assert old.exit_code == new.exit_code == 1
    assert old.stdout == new.stdout
    assert [ln for ln in old.stderr.splitlines() if "default-min-isr" in ln] == [NOTE]
    # both names, one value: no conflict
    both = _simulate(cli, describe, "--min-insync-replicas", "3", "--default-min-isr", "3")
    assert both.exit_code == 1 and both.stdout == new.stdout


@pytest.mark.parametrize("command", ["simulate", "score"])
def test_both_names_with_different_values_are_a_usage_error(
    cli: Cli, describe: Path, tmp_path: Path, command: str
) -> None:
    flags = ["--min-insync-replicas", "2", "--default-min-isr", "3"]
    if command == "simulate":
        r = _simulate(cli, describe, *flags)
    else:  # refused before the snapshot is read or Spark started
        r = cli(["score", "--snapshot", tmp_path / "no-such-snapshot", *flags])
    assert r.exit_code == 2, r.output
    assert "--min-insync-replicas" in r.stderr and "--default-min-isr" in r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize("command", ["simulate", "score"])
def test_help_lists_the_new_name_only(cli: Cli, command: str) -> None:
    r = cli([command, "--help"])
    assert r.exit_code == 0
    assert "--min-insync-replicas" in r.stdout
    assert "--default-min-isr" not in r.stdout


@pytest.mark.parametrize("flag", ["--min-insync-replicas", "--default-min-isr"])
def test_out_of_range_values_are_refused(cli: Cli, describe: Path, flag: str) -> None:
    for value in ("0", str(2**31)):
        r = _simulate(cli, describe, flag, value)
        assert r.exit_code == 2, r.output
        assert flag in r.stderr


@pytest.mark.spark
def test_score_takes_either_name_with_the_same_figures(
    cli: Cli, describe: Path, tmp_path: Path, spark: Any
) -> None:
    snap = tmp_path / "snap"
    made = cli(["snapshot", "from-describe", describe, "--inventory", INVENTORY, "--out", snap])
    assert made.exit_code == 0, made.stderr
    score = ["score", "--snapshot", snap, "--master", "local[2]", "--format", "json"]
    new = cli([*score, "--min-insync-replicas", "3"])
    old = cli([*score, "--default-min-isr", "3"])
    assert new.exit_code == old.exit_code == 0, new.stderr + old.stderr
    assert NOTE in old.stderr and NOTE not in new.stderr
    report = json.loads(new.stdout)
    _validate(report, "score-report")
    assert report == json.loads(old.stdout)
    # each rack down leaves 2 of 3 in sync: under a min ISR of 3, every partition
    failures = report["baseline"]["rack_failure"]
    assert {rack: f["under_min_isr"] for rack, f in failures.items()} == {
        "us-west": 3,
        "us-east": 3,
        "eu-central": 3,
    }
