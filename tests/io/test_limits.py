"""Documented caps fail fast, before any allocation or parse, and can be raised.

Each of these used to run: a 1,000,000,000-partition topic tried to allocate 7.45 GiB,
`synth --brokers 3000000000` 11.2 GiB, a 104 MB policy took minutes, 500,000 findings
were all printed. The tests assert the refusal, never a duration.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from placement.errors import InputError, UsageError
from placement.io import limits
from placement.io.limits import ALL_LIMITS, PARTITIONS_PER_TOPIC, PLAN_BYTES, read_capped
from placement.plan.topics import InvalidPoliciesError, read_topics

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INV = EXAMPLES / "inventory.json"
POLICY = {"version": 2, "replicas": [{"count": 2, "constraints": {"rack": "us-west"}}]}

Cli = Callable[..., Result]
SYNTH = ("snapshot", "synth", "--brokers", "6", "--racks", "3")


def _topics(tmp_path: Path, *partitions: int) -> Path:
    path = tmp_path / "topics.json"
    doc = {
        "default_placement": POLICY,
        "topics": [{"name": f"t{i}", "partitions": n} for i, n in enumerate(partitions)],
    }
    path.write_text(json.dumps(doc, indent=2))
    return path


def test_every_cap_is_named_documented_and_overridable() -> None:
    names = [limit.name for limit in ALL_LIMITS]
    assert len(names) == len(set(names))
    for limit in ALL_LIMITS:
        assert limit.name.startswith("MRC_PLAN_MAX_") and limit.default > 0 and limit.what


def test_a_billion_partition_topic_is_refused_at_its_line(cli: Cli, tmp_path: Path) -> None:
    topics = _topics(tmp_path, 3, 1_000_000_000)
    result = cli(["assign", "--inventory", INV, "--topics", topics])
    assert result.exit_code == 2, result.output
    assert f"error: {topics}:" in result.stderr and "above the cap" in result.stderr
    assert "MRC_PLAN_MAX_PARTITIONS_PER_TOPIC" in result.stderr


def test_partition_caps_can_be_raised_and_lowered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    topics = _topics(tmp_path, 1_500_000)
    with pytest.raises(InputError, match="above the cap of 1,000,000"):
        read_topics(topics)
    monkeypatch.setenv(PARTITIONS_PER_TOPIC.name, "2000000")
    (spec,) = read_topics(topics)
    assert spec.partitions == 1_500_000
    monkeypatch.setenv("MRC_PLAN_MAX_PARTITIONS", "2000000")
    with pytest.raises(InputError, match="add up to 3,000,000 partitions") as err:
        read_topics(_topics(tmp_path, 1_500_000, 1_500_000))
    assert err.value.line == 20  # the second topic's "partitions"


def test_a_bad_override_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PARTITIONS_PER_TOPIC.name, "lots")
    with pytest.raises(UsageError, match="not a positive integer"):
        read_topics(_topics(tmp_path, 3))


@pytest.mark.parametrize(
    ("option", "value", "env"),
    [
        ("--brokers", "3000000000", "MRC_PLAN_MAX_BROKERS"),
        ("--partitions-per-topic", "1000000000", "MRC_PLAN_MAX_PARTITIONS_PER_TOPIC"),
        ("--topics", "100000000", "MRC_PLAN_MAX_TOPICS"),
    ],
)
def test_synth_sizes_are_capped_before_any_work(
    cli: Cli, tmp_path: Path, option: str, value: str, env: str
) -> None:
    args = {"--brokers": "6", "--racks": "3", "--topics": "2", "--partitions-per-topic": "3"}
    args[option] = value
    out = tmp_path / "snap"
    flat = [x for kv in args.items() for x in kv]
    result = cli(["snapshot", "synth", *flat, "--out", out])
    assert result.exit_code == 2, result.output
    assert f"error: {option}:" in result.stderr and env in result.stderr
    assert not out.exists()


def test_synth_total_partitions_cap(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MRC_PLAN_MAX_PARTITIONS", "10")
    out = tmp_path / "snap"
    result = cli([*SYNTH, "--topics", "4", "--partitions-per-topic", "3", "--out", out])
    assert result.exit_code == 2, result.output
    assert "12 is above the cap of 10" in result.stderr


def test_policy_file_size_cap_in_synth(cli: Cli, tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text(json.dumps(POLICY) + " " * (2 * 2**20))
    out = tmp_path / "snap"
    result = cli(
        [*SYNTH, "--topics", "2", "--partitions-per-topic", "3", "--policy", big, "--out", out]
    )
    assert result.exit_code == 2, result.output
    assert f"error: {big}: file is too large" in result.stderr
    assert not out.exists()


def test_describe_size_cap(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MRC_PLAN_MAX_DESCRIBE_BYTES", "100")
    describe = EXAMPLES / "describe.txt"
    out = tmp_path / "snap"
    result = cli(["snapshot", "from-describe", describe, "--inventory", INV, "--out", out])
    assert result.exit_code == 2, result.output
    assert f"error: {describe}: file is too large" in result.stderr
    assert "MRC_PLAN_MAX_DESCRIBE_BYTES" in result.stderr


def test_topics_file_findings_are_capped(tmp_path: Path) -> None:
    path = tmp_path / "topics.json"
    bad = {"version": 2, "replicas": [1] * 500}
    path.write_text(json.dumps({"topics": [{"name": "t", "partitions": 1, "placement": bad}]}))
    with pytest.raises(InvalidPoliciesError) as err:
        read_topics(path)
    codes = [d.code for d in err.value.diagnostics]
    assert codes.count("MRC205") == 100 and codes[-1] == "MRC801"


@pytest.mark.slow  # the fast tier leaves it to make test
def test_a_policy_of_more_than_10000_values_is_refused_before_the_schema_check(
    cli: Cli, tmp_path: Path
) -> None:
    """500,000 wrong-type entries took minutes and printed 500,000 findings."""
    wide = tmp_path / "wide.json"
    wide.write_text('{"version": 2, "replicas": [' + ",".join(["1"] * 500_000) + "]}")
    result = cli(["validate", wide])
    assert result.exit_code == 2, result.output
    assert f"error: {wide}:1:1: the placement policy holds more than 10,000" in result.stderr
    assert "MRC_PLAN_MAX_POLICY_VALUES" in result.stderr
    inline = tmp_path / "topics.json"
    bad = {"version": 2, "replicas": [1] * 20_000}
    inline.write_text(json.dumps({"topics": [{"name": "t", "partitions": 1, "placement": bad}]}))
    with pytest.raises(InputError, match="more than 10,000 JSON values"):
        read_topics(inline)


# -- reading under a cap allocates what the file holds, never the cap ----------------------

_FEW_THREADS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MALLOC_ARENA_MAX": "2"}

# 4 GiB of address space: what `ulimit -v` gives many CI runners and containers. The plan's
# cap is 4 GiB by default, so a read that asks for the cap up front fails under it.
_LIMITED_CLI = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
from mrc_plan_cli.main import run
sys.argv = ["mrc-plan", *sys.argv[1:]]
run()
"""

_PLAN = (
    '{"version":1,"partitions":[\n'
    '{"topic":"orders","partition":0,"replicas":[1,2,3],"observers":[],'
    '"log_dirs":["any","any","any"]}\n]}\n'
)


def _limited(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _LIMITED_CLI, *map(str, args)],
        env={**os.environ, **_FEW_THREADS},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.mark.parametrize("layout", ["own", "indented"])
def test_plan_show_runs_under_a_4_gib_address_space(layout: str, tmp_path: Path) -> None:
    """`fh.read(cap + 1)` asked for 4 GiB up front: exit 101 (MemoryError) on a 7 KB plan."""
    plan = tmp_path / "plan.json"
    text = _PLAN if layout == "own" else json.dumps(json.loads(_PLAN), indent=2)
    plan.write_text(text)
    done = _limited("plan", "show", plan)
    assert done.returncode == 0, done.stderr
    assert "MemoryError" not in done.stderr


def test_read_capped_reads_a_pipe_in_chunks_under_a_4_gib_address_space() -> None:
    """A pipe (or a /proc file) has no size to read: chunks until its end, or past the cap."""
    code = """
import os, resource, sys, threading
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
from placement.io.limits import PLAN_BYTES, read_capped
r, w = os.pipe()
data = os.urandom(3 << 20)
threading.Thread(target=lambda: (os.write(w, data), os.close(w))).start()
with os.fdopen(r, "rb") as fh:
    assert read_capped(fh, "<pipe>", PLAN_BYTES) == data
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **_FEW_THREADS},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_read_capped_refuses_a_pipe_past_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    r, w = os.pipe()
    os.write(w, b"x" * 3000)
    os.close(w)
    monkeypatch.setenv(PLAN_BYTES.name, "2048")
    with os.fdopen(r, "rb") as fh, pytest.raises(InputError, match="file is too large"):
        read_capped(fh, "<pipe>", PLAN_BYTES)
    r, w = os.pipe()
    os.write(w, b"x" * 2048)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        assert read_capped(fh, "<pipe>", PLAN_BYTES) == b"x" * 2048


def test_read_capped_reads_a_file_that_grows_after_its_size_was_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The size fstat gives is read, then a byte more is asked for: a file that grew is
    read to its end, and refused when it grew past the cap."""
    path = tmp_path / "growing"
    path.write_bytes(b"a" * 100)
    real_fstat = os.fstat

    def fstat_then_grow(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        with path.open("ab") as more:
            more.write(b"b" * 50)
        return st

    monkeypatch.setattr(limits.os, "fstat", fstat_then_grow)
    with path.open("rb") as fh:
        assert read_capped(fh, str(path), PLAN_BYTES) == b"a" * 100 + b"b" * 50
    monkeypatch.setenv(PLAN_BYTES.name, "160")
    with path.open("rb") as fh, pytest.raises(InputError, match="file is too large"):
        read_capped(fh, str(path), PLAN_BYTES)
