"""Run the benchmarks, print each figure next to its goal, write bench/out/results.json.

    .venv/bin/python bench/run.py              # the default set (what `make bench` does)
    .venv/bin/python bench/run.py validate     # only bench/bench_validate.py
    .venv/bin/python bench/run.py --list       # every benchmark; * = in the default set,
                                               # (heavy) = minutes: run it by name

A benchmark is a module `bench/bench_<name>.py` exposing `run() -> list[dict]` (see
harness.py for the dict). Any such module runs by name; list it in BENCHMARKS to make it
part of `make bench` (leave heavy ones out, list them in HEAVY, and run them by name).
Exit status: 0 when every goal is met, 1 when a goal is missed or a benchmark fails.
These are scripts, not tests: timings on a shared machine vary from run to run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from harness import ROOT

# the default set, in this order
BENCHMARKS = [
    "validate", "synth", "assign", "rebalance", "quality", "score", "simulate", "logdirs", "report",
    "engines", "spark_start", "layout", "from_cluster",
]  # fmt: skip
# heavy (minutes), not in the default set: run by name
HEAVY = ["exit", "install"]

OUT = ROOT / "bench" / "out" / "results.json"


def available() -> list[str]:
    here = Path(__file__).resolve().parent
    return sorted(p.stem.removeprefix("bench_") for p in here.glob("bench_*.py"))


def verdict(row: dict[str, Any]) -> str:
    if row.get("error"):
        return "ERROR"
    goal = row.get("goal")
    if goal is None:
        return ""
    return "PASS" if row["value"] <= goal else "FAIL"


def fmt(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value:.3f} s"
    if abs(value) >= 100:
        return f"{value:,.0f} {unit}"
    return f"{value:.1f} {unit}"


def run_benchmark(name: str) -> list[dict[str, Any]]:
    module = importlib.import_module(f"bench_{name}")
    summary = (module.__doc__ or "").strip().splitlines()[0:1]
    print(f"running {name}: {' '.join(summary)}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    try:
        rows: list[dict[str, Any]] = module.run()
    except Exception as exc:
        traceback.print_exc()
        rows = [{"name": "benchmark failed", "value": None, "unit": "", "error": repr(exc)}]
    print(f"  {name} took {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return [{"benchmark": name, **row, "verdict": verdict(row)} for row in rows]


def table(rows: list[dict[str, Any]]) -> str:
    head = ["benchmark", "figure", "value", "goal", "", "detail"]
    body = [
        [
            r["benchmark"],
            r["name"],
            "-" if r["value"] is None else fmt(r["value"], r["unit"]),
            "" if r.get("goal") is None else f"<= {fmt(r['goal'], r['unit'])}",
            r["verdict"],
            r.get("error") or r.get("detail", ""),
        ]
        for r in rows
    ]
    widths = [max(len(line[i]) for line in [head, *body]) for i in range(len(head) - 1)]
    right = {2, 3}  # numbers line up on the right

    def line(cells: list[str]) -> str:
        parts = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=False))
        ]
        return "  ".join([*parts, cells[-1]]).rstrip()

    rule = "  ".join("-" * w for w in widths) + "  " + "-" * 6
    return "\n".join([line(head), rule, *map(line, body)])


def commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() or None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = parser.parse_args(argv)
    known = available()
    if args.list:
        marks = {**{n: " (heavy)" for n in HEAVY}, **{n: " *" for n in BENCHMARKS}}
        print("\n".join(f"{n}{marks.get(n, '')}" for n in known))
        return 0
    unknown = [n for n in args.names if n.removeprefix("bench_") not in known]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(known)}")
    names = [n.removeprefix("bench_") for n in args.names] or BENCHMARKS

    rows = [row for name in names for row in run_benchmark(name)]
    print(table(rows))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "commit": commit(),
                "python": platform.python_version(),
                "platform": platform.platform(),
                "cpus": os.cpu_count(),
                "results": rows,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"\nwrote {OUT.relative_to(ROOT)}", file=sys.stderr)
    return 1 if any(r["verdict"] in ("FAIL", "ERROR") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
