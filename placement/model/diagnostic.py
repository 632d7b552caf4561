"""Findings as data: the Diagnostic record and the report that groups them by file.

Plain records, not pydantic models: `validate` of one file must not pay pydantic's import and
model building, as hooks and editors run it once per file. Their JSON Schema is
`diagnostic_schema.ValidationReport`'s, and `ValidationReport.to_json` is what that model
dumps (tests/model/test_diagnostic_records.py holds the two to each other).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

REPORT_VERSION: Literal[1] = 1


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnostic:
    """One finding, located in its file by JSON pointer and 1-based line/column."""

    code: str  # MRC and three digits
    name: str
    severity: Severity
    message: str
    file: str
    pointer: str  # RFC 6901 pointer into the placement policy; '' = root
    line: int  # from 1
    column: int  # from 1
    hint: str = ""
    context: str | None = None  # where the policy sits inside the file, e.g. a properties key

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.code, self.message)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "severity": self.severity.value,
            "message": self.message,
            "file": self.file,
            "pointer": self.pointer,
            "line": self.line,
            "column": self.column,
            "hint": self.hint,
            "context": self.context,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class FileReport:
    path: str
    valid: bool
    diagnostics: list[Diagnostic]


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    files: int
    invalid_files: int
    errors: int
    warnings: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ValidationReport:
    """What `mrc-plan validate --format json` prints."""

    version: Literal[1] = REPORT_VERSION
    tool: str = "mrc-plan"
    tool_version: str
    strict: bool
    files: list[FileReport]
    summary: Summary

    @property
    def failed(self) -> bool:
        return self.summary.invalid_files > 0

    def to_json(self) -> dict[str, Any]:
        """The report as JSON data, members in the schema's order."""
        s = self.summary
        return {
            "version": self.version,
            "tool": self.tool,
            "tool_version": self.tool_version,
            "strict": self.strict,
            "files": [
                {
                    "path": f.path,
                    "valid": f.valid,
                    "diagnostics": [d.to_json() for d in f.diagnostics],
                }
                for f in self.files
            ],
            "summary": {
                "files": s.files,
                "invalid_files": s.invalid_files,
                "errors": s.errors,
                "warnings": s.warnings,
            },
        }


def build_report(
    diagnostics_by_file: dict[str, list[Diagnostic]], *, strict: bool, tool_version: str
) -> ValidationReport:
    """Group findings per file; a file is invalid on an error, or on a warning when strict."""
    files = []
    errors = warnings = invalid = 0
    for path in sorted(diagnostics_by_file):
        diags = sorted(diagnostics_by_file[path], key=Diagnostic.sort_key)
        n_err = sum(d.severity is Severity.ERROR for d in diags)
        n_warn = len(diags) - n_err
        valid = n_err == 0 and not (strict and n_warn)
        errors += n_err
        warnings += n_warn
        invalid += not valid
        files.append(FileReport(path=path, valid=valid, diagnostics=diags))
    return ValidationReport(
        tool_version=tool_version,
        strict=strict,
        files=files,
        summary=Summary(files=len(files), invalid_files=invalid, errors=errors, warnings=warnings),
    )
