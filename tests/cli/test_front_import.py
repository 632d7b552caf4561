"""`import placement` stays cheap: the four front doors and their types load on use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HEAVY = ["typer", "rich", "click", "numpy", "pyarrow", "ortools", "pyspark", "pydantic"]


def _run(code: str) -> dict[str, object]:
    """``code`` in a fresh interpreter, which prints one JSON document last."""
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO.parent,  # not the repo: import what is installed
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_importing_placement_loads_no_heavy_library() -> None:
    code = (
        "import json, sys, placement\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    assert _run(code) == []


def test_the_front_doors_are_there_and_load_nothing_until_called() -> None:
    code = (
        "import json, sys, placement\n"
        "names = ['validate', 'assign', 'score', 'simulate']\n"
        "doors = {n: callable(getattr(placement, n)) for n in names}\n"
        f"loaded = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "print(json.dumps({'doors': doors, 'loaded': loaded}))"
    )
    out = _run(code)
    assert out == {
        "doors": dict.fromkeys(["validate", "assign", "score", "simulate"], True),
        "loaded": [],
    }


def test_the_request_and_result_types_come_from_their_fronts() -> None:
    code = (
        "import json, placement\n"
        "kinds = ['Validate', 'Assign', 'Score', 'Simulate']\n"
        "names = [k + s for k in kinds for s in ('Request', 'Result')]\n"
        "print(json.dumps({n: getattr(placement, n).__module__ for n in names}))"
    )
    assert _run(code) == {
        "ValidateRequest": "placement.rules.front",
        "ValidateResult": "placement.rules.front",
        "AssignRequest": "placement.plan.front",
        "AssignResult": "placement.plan.front",
        "ScoreRequest": "placement.score.front",
        "ScoreResult": "placement.score.front",
        "SimulateRequest": "placement.simulate.front",
        "SimulateResult": "placement.simulate.front",
    }


def test_score_and_simulate_stay_packages_whatever_is_imported_first() -> None:
    """`placement.score` is the package of that name and its front door at once: importing
    a module of it, before or after, leaves it callable."""
    code = (
        "import json, placement.score.report, placement.simulate.failure\n"
        "import placement\n"
        "print(json.dumps([callable(placement.score), callable(placement.simulate),\n"
        "    placement.score.report.__name__, placement.simulate.failure.__name__]))"
    )
    assert _run(code) == [True, True, "placement.score.report", "placement.simulate.failure"]
