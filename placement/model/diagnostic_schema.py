"""The validate report as pydantic models: its JSON Schema (`mrc-plan schema diagnostics`).

`placement.model.diagnostic` holds the records `validate` makes; these models describe the
same data, member for member, and are loaded only for the schema (and the tests that hold the
records' `to_json` to what these models dump).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from placement.model.diagnostic import REPORT_VERSION, Severity


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
