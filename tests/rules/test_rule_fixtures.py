"""Every case of every tests/fixtures/rules/<CODE>/cases.toml, with exact positions."""

from __future__ import annotations

from typing import Any

import pytest
from _helpers import ARG_KEYS, CASE_KEYS, RULE_FIXTURES, Case, load_cases, positions, validate

CASES = load_cases()


def _params(cases: list[Case], xfail_key: str = "xfail") -> list[Any]:
    out = []
    for case in cases:
        reason = case.raw.get(xfail_key)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(case, id=case.id, marks=marks))
    return out


@pytest.mark.parametrize("case", _params(CASES))
def test_diagnostic_positions(case: Case) -> None:
    found = validate([case.path], case.options())
    assert positions(found.pop(case.path)) == case.expect
    assert {path: positions(diags) for path, diags in found.items() if diags} == case.elsewhere


@pytest.mark.parametrize(
    "case", _params([c for c in CASES if c.hints or c.messages], "xfail_texts")
)
def test_hints_and_messages(case: Case) -> None:
    found = validate([case.path], case.options())
    diagnostics = [d for diags in found.values() for d in diags]
    for code, hint in case.hints:
        assert hint in [d.hint for d in diagnostics if d.code == code]
    for code, text in case.messages:
        messages = [d.message for d in diagnostics if d.code == code]
        assert any(text in m for m in messages), messages


def test_manifests_are_well_formed() -> None:
    ids = [case.id for case in CASES]
    assert len(ids) == len(set(ids)), "two cases with the same file and args"
    for case in CASES:
        assert set(case.raw) <= CASE_KEYS, case.id
        assert set(case.args) <= ARG_KEYS, case.id
        assert case.path.is_file(), case.id
        assert case.expect == sorted(case.expect), f"{case.id}: write expect sorted"
        for path, triples in case.elsewhere.items():
            assert path.exists(), case.id
            assert triples == sorted(triples), case.id
        for key in ("xfail", "xfail_texts"):
            if key in case.raw:
                assert str(case.raw[key]).startswith("BUG: "), case.id


def test_every_fixture_file_is_a_case() -> None:
    used = {case.path for case in CASES}
    files = {p.resolve() for p in RULE_FIXTURES.glob("*/*") if p.name != "cases.toml"}
    assert files - used == set()
