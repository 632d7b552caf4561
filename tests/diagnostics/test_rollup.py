"""Findings of one cause are one line in the text and github reports, with a count; JSON and
SARIF keep every instance, and the summary counts every instance."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from placement.diagnostics.rollup import roll_up
from placement.model.diagnostic import Diagnostic, Severity

Cli = Callable[..., Result]
SUMMARY = re.compile(r"(\d+) errors?, (\d+) warnings?")
BROKEN_POLICY = '{"version":1,"replicas":[{"count":0,"constraints":{"rack":"east"}}]}'


def _describe(tmp_path: Path) -> Path:
    """One topic of 34 partitions whose broker 3 is out of every ISR (a restart), and one
    partition of another topic with broker 7 out: two causes, 35 findings."""
    lines = ["Topic: clicks\tPartitionCount: 34\tReplicationFactor: 3\tConfigs: "]
    lines += [
        f"\tTopic: clicks\tPartition: {i}\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2"
        if i % 2
        else f"\tTopic: clicks\tPartition: {i}\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,1"
        for i in range(34)
    ]
    lines += [
        "Topic: views\tPartitionCount: 1\tReplicationFactor: 3\tConfigs: ",
        "\tTopic: views\tPartition: 0\tLeader: 5\tReplicas: 5,6,7\tIsr: 5,6",
    ]
    path = tmp_path / "describe.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def _shared_policy(tmp_path: Path, topics: int) -> Path:
    """``topics`` topics that share one broken policy (an error each)."""
    lines = []
    for t in range(topics):
        lines.append(
            f"Topic: t{t}\tPartitionCount: 1\tReplicationFactor: 1\t"
            f"Configs: confluent.placement.constraints={BROKEN_POLICY}"
        )
        lines.append(f"\tTopic: t{t}\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1")
    path = tmp_path / "shared.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def _finding_lines(out: str, code: str) -> list[str]:
    return [line for line in out.splitlines() if f" {code} " in line]


def test_text_rolls_up_one_restarting_broker(cli: Cli, tmp_path: Path) -> None:
    path = _describe(tmp_path)
    result = cli(["validate", path, "--format", "text", "--min-insync-replicas", "1"])
    found = _finding_lines(result.stdout, "MRC904")
    assert len(found) == 2, result.stdout
    assert "(and 33 more partitions with the same replica(s) out of the ISR)" in found[0]
    assert ":2:" in found[0]  # the first instance's position: clicks-0, line 2
    assert "more" not in found[1]
    assert SUMMARY.search(result.stdout).groups() == ("0", "35")  # type: ignore[union-attr]


def test_github_has_one_annotation_per_cause(cli: Cli, tmp_path: Path) -> None:
    path = _describe(tmp_path)
    result = cli(["validate", path, "--format", "github", "--min-insync-replicas", "1"])
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert len(annotations) == 2
    assert "and 33 more partitions" in annotations[0]
    assert "35 warnings" in result.stdout.splitlines()[-1]


def test_json_and_sarif_keep_every_instance(cli: Cli, tmp_path: Path) -> None:
    path = _describe(tmp_path)
    args = ["validate", path, "--min-insync-replicas", "1", "--format"]
    report = json.loads(cli([*args, "json"]).stdout)
    assert sum(len(f["diagnostics"]) for f in report["files"]) == 35
    sarif = json.loads(cli([*args, "sarif"]).stdout)
    assert len(sarif["runs"][0]["results"]) == 35


def test_topics_sharing_a_policy_are_one_line(cli: Cli, tmp_path: Path) -> None:
    path = _shared_policy(tmp_path, 40)
    result = cli(["validate", path, "--format", "text"])
    assert result.exit_code == 1
    found = _finding_lines(result.stdout, "MRC206")
    assert len(found) == 1, result.stdout
    assert "(in topic t0) (and 39 more topics with the same policy)" in found[0]
    assert SUMMARY.search(result.stdout).groups() == ("40", "0")  # type: ignore[union-attr]
    github = cli(["validate", path, "--format", "github"]).stdout
    assert [line.startswith("::error") for line in github.splitlines()].count(True) == 1


def _d(message: str, *, file: str = "a.json", code: str = "MRC206", ptr: str = "") -> Diagnostic:
    return Diagnostic(
        code=code,
        name="x",
        severity=Severity.ERROR,
        message=message,
        file=file,
        pointer=ptr,
        line=1,
        column=1,
    )


def test_different_files_messages_or_places_are_different_causes() -> None:
    rolled = roll_up(
        [
            _d("m"),
            _d("m", file="b.json"),
            _d("n"),
            _d("m", ptr="/replicas/0"),
            _d("m"),
        ]
    )
    assert [r.more for r in rolled] == [1, 0, 0, 0]
    assert rolled[0].suffix() == " (and 1 more finding with the same message)"
    assert rolled[1].suffix() == ""


def test_partition_findings_roll_up_by_their_cause() -> None:
    msg = "{} is under-replicated: sync replica(s) {} out of the ISR ({}); writes go on"
    rolled = roll_up(
        [
            _d(msg.format("t-0", "3", "1,2"), code="MRC904"),
            _d(msg.format("t-1", "3", "2,5"), code="MRC904"),
            _d(msg.format("u-0", "4", "1,2"), code="MRC904"),
        ]
    )
    assert [r.more for r in rolled] == [1, 0]
