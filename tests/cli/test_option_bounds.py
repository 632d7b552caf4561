"""Option values no cluster can have are usage errors (exit 2) naming the option, before
any work: broker ids outside Kafka's 0..2^31-1 or not in ASCII digits, a throttle beyond
what summary.json holds, infinite time limits and tolerances, seeds CP-SAT cannot take,
min.insync.replicas beyond an int. Before, some were exit 101 (an overflow in the solver or
the rate arithmetic) and some were accepted (`٣` read as broker 3, a 44-digit throttle)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
Cli = Callable[..., Result]

INPUTS = ["--inventory", EXAMPLES / "inventory.json"]
ASSIGN = ["assign", *INPUTS, "--topics", EXAMPLES / "topics.json"]
# with the topics file that fits describe.txt's cluster
DESCRIBED = ["--topics", EXAMPLES / "topics-describe.json", "--current", EXAMPLES / "describe.txt"]
ASSIGN_CURRENT = ["assign", *INPUTS, *DESCRIBED]
SIMULATE = ["simulate", "--current", EXAMPLES / "describe.txt", *INPUTS]
HUGE = "9" * 400

CASES: dict[str, tuple[list[str | Path], str, str]] = {
    # name: (arguments, the option named, a word of the reason)
    "drain beyond int32": ([*ASSIGN_CURRENT, "--drain", "3000000000"], "--drain", "2147483647"),
    "drain negative": ([*ASSIGN_CURRENT, "--drain", "4,-5"], "--drain", "2147483647"),
    "exclude in Arabic-Indic digits": ([*ASSIGN_CURRENT, "--exclude", "٣"], "--exclude", "ASCII"),
    "exclude with an underscore": ([*ASSIGN_CURRENT, "--exclude", "1_0"], "--exclude", "ASCII"),
    "time limit infinite": ([*ASSIGN, "--time-limit", "inf"], "--time-limit", "1000000"),
    "tolerance infinite": ([*ASSIGN_CURRENT, "--tolerance", "inf"], "--tolerance", "1000000"),
    "seed negative": ([*ASSIGN, "--seed", "-5"], "--seed", "0<=x"),
    "seed beyond int32": ([*ASSIGN, "--seed", str(2**31)], "--seed", "2147483647"),
    "fail-brokers beyond int32": (
        [*SIMULATE, "--fail-brokers", str(2**31)],
        "--fail-brokers",
        "2147483647",
    ),
    "fail-brokers negative": ([*SIMULATE, "--fail-brokers", "-1"], "--fail-brokers", "2147483647"),
    "fail-brokers empty": ([*SIMULATE, "--fail-brokers", ","], "--fail-brokers", "no broker"),
    "default min ISR beyond int32": (
        [*SIMULATE, "--fail-rack", "us-east", "--default-min-isr", str(2**31)],
        "--default-min-isr",
        "2147483647",
    ),
    "score default min ISR beyond int32": (
        ["score", "--snapshot", EXAMPLES, "--default-min-isr", str(2**31)],
        "--default-min-isr",
        "2147483647",
    ),
    "synth seed negative": (
        [
            "snapshot",
            "synth",
            "--brokers",
            "3",
            "--racks",
            "1",
            "--topics",
            "1",
            "--partitions-per-topic",
            "1",
            "--seed",
            "-1",
            "--out",
            "never-written",
        ],
        "--seed",
        "0<=x",
    ),
    "validate min ISR beyond int32": (
        ["validate", EXAMPLES / "placement", "--min-insync-replicas", str(2**31)],
        "--min-insync-replicas",
        "2147483647",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_out_of_range_options_are_usage_errors(cli: Cli, case: str) -> None:
    args, option, reason = CASES[case]
    r = cli(args)
    assert r.exit_code == 2, r.stdout + r.stderr
    assert option in r.stderr and reason in r.stderr.replace(",", ""), r.stderr


def test_a_throttle_beyond_int64_is_refused_not_an_overflow(cli: Cli, tmp_path: Path) -> None:
    """Refused before any work, no directory written; the largest accepted throttle is one
    that `plan show` reads back (the bound is summary.json's)."""
    for rate in (HUGE, f"{'9' * 44}GiB", str(2**63), "10000000000GB"):
        out = tmp_path / "refused"
        r = cli([*ASSIGN_CURRENT, "--out-dir", out, "--batch-size", "1", "--throttle", rate])
        assert r.exit_code == 2, (rate[:50], r.stdout + r.stderr)
        assert "--throttle" in r.stderr and not out.exists()
    out = tmp_path / "plan"
    r = cli([*ASSIGN_CURRENT, "--out-dir", out, "--batch-size", "1", "--throttle", str(2**63 - 1)])
    assert r.exit_code == 0, r.stderr
    assert cli(["plan", "show", out]).exit_code == 0
