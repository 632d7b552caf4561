"""`validate DIR` checks each .json file as what its top-level keys say it is: an inventory,
a topics file, a reassignment plan or an `assign --out-dir` summary.json is checked by its
own reader (a note on stderr says what it was taken for), not reported as a broken
placement policy; anything else is still a policy."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from placement.rules.validate import ValidateOptions, validate_paths

Cli = Callable[..., Result]
SECRET = "hunter2-very-secret-value"  # in every file: no report or note may show it
POLICY = {
    "version": 1,
    "replicas": [
        {"count": 2, "constraints": {"rack": "east"}},
        {"count": 1, "constraints": {"rack": "west"}},
    ],
}
INVENTORY = {
    "brokers": [
        {"id": 1, "rack": "east"},
        {"id": 2, "rack": "east"},
        {"id": 3, "rack": "west"},
    ],
}
PLAN = {"version": 1, "partitions": [{"topic": SECRET, "partition": 0, "replicas": [1, 2, 3]}]}
TOPICS = {"topics": [{"name": "orders", "partitions": 3, "placement": POLICY}]}
SUMMARY = {
    "total": {
        "batches": 0,
        "partitions": 0,
        "replicas_added": 0,
        "bytes": None,
        "eta_seconds": None,
    },
    "batches": [],
    "order": [],
    "throttle_bytes_per_s": None,
    "note": SECRET,
}


def _write(root: Path, files: dict[str, Any]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, value in files.items():
        (root / name).write_text(json.dumps(value, indent=2))
    return root


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "repo",
        {
            "orders.json": POLICY,
            "brokers.json": INVENTORY,
            "reassign.json": PLAN,
            "topics.json": TOPICS,
            "summary.json": SUMMARY,
        },
    )


def _codes(report: dict[str, Any]) -> dict[str, list[str]]:
    return {Path(f["path"]).name: [d["code"] for d in f["diagnostics"]] for f in report["files"]}


def test_each_kind_is_checked_as_what_it_is(cli: Cli, mixed: Path) -> None:
    result = cli(["validate", mixed, "--format", "json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    codes = _codes(json.loads(result.stdout))
    assert codes == {
        "orders.json": [],
        "brokers.json": [],
        "reassign.json": [],
        "topics.json": [],
        "summary.json": [],
    }
    notes = result.stderr
    for name, what in [
        ("brokers.json", "a broker inventory"),
        ("reassign.json", "a reassignment plan"),
        ("topics.json", "a topics file"),
        ("summary.json", "the summary.json of an `assign --out-dir` directory"),
    ]:
        assert f"note: {mixed / name}: taken for {what}" in notes
    assert f"--inventory {mixed / 'brokers.json'}" in notes
    assert SECRET not in result.stdout + result.stderr


def test_a_file_of_no_known_kind_is_still_a_policy(cli: Cli, tmp_path: Path) -> None:
    root = _write(tmp_path / "repo", {"odd.json": {"name": SECRET}})
    result = cli(["validate", root, "--format", "json"])
    assert result.exit_code == 1
    codes = _codes(json.loads(result.stdout))["odd.json"]
    assert "MRC203" in codes and "MRC204" in codes
    assert "taken for" not in result.stderr


def test_an_object_with_a_policys_keys_is_a_policy(tmp_path: Path) -> None:
    """ "replicas" beside "brokers": a policy with an unknown key, not an inventory."""
    root = _write(tmp_path / "repo", {"p.json": {**POLICY, "brokers": []}})
    found = validate_paths([root], ValidateOptions())
    assert [d.code for d in found[str(root / "p.json")]] == ["MRC204"]


def test_the_inline_policies_of_a_topics_file_are_checked(cli: Cli, tmp_path: Path) -> None:
    broken = {"version": 1, "replicas": [{"count": 0, "constraints": {"rack": "east"}}]}
    topics = {
        "default_placement": POLICY,
        "topics": [
            {"name": "a", "partitions": 1},
            {"name": "b", "partitions": 1, "placement": broken},
            {"name": "c", "partitions": 1, "placement": "orders.json"},
        ],
    }
    root = _write(tmp_path / "repo", {"topics.json": topics})
    found = validate_paths([root], ValidateOptions())[str(root / "topics.json")]
    assert [(d.code, d.pointer, d.context) for d in found] == [
        ("MRC206", "/topics/1/placement/replicas/0/count", "topic b")
    ]


def test_the_inventory_is_checked_by_the_inventory_rules(tmp_path: Path) -> None:
    inventory = {"brokers": [{"id": 1, "rack": "east"}, {"id": 2}]}
    root = _write(tmp_path / "repo", {"brokers.json": inventory})
    found = validate_paths([root], ValidateOptions())[str(root / "brokers.json")]
    assert [(d.code, d.line) for d in found] == [("MRC403", 7)]


def test_the_inventory_given_as_option_too_is_reported_once(tmp_path: Path) -> None:
    from placement.io.inventory import inventory_for_checks

    inventory = {"brokers": [{"id": 1, "rack": "east"}, {"id": 2}]}
    root = _write(tmp_path / "repo", {"brokers.json": inventory})
    options = ValidateOptions(inventory=inventory_for_checks(root / "brokers.json"))
    found = validate_paths([root], options)[str(root / "brokers.json")]
    assert [d.code for d in found] == ["MRC403"]


@pytest.mark.parametrize(
    ("name", "value", "where"),
    [
        ("reassign.json", {"version": 1, "partitions": [{"topic": SECRET}]}, "reassign.json:"),
        ("brokers.json", {"brokers": [{"id": SECRET, "rack": "east"}]}, "brokers.json:"),
        ("summary.json", {**SUMMARY, "batches": SECRET}, "summary.json:"),
    ],
)
def test_a_file_its_reader_refuses_is_an_input_error(
    cli: Cli, tmp_path: Path, name: str, value: dict[str, Any], where: str
) -> None:
    root = _write(tmp_path / "repo", {name: value, "orders.json": POLICY})
    result = cli(["validate", root])
    assert result.exit_code == 2
    assert where in result.stderr
    assert SECRET not in result.stdout + result.stderr


def test_many_files_of_one_kind_are_one_note(cli: Cli, tmp_path: Path) -> None:
    root = _write(tmp_path / "repo", {f"plan-{i}.json": PLAN for i in range(5)})
    result = cli(["validate", root])
    assert result.exit_code == 0
    notes = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert notes == [
        f"note: {root / 'plan-0.json'} and 4 more: taken for a reassignment plan "
        '(a top-level "partitions"): it was read as Kafka reads a reassignment file; '
        f"`mrc-plan plan show {root / 'plan-0.json'}` shows it"
    ]


@pytest.mark.slow  # the fast tier leaves it to make test
def test_files_larger_than_a_policy_are_checked_as_their_kind(cli: Cli, tmp_path: Path) -> None:
    """A plan, an inventory or a topics file past the 1 MiB a policy may hold is checked by
    its own reader under its own cap; a file of no kind that large is still refused."""
    partitions = [
        {
            "topic": f"t{i // 100}",
            "partition": i % 100,
            "replicas": [1, 2, 3],
            "log_dirs": ["any"] * 3,
        }
        for i in range(20_000)
    ]
    brokers = [{"id": i, "rack": ("east", "west")[i % 2]} for i in range(1, 30_001)]
    topics = [
        {"name": f"topic-{i:06d}", "partitions": 3, "placement": POLICY} for i in range(6_000)
    ]
    root = _write(
        tmp_path / "repo",
        {
            "big-plan.json": {"version": 1, "partitions": partitions},
            "big-inventory.json": {"brokers": brokers},
            "big-topics.json": {"topics": topics},
        },
    )
    assert all(
        (root / n).stat().st_size > 2**20
        for n in ("big-plan.json", "big-inventory.json", "big-topics.json")
    )
    result = cli(["validate", root, "--format", "json"])
    assert result.exit_code == 0, result.stderr
    assert set(_codes(json.loads(result.stdout))) == {
        "big-plan.json",
        "big-inventory.json",
        "big-topics.json",
    }
    (root / "odd.json").write_text(json.dumps({"name": "x" * 2**21}))
    refused = cli(["validate", root])
    assert refused.exit_code == 2
    assert "odd.json" in refused.stderr and "MRC_PLAN_MAX_POLICY_BYTES" in refused.stderr
