"""Every plan a command reads goes through one strict reader: Kafka's rules, exit 2, file:line.

In-process paths here (`plan show`, `simulate --current`); the Spark paths (`score`,
`simulate --snapshot`) are in test_plan_reader_spark.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _bad_plans import BAD_PLANS, EXAMPLES, FOREIGN, GOOD, NEW_IN_PROCESS
from typer.testing import Result

from placement.errors import InputError
from placement.io.reassignment import parse_plan, parse_reassignment

Cli = Callable[..., Result]


@pytest.mark.parametrize("kind", NEW_IN_PROCESS)
def test_parse_refuses_with_a_position(kind: str) -> None:
    text, line = BAD_PLANS[kind]
    with pytest.raises(InputError) as info:
        parse_reassignment(text, "p.json")
    assert info.value.path == "p.json"
    assert info.value.line == line, info.value.message


def test_deep_nesting_in_kafka_tool_output_is_an_input_error() -> None:
    text = "Current partition replica assignment\n" + "{" + '"a":[' * 100_000
    with pytest.raises(InputError) as info:
        parse_reassignment(text, "out.txt")
    assert info.value.line == 2


def test_a_valid_plan_reads_and_knows_its_layout() -> None:
    plan = parse_plan(GOOD, "p.json")
    assert [a.key for a in plan.entries] == [
        ("legacy-events", 0),
        ("orders", 0),
        ("orders", 1),
    ]
    assert plan.one_per_line
    pretty = json.dumps(json.loads(GOOD), indent=2)
    other = parse_plan(pretty, "p.json")
    assert other.entries == plan.entries and not other.one_per_line
    # entries are located in either layout (for errors only the cluster can find)
    assert plan.position(2).line == 4
    assert other.position(0).line < other.position(1).line < other.position(2).line
    # two entries on one line: valid JSON, but not the line-per-entry layout
    squeezed = GOOD.replace("},\n{", "},{", 1)
    assert parse_plan(squeezed, "p.json").entries == plan.entries
    assert not parse_plan(squeezed, "p.json").one_per_line


@pytest.mark.parametrize("kind", NEW_IN_PROCESS)
def test_plan_show_refuses_a_bad_plan(cli: Cli, tmp_path: Path, kind: str) -> None:
    text, line = BAD_PLANS[kind]
    path = tmp_path / "plan.json"
    path.write_text(text)
    r = cli(["plan", "show", path])
    assert r.exit_code == 2, r.stdout + r.stderr
    assert f"plan.json:{line}:" in r.stderr


def _simulate(cli: Cli, plan: Path, current: Path | None = None) -> Result:
    return cli(
        [
            "simulate",
            "--current",
            current or EXAMPLES / "describe.txt",
            "--inventory",
            EXAMPLES / "inventory.json",
            "--fail-rack",
            "us-east",
            "--plan",
            plan,
        ]
    )


@pytest.mark.parametrize("kind", NEW_IN_PROCESS)
def test_simulate_current_refuses_a_bad_plan(cli: Cli, tmp_path: Path, kind: str) -> None:
    text, line = BAD_PLANS[kind]
    path = tmp_path / "plan.json"
    path.write_text(text)
    r = _simulate(cli, path)
    assert r.exit_code == 2, r.stdout + r.stderr
    assert f"plan.json:{line}:" in r.stderr


@pytest.mark.parametrize("kind", sorted(FOREIGN))
def test_simulate_current_refuses_a_plan_for_another_cluster(
    cli: Cli, tmp_path: Path, kind: str
) -> None:
    text, line, named = FOREIGN[kind]
    path = tmp_path / "plan.json"
    path.write_text(text)
    parse_reassignment(text)  # well-formed: only the cluster tells
    r = _simulate(cli, path)
    assert r.exit_code == 2, r.stdout + r.stderr
    assert f"plan.json:{line}:" in r.stderr and named in r.stderr


def test_simulate_current_snapshot_refuses_a_plan_for_another_cluster(
    cli: Cli, tmp_path: Path, example_snapshot: Callable[[Path], Path]
) -> None:
    snap = tmp_path / "snap"
    example_snapshot(snap)
    for kind in sorted(FOREIGN):
        text, line, named = FOREIGN[kind]
        path = tmp_path / "plan.json"
        path.write_text(text)
        r = _simulate(cli, path, current=snap)
        assert r.exit_code == 2, (kind, r.stdout + r.stderr)
        assert f"plan.json:{line}:" in r.stderr and named in r.stderr
    for kind in ("cut in half", "deep arrays", "broker id 2^31"):
        path.write_text(BAD_PLANS[kind][0])
        r = _simulate(cli, path, current=snap)
        assert r.exit_code == 2, (kind, r.stdout + r.stderr)
        assert f"plan.json:{BAD_PLANS[kind][1]}:" in r.stderr


def _out_dir(cli: Cli, tmp_path: Path) -> Path:
    out = tmp_path / "batches"
    r = cli(
        [
            "assign",
            "--inventory",
            EXAMPLES / "inventory.json",
            "--topics",
            EXAMPLES / "topics-describe.json",
            "--current",
            EXAMPLES / "describe.txt",
            "--repair",  # orders-1 breaks its policy: the plan mends it
            "--out-dir",
            out,
            "--batch-size",
            "1",
        ]
    )
    assert r.exit_code == 0, r.stderr
    assert (out / "summary.json").is_file()
    return out


BAD_SUMMARIES: dict[str, str] = {
    "not JSON": "{nope",
    "empty": "",
    "an array": "[]",
    "a string": '"summary"',
    "deep": "[" * 100_000,
}


def _summary_variants(doc: dict[str, object]) -> dict[str, str]:
    out = dict(BAD_SUMMARIES)
    out["no total"] = json.dumps({k: v for k, v in doc.items() if k != "total"})
    out["total not an object"] = json.dumps(doc | {"total": 3})
    out["batches not an array"] = json.dumps(doc | {"batches": {"a": 1}})
    batches = doc["batches"]
    assert isinstance(batches, list) and batches
    first = batches[0]
    out["batch lacks file"] = json.dumps(
        doc | {"batches": [{k: v for k, v in first.items() if k != "file"}]}
    )
    out["partitions a string"] = json.dumps(doc | {"batches": [first | {"partitions": "1"}]})
    out["bytes a list"] = json.dumps(doc | {"batches": [first | {"bytes": [1]}]})
    out["sender not an object"] = json.dumps(doc | {"batches": [first | {"senders": [1]}]})
    out["order not a list"] = json.dumps(doc | {"order": "plan-0001.json"})
    out["leaders a list"] = json.dumps(doc | {"leaders": []})
    return out


def test_plan_show_refuses_a_malformed_summary(cli: Cli, tmp_path: Path) -> None:
    out = _out_dir(cli, tmp_path)
    assert cli(["plan", "show", out]).exit_code == 0
    doc = json.loads((out / "summary.json").read_text())
    first = doc["batches"][0]["file"]
    for kind, text in _summary_variants(doc).items():
        (out / "summary.json").write_text(text)
        for target in (out, out / first):  # the directory, or one batch of it
            r = cli(["plan", "show", target])
            assert r.exit_code == 2, (kind, target, r.stdout + r.stderr)
            assert "summary.json" in r.stderr, (kind, r.stderr)


def test_plan_show_reads_a_batch_strictly_even_when_the_summary_lists_it(
    cli: Cli, tmp_path: Path
) -> None:
    out = _out_dir(cli, tmp_path)
    doc = json.loads((out / "summary.json").read_text())
    batch = out / doc["batches"][0]["file"]
    batch.write_text(batch.read_text()[:-5])  # cut: the summary row would hide it
    r = cli(["plan", "show", batch])
    assert r.exit_code == 2, r.stdout + r.stderr
    assert batch.name in r.stderr


def _number_variants(doc: dict[str, Any]) -> dict[str, str]:
    """Numbers of the right JSON type that no summary `assign` writes can hold."""
    first = doc["batches"][0]
    huge = "9" * 300
    return {
        "throttle of 300 digits": json.dumps(doc | {"throttle_bytes_per_s": 1}).replace(
            '"throttle_bytes_per_s": 1', f'"throttle_bytes_per_s": {huge}'
        ),
        "bytes beyond int64": json.dumps(doc | {"batches": [first | {"bytes": 2**63}]}),
        "total bytes beyond int64": json.dumps(doc | {"total": doc["total"] | {"bytes": 2**64}}),
        "eta overflowing to inf": json.dumps(doc).replace(
            '"eta_seconds": ', '"eta_seconds": 1e999, "x": ', 1
        ),
        "broker beyond int64": json.dumps(
            doc | {"batches": [first | {"senders": [{"broker": 2**70, "bytes": 1}]}]}
        ),
        "partitions beyond int64": json.dumps(doc | {"batches": [first | {"partitions": 2**63}]}),
    }


def test_plan_show_refuses_numbers_out_of_range_in_the_summary(cli: Cli, tmp_path: Path) -> None:
    """A 300-digit throttle was an OverflowError (exit 101) in the size formatting."""
    out = _out_dir(cli, tmp_path)
    doc = json.loads((out / "summary.json").read_text())
    first = doc["batches"][0]["file"]
    for kind, text in _number_variants(doc).items():
        (out / "summary.json").write_text(text)
        for target in (out, out / first):
            r = cli(["plan", "show", target])
            assert r.exit_code == 2, (kind, target, r.stdout + r.stderr)
            assert re.search(r"summary\.json:\d+:\d+: ", r.stderr), (kind, r.stderr)


def test_plan_show_formatting_is_total() -> None:
    from mrc_plan_cli.plan import _eta, _size

    assert _size(10**300) == _size(-1) == "?"
    assert _size(None) == "?" and _size(2**63 - 1).endswith("TiB")
    assert _eta(float("nan")) == _eta(float("inf")) == _eta(-1.0) == _eta(10**300) == "?"
    assert _eta(None) == "-" and _eta(61) == "1m01s"
