"""One order of goals (`placement.solver.goals.GOALS`), and everything that lists them held
to it: the JSON summary's `goals`, the HTML page's goal table, docs/definitions.md's goal
order and README.md's goal list."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from placement.solver.goals import (
    GOALS,
    by_id,
    figure_about,
    markdown_list,
    markdown_table,
    summary_order,
)

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
Cli = Callable[..., Result]

# how docs/definitions.md's "Goal order" names each goal (whitespace folded)
DOC_PHRASES = {
    "rules": "follows its topic's rule",
    "brokers": "no replica stays on a drained broker",
    "capacity": "no broker ends above `--max-disk-usage`",
    "moves": "**Fewest moves.**",
    "replicas": "replicas per broker within each rack",
    "bytes": "bytes per broker where sizes are known",
    "topics": "replicas of each topic per broker within a rack",
    "leaders": "preferred leaders per broker",
    "leadership": "**Fewest leadership changes.**",
}


def test_ids_are_unique_and_the_hard_goals_come_first() -> None:
    ids = [g.id for g in GOALS]
    assert len(set(ids)) == len(ids)
    kinds = [g.hard for g in GOALS]
    assert kinds == sorted(kinds, reverse=True), "a hard goal below a soft one"
    assert all(by_id(i).id == i for i in ids)
    with pytest.raises(KeyError):
        by_id("no such goal")


def test_every_goal_declares_itself() -> None:
    for g in GOALS:
        assert g.title and g.measures and g.lower_bound and g.contributes, g.id
        assert g.where and all((REPO / w).is_file() for w in g.where), (g.id, g.where)
        assert g.reported_after is None or g.reported_after in {x.id for x in GOALS}


def test_every_figure_is_listed_once_and_every_goal_reported_after_is_placed() -> None:
    names = [f.name for g in GOALS for f in g.figures]
    assert sorted(summary_order()) == sorted(names)
    assert len(set(names)) == len(names)
    assert all(figure_about(n) for n in names)
    assert figure_about("no such figure") is None


def test_the_markdown_table_has_a_row_per_goal_in_order() -> None:
    rows = markdown_table().splitlines()[2:]
    assert [r.split("|")[1].strip() for r in rows] == [str(i) for i in range(1, len(GOALS) + 1)]
    for row, g in zip(rows, GOALS, strict=True):
        assert f"`{g.id}`" in row and ("hard" if g.hard else "soft") in row


def test_the_summary_and_the_page_list_the_goals_in_order(cli: Cli, tmp_path: Path) -> None:
    """A rebalance by bytes with capacities: every figure the summary has appears."""
    page = tmp_path / "report.html"
    r = cli(
        [
            "assign",
            "--inventory",
            EXAMPLES / "inventory.json",
            "--topics",
            EXAMPLES / "topics-describe.json",
            "--current",
            EXAMPLES / "describe.txt",
            "--sizes",
            EXAMPLES / "sizes.csv",
            "--rebalance",
            "--format",
            "json",
            "--out",
            tmp_path / "plan.json",
            "--report",
            page,
        ]
    )
    assert r.exit_code == 0, r.stderr
    names = [g["name"] for g in json.loads(r.stdout)["goals"]]
    assert names == list(summary_order())
    table = page.read_text(encoding="utf-8").split('data-table="goals"', 1)[1]
    table = table.split("</table>", 1)[0]
    cells = re.findall(r'<tr data-i="\d+"><td title="([^"]*)"[^>]*>([^<]*)</td>', table)
    assert [html.unescape(name) for _, name in cells] == names
    assert [html.unescape(about) for about, _ in cells] == [figure_about(n) for n in names]


def _section(text: str, heading: str) -> str:
    body = text.split(f"\n{heading}\n", 1)[1]
    return " ".join(body.split("\n## ", 1)[0].split())


def test_the_markdown_list_has_an_item_per_goal_in_order() -> None:
    items = markdown_list().splitlines()
    assert [i.split(". ", 1)[0] for i in items] == [str(n) for n in range(1, len(GOALS) + 1)]
    assert all(f"`{g.id}`" in item for item, g in zip(items, GOALS, strict=True))


def test_docs_definitions_list_the_goals_in_order() -> None:
    assert set(DOC_PHRASES) == {g.id for g in GOALS}
    order = _section((REPO / "docs/definitions.md").read_text(encoding="utf-8"), "## Goal order")
    at = [order.find(DOC_PHRASES[g.id]) for g in GOALS]
    assert -1 not in at, {g.id: i for g, i in zip(GOALS, at, strict=True)}
    assert at == sorted(at), {g.id: i for g, i in zip(GOALS, at, strict=True)}
    hard = order.split("2. ", 1)[0]
    assert all((DOC_PHRASES[g.id] in hard) == g.hard for g in GOALS)


def test_readme_lists_the_goals_in_order() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- goals -->\n", 1)[1].split("<!-- /goals -->", 1)[0]
    assert block == markdown_list()


def test_the_goals_measure_what_the_summary_reports() -> None:
    """The goals' plain counts (their definitions) against the summary's figures, counted
    at C speed in `placement.plan.balance`, for a drain of two brokers."""
    from placement.io.current import read_current
    from placement.io.inventory import load_inventory
    from placement.plan.assign import assign
    from placement.plan.topics import read_topics
    from placement.rules.base import CheckContext
    from placement.solver.goals import Measured

    loaded = load_inventory(EXAMPLES / "inventory.json")
    specs = read_topics(EXAMPLES / "topics-describe.json", CheckContext(loaded.inventory))
    current = read_current(EXAMPLES / "describe.txt")
    outcome = assign(loaded, specs, current, drain=[4, 8])
    before = {a.key: a for a in current.assignments}
    policies = {**current.policies, **{t.name: t.policy for t in specs}}
    m = Measured.of_plan(
        loaded.inventory, policies, before, outcome.plan, drained=frozenset({4, 8})
    )
    figures = {g.name: g for g in outcome.goals}
    for goal_id in ("replicas", "topics", "leaders"):
        stats = by_id(goal_id).measure(m)
        figure = figures[by_id(goal_id).figures[0].name]
        assert (stats.before, stats.after) == (figure.before, figure.value), goal_id
    assert by_id("moves").measure(m).after == outcome.replicas_added
    assert by_id("leadership").measure(m).after == len(outcome.election)
    # an offline partition is never moved: its replica stays on broker 4
    assert by_id("brokers").measure(m).after == outcome.left_on_drained == outcome.offline_kept
    assert by_id("rules").measure(m).after == 0
