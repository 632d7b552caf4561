"""The `assign --report` page under test: a drain in batches, its page and the JSON summary
`assign --format json` printed in the same run."""

from __future__ import annotations

import json
from pathlib import Path

from _reports import Cli, Report

DRAIN = ["--drain", "4,8", "--max-moves-per-broker", "6", "--throttle", "50MB"]


def assign_report(cli: Cli, root: Path, snap: Path) -> Report:
    """`assign --current SNAP --drain 4,8 --out-dir --report --format json` over the
    cluster of `_reports.cluster` (sizes known, three racks)."""
    page = root / "assign.html"
    r = cli(["assign", "--current", snap, "--inventory", root / "inv.json", *DRAIN,
             "--out-dir", root / "drain", "--report", page, "--format", "json"])  # fmt: skip
    assert r.exit_code == 0, r.stdout + r.stderr
    return Report("assign", page, json.loads(r.stdout))
