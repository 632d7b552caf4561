"""The goals of `assign`, one module each, and their order: `GOALS`, highest first.

The order is the single source of the priority: the docs' goal list, the summary's
`goals` (JSON, text and the HTML page), `markdown_table` and `markdown_list` are read from
it, and tests hold them to it. The hard goals come first: a plan that misses one is never
written. Each soft goal is pursued only among the plans best for every goal above it, and
may not make a higher goal's measure worse (the contract
`tests/solver/test_goals_contract.py` checks).

The solving itself stays one min-cost flow per rack (`placement.solver.flow`) with passes
after it: each goal says what it contributes there (`Goal.contributes`, `Goal.where`).

To add a goal: a module here with a `Goal` subclass and its instance, placed in `GOALS`.
"""

from __future__ import annotations

from placement.solver.goals.base import Figure, Goal, Measured, Stats
from placement.solver.goals.brokers import BROKERS
from placement.solver.goals.bytes import BYTES
from placement.solver.goals.capacity import CAPACITY
from placement.solver.goals.leaders import LEADERS
from placement.solver.goals.leadership import LEADERSHIP
from placement.solver.goals.moves import MOVES
from placement.solver.goals.replicas import REPLICAS
from placement.solver.goals.rules import RULES
from placement.solver.goals.topics import TOPICS

__all__ = [
    "GOALS",
    "Figure",
    "Goal",
    "Measured",
    "Stats",
    "by_id",
    "figure_about",
    "figure_name",
    "markdown_list",
    "markdown_table",
    "summary_order",
]

GOALS: tuple[Goal, ...] = (
    RULES,
    BROKERS,
    CAPACITY,
    MOVES,
    REPLICAS,
    BYTES,
    TOPICS,
    LEADERS,
    LEADERSHIP,
)


def by_id(goal_id: str) -> Goal:
    """The goal of that id (KeyError for none)."""
    for goal in GOALS:
        if goal.id == goal_id:
            return goal
    raise KeyError(goal_id)


def figure_name(goal_id: str) -> str:
    """The summary's name of the goal's (first) figure."""
    return by_id(goal_id).figures[0].name


def figure_about(name: str) -> str | None:
    """What the summary's figure of that name measures, in a sentence (None: no such one)."""
    return next((f.about for g in GOALS for f in g.figures if f.name == name), None)


def summary_order() -> tuple[str, ...]:
    """The names of the summary's figures in the order it lists them: the goals' order,
    except that a goal with `Goal.reported_after` is listed right after that goal (the
    summary's order before the goals became units, kept byte for byte)."""
    placed: list[Goal] = [g for g in GOALS if g.reported_after is None]
    pending = [g for g in GOALS if g.reported_after is not None]
    while pending:
        goal = next(g for g in pending if by_id(g.reported_after or "") in placed)
        placed.insert(placed.index(by_id(goal.reported_after or "")) + 1, goal)
        pending.remove(goal)
    return tuple(f.name for g in placed for f in g.figures)


def markdown_table() -> str:
    """The goal order as a markdown table: rank, id, hard or soft, what each measures,
    its lower bound, the figure the summary reports and the modules that pursue it."""
    rows = [
        "| # | goal | kind | measures | lower bound | summary figure | pursued in |",
        "|---|---|---|---|---|---|---|",
    ]
    for i, g in enumerate(GOALS, 1):
        figures = "; ".join(f"`{f.name}`" for f in g.figures) or "-"
        where = ", ".join(f"`{w}`" for w in g.where)
        kind = "hard" if g.hard else "soft"
        rows.append(
            f"| {i} | `{g.id}`: {g.title} | {kind} | {g.measures} | {g.lower_bound} "
            f"| {figures} | {where} |"
        )
    return "\n".join(rows) + "\n"


def markdown_list() -> str:
    """The goal order as a short numbered markdown list (for the README): id, hard or
    soft, and the title of each goal."""
    return "".join(
        f"{i}. `{g.id}` ({'hard' if g.hard else 'soft'}): {g.title}\n"
        for i, g in enumerate(GOALS, 1)
    )
