"""Untrusted text in every rendering: `escape` itself, then each reporter of `validate` fed a
report whose file names and messages carry controls, bidi overrides and bytes that are not
UTF-8."""

from __future__ import annotations

import json
import re
from xml.etree import ElementTree as ET

import pytest

from mrc_plan_cli.render import render_text
from placement.diagnostics.escape import encodable, encodable_tree, escape, json_text
from placement.diagnostics.reporters import render_github, render_json, render_junit, render_sarif
from placement.model.diagnostic import Diagnostic, Severity, ValidationReport, build_report

# what a pull request can put in a name: a newline and a workflow command, ESC, BEL, a bidi
# override, a C1 control, DEL, a byte that is not UTF-8 (surrogateescape), rich markup, an emoji
HOSTILE = "orders\n::error::pwn\r\x1b[31m\x07\u202e\x85\x7f\udcff[red]x:smile:%,:"
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain-name", "plain-name"),
        ("a\nb", "a\\nb"),
        ("a\r\tb", "a\\r\\tb"),
        ("\x1b[2J", "\\x1b[2J"),
        ("\x00\x7f\x85\x9f", "\\x00\\x7f\\x85\\x9f"),
        ("abc\u202edef\u2066", "abc\\u202edef\\u2066"),
        ("line\u2028sep", "line\\u2028sep"),
        ("f\udcff.json", "f\\xff.json"),  # the byte as it was on disk
        ("\ud800", "\\ud800"),  # a surrogate no decoder produced
        ("café ☕ 東京 \\n", "café ☕ 東京 \\n"),  # printable text and backslashes stay
    ],
)
def test_escape_renders_each_unsafe_character_visibly(raw: str, shown: str) -> None:
    assert escape(raw) == shown


def test_escape_keeps_only_what_is_asked() -> None:
    assert escape("a\tb\nc\x1b", keep="\t") == "a\tb\\nc\\x1b"
    assert escape("a\tb\nc", keep="\n\t") == "a\tb\nc"


def test_escaped_text_is_printable_utf8_and_xml() -> None:
    everything = "".join(map(chr, range(0x110000)))
    out = escape(everything)
    assert not UNSAFE.search(out)
    out.encode("utf-8")  # strict: no surrogate left
    ET.fromstring(f"<a>{out.replace('&', '&amp;').replace('<', '&lt;')}</a>")


def test_encodable_changes_only_surrogates() -> None:
    assert encodable("a\n\x1b\udcffb") == "a\n\x1b\\xffb"
    assert encodable_tree({"k\udc80": ["x\udcff", 1, None]}) == {"k\\x80": ["x\\xff", 1, None]}


def test_json_text_escapes_what_json_leaves_raw() -> None:
    value = {"k\u202e": ["a\x7f\x85\u2066b", "é\n"]}
    text = json_text(json.dumps(value, ensure_ascii=False))
    assert not UNSAFE.search(text) and "é" in text
    assert json.loads(text) == value


def _report() -> ValidationReport:
    name = f"policies/{HOSTILE} dir/p.json"
    d = Diagnostic(
        code="MRC101",
        name="json-syntax",
        severity=Severity.ERROR,
        message=f"unexpected {HOSTILE!s}",
        file=name,
        pointer="",
        line=1,
        column=1,
        hint=f"hint {HOSTILE}",
        context=HOSTILE,
    )
    return build_report({name: [d]}, strict=False, tool_version="0")


def _assert_safe_lines(out: str) -> None:
    out.encode("utf-8")  # valid UTF-8 once written: no lone surrogate
    assert not UNSAFE.search(out), repr(out)


def test_github_format_starts_no_command_it_did_not_mean() -> None:
    out = render_github(_report())
    _assert_safe_lines(out)
    lines = out.splitlines()
    commands = [line for line in lines if line.lstrip().startswith("::")]
    assert len(commands) == 1 and commands[0].startswith("::error file=")
    # properties: no raw ',' or ':' from the name splits the property list
    props = commands[0][len("::error ") :].split("::", 1)[0]
    assert [p.split("=", 1)[0] for p in props.split(",")] == ["file", "line", "col", "title"]


def test_junit_is_well_formed_xml() -> None:
    out = render_junit(_report())
    _assert_safe_lines(out)
    root = ET.fromstring(out.split("\n", 1)[1])
    case = root.find("./testsuite/testcase")
    assert case is not None and "\\x1b" in case.get("name", "")


@pytest.mark.parametrize("render", [render_json, render_sarif])
def test_json_formats_are_strict_utf8_json(render: object) -> None:
    assert callable(render)
    out = render(_report())
    assert isinstance(out, str)
    json.loads(out.encode("utf-8").decode("utf-8", errors="strict"))
    assert "\udcff" not in out and "\\xff" in out


def test_json_keeps_names_as_data() -> None:
    doc = json.loads(render_json(_report()))
    # controls survive as JSON escapes (it is data), only the undecodable byte is rendered
    expected = "policies/" + HOSTILE.replace("\udcff", "\\xff") + " dir/p.json"
    assert doc["files"][0]["path"] == expected


def test_sarif_uri_is_a_percent_encoded_relative_reference() -> None:
    doc = json.loads(render_sarif(_report()))
    run = doc["runs"][0]
    uris = [run["artifacts"][0]["location"]["uri"]] + [
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for r in run["results"]
        for loc in r["locations"]
    ]
    for uri in uris:
        assert uri.startswith("policies/") and uri.endswith("%20dir/p.json")
        assert re.fullmatch(r"[A-Za-z0-9\-._~/%]+", uri), uri
        assert "%FF" in uri and "%0A" in uri and "%1B" in uri
    assert not UNSAFE.search(run["results"][0]["message"]["text"])


def test_text_format_shows_names_literally() -> None:
    out = render_text(_report())
    _assert_safe_lines(out)
    assert "[red]x:smile:" in out  # no markup, no emoji
    assert not any(line.startswith("::") for line in out.splitlines())


def test_text_format_in_colour_has_only_its_own_ansi_codes() -> None:
    out = render_text(_report(), color=True)
    assert "\x1b[" in out  # rich's colours
    assert "\x1b[31m\x07" not in out and "\\x1b[31m\\x07" in out
    assert "\n::error::" not in out and "\u202e" not in out


def test_one_json_writer_for_models_and_trees() -> None:
    """`report_json` writes a pydantic report (score, simulate) and a plain tree (summary.json,
    `assign --summary`) alike: two-space indent, a final newline, names as data, strict
    UTF-8, nothing a terminal would act on."""
    from pydantic import BaseModel

    from placement.diagnostics.jsonout import report_json

    class Named(BaseModel):
        name: str
        count: int

    as_model = report_json(Named(name=HOSTILE, count=3))
    as_tree = report_json({"name": HOSTILE, "count": 3})
    assert as_model == as_tree
    assert as_model.endswith("}\n") and '\n  "count": 3' in as_model
    as_model.encode("utf-8", errors="strict")
    assert not re.search("[\x7f-\x9f\u202a-\u202e]", as_model)
    assert json.loads(as_model)["name"] == HOSTILE.replace("\udcff", "\\xff")
    assert report_json({"rack": "zürich"}) == '{\n  "rack": "zürich"\n}\n'
