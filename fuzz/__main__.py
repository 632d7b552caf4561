"""`python -m fuzz`: the bounded mutation fuzzer over every reader (`make fuzz`)."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from fuzz import engine, staging, targets

# one staged snapshot in this many (of those accepted) is read by a real Spark session too
SPARK_EVERY = 4


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__)
    ap.add_argument("--count", type=int, default=12_000, help="inputs (default 12000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--time-limit", type=float, default=900, help="stop after this many seconds (0: none)"
    )
    ap.add_argument("--per-input-timeout", type=float, default=20)
    ap.add_argument("--minimise-budget", type=float, default=6, help="seconds per failure")
    ap.add_argument("--out", type=Path, default=Path(".fuzz-failures"))
    ap.add_argument("--only", action="append", help="readers whose name contains this")
    ap.add_argument("--max-memory-mb", type=int, default=6144, help="address-space cap (0: none)")
    ap.add_argument("--replay", type=Path, help="run one saved reproducer again")
    ap.add_argument("--list", action="store_true", help="list the readers")
    ap.add_argument(
        "--spark-every",
        type=int,
        default=SPARK_EVERY,
        help=f"a real Spark read of every Nth snapshot the staging target accepts "
        f"(default {SPARK_EVERY}; 0: none)",
    )
    ns = ap.parse_args(argv)

    if ns.max_memory_mb:
        import resource

        limit = ns.max_memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    with tempfile.TemporaryDirectory(prefix="mrc-plan-fuzz-fixtures-") as tmp:
        ctx = targets.write_fixtures(Path(tmp))
        readers = targets.build(ctx)
        missing = targets.unfuzzed_formats(readers)
        if missing:  # a format added to placement/io/formats.py without its family here
            ap.error("no fuzz family for the input format(s) " + ", ".join(missing))
        if ns.list:
            for r in readers:
                print(f"{r.level}  {r.family.name:15} {r.name}")
            return 0
        if ns.replay is not None:
            return engine.replay(ns.replay, readers, ctx)
        if ns.only:
            readers = [r for r in readers if any(o in r.name for o in ns.only)]
            if not readers:
                ap.error(f"no reader matches {ns.only}; --list shows them")
        started = time.strftime("%Y-%m-%d %H:%M:%S")
        staging.SPARK.every = max(0, ns.spark_every)
        try:
            result = engine.run(
                readers,
                ctx,
                count=ns.count,
                seed=ns.seed,
                time_limit=ns.time_limit,
                per_input_timeout=ns.per_input_timeout,
                out=ns.out,
                minimise_budget=ns.minimise_budget,
                progress=lambda line: print(line, file=sys.stderr, flush=True),
            )
        finally:
            staging.SPARK.stop()
    print(
        f"fuzz run started {started}: seed {result.seed}, {result.inputs} inputs in "
        f"{result.seconds:.0f} s, {len(readers)} readers"
    )
    print(engine.table(result))
    if staging.SPARK.every:
        print(
            f"Spark read {staging.SPARK.sampled} of the {staging.SPARK.accepted} staged "
            f"snapshots accepted (every {staging.SPARK.every}th)"
        )
    if result.failures:
        print(f"\n{len(result.failures)} distinct failure(s), reproducers in {ns.out}/:")
        print(engine.failures_text(result))
    return 1 if result.failed else 0


if __name__ == "__main__":
    sys.exit(main())
