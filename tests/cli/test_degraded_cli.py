"""`assign` says the cluster is already degraded before its summary: one line of causes,
then the brokers and topics rolled up, on stderr; the `degraded` key of --format json and
--summary."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from typer.testing import Result

from mrc_plan_cli.degraded import BROKERS_SHOWN, print_degraded
from placement.plan.degraded import Degraded, DegradedBroker, DegradedTopic

REPO = Path(__file__).resolve().parent.parent.parent
INV = REPO / "examples" / "inventory.json"
DESCRIBE = REPO / "tests" / "fixtures" / "degraded" / "describe.txt"
HEALTHY = REPO / "tests" / "fixtures" / "degraded" / "healthy.txt"
TOPICS = REPO / "examples" / "topics.json"
Cli = Callable[..., Result]


def run(cli: Cli, *args: str | Path) -> Result:
    r = cli(["assign", "--inventory", INV, *args])
    assert r.exit_code == 0, r.output
    return r


def degraded_run(cli: Cli, tmp_path: Path, *args: str | Path) -> Result:
    """A plan over the fixture: orders and payments with brokers out of their ISRs."""
    return run(cli, "--current", DESCRIBE, "--drain", "8", "--out", tmp_path / "x.json", *args)


def test_the_degraded_lines_come_before_the_summary(cli: Cli, tmp_path: Path) -> None:
    r = degraded_run(cli, tmp_path)
    lines = r.stderr.splitlines()
    start = lines.index(
        "degraded before the plan: 3 partitions under-replicated, 1 under min ISR, "
        "1 offline (no leader)"
    )
    assert lines[start + 1 : start + 8] == [
        "  broker 2 is missing from 3 ISRs and hosts 1 offline partition",
        "  broker 4 hosts 1 offline partition",
        "  broker 6 is missing from 1 ISR",
        "  broker 7 hosts 1 offline partition",
        "  broker 11 hosts 1 offline partition",
        "  topic orders: 2 under-replicated, 1 under min ISR, 1 offline",
        "  topic payments: 1 under-replicated",
    ]
    assert start < lines.index("partitions changed: 1")
    assert r.stdout == ""


def test_the_json_summary_holds_the_degraded_report(cli: Cli, tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    r = degraded_run(cli, tmp_path, "--format", "json", "--summary", summary)
    assert r.stdout == summary.read_text()
    d = json.loads(r.stdout)["degraded"]
    assert d["recorded"] is True
    assert (d["under_replicated"], d["under_min_isr"], d["offline"]) == (3, 1, 1)
    assert d["brokers"][0] == {"broker": 2, "missing_from_isr": 3, "offline_hosted": 1}
    assert d["offline_partitions"] == [{"topic": "orders", "partition": 2}]
    assert "degraded before the plan" not in r.stderr  # the text summary is replaced


def test_nothing_is_printed_for_a_healthy_or_unrecorded_cluster(cli: Cli, tmp_path: Path) -> None:
    current, summary = tmp_path / "current.json", tmp_path / "summary.json"
    current.write_text(run(cli, "--topics", TOPICS).stdout)
    out = ("--out", tmp_path / "plan.json", "--summary", summary)
    # reassignment JSON records no ISR
    r = run(cli, "--topics", TOPICS, "--current", current, "--drain", "4", *out)
    assert "degraded" not in r.stderr
    assert json.loads(summary.read_text())["degraded"]["recorded"] is False
    # every sync replica in its ISR (one out of order), the observers out of it
    r = run(cli, "--current", HEALTHY, *out)
    assert "degraded" not in r.stderr
    d = json.loads(summary.read_text())["degraded"]
    assert d["recorded"] is True and d["topics"] == [] and d["under_replicated"] == 0
    # no --current: nothing to tell
    r = run(cli, "--topics", TOPICS, *out)
    assert json.loads(summary.read_text())["degraded"] is None


def report(brokers: int, topic: str = "t") -> Degraded:
    return Degraded(
        recorded=True,
        under_replicated=brokers,
        under_min_isr=0,
        offline=0,
        min_insync_replicas=1,
        topics=[DegradedTopic(topic=topic, under_replicated=brokers, under_min_isr=0, offline=0)],
        brokers=[
            DegradedBroker(broker=b, missing_from_isr=1, offline_hosted=0) for b in range(brokers)
        ],
        offline_partitions=[],
    )


def printed(d: Degraded) -> str:
    out = io.StringIO()
    print_degraded(Console(file=out, width=200, highlight=False, soft_wrap=True), d)
    return out.getvalue()


def test_brokers_past_the_cap_are_counted_and_names_are_not_markup() -> None:
    text = printed(report(BROKERS_SHOWN + 3, topic="[bold]t:smile:"))
    assert text.startswith("degraded before the plan: 13 partitions under-replicated\n")
    assert f"  broker {BROKERS_SHOWN - 1} is missing from 1 ISR\n" in text
    assert f"  broker {BROKERS_SHOWN} " not in text
    assert "  and 3 more brokers\n" in text
    assert "  topic [bold]t:smile:: 13 under-replicated\n" in text
    assert printed(report(0)) == ""
