"""Findings as data: the Diagnostic record and the report that groups them by file."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

REPORT_VERSION: Literal[1] = 1


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


class Diagnostic(BaseModel):
    """One finding, located in its file by JSON pointer and 1-based line/column."""

    model_config = ConfigDict(frozen=True)

    code: Annotated[str, Field(pattern=r"^MRC[0-9]{3}$")]
    name: str
    severity: Severity
    message: str
    file: str
    pointer: str = Field(description="RFC 6901 pointer into the placement policy; '' = root")
    line: Annotated[int, Field(ge=1)]
    column: Annotated[int, Field(ge=1)]
    hint: str = ""
    context: str | None = Field(
        default=None, description="where the policy sits inside the file, e.g. a properties key"
    )

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.file, self.line, self.column, self.code, self.message)


class FileReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    valid: bool
    diagnostics: list[Diagnostic]


class Summary(BaseModel):
    model_config = ConfigDict(frozen=True)

    files: int
    invalid_files: int
    errors: int
    warnings: int


class ValidationReport(BaseModel):
    """What `mrc-plan validate --format json` prints."""

    model_config = ConfigDict(
        frozen=True,
        title="mrc-plan validate report",
        json_schema_extra={"$id": "https://mrc-plan.dev/schemas/diagnostics.schema.json"},
    )

    version: Literal[1] = REPORT_VERSION
    tool: str = "mrc-plan"
    tool_version: str
    strict: bool
    files: list[FileReport]
    summary: Summary

    @property
    def failed(self) -> bool:
        return self.summary.invalid_files > 0


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
