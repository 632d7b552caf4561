"""Machine-readable renderings of a ValidationReport. Each reporter: report -> text.

The human `text` reporter needs rich and lives in the CLI, which adds it to this registry.

File names and messages are untrusted (a pull request chooses them): every reporter's output
is valid UTF-8 whatever the names hold (`escape.encodable`), and the formats a person or a CI
log reads (github, junit, SARIF messages) show control characters as visible escapes
(`escape.escape`), so no name can start a workflow command or break the XML.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath
from typing import TYPE_CHECKING
from urllib.parse import quote

from placement.diagnostics.escape import escape

if TYPE_CHECKING:
    from placement.model.diagnostic import Diagnostic, ValidationReport

# what each reporter needs (the rules' texts, the records, json, XML) is imported when it
# runs: the CLI builds its --format choices from this module's REPORTERS on every start
Reporter = Callable[["ValidationReport"], str]
INFO_URI = "https://github.com/mrc-plan/mrc-plan"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def render_json(report: ValidationReport) -> str:
    """The report as data: names exactly as found, but for bytes that are not UTF-8."""
    from placement.diagnostics.jsonout import report_json

    return report_json(report.to_json())


def _gh_escape(text: str, *, prop: bool = False) -> str:
    """GitHub's own escaping of workflow-command data (and properties), as in
    @actions/core: what a runner decodes back. Apply it to text already through `escape`."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def render_github(report: ValidationReport) -> str:
    from placement.diagnostics.rollup import roll_up
    from placement.model.diagnostic import Severity

    """GitHub Actions workflow commands: one annotation per cause (`rollup`), at its first
    finding; the summary line counts every finding."""
    lines = []
    for f in report.files:
        for rolled in roll_up(f.diagnostics):
            d = rolled.first
            level = "error" if d.severity is Severity.ERROR or report.strict else "warning"
            message = escape(d.message + rolled.suffix()) + (
                f"\n{escape(d.hint)}" if d.hint else ""
            )
            props = ",".join(
                [
                    f"file={_gh_escape(escape(d.file), prop=True)}",
                    f"line={d.line}",
                    f"col={d.column}",
                    f"title={_gh_escape(escape(f'{d.code} {d.name}'), prop=True)}",
                ]
            )
            lines.append(f"::{level} {props}::{_gh_escape(message)}")
    s = report.summary
    lines.append(
        f"mrc-plan: {_n(s.files, 'file')} checked, {s.invalid_files} invalid, "
        f"{_n(s.errors, 'error')}, {_n(s.warnings, 'warning')}"
    )
    return "\n".join(lines) + "\n"


def _uri(path: str) -> str:
    """A relative (or absolute-path) URI reference: the path's bytes, percent-encoded."""
    raw = PurePath(path).as_posix().encode("utf-8", "surrogateescape")
    return quote(raw, safe="/")


def render_sarif(report: ValidationReport) -> str:
    from placement.diagnostics.jsonout import report_json
    from placement.model.diagnostic import Severity
    from placement.rules.registry import ALL_RULES

    """SARIF 2.1.0 with every rule of the registry in the tool's driver."""
    index = {r.code: i for i, r in enumerate(ALL_RULES)}
    rules = [
        {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary()},
            "fullDescription": {"text": r.doc()},
            "help": {"text": r.doc(), "markdown": r.doc()},
            "defaultConfiguration": {"level": r.severity.value},
            "properties": {"family": r.family()},
        }
        for r in ALL_RULES
    ]

    def result(d: Diagnostic) -> dict[str, object]:
        text = escape(d.message + (f" ({d.hint})" if d.hint else ""))
        return {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": "error" if d.severity is Severity.ERROR or report.strict else "warning",
            "message": {"text": text},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(d.file)},
                        "region": {"startLine": d.line, "startColumn": d.column},
                    },
                    "logicalLocations": [{"fullyQualifiedName": escape(d.pointer or "/")}],
                }
            ],
        }

    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mrc-plan",
                        "version": report.tool_version,
                        "informationUri": INFO_URI,
                        "rules": rules,
                    }
                },
                "artifacts": [{"location": {"uri": _uri(f.path)}} for f in report.files],
                "results": [result(d) for f in report.files for d in f.diagnostics],
            }
        ],
    }
    return report_json(doc)


def render_junit(report: ValidationReport) -> str:
    from xml.etree import ElementTree as ET

    from placement.model.diagnostic import Severity

    """JUnit XML: one testcase per file, a failure per invalid file."""
    s = report.summary
    suites = ET.Element(
        "testsuites", name="mrc-plan", tests=str(s.files), failures=str(s.invalid_files), errors="0"
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="mrc-plan validate",
        tests=str(s.files),
        failures=str(s.invalid_files),
        errors="0",
        skipped="0",
    )
    for f in report.files:
        # XML 1.0 has no escape for most C0 controls: `escape` makes every piece legal text
        case = ET.SubElement(suite, "testcase", classname="mrc-plan.validate", name=escape(f.path))
        body = "\n".join(
            f"{escape(d.file)}:{d.line}:{d.column}: {d.severity.value} {d.code} [{d.name}] "
            f"{escape(d.message)}" + (f"\n  hint: {escape(d.hint)}" if d.hint else "")
            for d in f.diagnostics
        )
        if not f.valid:
            first = f.diagnostics[0]
            n_err = sum(d.severity is Severity.ERROR for d in f.diagnostics)
            n_warn = len(f.diagnostics) - n_err
            failure = ET.SubElement(
                case,
                "failure",
                type=first.code,
                message=f"{n_err} error(s), {n_warn} warning(s): {first.code} "
                f"{escape(first.message)}",
            )
            failure.text = body
        elif body:
            ET.SubElement(case, "system-out").text = body
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


REPORTERS: dict[str, Reporter] = {
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
    "junit": render_junit,
}
