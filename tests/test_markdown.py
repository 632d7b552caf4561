"""The documentation renders on GitHub: every table has as many cells in each row as in its
header, and every relative link leads to a file and, with an anchor, to a heading of it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^ {0,3}(```|~~~)")
DELIMITER = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
PIPE = re.compile(r"(?<!\\)\|")
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
ANCHOR_TAG = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def documents() -> list[Path]:
    names = [REPO / "README.md", REPO / "CONTRIBUTING.md", REPO / "CHANGELOG.md"]
    return [p for p in names if p.is_file()] + sorted((REPO / "docs").glob("*.md"))


def _prose(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line outside fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def cells(row: str) -> int:
    """How many cells GitHub renders for a table row: `|` splits, `\\|` does not, even in
    a code span; one leading and one trailing pipe open and close the row."""
    row = row.strip()
    parts = PIPE.split(row)
    if row.startswith("|"):
        parts = parts[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        parts = parts[:-1]
    return len(parts)


def table_problems(text: str) -> list[str]:
    problems = []
    lines = _prose(text)
    i = 0
    while i + 1 < len(lines):
        (number, header), (_, delimiter) = lines[i], lines[i + 1]
        if "|" in header and DELIMITER.match(delimiter) and "-" in delimiter:
            want = cells(header)
            if cells(delimiter) != want:
                problems.append(
                    f"line {number + 1}: delimiter has {cells(delimiter)} cells, header {want}"
                )
            j = i + 2
            while j < len(lines) and lines[j][1].strip() and "|" in lines[j][1]:
                if cells(lines[j][1]) != want:
                    problems.append(
                        f"line {lines[j][0]}: {cells(lines[j][1])} cells, header {want}"
                    )
                j += 1
            i = j
        else:
            i += 1
    return problems


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation but `-` and `_` dropped, spaces
    to `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())  # a link keeps its text
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in _prose(text):
        m = re.match(r"^ {0,3}#{1,6} +(.+?) *#* *$", line)
        if m:
            base = slug(m.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    found |= set(ANCHOR_TAG.findall(text))
    return found


def link_problems(path: Path) -> list[str]:
    problems = []
    for number, line in _prose(path.read_text(encoding="utf-8")):
        line = re.sub(r"`[^`]*`", "", line)  # links inside code spans are text
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                continue
            name, _, anchor = target.partition("#")
            dest = (path.parent / name).resolve() if name else path
            if not dest.exists():
                problems.append(f"line {number}: {target}: no such file")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"line {number}: {target}: no such heading")
    return problems


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_table_has_as_many_cells_as_its_header(path: Path) -> None:
    assert table_problems(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(path: Path) -> None:
    assert link_problems(path) == []


def test_the_checks_catch_what_github_would_render_wrong(tmp_path: Path) -> None:
    # one cell too many in the delimiter, and a pipe in a code span that is not escaped
    assert table_problems("| a | b |\n|---|---|---|\n| 1 | 2 |\n")
    assert table_problems("| a | b |\n|---|---|\n| `x | y` | 2 |\n")
    assert table_problems("| a | b |\n|---|---|\n| `x \\| y` | 2 |\n") == []
    assert table_problems("```\n| a | b |\n|---|\n```\n") == []
    page = tmp_path / "page.md"
    page.write_text(
        '# A `code` heading, too!\n\n<a id="here"></a>\n'
        "[ok](#a-code-heading-too) [ok](#here) [bad](#nowhere) [gone](missing.md)\n",
        encoding="utf-8",
    )
    problems = link_problems(page)
    assert [p.split(": ")[1] for p in problems] == ["#nowhere", "missing.md"]
