"""`mrc-plan validate`: every output format and every exit code (SPEC §9), via typer's CliRunner.

stdout carries only the report; errors and hints go to stderr. Each test asserts both.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
from typer.testing import Result

from placement.rules.registry import ALL_RULES, RULES

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
ANSI = re.compile(r"\x1b\[")
SUMMARY = re.compile(
    r"^(\d+) files? checked, (\d+) passed, (\d+) failed \((\d+) errors?, (\d+) warnings?"
)
GH_ANNOTATION = re.compile(
    r"^::(error|warning) file=([^,]+),line=(\d+),col=(\d+),title=([^:]+)::(.*)$"
)

Cli = Callable[..., Result]

VALID = sorted(p.name for p in (EXAMPLES / "placement").glob("*.json"))
BROKEN = sorted(p.name for p in (EXAMPLES / "broken").glob("*.json"))


@pytest.fixture
def mixed(policies: Path) -> Path:
    """Copies of examples/placement (all valid) and examples/broken (all invalid)."""
    return policies


@pytest.fixture
def valid_dir(policies: Path) -> Path:
    return policies / "placement"


@pytest.fixture
def comment_file(policies: Path) -> Path:
    """Confluent's schema sketch pasted verbatim: a // comment at line 4, column 5."""
    return policies / "broken" / "pasted-from-docs.json"


@pytest.fixture
def bom_file(tmp_path: Path) -> Path:
    """A valid policy saved with a UTF-8 BOM: a warning (MRC107), nothing else."""
    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf" + (EXAMPLES / "placement" / "orders.json").read_bytes())
    return p


def report_json(result: Result) -> dict:
    return json.loads(result.stdout)


def codes(report: dict) -> list[str]:
    return [d["code"] for f in report["files"] for d in f["diagnostics"]]


# -- json ---------------------------------------------------------------------------


def test_json_report_structure(cli: Cli, mixed: Path) -> None:
    result = cli(["validate", "--format", "json", mixed])
    assert result.exit_code == 1
    assert result.stderr == ""
    report = report_json(result)
    assert report["version"] == 1
    assert report["tool"] == "mrc-plan"
    assert report["strict"] is False
    by_name = {Path(f["path"]).name: f for f in report["files"]}
    assert sorted(by_name) == sorted(VALID + BROKEN)
    for name in VALID:
        assert by_name[name]["valid"] is True
        assert by_name[name]["diagnostics"] == []
    for name in BROKEN:
        assert by_name[name]["valid"] is False
        assert by_name[name]["diagnostics"]
    for f in report["files"]:
        assert Path(f["path"]).is_file()
        for d in f["diagnostics"]:
            assert set(d) >= {"code", "name", "severity", "message", "line", "column", "pointer"}
            assert d["code"] in RULES
            assert d["name"] == RULES[d["code"]].name
            assert d["severity"] == RULES[d["code"]].severity.value
            assert d["line"] >= 1
            assert d["column"] >= 1
            assert d["file"] == f["path"]
            assert d["pointer"] == "" or d["pointer"].startswith("/")
            assert d["message"]
    s = report["summary"]
    all_diags = [d for f in report["files"] for d in f["diagnostics"]]
    assert s["files"] == len(VALID) + len(BROKEN)
    assert s["invalid_files"] == len(BROKEN)
    assert s["errors"] == sum(d["severity"] == "error" for d in all_diags)
    assert s["warnings"] == sum(d["severity"] == "warning" for d in all_diags)


def test_json_report_positions_and_pointers(cli: Cli, mixed: Path) -> None:
    report = report_json(cli(["validate", "--format", "json", mixed]))
    found = {
        (Path(f["path"]).name, d["code"], d["line"], d["column"], d["pointer"])
        for f in report["files"]
        for d in f["diagnostics"]
    }
    assert ("pasted-from-docs.json", "MRC102", 4, 5, "") in found
    assert ("inventory-typos.json", "MRC202", 2, 14, "/version") in found
    assert ("inventory-typos.json", "MRC204", 7, 3, "/observer") in found
    assert ("v1-promotion.json", "MRC303", 10, 3, "/observerPromotionPolicy") in found


def test_json_report_matches_checked_in_schema(cli: Cli, mixed: Path, tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "schemas" / "diagnostics.schema.json").read_text())
    inv = tmp_path / "inv.csv"
    inv.write_text("id,rack\n1,us-west\n2,\n")  # broker 2 has no rack: MRC403 on the inventory
    for args in (
        [mixed],
        [mixed, "--strict", "--min-insync-replicas", "2"],
        [mixed, "--inventory", inv, "--min-insync-replicas", "3"],
    ):
        report = report_json(cli(["validate", "--format", "json", *args]))
        jsonschema.validate(report, schema)


def test_json_report_includes_inventory_findings(cli: Cli, valid_dir: Path, tmp_path: Path) -> None:
    inv = tmp_path / "inv.csv"
    inv.write_text("id,rack\n1,us-west\n2,\n3,us-east\n")
    result = cli(["validate", "--format", "json", "--inventory", inv, valid_dir / "orders.json"])
    assert result.exit_code == 1
    report = report_json(result)
    by_path = {f["path"]: f for f in report["files"]}
    assert str(inv) in by_path
    (d403,) = [d for d in by_path[str(inv)]["diagnostics"] if d["code"] == "MRC403"]
    assert (d403["line"], d403["column"]) == (3, 1)
    orders = by_path[str(valid_dir / "orders.json")]
    assert "MRC401" in [d["code"] for d in orders["diagnostics"]]  # eu-central has no broker


# -- sarif ---------------------------------------------------------------------------


def test_sarif(cli: Cli, mixed: Path) -> None:
    result = cli(["validate", "--format", "sarif", mixed])
    assert result.exit_code == 1
    assert result.stderr == ""
    sarif = json.loads(result.stdout)
    assert sarif["version"] == "2.1.0"
    assert "sarif" in sarif["$schema"]
    (run,) = sarif["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in ALL_RULES]
    for r, rule in zip(rules, ALL_RULES, strict=True):
        assert r["name"] == rule.name
        assert r["fullDescription"]["text"] == rule.doc()
        assert r["defaultConfiguration"]["level"] == rule.severity.value
    report = report_json(cli(["validate", "--format", "json", mixed]))
    assert len(run["results"]) == report["summary"]["errors"] + report["summary"]["warnings"]
    assert run["results"]
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] in ("error", "warning")
        assert res["level"] == RULES[res["ruleId"]].severity.value
        assert res["message"]["text"]
        (loc,) = res["locations"]
        region = loc["physicalLocation"]["region"]
        assert region["startLine"] >= 1
        assert region["startColumn"] >= 1
        assert Path(loc["physicalLocation"]["artifactLocation"]["uri"]).is_file()
    comment = [r for r in run["results"] if r["ruleId"] == "MRC102"]
    assert [r["locations"][0]["physicalLocation"]["region"] for r in comment] == [
        {"startLine": 4, "startColumn": 5}
    ]
    assert {a["location"]["uri"] for a in run["artifacts"]} == {f["path"] for f in report["files"]}


def test_sarif_strict_turns_warnings_into_errors(cli: Cli, bom_file: Path) -> None:
    loose = json.loads(cli(["validate", "--format", "sarif", bom_file]).stdout)
    strict = json.loads(cli(["validate", "--format", "sarif", "--strict", bom_file]).stdout)
    assert [r["level"] for r in loose["runs"][0]["results"]] == ["warning"]
    assert [r["level"] for r in strict["runs"][0]["results"]] == ["error"]


def test_sarif_without_findings_still_lists_rules(cli: Cli, valid_dir: Path) -> None:
    result = cli(["validate", "--format", "sarif", valid_dir])
    assert result.exit_code == 0
    (run,) = json.loads(result.stdout)["runs"]
    assert run["results"] == []
    assert len(run["tool"]["driver"]["rules"]) == len(ALL_RULES)


# -- junit ---------------------------------------------------------------------------


def test_junit(cli: Cli, mixed: Path) -> None:
    result = cli(["validate", "--format", "junit", mixed])
    assert result.exit_code == 1
    assert result.stderr == ""
    root = ET.fromstring(result.stdout.encode())
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert sorted(Path(c.get("name", "")).name for c in cases) == sorted(VALID + BROKEN)
    for node in (root, suite):
        assert node.get("tests") == str(len(VALID) + len(BROKEN))
        assert node.get("failures") == str(len(BROKEN))
        assert node.get("errors") == "0"
    for case in cases:
        failures = case.findall("failure")
        if Path(case.get("name", "")).name in BROKEN:
            assert len(failures) == 1
            assert re.fullmatch(r"MRC\d{3}", failures[0].get("type", ""))
            assert failures[0].get("message")
            assert re.search(r":\d+:\d+: error MRC\d{3}", failures[0].text or "")
        else:
            assert failures == []
    comment = next(c for c in cases if c.get("name", "").endswith("pasted-from-docs.json"))
    assert ":4:5: error MRC102" in (comment.find("failure").text or "")


def test_junit_warning_only_file_passes_unless_strict(cli: Cli, bom_file: Path) -> None:
    loose = ET.fromstring(cli(["validate", "--format", "junit", bom_file]).stdout.encode())
    (case,) = loose.iter("testcase")
    assert case.find("failure") is None
    assert "MRC107" in (case.findtext("system-out") or "")
    assert loose.get("failures") == "0"

    strict = cli(["validate", "--format", "junit", "--strict", bom_file])
    assert strict.exit_code == 1
    root = ET.fromstring(strict.stdout.encode())
    (case,) = root.iter("testcase")
    assert case.find("failure") is not None
    assert root.get("failures") == "1"


# -- github --------------------------------------------------------------------------


def test_github(cli: Cli, mixed: Path) -> None:
    result = cli(["validate", "--format", "github", mixed])
    assert result.exit_code == 1
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    annotations = [GH_ANNOTATION.match(line) for line in lines if line.startswith("::")]
    assert annotations
    assert all(annotations), lines
    report = report_json(cli(["validate", "--format", "json", mixed]))
    assert len(annotations) == report["summary"]["errors"] + report["summary"]["warnings"]
    by_where = {(m[2], int(m[3]), int(m[4])): m for m in annotations if m}
    comment = by_where[(str(mixed / "broken" / "pasted-from-docs.json"), 4, 5)]
    assert comment[1] == "error"
    assert comment[5] == "MRC102 json-comment"
    # the hint follows the message on the same line, the newline escaped
    assert "%0A" in comment[6]
    assert "\n" not in comment[6]
    assert "delete every comment" in comment[6]
    # one non-annotation summary line
    s = report["summary"]
    assert [line for line in lines if not line.startswith("::")] == [
        f"mrc-plan: {s['files']} files checked, {s['invalid_files']} invalid, "
        f"{s['errors']} errors, {s['warnings']} warnings"
    ]


def test_github_warning_level_and_strict(cli: Cli, bom_file: Path) -> None:
    loose = cli(["validate", "--format", "github", bom_file])
    assert loose.exit_code == 0
    assert loose.stdout.startswith(
        f"::warning file={bom_file},line=1,col=1,title=MRC107 utf8-bom::"
    )
    strict = cli(["validate", "--format", "github", "--strict", bom_file])
    assert strict.exit_code == 1
    assert strict.stdout.startswith(f"::error file={bom_file},line=1,col=1,")


def test_github_escapes_property_separators_in_file_names(cli: Cli, tmp_path: Path) -> None:
    weird = tmp_path / "a,b%c.json"
    weird.write_text('{"version": 2, "replicas": []}\n')
    result = cli(["validate", "--format", "github", weird])
    assert result.exit_code == 1
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"::error file={tmp_path}/a%2Cb%25c.json,line=1,col=")


# -- text ----------------------------------------------------------------------------


def test_text(cli: Cli, mixed: Path, comment_file: Path) -> None:
    result = cli(["validate", "--format", "text", mixed])
    assert result.exit_code == 1
    assert result.stderr == ""
    out = result.stdout
    assert not ANSI.search(out), "colour codes when stdout is not a terminal"
    assert f"{comment_file}:4:5: error MRC102" in out
    assert "json-comment" in out
    assert "hint: delete every comment" in out
    assert "    // array of objects of this shape:" in out  # the source excerpt
    for name in VALID:
        assert f"PASS {mixed / 'placement' / name}" in out
    for name in BROKEN:
        assert f"FAIL {mixed / 'broken' / name}" in out
    summary = [m for line in out.splitlines() if (m := SUMMARY.match(line))]
    assert len(summary) == 1
    s = report_json(cli(["validate", "--format", "json", mixed]))["summary"]
    assert [int(n) for n in summary[0].groups()] == [
        s["files"],
        s["files"] - s["invalid_files"],
        s["invalid_files"],
        s["errors"],
        s["warnings"],
    ]
    assert s["invalid_files"] == len(BROKEN)
    assert out.rstrip().endswith("failed")


def test_text_clean_run(cli: Cli, valid_dir: Path) -> None:
    result = cli(["validate", "--format", "text", valid_dir])
    assert result.exit_code == 0
    assert result.stderr == ""
    assert ": error " not in result.stdout
    assert "(0 errors, 0 warnings): passed" in result.stdout
    assert not ANSI.search(result.stdout)


def test_text_has_no_colour_in_a_pipe_even_with_force_color(
    cli: Cli, comment_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FORCE_COLOR must not leak escape codes into a report that goes to a pipe."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    result = cli(["validate", "--format", "text", comment_file])
    assert not ANSI.search(result.stdout)


def test_text_excerpt_is_the_reported_line(cli: Cli, tmp_path: Path) -> None:
    p = tmp_path / "sep.json"
    p.write_text(
        '{"version": 2,\n'
        ' "replicas": [{"count": 1, "constraints": {"rack": "eu\u2028west"}}],\n'
        ' "observer": []}\n',
        encoding="utf-8",
    )
    result = cli(["validate", "--format", "text", p])
    assert f"{p}:3:2: error MRC204" in result.stdout
    assert ' 3 |  "observer": []}' in result.stdout


# -- auto ----------------------------------------------------------------------------


def test_auto_is_github_under_github_actions(
    cli: Cli, comment_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    default = cli(["validate", comment_file])
    auto = cli(["validate", "--format", "auto", comment_file])
    github = cli(["validate", "--format", "github", comment_file])
    assert default.stdout == auto.stdout == github.stdout
    assert default.stdout.startswith(f"::error file={comment_file},line=4,col=5,")
    assert default.exit_code == 1


def test_auto_is_text_elsewhere(cli: Cli, comment_file: Path) -> None:
    assert "GITHUB_ACTIONS" not in os.environ
    default = cli(["validate", comment_file])
    text = cli(["validate", "--format", "text", comment_file])
    assert default.stdout == text.stdout
    assert f"{comment_file}:4:5: error MRC102" in default.stdout
    assert "::error" not in default.stdout


# -- --output ------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "github", "sarif", "junit"])
def test_output_file(cli: Cli, mixed: Path, tmp_path: Path, fmt: str) -> None:
    target = tmp_path / "reports" / f"report.{fmt}"
    target.parent.mkdir()  # a missing directory is a usage error (tests/cli/test_output_safety)
    result = cli(["validate", "--format", fmt, "--output", target, mixed])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == f"wrote {target}\n"
    expected = cli(["validate", "--format", fmt, mixed]).stdout
    assert target.read_text(encoding="utf-8") == expected
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no temp file left


def test_output_short_option(cli: Cli, valid_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    result = cli(["validate", "-o", target, "--format", "json", valid_dir])
    assert result.exit_code == 0
    assert result.stdout == ""
    assert json.loads(target.read_text())["summary"]["invalid_files"] == 0


# -- exit codes ----------------------------------------------------------------------


def test_exit_0_clean(cli: Cli, valid_dir: Path) -> None:
    result = cli(["validate", valid_dir])
    assert result.exit_code == 0
    assert result.stderr == ""


def test_exit_0_with_warnings_only_and_1_when_strict(cli: Cli, bom_file: Path) -> None:
    loose = cli(["validate", "--format", "json", bom_file])
    assert loose.exit_code == 0
    assert codes(report_json(loose)) == ["MRC107"]
    assert report_json(loose)["files"][0]["valid"] is True

    strict = cli(["validate", "--format", "json", "--strict", bom_file])
    assert strict.exit_code == 1
    report = report_json(strict)
    assert report["strict"] is True
    assert report["files"][0]["valid"] is False
    assert report["summary"]["invalid_files"] == 1


def test_resilience_warning_is_a_warning(cli: Cli, valid_dir: Path) -> None:
    """All sync replicas in one rack (clickstream): MRC503 warns, fails only under --strict."""
    args = ["validate", "--format", "json", "--min-insync-replicas", "2"]
    loose = cli([*args, valid_dir / "clickstream.json"])
    assert loose.exit_code == 0
    assert codes(report_json(loose)) == ["MRC503"]
    assert cli([*args, "--strict", valid_dir / "clickstream.json"]).exit_code == 1


def test_exit_1_on_errors(cli: Cli, comment_file: Path, valid_dir: Path) -> None:
    result = cli(["validate", valid_dir, comment_file])
    assert result.exit_code == 1
    assert result.stderr == ""


def test_exit_zero_turns_findings_into_0(cli: Cli, mixed: Path, bom_file: Path) -> None:
    result = cli(["validate", "--exit-zero", "--format", "json", mixed])
    assert result.exit_code == 0
    assert report_json(result)["summary"]["invalid_files"] == len(BROKEN)  # still reported
    assert cli(["validate", "--exit-zero", "--strict", bom_file]).exit_code == 0


def test_exit_zero_does_not_hide_usage_errors(cli: Cli, tmp_path: Path) -> None:
    result = cli(["validate", "--exit-zero", tmp_path / "missing.json"])
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ([], []),
        (["--min-insync-replicas", "4"], []),  # 4 sync replicas, promotion under min ISR
        (["--min-insync-replicas", "5"], ["MRC501"]),
        (["--ibp", "3.2"], ["MRC302", "MRC302"]),  # both racks hold both roles
        (["--ibp", "3.3"], []),
        (["--ibp", "3.3-IV3"], []),
        (["--ibp", "2.8.1"], ["MRC302", "MRC302"]),
    ],
)
def test_options_change_the_findings(
    cli: Cli, valid_dir: Path, options: list[str], expected: list[str]
) -> None:
    """payments-stretched.json: 2+2 sync replicas, observers in the same two racks."""
    result = cli(["validate", "--format", "json", *options, valid_dir / "payments-stretched.json"])
    assert codes(report_json(result)) == expected
    assert result.exit_code == (1 if expected else 0)


def test_inventory_formats_agree(cli: Cli, valid_dir: Path) -> None:
    outs = [
        cli(["validate", "--format", "json", "--inventory", inv, valid_dir])
        for inv in (EXAMPLES / "inventory.json", EXAMPLES / "inventory.csv")
    ]
    assert [r.exit_code for r in outs] == [0, 0]
    assert codes(report_json(outs[0])) == codes(report_json(outs[1])) == []


def _positions(report: dict) -> dict[str, list[tuple[str, int, int]]]:
    return {
        Path(f["path"]).name: [(d["code"], d["line"], d["column"]) for d in f["diagnostics"]]
        for f in report["files"]
        if f["diagnostics"]
    }


def test_topology_checks_two_data_centres(cli: Cli, valid_dir: Path, tmp_path: Path) -> None:
    # the README's example: controllers 3+2 over the two broker racks
    policy = valid_dir / "clickstream.json"
    inv = EXAMPLES / "inventory-two-dc.json"
    result = cli(["validate", "--format", "json", "--inventory", inv, policy])
    assert result.exit_code == 1
    assert _positions(report_json(result)) == {
        "inventory-two-dc.json": [("MRC701", 13, 5), ("MRC702", 13, 5)],
        "clickstream.json": [("MRC703", 3, 3)],
    }
    # one us-west controller moved to a third site (2.5 DC): only the two-site warning stays
    text = inv.read_text()
    moved = '{"id": 9001, "rack": "us-west"}'
    assert moved in text
    two_and_a_half = tmp_path / "inventory-2.5-dc.json"
    two_and_a_half.write_text(text.replace(moved, '{"id": 9001, "rack": "eu-central"}'))
    args = ["validate", "--format", "json", "--inventory", two_and_a_half, policy]
    result = cli(args)
    assert result.exit_code == 0
    assert _positions(report_json(result)) == {"inventory-2.5-dc.json": [("MRC702", 13, 5)]}
    assert cli([*args, "--strict"]).exit_code == 1


def test_server_properties(cli: Cli, tmp_path: Path) -> None:
    props = tmp_path / "server.properties"
    shutil.copy(EXAMPLES / "server.properties", props)
    result = cli(
        ["validate", "--format", "json", "--inventory", EXAMPLES / "inventory.json", props]
    )
    assert result.exit_code == 0
    assert report_json(result)["summary"]["files"] == 1

    bad = tmp_path / "bad" / "server.properties"
    bad.parent.mkdir()
    bad.write_text('confluent.log.placement.constraints={"version": 2, "replicas": [],}\n')
    result = cli(["validate", "--format", "json", bad])
    assert result.exit_code == 1
    (d,) = report_json(result)["files"][0]["diagnostics"]
    assert (d["code"], d["line"], d["column"]) == ("MRC103", 1, 66)
    assert d["context"] == "confluent.log.placement.constraints"


def test_properties_with_cr_line_endings(cli: Cli, tmp_path: Path) -> None:
    props = tmp_path / "server.properties"
    props.write_bytes(
        b"broker.rack=us-west\r"
        b'confluent.log.placement.constraints={"version": 2, "replicas": [],}\r'
    )
    result = cli(["validate", "--format", "json", props])
    (d,) = report_json(result)["files"][0]["diagnostics"]
    assert (d["code"], d["line"], d["column"]) == ("MRC103", 2, 66)


def _usage_error(result: Result, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    for needle in needles:
        assert needle in result.stderr


def test_exit_2_missing_path(cli: Cli, tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    _usage_error(cli(["validate", missing]), f"error: {missing}: no such file or directory")


def test_exit_2_directory_without_policies(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("nothing here")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "p.json").write_text("{}")
    _usage_error(cli(["validate", tmp_path]), "no placement files", "hint:")


def test_exit_2_no_paths(cli: Cli) -> None:
    result = cli(["validate"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "nothing to check: give PATHS, --bootstrap-server HOST:PORT, or both" in result.stderr


def test_exit_2_bad_ibp(cli: Cli, valid_dir: Path) -> None:
    _usage_error(
        cli(["validate", "--ibp", "three", valid_dir]),
        "error: --ibp: 'three' is not an inter.broker.protocol.version",
        "hint: give a Kafka inter.broker.protocol.version such as 2.8, 3.3-IV3 or 4.0",
    )


@pytest.mark.parametrize(
    ("value", "kafka"), [("7.2", "3.2"), ("7.9", "3.9"), ("8.0", "4.0"), ("6.2", "2.8")]
)
def test_exit_2_confluent_platform_version_as_ibp_names_the_kafka_version(
    cli: Cli, valid_dir: Path, value: str, kafka: str
) -> None:
    """7.2 is Confluent Platform's version, not an IBP: it used to pass as "newer than 3.3"."""
    _usage_error(
        cli(["validate", "--ibp", value, valid_dir]),
        f"error: --ibp: '{value}' is not an inter.broker.protocol.version",
        f"CP {value} ships Apache Kafka {kafka}, so write --ibp {kafka}",
    )


@pytest.mark.parametrize("value", ["5.3", "3.3-IV9", "3.10", "0.10", "0.8.0-IV0", "3.3-iv3"])
def test_exit_2_ibp_kafka_never_had(cli: Cli, valid_dir: Path, value: str) -> None:
    _usage_error(cli(["validate", "--ibp", value, valid_dir]), "is not an inter.broker")


@pytest.mark.parametrize("value", ["3.3-IV3", "2.8.1", "4.0", "0.10.2", "0.10.2-IV0", "3.9", "4.1"])
def test_real_ibps_are_accepted(cli: Cli, valid_dir: Path, value: str) -> None:
    result = cli(["validate", "--ibp", value, valid_dir])
    assert result.exit_code in (0, 1), result.output  # below 3.3, overlapping racks are findings
    assert "error: --ibp" not in result.stderr


def test_findings_are_capped_per_file_with_one_note(cli: Cli, tmp_path: Path) -> None:
    """500 wrong-type entries: 100 listed, then MRC801 counting the other 400."""
    wide = tmp_path / "wide.json"
    wide.write_text('{"version": 2, "replicas": [' + ", ".join(["1"] * 500) + "]}")
    result = cli(["validate", "--format", "json", wide])
    assert result.exit_code == 1
    (file,) = report_json(result)["files"]
    codes = [d["code"] for d in file["diagnostics"]]
    assert codes.count("MRC205") == 100 and codes.count("MRC801") == 1
    (note,) = (d for d in file["diagnostics"] if d["code"] == "MRC801")
    assert "400 more finding(s) not shown (400 error(s), 0 warning(s))" in note["message"]
    assert file["valid"] is False


def test_findings_cap_can_be_raised(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MRC_PLAN_MAX_DIAGNOSTICS_PER_FILE", "1000")
    wide = tmp_path / "wide.json"
    wide.write_text('{"version": 2, "replicas": [' + ", ".join(["1"] * 500) + "]}")
    (file,) = report_json(cli(["validate", "--format", "json", wide]))["files"]
    assert [d["code"] for d in file["diagnostics"]] == ["MRC205"] * 500


def test_exit_2_policy_file_above_the_size_cap(cli: Cli, tmp_path: Path) -> None:
    """A placement policy is a few hundred bytes: 2 MiB is refused before it is parsed."""
    big = tmp_path / "big.json"
    big.write_text('{"version": 2, "replicas": [' + " " * (2 * 2**20) + "]}")
    _usage_error(
        cli(["validate", big]), f"error: {big}: file is too large", "MRC_PLAN_MAX_POLICY_BYTES"
    )


def test_lone_surrogate_escape_in_properties_is_a_finding(cli: Cli, tmp_path: Path) -> None:
    """`\\ud800` is not a character: it used to crash the report writer (exit 101)."""
    props = tmp_path / "server.properties"
    props.write_text(
        "broker.rack=us-west\n"
        'confluent.log.placement.constraints={"version": 2, "replicas": [{"count": 1, '
        '"constraints": {"rack": "\\ud800"}}]}\n'
    )
    for fmt in ("text", "json", "sarif", "junit", "github"):
        result = cli(["validate", "--format", fmt, props])
        assert result.exit_code == 1, result.output
    (d,) = report_json(cli(["validate", "--format", "json", props]))["files"][0]["diagnostics"]
    assert (d["code"], d["line"], d["column"]) == ("MRC106", 2, 103)


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_exit_2_bad_min_insync_replicas(cli: Cli, valid_dir: Path, value: str) -> None:
    _usage_error(
        cli(["validate", "--min-insync-replicas", value, valid_dir]), "--min-insync-replicas"
    )


def test_exit_2_bad_format(cli: Cli, valid_dir: Path) -> None:
    _usage_error(cli(["validate", "--format", "xml", valid_dir]), "--format")


def test_exit_2_missing_inventory(cli: Cli, valid_dir: Path, tmp_path: Path) -> None:
    inv = tmp_path / "inventory.json"
    _usage_error(cli(["validate", "--inventory", inv, valid_dir]), f"error: {inv}: ", "not found")


@pytest.mark.parametrize(
    ("name", "content", "where"),
    [
        ("inv.json", b'{"brokers": [\n  {"id": 1, "rack": "a"},\n]}', "2:25"),
        ("inv.json", b'{"brokers": [\n  {"id": 1, "rak": "a"}\n]}', "2:13"),
        ("inv.json", b'{"brokers": [{"id": 1,\n "rack": "M\xfcnchen"}]}', "2:12"),
        ("inv.csv", b"id,rack\n1,a\nx,b\n", "3:1"),
    ],
    ids=["trailing-comma", "unknown-key", "latin1", "csv-bad-id"],
)
def test_exit_2_bad_inventory_says_where(
    cli: Cli, valid_dir: Path, tmp_path: Path, name: str, content: bytes, where: str
) -> None:
    inv = tmp_path / name
    inv.write_bytes(content)
    _usage_error(cli(["validate", "--inventory", inv, valid_dir]), f"error: {inv}:{where}: ")


def test_exit_2_empty_inventory_dir(cli: Cli, valid_dir: Path, tmp_path: Path) -> None:
    inv = tmp_path / "brokers"
    inv.mkdir()
    _usage_error(cli(["validate", "--inventory", inv, valid_dir]), f"error: {inv}: ")


def _deny_reading(monkeypatch: pytest.MonkeyPatch, denied: Path) -> None:
    """Root reads any file, so simulate EACCES for one path (and only for it), opened as
    a Path or by os.open (how a directory walk's files are opened)."""
    open_ = Path.open
    os_open = os.open

    def deny(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == denied:
            raise PermissionError(13, "Permission denied", str(self))
        return open_(self, *args, **kwargs)

    def deny_os(path: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(path, str | os.PathLike) and Path(path) == denied:
            raise PermissionError(13, "Permission denied", str(path))
        return os_open(path, *args, **kwargs)

    monkeypatch.setattr(Path, "open", deny)
    monkeypatch.setattr(os, "open", deny_os)


def test_exit_2_unreadable_inventory_simulated(
    cli: Cli, valid_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inv = tmp_path / "inventory.json"
    shutil.copy(EXAMPLES / "inventory.json", inv)
    _deny_reading(monkeypatch, inv)
    _usage_error(
        cli(["validate", "--inventory", inv, valid_dir]),
        f"error: {inv}: cannot read the inventory: Permission denied",
    )


def test_exit_2_unreadable_policy_simulated(
    cli: Cli, valid_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = valid_dir / "orders.json"
    _deny_reading(monkeypatch, target)
    _usage_error(cli(["validate", valid_dir]), f"error: {target}: cannot read: Permission denied")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_exit_2_unreadable_inventory(cli: Cli, valid_dir: Path, tmp_path: Path) -> None:
    inv = tmp_path / "inventory.json"
    shutil.copy(EXAMPLES / "inventory.json", inv)
    inv.chmod(0)
    try:
        _usage_error(cli(["validate", "--inventory", inv, valid_dir]), f"error: {inv}: cannot read")
    finally:
        inv.chmod(0o644)


# -- internal errors ------------------------------------------------------------------


def _explode(*args: object, **kwargs: object) -> None:
    raise RuntimeError("boom from a test")


def test_exit_101_internal_error(
    cli: Cli, valid_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("placement.rules.validate.validate_paths", _explode)
    result = cli(["validate", valid_dir])
    assert result.exit_code == 101
    assert result.stdout == ""
    assert "bug" in result.stderr
    assert "report" in result.stderr
    assert "MRC_PLAN_DEBUG=1" in result.stderr
    assert "RuntimeError: boom from a test" in result.stderr
    assert "Traceback" not in result.stderr


def test_exit_101_debug_shows_traceback(
    cli: Cli, valid_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("placement.rules.validate.validate_paths", _explode)
    monkeypatch.setenv("MRC_PLAN_DEBUG", "1")
    result = cli(["validate", valid_dir], traceback_ok=True)
    assert result.exit_code == 101
    assert result.stdout == ""
    assert "Traceback (most recent call last)" in result.stderr
    assert "RuntimeError: boom from a test" in result.stderr
    assert "_explode" in result.stderr


def test_debug_shows_traceback_for_usage_errors_too(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MRC_PLAN_DEBUG", "1")
    result = cli(["validate", tmp_path / "missing.json"], traceback_ok=True)
    assert result.exit_code == 2
    assert "Traceback" in result.stderr
    assert "no such file or directory" in result.stderr


def test_exit_101_in_a_reporter(cli: Cli, valid_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from placement.diagnostics import reporters

    monkeypatch.setitem(reporters.REPORTERS, "json", _explode)
    result = cli(["validate", "--format", "json", valid_dir])
    assert result.exit_code == 101
    assert result.stdout == ""
    assert "bug" in result.stderr


@pytest.mark.parametrize("debug", ["", "0"])
def test_debug_off_values(
    cli: Cli, valid_dir: Path, monkeypatch: pytest.MonkeyPatch, debug: str
) -> None:
    monkeypatch.setattr("placement.rules.validate.validate_paths", _explode)
    monkeypatch.setenv("MRC_PLAN_DEBUG", debug)
    result = cli(["validate", valid_dir])
    assert result.exit_code == 101
    assert "Traceback" not in result.stderr


# -- known bugs -----------------------------------------------------------------------


def test_surrogate_pair_escape_in_rack_name(cli: Cli, tmp_path: Path) -> None:
    p = tmp_path / "emoji.json"
    p.write_text(
        '{"version": 2, "replicas": [{"count": 1, "constraints": {"rack": "\\ud83d\\ude00"}}]}'
    )
    assert json.loads(p.read_text())["replicas"][0]["constraints"]["rack"] == "\U0001f600"
    result = cli(["validate", "--format", "json", p])
    assert result.exit_code == 0, result.stderr


def test_lone_surrogate_escape_does_not_crash_the_report(cli: Cli, tmp_path: Path) -> None:
    p = tmp_path / "lone.json"
    p.write_text('{"version": 2, "replicas": [{"count": 1, "constraints": {"rack": "a\\ud800"}}]}')
    result = cli(["validate", "--format", "json", p])
    assert result.exit_code in (0, 1), result.stderr


def test_huge_integer_literal_is_a_finding(cli: Cli, tmp_path: Path) -> None:
    p = tmp_path / "huge.json"
    count = "9" * 5000
    p.write_text(
        f'{{"version": 2, "replicas": [{{"count": {count}, "constraints": {{"rack": "a"}}}}]}}'
    )
    result = cli(["validate", "--format", "json", p])
    assert result.exit_code == 1, result.stderr
    assert codes(report_json(result)) == ["MRC101"]  # too long to be a number at all


def test_a_policy_keeps_its_own_syntax_hints(tmp_path: Path, cli: Callable[..., Result]) -> None:
    """The MRC1xx rules word the parser's findings for a placement policy."""
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "sketch.json").write_text('{"version": 2, // from the docs\n"replicas": []}')
    out = cli(["validate", "--format", "json", tmp_path]).stdout
    hints = {Path(f["path"]).name: f["diagnostics"][0]["hint"] for f in json.loads(out)["files"]}
    assert hints["empty.json"].startswith("a placement policy needs at least")
    assert "Confluent's documentation uses //" in hints["sketch.json"]


# -- the audit of a cluster's state (MRC9xx) ---------------------------------------

DESCRIBED = REPO / "tests" / "fixtures" / "describe"
AUDITED = [DESCRIBED / "policy-changed.txt", DESCRIBED / "under-min-isr.txt"]
INVENTORY = ["--inventory", EXAMPLES / "inventory.json"]
TEXT_FINDING = re.compile(r"^  (.+):(\d+):(\d+): (error|warning) (MRC\d{3}) \[")
JUNIT_FINDING = re.compile(r"^(.+):(\d+):(\d+): (error|warning) (MRC\d{3}) \[", re.M)

Where = set[tuple[str, int, int, str]]


def _where(fmt: str, out: str) -> Where:
    """(file, line, column, code) of every finding a report in ``fmt`` shows."""
    if fmt == "json":
        return {
            (d["file"], d["line"], d["column"], d["code"])
            for f in json.loads(out)["files"]
            for d in f["diagnostics"]
        }
    if fmt == "sarif":
        (run,) = json.loads(out)["runs"]
        found = set()
        for r in run["results"]:
            (loc,) = r["locations"]
            region = loc["physicalLocation"]["region"]
            uri = loc["physicalLocation"]["artifactLocation"]["uri"]
            found.add((uri, region["startLine"], region["startColumn"], r["ruleId"]))
        return found
    if fmt == "github":
        matches = [GH_ANNOTATION.match(line) for line in out.splitlines() if line[:2] == "::"]
        return {(m[2], int(m[3]), int(m[4]), m[5].split()[0]) for m in matches if m}
    if fmt == "junit":
        root = ET.fromstring(out.encode())
        text = "\n".join(
            node.text or "" for node in root.iter() if node.tag in ("failure", "system-out")
        )
        return {(m[1], int(m[2]), int(m[3]), m[5]) for m in JUNIT_FINDING.finditer(text)}
    matches = [TEXT_FINDING.match(line) for line in out.splitlines()]
    return {(m[1], int(m[2]), int(m[3]), m[5]) for m in matches if m}


@pytest.mark.parametrize("fmt", ["text", "github", "sarif", "junit"])
def test_every_format_points_at_the_partition_lines(cli: Cli, fmt: str) -> None:
    """The audit's findings carry their describe line and the column of the field they are
    about, in every report format, as the JSON report has them."""
    reference = cli(["validate", *AUDITED, *INVENTORY, "--format", "json"])
    assert reference.exit_code == 1
    want = _where("json", reference.stdout)
    assert {code for *_, code in want} == {"MRC901", "MRC902", "MRC903", "MRC904"}
    lines = (DESCRIBED / "policy-changed.txt").read_text().splitlines()
    replicas = lines[6].index("Replicas: ") + len("Replicas: ") + 1
    assert (str(AUDITED[0]), 7, replicas, "MRC901") in want
    result = cli(["validate", *AUDITED, *INVENTORY, "--format", fmt])
    assert result.exit_code == 1
    got = _where(fmt, result.stdout)
    if fmt in ("text", "github"):  # one line per cause, at its first finding (rollup)
        assert got <= want
        assert {code for *_, code in got} == {code for *_, code in want}
    else:
        assert got == want


def test_the_audit_report_matches_the_schema(cli: Cli) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "schemas" / "diagnostics.schema.json").read_text())
    jsonschema.validate(
        report_json(cli(["validate", *AUDITED, *INVENTORY, "--format", "json"])), schema
    )


def test_without_an_inventory_the_placement_is_not_checked_and_a_note_says_so(cli: Cli) -> None:
    result = cli(["validate", AUDITED[0], "--format", "json"])
    assert result.exit_code == 0  # every partition of it is in sync
    assert codes(report_json(result)) == []
    (note,) = result.stderr.splitlines()
    assert note.startswith(f"note: {AUDITED[0]}:") and "pass --inventory" in note
    # the state rules need no racks
    result = cli(["validate", *AUDITED, "--format", "json"])
    assert result.exit_code == 1
    assert set(codes(report_json(result))) == {"MRC902", "MRC903", "MRC904"}
    assert len(result.stderr.splitlines()) == 1
    assert cli(["validate", AUDITED[0], *INVENTORY]).stderr == ""


def test_under_replicated_alone_passes_unless_strict(cli: Cli, tmp_path: Path) -> None:
    lines = (DESCRIBED / "under-min-isr.txt").read_text().splitlines(keepends=True)
    only = tmp_path / "describe.txt"
    # orders alone, with partition 2 back to 2 in sync: 5 and 6 still out
    only.write_text("".join(lines[:4]).replace("Isr: 3\t", "Isr: 3,4\t"))
    result = cli(["validate", only, *INVENTORY, "--format", "json"])
    assert result.exit_code == 0
    assert codes(report_json(result)) == ["MRC904", "MRC904"]
    assert cli(["validate", only, *INVENTORY, "--strict"]).exit_code == 1


@pytest.mark.parametrize("fmt", ["json", "text", "github", "sarif", "junit"])
def test_a_snapshot_is_audited_at_its_rows(
    cli: Cli, example_snapshot: Callable[[Path], Path], tmp_path: Path, fmt: str
) -> None:
    """examples/describe.txt as a snapshot: its rows are sorted by topic and partition
    (legacy-events 0-1, orders 0-2); its own brokers table gives the racks."""
    snap = example_snapshot(tmp_path / "snap")
    table = str(snap / "partitions" / "part-00000.parquet")
    result = cli(["validate", snap, "--format", fmt])
    assert result.exit_code == 1
    assert _where(fmt, result.stdout) == {
        (table, 2, 1, "MRC904"),  # legacy-events-1: 8 out of the ISR
        (table, 4, 1, "MRC901"),  # orders-1: 3 sync replicas in us-west
        (table, 5, 1, "MRC902"),  # orders-2: no leader
    }
    assert cli(["validate", snap, *INVENTORY, "--format", fmt]).stdout == result.stdout


def test_a_large_snapshot_lists_the_cap_and_counts_the_rest(
    cli: Cli, synth_snapshot: Callable[..., Path], tmp_path: Path
) -> None:
    snap = synth_snapshot(
        tmp_path / "snap", "--violations", "0.5", "--seed", "3", topics=20, per_topic=50
    )
    result = cli(["validate", snap, "--format", "json"])
    assert result.exit_code == 1
    (partitions,) = [f for f in report_json(result)["files"] if "partitions" in f["path"]]
    diags = partitions["diagnostics"]
    assert len(diags) == 101
    assert [d["code"] for d in diags].count("MRC901") == 100
    (more,) = [d for d in diags if d["code"] == "MRC801"]
    shown = cli(["snapshot", "show", snap, "--format", "json"])
    broken = json.loads(shown.stdout)["violations"]
    assert broken > 100
    assert (
        f"{broken - 100:,} more finding(s) not shown ({broken - 100:,} error(s)"
        in (more["message"])
    )


def test_findings_in_a_snapshot_show_no_excerpt_of_its_parquet(
    cli: Cli, example_snapshot: Callable[[Path], Path], tmp_path: Path
) -> None:
    """A row of a Parquet file is no line of text: the text report quotes none (it used
    to print the file's bytes, escaped, under each finding)."""
    snap = example_snapshot(tmp_path / "snap")
    out = cli(["validate", snap, "--format", "text"]).stdout
    assert "MRC901" in out and "part-00000.parquet:4:1" in out
    assert "PAR1" not in out and "\\x00" not in out and " | " not in out
