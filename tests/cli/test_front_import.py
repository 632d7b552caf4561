"""`import placement.api` stays cheap: the four front doors and their types load on use."""

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


def test_the_front_doors_are_there_and_load_nothing_until_called() -> None:
    code = (
        "import json, sys, placement.api as api\n"
        "names = ['validate', 'assign', 'score', 'simulate']\n"
        "doors = {n: callable(getattr(api, n)) for n in names}\n"
        f"loaded = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "fronts = sorted(m for m in sys.modules if m.endswith('.front'))\n"
        "print(json.dumps({'doors': doors, 'loaded': loaded, 'fronts': fronts}))"
    )
    out = _run(code)
    assert out == {
        "doors": dict.fromkeys(["validate", "assign", "score", "simulate"], True),
        "loaded": [],
        "fronts": [],
    }


def test_the_request_and_result_types_come_from_their_fronts() -> None:
    code = (
        "import json, placement.api as api\n"
        "kinds = ['Validate', 'Assign', 'Score', 'Simulate']\n"
        "names = [k + s for k in kinds for s in ('Request', 'Result')]\n"
        "print(json.dumps({n: getattr(api, n).__module__ for n in names}))"
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


def test_every_name_the_module_lists_is_there() -> None:
    code = (
        "import json, placement.api as api\n"
        "print(json.dumps(sorted(n for n in api.__all__ if getattr(api, n, None) is None)))"
    )
    assert _run(code) == []
