"""The rule registry: codes, names, documentation, families, and fixtures for every rule."""

from __future__ import annotations

import re

import pytest
from _helpers import RULE_FIXTURES, load_cases

from placement.model.diagnostic import Severity
from placement.rules.base import FAMILIES, Rule
from placement.rules.registry import ALL_RULES, RULES, lookup

CASES = load_cases()
SECTIONS = ("What it does:", "Why:", "Example:", "Fix:")


def test_codes_are_unique_and_well_formed() -> None:
    codes = [rule.code for rule in ALL_RULES]
    assert len(codes) == len(set(codes))
    assert list(RULES) == codes
    for code in codes:
        assert re.fullmatch(r"MRC[0-9]{3}", code)


def test_names_are_unique_kebab_case() -> None:
    names = [rule.name for rule in ALL_RULES]
    assert len(names) == len(set(names))
    for name in names:
        assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)+", name), name


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_rule_is_documented(rule: type[Rule]) -> None:
    doc = rule.doc()
    assert rule.summary() and not rule.summary().startswith(SECTIONS)
    paragraphs = [p.strip() for p in doc.split("\n\n")]
    starts = [next(i for i, p in enumerate(paragraphs) if p.startswith(s)) for s in SECTIONS]
    assert starts == sorted(starts), "sections out of order"
    for i in starts:
        assert len(paragraphs[i].split(":", 1)[1].strip()) > 10, paragraphs[i]


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_family_matches_the_hundreds(rule: type[Rule]) -> None:
    family = FAMILIES[int(rule.code[3])]
    assert rule.family() == family
    assert rule.__module__ == f"placement.rules.{family}"
    assert isinstance(rule.severity, Severity)


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_lookup_by_code_or_name(rule: type[Rule]) -> None:
    assert lookup(rule.code) is rule
    assert lookup(rule.code.lower()) is rule
    assert lookup(rule.name) is rule


@pytest.mark.parametrize("code", list(RULES))
def test_rule_has_pass_and_fail_fixtures(code: str) -> None:
    assert (RULE_FIXTURES / code / "cases.toml").is_file()
    mine = [case for case in CASES if case.code == code and "xfail" not in case.raw]
    assert any(code not in case.codes() for case in mine), "no pass case"
    assert any(code in case.codes() for case in mine), "no fail case"


def test_no_fixtures_for_unknown_codes() -> None:
    assert {p.name for p in RULE_FIXTURES.iterdir() if p.is_dir()} == set(RULES)
