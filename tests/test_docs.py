"""The README and docs/ agree with the code: the rules table, schema names, exit codes, and
every docs/ reference (with its section) leads somewhere."""

from __future__ import annotations

import re
import signal
from pathlib import Path

from mrc_plan_cli import errors
from placement.rules.registry import ALL_RULES
from placement.schemas import SCHEMAS

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
NUMBERS = {
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
}
# `docs/NAME.md`, and the section when one is named: "(docs/formats.md, snapshots)"
DOC_REF = re.compile(r"docs/([\w-]+\.md)(?:#([\w-]+)|, ([^)\n]+?)\))?")


def _readme() -> str:
    return (REPO / "README.md").read_text(encoding="utf-8")


def _sources() -> dict[Path, str]:
    files = [REPO / "README.md", *DOCS.glob("*.md")]
    files += [p for d in ("placement", "cli") for p in (REPO / d).rglob("*.py")]
    return {p: " ".join(p.read_text(encoding="utf-8").split()) for p in files}


def _anchor(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _headings(name: str) -> list[str]:
    text = (DOCS / name).read_text(encoding="utf-8")
    return [h.strip() for h in re.findall(r"^#+ (.+)$", text, re.M)]


def test_rules_page_lists_every_rule_in_order() -> None:
    # `| MRC101 | invalid-json |` or `| [MRC101](#mrc101) | `invalid-json` |`
    row = re.compile(r"^\| \[?(MRC\d{3})\]?(?:\(#mrc\d{3}\))? \| `?([\w-]+)`? \|", re.M)
    rows = row.findall((DOCS / "rules.md").read_text(encoding="utf-8"))
    assert rows == [(r.code, r.name) for r in ALL_RULES]


def test_schema_names_are_the_schemas() -> None:
    text = " ".join((DOCS / "validate.md").read_text(encoding="utf-8").split())
    sentence = re.search(r"prints the JSON Schema .*? for one of the (\w+) schemas: (.*?)\.", text)
    assert sentence is not None
    assert NUMBERS[sentence.group(1)] == len(SCHEMAS)
    assert re.findall(r"`([\w-]+)`", sentence.group(2)) == list(SCHEMAS)
    written = re.search(r"`mrc-plan schema --write DIR` writes all (\w+)\b", text)
    assert written is not None and NUMBERS[written.group(1)] == len(SCHEMAS)
    usage = re.search(r"^mrc-plan schema ([\w|-]+)$", _readme(), re.M)
    assert usage is not None and usage.group(1).split("|") == list(SCHEMAS)


def test_every_docs_reference_exists() -> None:
    refs = 0
    for path, text in _sources().items():
        for m in DOC_REF.finditer(text):
            refs += 1
            name, anchor, section = m.groups()
            assert (DOCS / name).is_file(), f"{path.name} cites docs/{name}, which is missing"
            headings = _headings(name)
            if anchor is not None:
                assert anchor in {_anchor(h) for h in headings}, (path.name, m.group())
            if section is not None:
                lowered = [h.lower() for h in headings]
                assert any(section.lower() in h for h in lowered), (path.name, m.group())
    assert refs > 0


def test_links_between_docs_lead_to_a_heading() -> None:
    links = 0
    for path in DOCS.glob("*.md"):
        text = path.read_text(encoding="utf-8")
        for name, anchor in re.findall(r"\]\(([\w-]+\.md)?(?:#([\w-]+))?\)", text):
            links += 1
            target = name or path.name
            assert (DOCS / target).is_file(), (path.name, target)
            if anchor:
                assert anchor in {_anchor(h) for h in _headings(target)}, (path.name, anchor)
    assert links > 0


def test_links_to_schema_files_lead_to_a_checked_in_schema() -> None:
    names = [
        name
        for path in DOCS.glob("*.md")
        for name in re.findall(r"\]\(\.\./schemas/([\w.-]+)\)", path.read_text(encoding="utf-8"))
    ]
    assert names
    for name in names:
        assert (REPO / "schemas" / name).is_file(), name


def test_no_outside_spec_is_cited() -> None:
    for path, text in _sources().items():
        if path.suffix == ".py":
            assert "SPEC §" not in text, path
            assert "SPEC.md" not in text, path


def test_exit_codes_doc_lists_exactly_the_codes() -> None:
    text = (DOCS / "exit-codes.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| (\d+) \| (.*)$", text, re.M))
    table = errors.exit_codes()
    expected = {
        errors.EXIT_OK,
        errors.EXIT_FINDINGS,
        errors.EXIT_USAGE,
        errors.EXIT_TIMEOUT,
        errors.EXIT_BUG,
        128 + signal.SIGINT,
        128 + signal.SIGTERM,
        *(code for _, code in table),
    }
    assert {int(c) for c in rows} == expected
    for cls, code in table:  # each failure class is named in the row of its code
        assert cls.__name__ in rows[str(code)], (cls.__name__, code)
    readme = set(re.findall(r"^\| (\d+) \| ", _readme().split("## Exit codes")[1], re.M))
    assert {int(c) for c in readme} == expected
