"""The readers under test: their seed inputs, how to mutate them, and how to call them.

A *family* is a kind of input (a policy, a describe output, a snapshot directory...) with
its seeds; an input is a set of files (relative path -> bytes), one of which (the
*primary*) is usually the one mutated. A *reader* is one way of consuming that input: an
in-process call of a library function, or a whole CLI run through typer's CliRunner.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fuzz import mutate, staging
from fuzz.mutate import Mutator

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
FIXTURES = ROOT / "tests" / "fixtures"
SEEDS = Path(__file__).resolve().parent / "seeds"
MAX_SEED_BYTES = 64 * 1024

Files = dict[str, bytes]


class ReachedSparkError(BaseException):
    """Raised instead of starting Spark: everything before it (the readers) passed.

    A BaseException, so that the CLI's handler for unexpected exceptions does not turn it
    into exit 101."""


@dataclass
class Family:
    name: str
    primary: str | None  # None: any file of the input
    seeds: list[Files]
    mutator: Mutator
    custom: Callable[[random.Random, Files], Files] | None = None

    def mutate(self, rng: random.Random) -> Files:
        seed = rng.choice(self.seeds)
        if self.custom is not None:
            return self.custom(rng, dict(seed))
        files = dict(seed)
        others = [f for s in self.seeds for f in s.values()]
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            name = self.primary
            if name is None or name not in files or rng.random() < 0.15:
                name = rng.choice(sorted(files))
            try:
                files[name] = self.mutator(rng, files[name], others)
            except (ValueError, RecursionError, UnicodeError):  # a mutator's own limits
                files[name] = mutate.mutate_bytes(rng, files[name], others)
        return files


@dataclass
class Context:
    """Unmutated inputs the readers need besides the mutated one."""

    fixtures: Path
    inventory: Any  # LoadedInventory

    @property
    def inventory_json(self) -> Path:
        return self.fixtures / "inventory.json"

    @property
    def describe(self) -> Path:
        return self.fixtures / "describe.txt"

    @property
    def snapshot(self) -> Path:
        return self.fixtures / "snapshot"

    @property
    def topics(self) -> Path:
        return self.fixtures / "topics.json"

    @property
    def policy(self) -> Path:
        return self.fixtures / "orders.json"


InProcess = Callable[[Path, Context], object]
CliArgs = Callable[[Path, Context, random.Random], list[str]]


@dataclass
class Reader:
    name: str
    family: Family
    target: str  # what the call gets: a primary file name, or "." for the input directory
    call: InProcess | None = None
    cli: CliArgs | None = None
    spark: bool = False  # stop before starting Spark
    weight: int = 0  # 0: 3 for an in-process call, 1 for a CLI run

    @property
    def level(self) -> str:
        return "cli" if self.cli is not None else "lib"

    @property
    def share(self) -> int:
        return self.weight or (1 if self.cli is not None else 3)


# -- seeds -------------------------------------------------------------------------------


def _files(paths: Sequence[Path], name: str) -> list[Files]:
    return [
        {name: p.read_bytes()}
        for p in sorted(paths)
        if p.is_file() and p.stat().st_size <= MAX_SEED_BYTES
    ]


def _dir_seed(root: Path) -> Files:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _describe_plans(describe: Path) -> list[bytes]:
    """Plans for the cluster of examples/describe.txt: no change, and leaders rotated."""
    from dataclasses import replace

    from placement.io.describe import read_describe
    from placement.io.reassignment import render_reassignment

    now = [d.assignment() for d in read_describe(describe).partitions]
    rotated = []
    for a in now:
        sync = [b for b in a.replicas if b not in a.observers]
        sync = sync[1:] + sync[:1]
        rotated.append(replace(a, replicas=(*sync, *a.observers)))
    return [render_reassignment(now).encode(), render_reassignment(rotated).encode()]


def _snapshot_seed(target: Path) -> None:
    from placement.io.convert import read_sizes, snapshot_from_describe
    from placement.io.describe import read_describe
    from placement.io.inventory import load_inventory
    from placement.io.snapshot import write_snapshot

    snap = snapshot_from_describe(
        read_describe(EXAMPLES / "describe.txt"),
        load_inventory(EXAMPLES / "inventory.json").inventory,
        read_sizes(EXAMPLES / "sizes.csv"),
    )
    write_snapshot(target, snap)


def write_fixtures(fixtures: Path) -> Context:
    """The unmutated companions of the mutated inputs, written once per run."""
    import shutil

    from placement.io.inventory import load_inventory

    fixtures.mkdir(parents=True, exist_ok=True)
    for name in ("inventory.json", "describe.txt", "topics.json", "sizes.csv"):
        shutil.copyfile(EXAMPLES / name, fixtures / name)
    shutil.copytree(EXAMPLES / "placement", fixtures / "placement", dirs_exist_ok=True)
    shutil.copyfile(EXAMPLES / "placement" / "orders.json", fixtures / "orders.json")
    _snapshot_seed(fixtures / "snapshot")
    for n, plan in enumerate(_describe_plans(fixtures / "describe.txt")):
        (fixtures / f"plan-{n}.json").write_bytes(plan)
    return Context(fixtures, load_inventory(fixtures / "inventory.json"))


# -- snapshot mutation -------------------------------------------------------------------

_TABLE_FILES = {
    "brokers": "brokers.parquet",
    "topics": "topics.parquet",
    "partitions": "partitions/part-00000.parquet",
}


def _rows(data: bytes) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = pq.read_table(io.BytesIO(data)).to_pylist()
    return rows


def _mutate_rows(rng: random.Random, files: Files, table: str, name: str, rows_op: bool) -> None:
    rows = _rows(files[name])
    if rows_op:
        for _ in range(rng.choice((1, 1, 2))):
            rows = mutate.mutate_table(rng, rows)
        fmt = "jsonl" if rng.random() < 0.1 else "parquet"
        data = mutate.table_bytes(rows, fmt)
        if fmt == "jsonl":
            del files[name]
            files[f"{table}.jsonl"] = data
        else:
            files[name] = data
    elif table == "topics" and rows:  # the text of one policy
        row = rng.choice(rows)
        text = (row.get("placement") or '{"version": 2}').encode()
        new = mutate.mutate_structured(rng, text, [])
        row["placement"] = new.decode("utf-8", "replace")
        files[name] = mutate.table_bytes(rows, "parquet")


def mutate_snapshot(rng: random.Random, files: Files) -> Files:
    """Mutate a snapshot's tables (nulls, duplicates, huge ids, wrong types, a policy
    text) or the bytes of its Parquet files."""
    for _ in range(rng.choice((1, 1, 2))):
        table = rng.choice(sorted(_TABLE_FILES))
        name = _TABLE_FILES[table]
        if name not in files:
            continue
        r = rng.random()
        if r < 0.75:
            try:  # the file may already be broken by an earlier mutation
                _mutate_rows(rng, files, table, name, r < 0.6)
            except Exception:
                continue
        elif r < 0.95:
            files[name] = mutate.mutate_bytes(rng, files[name], [])
        else:
            op = rng.randrange(3)
            if op == 0:
                del files[name]
            elif op == 1:
                files[name] = b""
            else:
                files[name] = b"PAR1" + bytes(rng.randrange(256) for _ in range(64)) + b"PAR1"
    return files


# -- calls -------------------------------------------------------------------------------


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


@contextlib.contextmanager
def no_spark() -> Iterator[None]:
    """`build_session` raises ReachedSparkError instead of starting a JVM."""
    import placement.score.session as session

    def refuse(*_: object, **__: object) -> Any:
        raise ReachedSparkError

    saved = session.build_session
    session.build_session = refuse
    try:
        yield
    finally:
        session.build_session = saved


def _unwrapped(fn: Callable[..., Any]) -> Callable[..., Any]:
    return getattr(fn, "__wrapped__", fn)


def _validate_json(p: Path, c: Context) -> object:
    from placement.rules.base import CheckContext
    from placement.rules.validate import validate_json_bytes

    return validate_json_bytes(p.read_bytes(), str(p), CheckContext(c.inventory.inventory, 2))


def _validate_properties(p: Path, c: Context) -> object:
    from placement.rules.base import CheckContext
    from placement.rules.validate import validate_properties_bytes

    return validate_properties_bytes(p.read_bytes(), str(p), CheckContext(c.inventory.inventory))


def _validate_describe(p: Path, c: Context) -> object:
    from placement.rules.base import CheckContext
    from placement.rules.validate import validate_describe_bytes

    return validate_describe_bytes(p.read_bytes(), str(p), CheckContext(c.inventory.inventory))


def _read_describe(p: Path, c: Context) -> object:
    from placement.io.describe import read_describe

    return read_describe(p)


def _from_describe(p: Path, c: Context) -> object:
    """What `snapshot from-describe` does before writing: convert, then conform."""
    from placement.io.convert import snapshot_from_describe
    from placement.io.describe import read_describe
    from placement.io.snapshot import conform

    snap = snapshot_from_describe(read_describe(p), c.inventory.inventory)
    for name in ("brokers", "topics", "partitions"):
        conform(getattr(snap, name), name, name)
    return None


def _read_current(p: Path, c: Context) -> object:
    from placement.io.current import read_current

    return read_current(p)


def _simulate_current(p: Path, c: Context) -> object:
    from placement.simulate.failure import simulate_files

    return simulate_files(p, c.inventory, fail_rack="us-east")


def _simulate_plan(p: Path, c: Context) -> object:
    from placement.simulate.failure import simulate_files

    return simulate_files(c.describe, c.inventory, plan=p, fail_rack="us-east")


def _simulate_topics(p: Path, c: Context) -> object:
    from placement.simulate.failure import simulate_files

    return simulate_files(c.describe, c.inventory, topics=p, fail_rack="us-east")


def _load_inventory(p: Path, c: Context) -> object:
    from placement.io.inventory import load_inventory
    from placement.rules.validate import inventory_diagnostics

    return inventory_diagnostics(load_inventory(p))


def _simulate_inventory(p: Path, c: Context) -> object:
    from placement.io.inventory import load_inventory
    from placement.simulate.failure import simulate_files

    return simulate_files(c.describe, load_inventory(p), fail_rack="us-east")


def _read_topics(p: Path, c: Context) -> object:
    from placement.plan.topics import read_topics
    from placement.rules.base import CheckContext

    return read_topics(p, CheckContext(c.inventory.inventory))


def _read_reassignment(p: Path, c: Context) -> object:
    from placement.io.reassignment import read_reassignment

    return read_reassignment(p)


def _read_plan_file(p: Path, c: Context) -> object:
    """The strict plan reader of score and simulate, when there is one."""
    import placement.io.reassignment as reassignment

    return reassignment.read_plan_file(p)


def _plan_show(p: Path, c: Context) -> object:
    show = importlib.import_module("mrc_plan_cli.plan").show
    return _unwrapped(show)(p)


def _score_plan(p: Path, c: Context) -> object:
    from placement.score.run import run_score

    return run_score(c.snapshot, [p])


def _simulate_snapshot_plan(p: Path, c: Context) -> object:
    from placement.score.simulate import run_simulate

    return run_simulate(c.snapshot, plan=p, fail_rack="us-east")


def _read_snapshot(p: Path, c: Context) -> object:
    from placement.io.snapshot import read_snapshot

    return read_snapshot(p)


def _snapshot_show(p: Path, c: Context) -> object:
    from placement.io.snapshot import read_snapshot
    from placement.snapshot.facts import summarize

    return summarize(read_snapshot(p))


def _score_snapshot(p: Path, c: Context) -> object:
    from placement.score.run import run_score

    return run_score(p, [])


def _simulate_snapshot(p: Path, c: Context) -> object:
    from placement.score.simulate import run_simulate

    return run_simulate(p, fail_rack="us-east")


def _read_sizes(p: Path, c: Context) -> object:
    from placement.io.convert import read_sizes

    return read_sizes(p)


def _load_sizes(p: Path, c: Context) -> object:
    """The reader behind every --sizes, with the notes it builds (a log-dirs file)."""
    from placement.io.convert import load_sizes

    return load_sizes(p)


def _read_replica_status(p: Path, c: Context) -> object:
    from placement.io.replicastatus import read_replica_status

    return read_replica_status(str(p))


def _mutate_status(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
    """`kafka-replica-status`: its JSON mutated as JSON, its text forms line by line."""
    if data.lstrip()[:1] in (b"[", b"{"):
        return mutate.mutate_structured(rng, data, others)
    return mutate.mutate_text(rng, data, others)


def _plan_show_json(p: Path, c: Context) -> object:
    cli_plan = importlib.import_module("mrc_plan_cli.plan")
    return _unwrapped(cli_plan.show)(p, cli_plan.ShowFormat.JSON)


def _mutate_logdirs(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
    """`kafka-log-dirs` output: the banner lines kept (mostly) and the JSON document under
    them mutated as JSON, so most inputs reach the document's checks, not the sniffer."""
    head, sep, body = data.rpartition(b"\n{")
    if not sep or rng.random() < 0.2:
        return mutate.mutate_structured(rng, data, others)
    return head + b"\n" + mutate.mutate_structured(rng, b"{" + body, others)


# -- the catalogue -----------------------------------------------------------------------


def _formats(rng: random.Random) -> str:
    return rng.choice(("text", "json", "sarif", "junit", "github"))


def build(ctx: Context) -> list[Reader]:
    f = FIXTURES
    policy_paths = [
        *EXAMPLES.glob("placement/*.json"),
        *EXAMPLES.glob("broken/*.json"),
        *f.glob("seeds/*.json"),
        *f.glob("rules/*/*.json"),
    ]
    policy = Family("policy", "policy.json", _files(policy_paths, "policy.json"), _structured)
    valid_paths = [*EXAMPLES.glob("placement/*.json"), *f.glob("rules/*/pass-*.json")]
    valid_policy = Family(
        "valid-policy", "policy.json", _files(valid_paths, "policy.json"), _structured
    )
    props_paths = [
        EXAMPLES / "server.properties",
        *f.rglob("*.properties"),
        *f.glob("inventories/*-servers/*"),
    ]
    properties = Family(
        "properties",
        "server.properties",
        _files(props_paths, "server.properties"),
        mutate.mutate_text,
    )
    describe = Family(
        "describe",
        "describe.txt",
        _files([EXAMPLES / "describe.txt", *f.glob("describe/*.txt")], "describe.txt"),
        mutate.mutate_text,
    )
    inv_json = Family(
        "inventory-json",
        "inventory.json",
        _files(
            [*EXAMPLES.glob("inventory*.json"), *f.glob("inventories/*.json")], "inventory.json"
        ),
        _structured,
    )
    inv_csv = Family(
        "inventory-csv",
        "inventory.csv",
        _files([EXAMPLES / "inventory.csv", *f.glob("inventories/*.csv")], "inventory.csv"),
        mutate.mutate_text,
    )
    inv_dir = Family(
        "inventory-dir",
        None,
        [_dir_seed(d) for d in sorted(f.glob("inventories/*-servers"))],
        mutate.mutate_text,
    )
    placement_files = {
        f"placement/{p.name}": p.read_bytes() for p in sorted(EXAMPLES.glob("placement/*.json"))
    }
    topics = Family(
        "topics",
        "topics.json",
        [{"topics.json": (EXAMPLES / "topics.json").read_bytes(), **placement_files}],
        _structured,
    )
    # plans for the describe/snapshot cluster, and for the examples' topics file
    plans = [{"plan.json": p.read_bytes()} for p in sorted(ctx.fixtures.glob("plan-*.json"))]
    plan = Family("plan", "plan.json", plans, _structured)
    reassignment = Family(
        "reassignment",
        "plan.json",
        [
            *plans,
            {"plan.json": (SEEDS / "current.json").read_bytes()},
            {"plan.json": (SEEDS / "batches" / "plan-0001.json").read_bytes()},
        ],
        _structured,
    )
    snapshot = Family(
        "snapshot", None, [_dir_seed(ctx.snapshot)], mutate.mutate_bytes, mutate_snapshot
    )
    staged = Family(
        "staging", None, [_dir_seed(ctx.snapshot)], mutate.mutate_bytes, staging.mutate_staging
    )
    sizes = Family(
        "sizes", "sizes.csv", _files([EXAMPLES / "sizes.csv"], "sizes.csv"), mutate.mutate_text
    )
    summary = Family("summary", "summary.json", [_dir_seed(SEEDS / "batches")], _structured)
    status = Family(
        "replica-status",
        "status.txt",
        _files(
            [EXAMPLES / "replica-status.json", *sorted(f.glob("replica-status/*"))], "status.txt"
        ),
        _mutate_status,
    )
    logdirs = Family(
        "logdirs",
        "log-dirs.txt",
        _files([EXAMPLES / "log-dirs.txt", *sorted(f.glob("logdirs/*"))], "log-dirs.txt"),
        _mutate_logdirs,
    )

    inv = str(ctx.inventory_json)
    desc = str(ctx.describe)
    snap = str(ctx.snapshot)

    def from_describe_sizes(p: Path, c: Context, r: random.Random) -> list[str]:
        """`snapshot from-describe --sizes`: both families of sizes files go through it."""
        out = str(p.parent / "out-snapshot")
        return [
            "snapshot",
            "from-describe",
            desc,
            "--inventory",
            inv,
            "--sizes",
            str(p),
            "--out",
            out,
        ]

    return [
        Reader("validate policy", policy, "policy.json", _validate_json),
        Reader(
            "cli validate policy",
            policy,
            "policy.json",
            cli=lambda p, c, r: [
                "validate",
                str(p),
                "--inventory",
                inv,
                "--min-insync-replicas",
                "2",
                "--format",
                _formats(r),
            ],
        ),
        Reader(
            "cli snapshot synth --policy",
            valid_policy,
            "policy.json",
            cli=lambda p, c, r: [
                "snapshot",
                "synth",
                "--brokers",
                str(r.choice((3, 12, 40))),
                "--racks",
                str(r.choice((1, 3, 4))),
                "--topics",
                "3",
                "--partitions-per-topic",
                "4",
                "--violations",
                str(r.choice((0, 0.3, 1))),
                "--policy",
                str(p),
                "--out",
                str(p.parent / "out-synth"),
            ],
        ),
        Reader("validate properties", properties, "server.properties", _validate_properties),
        Reader(
            "cli validate properties",
            properties,
            "server.properties",
            cli=lambda p, c, r: ["validate", str(p), "--format", _formats(r)],
        ),
        Reader("validate describe", describe, "describe.txt", _validate_describe),
        Reader("read_describe", describe, "describe.txt", _read_describe),
        Reader("from-describe convert", describe, "describe.txt", _from_describe),
        Reader("read_current describe", describe, "describe.txt", _read_current),
        Reader("simulate_files describe", describe, "describe.txt", _simulate_current),
        Reader(
            "cli validate describe",
            describe,
            "describe.txt",
            cli=lambda p, c, r: ["validate", str(p), "--format", _formats(r)],
        ),
        Reader(
            "cli snapshot from-describe",
            describe,
            "describe.txt",
            cli=lambda p, c, r: [
                "snapshot",
                "from-describe",
                str(p),
                "--inventory",
                inv,
                "--out",
                str(p.parent / "out-snapshot"),
            ],
        ),
        Reader(
            "cli simulate --current describe",
            describe,
            "describe.txt",
            cli=lambda p, c, r: [
                "simulate",
                "--current",
                str(p),
                "--inventory",
                inv,
                "--fail-rack",
                r.choice(("us-east", "us-west")),
                "--format",
                r.choice(("text", "json")),
            ],
        ),
        Reader("load_inventory json", inv_json, "inventory.json", _load_inventory),
        Reader("simulate_files inventory json", inv_json, "inventory.json", _simulate_inventory),
        Reader(
            "cli validate --inventory json",
            inv_json,
            "inventory.json",
            cli=lambda p, c, r: ["validate", str(c.policy), "--inventory", str(p)],
        ),
        Reader("load_inventory csv", inv_csv, "inventory.csv", _load_inventory),
        Reader("simulate_files inventory csv", inv_csv, "inventory.csv", _simulate_inventory),
        Reader(
            "cli simulate --inventory csv",
            inv_csv,
            "inventory.csv",
            cli=lambda p, c, r: [
                "simulate",
                "--current",
                desc,
                "--inventory",
                str(p),
                "--fail-rack",
                "us-east",
            ],
        ),
        Reader("load_inventory dir", inv_dir, ".", _load_inventory, weight=2),
        Reader(
            "cli validate --inventory dir",
            inv_dir,
            ".",
            cli=lambda p, c, r: ["validate", str(c.policy), "--inventory", str(p)],
        ),
        Reader("read_topics", topics, "topics.json", _read_topics),
        Reader("simulate_files --topics", topics, "topics.json", _simulate_topics),
        Reader(
            "cli simulate --topics",
            topics,
            "topics.json",
            cli=lambda p, c, r: [
                "simulate",
                "--current",
                desc,
                "--inventory",
                inv,
                "--topics",
                str(p),
                "--fail-rack",
                "us-west",
            ],
        ),
        Reader(
            "cli assign --topics",
            topics,
            "topics.json",
            cli=lambda p, c, r: [
                "assign",
                "--topics",
                str(p),
                "--inventory",
                inv,
                "--time-limit",
                "1",
                "--out",
                str(p.parent / "out-plan.json"),
            ],
        ),
        Reader("read_reassignment", reassignment, "plan.json", _read_reassignment),
        Reader("read_current reassignment", reassignment, "plan.json", _read_current),
        *(
            [Reader("read_plan_file", reassignment, "plan.json", _read_plan_file)]
            if _has("placement.io.reassignment", "read_plan_file")
            else []
        ),
        Reader("simulate_files --plan", plan, "plan.json", _simulate_plan),
        Reader("plan show FILE", reassignment, "plan.json", _plan_show),
        Reader("score --plan (pre-Spark)", plan, "plan.json", _score_plan, spark=True),
        Reader(
            "simulate --snapshot --plan (pre-Spark)",
            plan,
            "plan.json",
            _simulate_snapshot_plan,
            spark=True,
        ),
        Reader(
            "cli plan show FILE",
            reassignment,
            "plan.json",
            cli=lambda p, c, r: ["plan", "show", str(p)],
        ),
        Reader(
            "cli simulate --plan",
            plan,
            "plan.json",
            cli=lambda p, c, r: [
                "simulate",
                "--current",
                desc,
                "--inventory",
                inv,
                "--plan",
                str(p),
                "--fail-rack",
                "us-east",
                "--unclean-out",
                str(p.parent / "unclean.json"),
            ],
        ),
        Reader(
            "cli score --plan",
            plan,
            "plan.json",
            cli=lambda p, c, r: ["score", "--snapshot", snap, "--plan", str(p)],
            spark=True,
        ),
        Reader(
            "cli assign --current",
            reassignment,
            "plan.json",
            cli=lambda p, c, r: [
                "assign",
                "--current",
                str(p),
                "--inventory",
                inv,
                "--topics",
                str(c.topics),
                "--time-limit",
                "1",
            ],
            weight=1,
        ),
        Reader("read_snapshot", snapshot, ".", _read_snapshot),
        Reader("read_current snapshot", snapshot, ".", _read_current),
        Reader("snapshot show (summarize)", snapshot, ".", _snapshot_show),
        Reader("simulate_files snapshot", snapshot, ".", _simulate_current),
        Reader("score --snapshot (pre-Spark)", snapshot, ".", _score_snapshot, spark=True),
        Reader("simulate --snapshot (pre-Spark)", snapshot, ".", _simulate_snapshot, spark=True),
        Reader(
            "cli snapshot show", snapshot, ".", cli=lambda p, c, r: ["snapshot", "show", str(p)]
        ),
        Reader(
            "cli snapshot export",
            snapshot,
            ".",
            cli=lambda p, c, r: ["snapshot", "export", str(p)],
        ),
        Reader(
            "cli simulate --snapshot",
            snapshot,
            ".",
            cli=lambda p, c, r: ["simulate", "--snapshot", str(p), "--fail-rack", "us-east"],
            spark=True,
        ),
        Reader("staging agrees with read_table (and Spark)", staged, ".", staging.agrees),
        Reader("score --snapshot staged (pre-Spark)", staged, ".", _score_snapshot, spark=True),
        Reader(
            "cli validate snapshot (staging)",
            staged,
            ".",
            cli=lambda p, c, r: ["validate", str(p)],
        ),
        Reader("read_sizes", sizes, "sizes.csv", _read_sizes),
        Reader(
            "cli snapshot from-describe --sizes",
            sizes,
            "sizes.csv",
            cli=from_describe_sizes,
        ),
        Reader("plan show DIR", summary, ".", _plan_show),
        Reader(
            "plan show DIR/plan-0001.json",
            summary,
            "plan-0001.json",
            _plan_show,
        ),
        Reader("cli plan show DIR", summary, ".", cli=lambda p, c, r: ["plan", "show", str(p)]),
        Reader("plan show DIR --format json", summary, ".", _plan_show_json),
        Reader("load_sizes (kafka-log-dirs)", logdirs, "log-dirs.txt", _load_sizes),
        Reader("read_replica_status", status, "status.txt", _read_replica_status),
        Reader(
            "cli simulate --replica-status",
            status,
            "status.txt",
            cli=lambda p, c, r: [
                *("simulate", "--current", desc, "--inventory", inv),
                *("--fail-rack", "us-west", "--replica-status", str(p), "--exit-zero"),
            ],
        ),
        Reader(
            "cli snapshot from-describe --sizes (kafka-log-dirs)",
            logdirs,
            "log-dirs.txt",
            cli=from_describe_sizes,
        ),
    ]


def unfuzzed_formats(readers: Sequence[Reader]) -> list[str]:
    """The input formats of the registry (placement/io/formats.py) whose fuzz family no
    reader mutates: each format names its family, and `build` must make it."""
    from placement.io.formats import FORMATS

    families = {r.family.name for r in readers}
    return [f"{f.name} (family {f.fuzz!r})" for f in FORMATS if f.fuzz not in families]


def _has(module: str, name: str) -> bool:
    return hasattr(importlib.import_module(module), name)


def _structured(rng: random.Random, data: bytes, others: Sequence[bytes]) -> bytes:
    return mutate.mutate_structured(rng, data, others)
