"""Hostile names through every command: rack names, topic names, file
and directory names carrying a newline followed by a GitHub workflow command, ESC sequences,
rich markup and emoji codes, a bidi override, a C1 control and a byte that is not UTF-8.

Whatever a command prints (exit 0, 1 or 2): stdout and stderr are strict UTF-8, hold no
control character but newline and tab, no line the tool did not mean starts with `::`, and
the names show up escaped, literally (no markup, no emoji). JUnit parses as XML, JSON and
SARIF parse as strict UTF-8 JSON, and SARIF URIs are percent-encoded.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from typer.testing import Result

Cli = Callable[..., Result]

REPO = Path(__file__).resolve().parents[2]
# a rack name: a line that is a workflow command, ESC, markup, an emoji code, bidi, C1
RACK = "r\n::error::rack\x1b[31m[red]x:smile:\u202e\x85"
# a topic name (readers may refuse it: then the refusal quotes it)
TOPIC = "orders\n::error::topic\x1b[2J"
# a file or directory name: \udcff is the byte 0xff on disk (PEP 383)
NAME = "n\n::error::file\x1b[31m\udcff"
# a snapshot directory's name: pyarrow cannot open a path that is not UTF-8, Spark reads
# `[` as a glob (see the report)
SNAP_NAME = "s\n::error::snap\x1b\u202e"
# how JSON reports hold a plan named NAME: the data as it is, but for the byte that is not UTF-8
JSON_PLAN = NAME.replace("\udcff", "\\xff") + ".plan.json"
# how a table shows RACK: escaped, maybe cut short by the column width
RACK_CELL = "r\\n::error::rack\\x1b"

UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
# the only workflow commands `validate --format github` means to print: every property escaped
ANNOTATION = re.compile(r"::(error|warning) file=[^,:\s]*,line=\d+,col=\d+,title=[^,:]*::\S.*")


def _text(data: bytes, what: str) -> str:
    text = data.decode("utf-8")  # strict: invalid UTF-8 fails here
    bad = UNSAFE.search(text)
    assert bad is None, f"{what}: raw {bad[0]!r} in {text!r}"
    return text


def check(result: Result, *, annotations: bool = False) -> tuple[str, str]:
    """The checks every command's output must pass; returns (stdout, stderr)."""
    assert result.exit_code != 101, result.output
    out, err = _text(result.stdout_bytes, "stdout"), _text(result.stderr_bytes, "stderr")
    for what, text in (("stdout", out), ("stderr", err)):
        for line in text.splitlines():
            if line.lstrip().startswith("::"):
                assert annotations and what == "stdout" and ANNOTATION.fullmatch(line), (
                    f"{what}: a workflow command the tool did not mean: {line!r}"
                )
    return out, err


def _write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def assign(inputs: Path, *extra: str | Path, current: Path | None = None) -> list[str | Path]:
    """`assign` over the hostile inventory, topics and current assignment, then ``extra``."""
    files = ["--inventory", inputs / "inv.json", "--topics", inputs / "topics.json"]
    return ["assign", *files, "--current", current or inputs / "current.json", *extra]


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """Inventory, topics, current assignment and policies, in a directory named NAME."""
    root = tmp_path / NAME
    brokers = [{"id": i, "rack": RACK if i <= 3 else "b"} for i in range(1, 7)]
    _write(root / "inv.json", json.dumps({"brokers": brokers}))
    policy = {
        "version": 1,
        "replicas": [
            {"count": 2, "constraints": {"rack": RACK}},
            {"count": 1, "constraints": {"rack": "b"}},
        ],
    }
    _write(
        root / "topics.json",
        json.dumps(
            {
                "default_placement": policy,
                "topics": [{"name": "ok", "partitions": 2}, {"name": "t2", "partitions": 2}],
            }
        ),
    )
    parts = [
        {"topic": t, "partition": p, "replicas": [4, 5, 6]} for t in ("ok", "t2") for p in (0, 1)
    ]
    _write(root / "current.json", json.dumps({"version": 1, "partitions": parts}))
    # validate: a policy naming a rack the inventory lacks, in a file named NAME ...
    unknown = {"version": 1, "replicas": [{"count": 3, "constraints": {"rack": RACK + "?"}}]}
    _write(root / "policies" / f"{NAME}.json", json.dumps(unknown))
    # ... and a syntax error on a line holding ESC and a bidi override (the excerpt)
    _write(root / "policies" / "syntax.json", '{"version": 1, "x": "\x1b[31m\u202e", ]}')
    return root


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif", "junit"])
def test_validate_every_format(cli: Cli, inputs: Path, fmt: str) -> None:
    result = cli(
        ["validate", "--inventory", inputs / "inv.json", "--format", fmt, inputs / "policies"]
    )
    assert result.exit_code == 1, result.output
    out, _ = check(result, annotations=fmt == "github")
    if fmt == "junit":
        root = ET.fromstring(result.stdout_bytes)
        assert len(root.findall(".//testcase")) == 2
    elif fmt in ("json", "sarif"):
        doc: Any = json.loads(out)
        assert "\udcff" not in json.dumps(doc, ensure_ascii=False)
    if fmt == "sarif":
        run = doc["runs"][0]
        uris = [a["location"]["uri"] for a in run["artifacts"]]
        uris += [
            loc["physicalLocation"]["artifactLocation"]["uri"]
            for r in run["results"]
            for loc in r["locations"]
        ]
        assert len(uris) >= 4
        for uri in uris:
            assert re.fullmatch(r"[A-Za-z0-9\-._~/%]+", uri), uri
        assert any("%0A%3A%3Aerror%3A%3Afile%1B%5B31m%FF" in u for u in uris)
        texts = [r["message"]["text"] for r in run["results"]]
        assert any("\\x1b[31m[red]x:smile:\\u202e\\x85" in t for t in texts)
    if fmt in ("text", "junit"):  # the file name: shown, escaped
        assert "\\n::error::file\\x1b[31m\\xff" in out
    if fmt == "github":  # a property: ':' and ',' percent-encoded too
        shown = str(inputs).replace(":", "%3A").replace("\n", "\\n").replace("\x1b", "\\x1b")
        assert "file=" + shown.replace("\udcff", "\\xff") in out
    if fmt in ("text", "github", "junit"):  # the rack, in the messages
        assert "\\x1b[31m[red]x:smile:\\u202e\\x85" in out
    if fmt == "github":
        assert sum(line.startswith("::") for line in out.splitlines()) >= 2


def test_validate_report_to_a_file(cli: Cli, inputs: Path) -> None:
    out = inputs / f"{NAME}.xml"
    result = cli(
        [
            "validate",
            "--inventory",
            inputs / "inv.json",
            "--format",
            "junit",
            "-o",
            out,
            inputs / "policies",
        ]
    )
    assert result.exit_code == 1
    _, err = check(result)
    assert "wrote " in err and "\\n::error::file\\x1b[31m\\xff.xml" in err
    ET.fromstring(out.read_bytes())


def test_assign_tables_and_notes(cli: Cli, inputs: Path) -> None:
    result = cli(assign(inputs))
    assert result.exit_code == 0, result.output
    _, err = check(result)
    assert RACK_CELL in err  # the rack's row


def test_assign_with_a_hostile_topic(cli: Cli, inputs: Path) -> None:
    """Accepted (and printed escaped) or refused (with the name escaped): never raw."""
    topics = json.loads((inputs / "topics.json").read_text())
    topics["topics"].append({"name": TOPIC, "partitions": 1})
    _write(inputs / "topics.json", json.dumps(topics))
    current = json.loads((inputs / "current.json").read_text())
    current["partitions"].append({"topic": TOPIC, "partition": 0, "replicas": [4, 5, 6]})
    current["partitions"].append({"topic": TOPIC + "-gone", "partition": 0, "replicas": [4]})
    _write(inputs / "current.json", json.dumps(current))
    result = cli(assign(inputs))
    assert result.exit_code in (0, 2), result.output
    out, err = check(result)
    # accepted and shown escaped, or refused without showing it (a topics file may be
    # another file entirely: the readers quote a few characters of it at most)
    assert "\\n::error::topic\\x1b[2J" in out + err or (
        result.exit_code == 2 and "::error::topic" not in out + err
    )


def test_failure_messages_escape_paths(cli: Cli, inputs: Path) -> None:
    missing = inputs / f"{NAME}-missing.json"
    result = cli(assign(inputs, current=missing))
    assert result.exit_code == 2, result.output
    _, err = check(result)
    assert err.startswith("error: ") and "\\n::error::file\\x1b[31m\\xff-missing.json" in err


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_simulate(cli: Cli, inputs: Path, fmt: str) -> None:
    plan = shutil.copy(inputs / "current.json", inputs / f"{NAME}.plan.json")
    result = cli(
        [
            "simulate",
            "--current",
            inputs / "current.json",
            "--inventory",
            inputs / "inv.json",
            "--topics",
            inputs / "topics.json",
            "--plan",
            plan,
            "--fail-rack",
            RACK,
            "--format",
            fmt,
            "--unclean-out",
            inputs / f"{NAME}.unclean.json",
        ]
    )
    assert result.exit_code in (0, 1), result.output
    out, _err = check(result)
    if fmt == "json":
        doc = json.loads(out)
        assert doc["plan"].endswith(JSON_PLAN)
    else:
        assert "\\x1b[31m[red]x:smile:\\u202e\\x85" in out  # the failed rack
        assert "\\n::error::file\\x1b[31m\\xff.plan.json" in out  # the plan


DESCRIBE = """\
Topic: ok\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: min.insync.replicas=2
\tTopic: ok\tPartition: 0\tLeader: 1\tReplicas: 1,2,4\tIsr: 1,2,4
\tTopic: ok\tPartition: 1\tLeader: 2\tReplicas: 2,3,5\tIsr: 2,3,5
"""


@pytest.fixture
def snapshot(cli: Cli, inputs: Path) -> Path:
    """A snapshot of hostile racks, in a directory named NAME (from-describe prints it)."""
    snap = inputs.parent / SNAP_NAME
    result = cli(
        [
            "snapshot",
            "from-describe",
            _write(inputs / "describe.txt", DESCRIBE),
            "--inventory",
            inputs / "inv.json",
            "--out",
            snap,
        ]
    )
    assert result.exit_code == 0, result.output
    _, err = check(result)
    assert "s\\n::error::snap\\x1b\\u202e" in err
    return snap


def test_snapshot_show(cli: Cli, snapshot: Path) -> None:
    result = cli(["snapshot", "show", snapshot])
    assert result.exit_code == 0, result.output
    out, _ = check(result)
    assert RACK_CELL in out
    assert "s\\n::e" in out  # the title (cut short to the table's width)


@pytest.mark.spark
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_score(cli: Cli, spark: Any, inputs: Path, snapshot: Path, fmt: str) -> None:
    """Hostile rack and plan names in the report; a plan name Spark cannot open (not
    UTF-8) is refused before Spark starts, and the refusal is escaped too."""
    text = '{"version":1,"partitions":[{"topic":"ok","partition":0,"replicas":[1,2,5]}]}'
    refused = _write(inputs / f"{NAME}.plan.json", text)
    result = cli(["score", "--snapshot", snapshot, "--plan", refused, "--master", "local[2]"])
    assert result.exit_code == 2, result.output
    _, err = check(result)
    assert "\\n::error::file\\x1b[31m\\xff.plan.json" in err
    plan = _write(snapshot.parent / f"{SNAP_NAME}.plan.json", text)
    result = cli(
        ["score", "--snapshot", snapshot, "--plan", plan, "--master", "local[2]", "--format", fmt]
    )
    assert result.exit_code == 0, result.output
    out, _ = check(result)
    if fmt == "json":
        doc = json.loads(out)
        assert doc["plans"][0]["plan"].endswith(f"{SNAP_NAME}.plan.json")
    else:
        assert RACK_CELL in out  # rack rows and bars
        assert "s\\n::error::snap\\x1b" in out  # the plan's column


def test_plan_show_a_file(cli: Cli, inputs: Path) -> None:
    plan = shutil.copy(inputs / "current.json", inputs / f"{NAME}.plan.json")
    result = cli(["plan", "show", plan])
    assert result.exit_code == 0, result.output
    out, _ = check(result)
    assert "\\n::error::file\\x1b[31m\\xff.plan.json" in out


def test_plan_show_a_summary_from_a_pull_request(cli: Cli, inputs: Path, tmp_path: Path) -> None:
    """summary.json names its files: a hostile one is shown escaped (or refused, escaped)."""
    out_dir = tmp_path / "batches"
    result = cli(assign(inputs, "--out-dir", out_dir, "--batch-size", "2"))
    assert result.exit_code == 0, result.output
    check(result)
    summary = json.loads((out_dir / "summary.json").read_text())
    first = summary["batches"][0]["file"]
    hostile = f"{TOPIC}{RACK}.json"
    summary["batches"][0]["file"] = hostile
    summary["order"] = [hostile if f == first else f for f in summary["order"]]
    (out_dir / "summary.json").write_text(json.dumps(summary))
    result = cli(["plan", "show", out_dir])
    assert result.exit_code in (0, 2), result.output
    out, err = check(result)
    # accepted and shown escaped, or refused without showing it (a topics file may be
    # another file entirely: the readers quote a few characters of it at most)
    assert "\\n::error::topic\\x1b[2J" in out + err or (
        result.exit_code == 2 and "::error::topic" not in out + err
    )


def test_the_bug_message_escapes_the_exception(
    cli: Cli, inputs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 101 quotes the exception, which may quote input: on one escaped line too."""
    import placement.rules.validate

    def boom(*_: object, **__: object) -> None:
        raise RuntimeError(f"cannot handle {RACK}")

    monkeypatch.setattr(placement.rules.validate, "validate_paths", boom)
    result = cli(["validate", inputs / "policies"])
    assert result.exit_code == 101
    assert result.stdout_bytes == b""
    err = _text(result.stderr_bytes, "stderr")
    assert not any(line.lstrip().startswith("::") for line in err.splitlines())
    assert "(RuntimeError: cannot handle r\\n::error::rack\\x1b[31m" in err
