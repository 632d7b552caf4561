"""The Python example in README.md runs, and writes what the command writes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_the_readme_python_example_writes_what_assign_writes(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert len(blocks) == 1
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    (tmp_path / "example.py").write_text(blocks[0], encoding="utf-8")
    ran = subprocess.run(
        [sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stderr
    cli = Path(sys.executable).parent / "mrc-plan"
    args = ["assign", "--inventory", "examples/inventory.json"]
    args += ["--current", "examples/describe.txt", "--drain", "4,8", "--out", "cli.json"]
    done = subprocess.run(
        [str(cli), *args], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "drain.json").read_bytes() == (tmp_path / "cli.json").read_bytes()
    added = re.search(r"^replicas added: (\d+)", done.stderr, re.M)
    assert added is not None
    assert ran.stdout.splitlines() == ["gate fails: False", f"replicas added: {added[1]}"]
