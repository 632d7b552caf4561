"""scripts/identical.py: the scenarios cover every example, and a comparison misses nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

import identical  # noqa: E402


def test_every_example_is_read_by_a_scenario() -> None:
    named = {a for n, c, _ in identical.SCENARIOS for a in identical.arguments(n, c)}
    examples = REPO / "examples"
    unused = []
    for path in sorted(examples.iterdir()):
        if path.name == "demo.sh":
            continue
        rel = f"examples/{path.name}"
        if rel not in named:
            unused.append(rel)
    assert unused == []


def test_scenario_names_are_unique_and_earlier_outputs_exist() -> None:
    names = [name for name, _, _ in identical.SCENARIOS]
    assert len(names) == len(set(names))
    seen: set[str] = set()
    for name, command, _ in identical.SCENARIOS:
        for a in identical.arguments(name, command):
            if a.startswith("out/") and not a.startswith(f"out/{name}/"):
                assert a.split("/")[1] in seen, f"{name} reads {a} before it is written"
        seen.add(name)


def _capture(top: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        path = top / "work" / "out" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return top


@pytest.mark.parametrize(
    ("second", "code"),
    [
        ({"a/_stdout": b"x", "a/plan.json": b"{}"}, 0),
        ({"a/_stdout": b"y", "a/plan.json": b"{}"}, 1),
        ({"a/_stdout": b"x"}, 1),
        ({"a/_stdout": b"x", "a/plan.json": b"{}", "a/extra": b""}, 1),
    ],
)
def test_compare_fails_on_any_difference(
    tmp_path: Path, second: dict[str, bytes], code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _capture(tmp_path / "a", {"a/_stdout": b"x", "a/plan.json": b"{}"})
    b = _capture(tmp_path / "b", second)
    assert identical.compare(a, b) == code


def test_only_the_seconds_a_command_took_are_masked(tmp_path: Path) -> None:
    a = _capture(tmp_path / "a", {"x/_stderr": b"engine: core; 0.01 s\n", "x/p.html": b"0.01 s"})
    b = _capture(tmp_path / "b", {"x/_stderr": b"engine: core; 0.25 s\n", "x/p.html": b"0.01 s"})
    assert identical.compare(a, b) == 0
    c = _capture(tmp_path / "c", {"x/_stderr": b"engine: core; 0.01 s\n", "x/p.html": b"0.02 s"})
    assert identical.compare(a, c) == 1
    d = _capture(tmp_path / "d", {"x/_stderr": b"engine: flow; 0.01 s\n", "x/p.html": b"0.01 s"})
    assert identical.compare(a, d) == 1
