"""Prove a restructuring changed no output: run a fixed set of mrc-plan commands with one
tree's code, keep everything they print and write, and compare two such captures byte for
byte (the seconds a command prints it took are masked).

    # inputs, once (seeded: the same files on every machine)
    .venv/bin/python scripts/identical.py inputs /tmp/id-inputs
    # the baseline's code, from a commit exported to a directory of its own
    git archive BASE | tar -x -C /tmp/base
    .venv/bin/python scripts/identical.py capture /tmp/base /tmp/id-inputs /tmp/id-before
    .venv/bin/python scripts/identical.py capture . /tmp/id-inputs /tmp/id-after
    .venv/bin/python scripts/identical.py compare /tmp/id-before /tmp/id-after

`capture ROOT` runs ROOT's `placement` and `cli` packages (ROOT goes first on PYTHONPATH)
in a working directory of its own, so every path printed is the same in both captures.
Each command's standard output, standard error, exit code and every file it wrote land
in CAPTURE/<scenario>/. `--no-spark` leaves out the scenarios that start Spark.

The scenarios: every command of examples/demo.sh but the broker one, validate in every
output format, the HTML pages, and the benchmarks' seeded clusters (bench/quality_gen.py and
bench/describe_gen.py) at a few thousand partitions: a fresh layout, a drain, a rebalance, a
policy change, a cluster under a default policy, a plain Apache cluster with --repair.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

# shorthands in the commands below
SHORT = {
    "$INV": "examples/inventory.json",
    "$TOPICS": "examples/topics.json",
    "$DESCRIBE": "examples/describe.txt",
}

# (name, command, starts Spark); {out} is the scenario's own output directory. Scenarios
# run in order: a later one may read what an earlier one wrote (out/<name>/...).
SCENARIOS: list[tuple[str, str, bool]] = [
    (
        "validate-good",
        "validate examples/placement examples/server.properties --inventory $INV "
        "--min-insync-replicas 2 --format text",
        False,
    ),
    (
        "validate-good-json",
        "validate examples/placement --format json",
        False,
    ),
    (
        "validate-broken",
        "validate examples/broken --inventory $INV --ibp 3.2 --format text",
        False,
    ),
    (
        "validate-broken-json",
        "validate examples/broken --inventory $INV --ibp 3.2 --format json",
        False,
    ),
    (
        "validate-broken-sarif",
        "validate examples/broken --format sarif",
        False,
    ),
    (
        "validate-broken-junit",
        "validate examples/broken --format junit",
        False,
    ),
    (
        "validate-broken-github",
        "validate examples/broken --format github",
        False,
    ),
    (
        "validate-drifted",
        "validate examples/describe-drifted.txt --inventory $INV --format json",
        False,
    ),
    (
        "validate-inputs",
        "validate $TOPICS examples/inventory.csv examples/topics-describe.json --format json",
        False,
    ),
    (
        "inventory-sources",
        "validate examples/placement --inventory examples/inventory-api-versions.txt "
        "--inventory examples/inventory-configs.txt --format json",
        False,
    ),
    (
        "inventory-zookeeper",
        "assign --inventory examples/inventory-zookeeper.txt --topics $TOPICS --out "
        "{out}/plan.json",
        False,
    ),
    (
        "inventory-csv",
        "assign --inventory examples/inventory.csv --topics $TOPICS --out {out}/plan.json",
        False,
    ),
    (
        "inventory-two-dc",
        "validate examples/placement --inventory examples/inventory-two-dc.json --format json",
        False,
    ),
    (
        "rules",
        "rules",
        False,
    ),
    (
        "rules-one",
        "rules MRC102",
        False,
    ),
    (
        "fresh",
        "assign --inventory $INV --topics $TOPICS --out {out}/current.json --summary "
        "{out}/summary.json",
        False,
    ),
    (
        "drain",
        "assign --inventory $INV --topics $TOPICS --current out/fresh/current.json "
        "--drain 4,8 --out {out}/drain.json --rollback {out}/rollback.json --summary "
        "{out}/summary.json --report {out}/drain.html",
        False,
    ),
    (
        "drain-batches",
        "assign --inventory $INV --topics $TOPICS --current out/fresh/current.json "
        "--drain 4,8 --out-dir {out}/batches --max-moves-per-broker 3",
        False,
    ),
    (
        "plan-show",
        "plan show out/drain-batches/batches",
        False,
    ),
    (
        "apache-drain",
        "assign --inventory $INV --current examples/describe-apache.txt --drain 9,10 "
        "--out {out}/plan.json --summary {out}/summary.json",
        False,
    ),
    (
        "rebalance",
        "assign --inventory examples/inventory-expanded.json --topics $TOPICS --current "
        "out/fresh/current.json --rebalance --balance-leaders --out {out}/plan.json "
        "--election {out}/election.json --summary {out}/summary.json",
        False,
    ),
    (
        "sized-drain",
        "assign --inventory $INV --topics examples/topics-describe.json --current "
        "$DESCRIBE --sizes examples/log-dirs.txt --drain 4,8 --out-dir {out}/batches "
        "--max-moves-per-broker 1 --throttle 50MB --report {out}/drain.html --summary "
        "{out}/summary.json",
        False,
    ),
    (
        "snapshot",
        "snapshot from-describe $DESCRIBE --inventory $INV --sizes examples/sizes.csv "
        "--out {out}/snap",
        False,
    ),
    (
        "snapshot-show",
        "snapshot show out/snapshot/snap --format json",
        False,
    ),
    (
        "policy-change",
        "assign --current out/snapshot/snap --topics examples/topics-changes.json --out "
        "{out}/plan.json --policy-dir {out}/policies --summary {out}/summary.json",
        False,
    ),
    (
        "simulate",
        "simulate --current out/fresh/current.json --inventory $INV --topics $TOPICS "
        "--plan out/drain/drain.json --fail-rack us-west --min-insync-replicas 2 "
        "--unclean-out {out}/unclean.json",
        True,
    ),
    (
        "simulate-risk",
        "simulate --current $DESCRIBE --inventory $INV --fail-rack us-west "
        "--replica-status examples/replica-status.json --unclean-out {out}/unclean.json "
        "--report {out}/page.html",
        True,
    ),
    (
        "score",
        "score --snapshot out/snapshot/snap --plan out/policy-change/plan.json "
        "--policy-dir out/policy-change/policies --format json",
        True,
    ),
    (
        "gen-fresh",
        "assign --inventory gen/q/inventory.json --topics gen/q/topics.json --out "
        "{out}/plan.json --summary {out}/summary.json",
        False,
    ),
    (
        "gen-drain",
        "assign --inventory gen/q/inventory.json --topics gen/q/topics.json --current "
        "gen/q/current.json --drain 3,14,25 --out {out}/plan.json --summary "
        "{out}/summary.json --rollback {out}/rollback.json",
        False,
    ),
    (
        "gen-rebalance",
        "assign --inventory gen/q/inventory-more.json --topics gen/q/topics.json "
        "--current gen/q/current.json --rebalance --balance-leaders --out "
        "{out}/plan.json --summary {out}/summary.json --report {out}/page.html",
        False,
    ),
    (
        "gen-change",
        "assign --inventory gen/q/inventory.json --topics gen/q/changed.json --current "
        "gen/q/current.json --out {out}/plan.json --summary {out}/summary.json",
        False,
    ),
    (
        "gen-change-snapshot",
        "assign --current gen/q/snap --topics gen/q/changed.json --out {out}/plan.json "
        "--policy-dir {out}/policies --summary {out}/summary.json --report "
        "{out}/page.html",
        False,
    ),
    (
        "gen-sized-drain",
        "assign --current gen/q/snap --topics gen/q/topics.json --drain 5,6 --out-dir "
        "{out}/batches --max-moves-per-broker 20 --summary {out}/summary.json",
        False,
    ),
    (
        "gen-plain-repair",
        "assign --inventory gen/plain/inventory.json --current gen/plain/describe.txt "
        "--repair --drain 2 --out {out}/plan.json --summary {out}/summary.json",
        False,
    ),
    (
        "gen-mixed-default",
        "assign --inventory gen/mixed/inventory.json --current "
        "gen/mixed/describe-default.txt --default-policy gen/mixed/default.json --drain "
        "1,7 --out {out}/plan.json --summary {out}/summary.json",
        False,
    ),
    (
        "gen-mixed-validate",
        "validate gen/mixed/describe.txt --inventory gen/mixed/inventory.json --format json",
        False,
    ),
    (
        "gen-flat-drain",
        "assign --current gen/flat --default-policy gen/flat/default.json --drain "
        "1,2,251,252 --out {out}/plan.json --summary {out}/summary.json",
        False,
    ),
    (
        "gen-score",
        "score --snapshot gen/q/snap --plan out/gen-drain/plan.json --plan "
        "out/gen-sized-drain/batches/plan-0001.json --topics gen/q/topics.json --format "
        "json --report {out}/page.html",
        True,
    ),
]


def arguments(name: str, command: str) -> list[str]:
    """A scenario's command as arguments: shorthands expanded, {out} its own directory."""
    return [SHORT.get(a, a).replace("{out}", f"out/{name}") for a in command.split()]


def make_inputs(directory: Path) -> None:
    """The benchmarks' seeded clusters as files, through bench/'s own generators."""
    sys.path.insert(0, str(REPO / "bench"))
    # bench/ is not a package: its generators are imported once it is on the path
    import describe_gen as dgen  # type: ignore[import-not-found]
    import quality_gen as gen  # type: ignore[import-not-found]

    q = directory / "q"
    cluster = gen.generate(3000, 7, rack_sizes=gen.RACK_SIZES)
    gen.write_json(q / "inventory.json", gen.inventory_doc(cluster.racks))
    more = {r: [*ids, 100 + i] for i, (r, ids) in enumerate(sorted(cluster.racks.items()))}
    gen.write_json(q / "inventory-more.json", gen.inventory_doc(more))
    gen.write_topics(q, cluster)
    gen.write_current(q / "current.json", cluster.state)
    gen.write_sized_snapshot(q / "snap", cluster.racks, cluster.state, cluster.sizes)
    changed = {t: gen.CHANGED.get(p.name, p) for t, p in cluster.policy_of.items()}
    sub = q / "change-tree"
    gen.write_topics(sub, cluster, changed)
    (q / "placement").mkdir(exist_ok=True)
    for f in (sub / "placement").iterdir():
        shutil.copy(f, q / "placement" / f.name)
    shutil.copy(sub / "topics.json", q / "changed.json")

    plain = dgen.plain(2000, 11)
    dgen.write_describe(directory / "plain" / "describe.txt", plain)
    gen.write_json(directory / "plain" / "inventory.json", gen.inventory_doc(plain.racks))

    mixed = dgen.mixed(2000, 12)
    m = directory / "mixed"
    dgen.write_describe(m / "describe.txt", mixed)
    keep = [t for t, how in mixed.placed_by.items() if how != "rack-aware"]
    dgen.write_describe(m / "describe-default.txt", mixed, topics=keep)
    dgen.write_policy(m / "default.json", dgen.DEFAULT_POLICY)
    gen.write_json(m / "inventory.json", gen.inventory_doc(mixed.racks))

    flat = dgen.flat_cluster(60, 50, 5)
    dgen.write_flat_snapshot(directory / "flat", flat)
    dgen.write_policy(directory / "flat" / "default.json", dgen.PERF_DEFAULT)


def _env(root: Path, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "MRC_PLAN_"))}
    env.pop("CI", None)
    env.update(
        PYTHONPATH=str(root),
        PYTHONDONTWRITEBYTECODE="1",
        XDG_CACHE_HOME=str(home / "cache"),
        TZ="UTC",
        NO_COLOR="1",
        COLUMNS="100",
        TERM="dumb",
        LC_ALL="C.UTF-8",
    )
    return env


def capture(root: Path, inputs: Path, out: Path, spark: bool) -> int:
    root = root.resolve()
    if out.exists():
        sys.exit(f"identical: {out} exists; give a new directory")
    work = out / "work"
    work.mkdir(parents=True)
    shutil.copytree(root / "examples", work / "examples")
    shutil.copytree(inputs, work / "gen")
    env = _env(root, out)
    program = "import sys; sys.argv[0] = 'mrc-plan'; from cli.main import run; run()"
    for name, args, starts_spark in SCENARIOS:
        if starts_spark and not spark:
            continue
        own = work / "out" / name
        own.mkdir(parents=True)
        argv = arguments(name, args)
        r = subprocess.run(
            [sys.executable, "-c", program, *argv],
            cwd=work,
            env=env,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        (own / "_stdout").write_bytes(r.stdout)
        (own / "_stderr").write_bytes(r.stderr)
        (own / "_exit").write_text(f"{r.returncode}\n")
        print(f"{name}: exit {r.returncode}", flush=True)
    shutil.rmtree(work / "examples")
    shutil.rmtree(work / "gen")
    return 0


# the one thing that differs between two runs of the same code: seconds taken ("0.02 s")
SECONDS = re.compile(rb"\b\d+\.\d+ s\b")


def _same(a: Path, b: Path) -> bool:
    """Byte for byte; a command's own output (_stdout, _stderr) with its timings masked."""
    if a.name in ("_stdout", "_stderr"):
        return SECONDS.sub(b"T s", a.read_bytes()) == SECONDS.sub(b"T s", b.read_bytes())
    return filecmp.cmp(a, b, shallow=False)


def _files(top: Path) -> dict[str, Path]:
    return {str(p.relative_to(top)): p for p in sorted(top.rglob("*")) if p.is_file()}


def compare(a: Path, b: Path) -> int:
    left, right = _files(a / "work" / "out"), _files(b / "work" / "out")
    both = sorted(left.keys() & right.keys())
    differ = [k for k in both if not _same(left[k], right[k])]
    only = sorted(left.keys() ^ right.keys())
    for k in only:
        print(f"only in {'first' if k in left else 'second'}: {k}")
    for k in differ:
        print(f"differs: {k}")
    tally = {"files": len(left), "identical": len(both) - len(differ), "differ": len(differ)}
    print(json.dumps(tally | {"missing": len(only)}))
    return 1 if differ or only else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("inputs", help="write the seeded inputs")
    p.add_argument("directory", type=Path)
    p = sub.add_parser("capture", help="run every scenario with ROOT's code")
    p.add_argument("root", type=Path)
    p.add_argument("inputs", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--no-spark", action="store_true")
    p = sub.add_parser("compare", help="compare two captures byte for byte")
    p.add_argument("a", type=Path)
    p.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "inputs":
        make_inputs(args.directory)
        return 0
    if args.command == "capture":
        return capture(args.root, args.inputs, args.out, not args.no_spark)
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
