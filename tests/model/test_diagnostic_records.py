"""The report records (plain dataclasses, for validate's start-up) and the pydantic models
that give their JSON Schema describe the same data: `to_json` is what the models dump."""

from __future__ import annotations

from dataclasses import fields

from hypothesis import given
from hypothesis import strategies as st

from placement.model import diagnostic, diagnostic_schema
from placement.model.diagnostic import Diagnostic, Severity, build_report

TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=8)

diagnostics = st.builds(
    Diagnostic,
    code=st.from_regex(r"\AMRC[0-9]{3}\Z"),
    name=TEXT,
    severity=st.sampled_from(list(Severity)),
    message=TEXT,
    file=st.sampled_from(["a.json", "b\udcff.json", "dir/c.properties"]),
    pointer=TEXT,
    line=st.integers(1, 10**6),
    column=st.integers(1, 10**6),
    hint=TEXT,
    context=st.none() | TEXT,
)


@given(st.lists(diagnostics, max_size=6), st.booleans(), TEXT)
def test_to_json_is_what_the_schema_models_dump(
    found: list[Diagnostic], strict: bool, version: str
) -> None:
    by_file: dict[str, list[Diagnostic]] = {"empty.json": []}
    for d in found:
        by_file.setdefault(d.file, []).append(d)
    report = build_report(by_file, strict=strict, tool_version=version)
    data = report.to_json()
    model = diagnostic_schema.ValidationReport.model_validate(data)
    assert model.model_dump(mode="json") == data
    assert list(data) == list(diagnostic_schema.ValidationReport.model_fields)


def test_the_records_have_the_models_members_in_order() -> None:
    pairs = [
        (diagnostic.Diagnostic, diagnostic_schema.Diagnostic),
        (diagnostic.FileReport, diagnostic_schema.FileReport),
        (diagnostic.Summary, diagnostic_schema.Summary),
        (diagnostic.ValidationReport, diagnostic_schema.ValidationReport),
    ]
    for record, model in pairs:
        assert [f.name for f in fields(record)] == list(model.model_fields)
        assert model.__doc__ is None or record.__doc__ == model.__doc__
