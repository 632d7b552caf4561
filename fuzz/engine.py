"""The fuzz loop: mutate, call, classify, minimise, save, summarise.

Input ``i`` of a run goes to reader ``i mod len(schedule)`` (in-process calls get three
slots for each CLI run's one) and is made by ``random.Random(f"{seed}:{i}")``: a run is
reproducible from its seed, and a shorter run (fewer inputs, or stopped by the time
limit) is a prefix of a longer one.

Outcomes: *ok* (the reader returned, nothing to report), *findings* (it returned
diagnostics, or the CLI exited 1), *errors* (it raised an MrcPlanError: a refusal, exit 2
or 3 at the CLI) and *failures*: any other exception, a timeout, exit 101, a traceback in
the CLI's output.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
import types
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzz.targets import ROOT, Context, Files, ReachedSparkError, Reader, no_spark, quiet

MARKER = ".mrc-plan-fuzz"


class FuzzTimeoutError(BaseException):
    """One input took longer than the per-input limit (a hang, or quadratic work)."""


@dataclass
class Failure:
    reader: str
    level: str
    exc_type: str
    message: str
    where: str
    trace: str
    files: Files
    index: int
    args: list[str] = field(default_factory=list)
    saved: str = ""
    inputs: str = ""  # the directory the input files were written to

    @property
    def signature(self) -> tuple[str, str, str]:
        return (self.reader, self.exc_type, self.where)


@dataclass
class Stats:
    reader: str
    level: str
    inputs: int = 0
    ok: int = 0
    findings: int = 0
    errors: int = 0
    failures: int = 0
    distinct: dict[tuple[str, str, str], Failure] = field(default_factory=dict)


@dataclass
class RunResult:
    seed: int
    inputs: int
    seconds: float
    stats: list[Stats]
    failures: list[Failure]  # the first of each distinct signature, minimised

    @property
    def failed(self) -> int:
        return sum(s.failures for s in self.stats)


# -- classification ----------------------------------------------------------------------


def _where(tb: types.TracebackType | None) -> str:
    """The innermost frame in the project's code (placement/ or cli/)."""
    best = ""
    for frame, line in traceback.walk_tb(tb):
        path = Path(frame.f_code.co_filename)
        try:
            rel = path.resolve().relative_to(ROOT)
        except ValueError:
            continue
        if rel.parts and rel.parts[0] in ("placement", "cli"):
            best = f"{rel}:{line} in {frame.f_code.co_name}"
    if not best:
        frames = list(traceback.walk_tb(tb))
        if frames:
            code = frames[-1][0].f_code
            best = f"{Path(code.co_filename).name} in {code.co_name}"
    return best


def _failure(reader: Reader, exc: BaseException, files: Files, index: int) -> Failure:
    return Failure(
        reader.name,
        reader.level,
        type(exc).__name__,
        _short(str(exc)),
        _where(exc.__traceback__),
        "".join(traceback.format_exception(exc)),
        files,
        index,
    )


def _short(text: str, limit: int = 300) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + "..."


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(*_: object) -> None:
        raise FuzzTimeoutError(f"no answer within {seconds:g} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _write(base: Path, files: Files) -> Path:
    if base.exists():
        shutil.rmtree(base)
    inp = base / "in"
    inp.mkdir(parents=True)
    for rel, data in files.items():
        path = inp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return inp


@contextlib.contextmanager
def _recorder() -> Iterator[list[BaseException]]:
    """While a CLI command runs: its handler of unexpected exceptions records them (to
    name the exception of an exit 101) instead of printing a traceback."""
    seen: list[BaseException] = []
    try:
        errors: Any = importlib.import_module("mrc_plan_cli.errors")
    except ImportError:
        yield seen
        return
    if not hasattr(errors, "debug") or not hasattr(errors, "traceback"):
        yield seen
        return

    def print_exc(*_: object, **__: object) -> None:
        exc = sys.exc_info()[1]
        if exc is not None:
            seen.append(exc)

    saved = errors.debug, errors.traceback
    errors.debug = lambda: True
    module = {n: getattr(traceback, n) for n in dir(traceback) if not n.startswith("_")}
    errors.traceback = types.SimpleNamespace(**{**module, "print_exc": print_exc})
    try:
        yield seen
    finally:
        errors.debug, errors.traceback = saved


class _CliFailureError(Exception):
    """A CLI run that exited 101 or printed a traceback, with what is known about why."""


def run_input(
    reader: Reader,
    files: Files,
    ctx: Context,
    base: Path,
    index: int,
    rng: random.Random,
    timeout: float,
) -> tuple[str, Failure | None, list[str]]:
    """Run one input; the outcome (ok, findings, error, failure) and the failure if any."""
    inp = _write(base, files)
    path = inp if reader.target == "." else inp / reader.target
    args: list[str] = []
    spark = no_spark() if reader.spark else contextlib.nullcontext()
    try:
        with _time_limit(timeout), spark:
            if reader.cli is not None:
                args = reader.cli(path, ctx, rng)
                outcome = _run_cli(args)
            else:
                assert reader.call is not None
                with quiet():
                    result = reader.call(path, ctx)
                outcome = "findings" if _is_findings(result) else "ok"
    except ReachedSparkError:
        outcome = "ok"
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        from placement.errors import MrcPlanError

        if isinstance(exc, MrcPlanError):
            return "error", None, args
        failure = _failure(reader, exc, files, index)
        if isinstance(exc, _CliFailureError) and exc.__cause__ is not None:
            cause = exc.__cause__
            failure.exc_type = type(cause).__name__
            failure.message = _short(str(cause))
            failure.where = _where(cause.__traceback__)
            failure.trace = str(exc) + "\n\n" + "".join(traceback.format_exception(cause))
        elif isinstance(exc, _CliFailureError):
            failure.exc_type = "Exit101" if "exit 101" in str(exc) else "Traceback"
            failure.where = ""
        failure.args = args
        failure.inputs = str(inp)
        return "failure", failure, args
    return outcome, None, args


def _is_findings(result: object) -> bool:
    """A non-empty list of diagnostics (validate); other results are just *ok*."""
    return isinstance(result, list) and bool(result) and type(result[0]).__name__ == "Diagnostic"


def _run_cli(args: list[str]) -> str:
    from typer.testing import CliRunner

    app = importlib.import_module("mrc_plan_cli.main").app
    with _recorder() as seen:
        result = CliRunner().invoke(app, args)
    output = result.output
    stderr = getattr(result, "stderr", "")
    if isinstance(result.exception, ReachedSparkError):
        return "ok"
    if isinstance(result.exception, FuzzTimeoutError):
        raise result.exception
    unexpected = [e for e in seen if not _is_mrc(e)]
    if result.exit_code == 101 or "Traceback (most recent call last)" in output + stderr:
        why = "exit 101" if result.exit_code == 101 else "a traceback in the output"
        raise _CliFailureError(
            f"{why}: mrc-plan {' '.join(args)}\n--- output ---\n{output[-4000:]}"
        ) from (unexpected[-1] if unexpected else None)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    if result.exit_code == 0:
        return "ok"
    if result.exit_code == 1:
        return "findings"
    return "error"


def _is_mrc(exc: BaseException) -> bool:
    from placement.errors import MrcPlanError

    return isinstance(exc, MrcPlanError)


# -- minimisation ------------------------------------------------------------------------


def _ddmin(
    units: list[bytes], ok: Callable[[list[bytes]], bool], left: Callable[[], bool]
) -> list[bytes]:
    """Drop chunks of units (halves, quarters, ... single units) while ``ok`` holds."""
    chunk = max(1, len(units) // 2)
    while chunk >= 1 and left():
        i, changed = 0, False
        while i < len(units) and left():
            candidate = units[:i] + units[i + chunk :]
            if ok(candidate):
                units, changed = candidate, True
            else:
                i += chunk
        if not changed:
            chunk //= 2
    return units


def _json_pass(data: bytes, ok: Callable[[bytes], bool], left: Callable[[], bool]) -> bytes:
    """Delete array elements and object members, largest first, while ``ok`` holds (only
    when the file is JSON the standard library reads, and reads back the same way)."""
    from fuzz.mutate import _nodes

    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return data

    def enc(value: Any) -> bytes:
        return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")

    try:
        if not ok(enc(doc)):
            return data
    except (ValueError, RecursionError):
        return data
    changed = True
    while changed and left():
        changed = False
        for parent, key in _nodes(doc):
            if not left():
                break
            if isinstance(parent, list):
                saved = parent.pop(key)
                if ok(enc(doc)):
                    changed = True
                    break
                parent.insert(key, saved)
            else:
                items = list(parent.items())
                del parent[key]
                if ok(enc(doc)):
                    changed = True
                    break
                parent.clear()
                parent.update(items)
    return enc(doc)


def minimise(
    failure: Failure,
    still_fails: Callable[[Files], bool],
    budget: float,
    max_tries: int = 800,
) -> Files:
    """Smaller files that fail the same way, within ``budget`` seconds: drop whole files,
    then JSON members and elements, then lines, then bytes."""
    deadline = time.monotonic() + budget
    files = dict(failure.files)
    tries = 0

    def left() -> bool:
        return time.monotonic() < deadline and tries < max_tries

    def test(candidate: Files) -> bool:
        nonlocal tries
        tries += 1
        return still_fails(candidate)

    for name in sorted(files):
        if len(files) > 1 and left():
            candidate = {k: v for k, v in files.items() if k != name}
            if test(candidate):
                files = candidate
    for name in sorted(files, key=lambda n: -len(files[n])):
        if name.endswith(".parquet"):
            continue

        def ok(data: bytes, name: str = name) -> bool:
            return test({**files, name: data})

        data = _json_pass(files[name], ok, left)
        lines = _ddmin(data.splitlines(keepends=True), lambda u: ok(b"".join(u)), left)
        data = b"".join(lines)
        units = [data[i : i + 1] for i in range(len(data))]
        files[name] = b"".join(_ddmin(units, lambda u: ok(b"".join(u)), left))
    return files


# -- saving and reporting ----------------------------------------------------------------


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text).strip("-").lower()


def prepare_out(out: Path) -> None:
    """Empty the failures directory of a previous run; refuse a directory we did not make."""
    if out.exists():
        if not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file()):
            raise SystemExit(f"{out}: exists and was not written by the fuzzer; not touching it")
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("written by `python -m fuzz`; emptied at each run\n")


def _tables_text(files: Files) -> str:
    """What the Parquet files of a snapshot reproducer hold, as far as pyarrow can tell."""
    import io

    import pyarrow.parquet as pq

    out = []
    for name in sorted(files):
        if not name.endswith(".parquet"):
            continue
        try:
            table = pq.read_table(io.BytesIO(files[name]))
            rows = [repr(r) for r in table.slice(0, 50).to_pylist()]
            out.append(f"== {name}: {table.num_rows} rows\n{table.schema}\n" + "\n".join(rows))
        except Exception as exc:  # the reproducer may be exactly a file pyarrow cannot read
            out.append(f"== {name}: pyarrow cannot read it: {type(exc).__name__}: {exc}")
    return "\n\n".join(out) + ("\n" if out else "")


def _portable(arg: str, inputs: str, saved: Path, fixtures: Path | None) -> str:
    """A CLI argument with the run's temporary paths replaced by the saved input's."""
    if inputs and arg.startswith(inputs):
        arg = str(saved) + arg[len(inputs) :]
    if fixtures is not None and arg.startswith(str(fixtures)):
        arg = "<fixtures>" + arg[len(str(fixtures)) :]
    return arg


def save(failure: Failure, out: Path, seed: int, fixtures: Path | None = None) -> Path:
    digest = hashlib.sha256("|".join(failure.signature).encode()).hexdigest()[:8]
    target = out / _slug(failure.reader) / f"{failure.exc_type}-{digest}"
    if target.exists():
        shutil.rmtree(target)
    (target / "input").mkdir(parents=True)
    for rel, data in failure.files.items():
        p = target / "input" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    args = [_portable(a, failure.inputs, target / "input", fixtures) for a in failure.args]
    meta = {
        "reader": failure.reader,
        "level": failure.level,
        "exception": failure.exc_type,
        "message": failure.message,
        "where": failure.where,
        "seed": seed,
        "index": failure.index,
        "cli_args": args,
        "fixtures": "<fixtures>: fuzz.targets.write_fixtures (copies of examples/, a snapshot "
        "and plans made from examples/describe.txt)",
        "replay": f".venv/bin/python -m fuzz --replay {target}",
    }
    (target / "failure.json").write_text(json.dumps(meta, indent=2, ensure_ascii=True) + "\n")
    (target / "traceback.txt").write_text(failure.trace, errors="backslashreplace")
    tables = _tables_text(failure.files)
    if tables:
        (target / "tables.txt").write_text(tables, errors="backslashreplace")
    failure.saved = str(target)
    return target


def table(result: RunResult) -> str:
    heads = ("reader", "level", "inputs", "ok", "findings", "errors", "failures", "distinct")
    rows = [
        (s.reader, s.level, s.inputs, s.ok, s.findings, s.errors, s.failures, len(s.distinct))
        for s in result.stats
    ]
    total = (
        "total",
        "",
        *(sum(int(r[i]) for r in rows) for i in range(2, 8)),
    )
    rows.append(total)  # type: ignore[arg-type]
    widths = [max(len(str(r[i])) for r in [heads, *rows]) for i in range(len(heads))]
    lines = []
    for n, row in enumerate([heads, *rows]):
        cells = [
            str(v).ljust(w) if i < 2 else str(v).rjust(w)
            for i, (v, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0 or n == len(rows) - 1:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def failures_text(result: RunResult) -> str:
    lines = []
    for f in result.failures:
        lines.append(f"- {f.reader} [{f.level}]: {f.exc_type}: {f.message}")
        if f.where:
            lines.append(f"    at {f.where}")
        if f.saved:
            lines.append(f"    reproducer: {f.saved}")
    return "\n".join(lines)


# -- the loop ----------------------------------------------------------------------------


def schedule(readers: Sequence[Reader]) -> list[Reader]:
    """Slots in a cycle: in-process calls (share 3) interleaved with CLI runs (share 1)."""
    slots: list[Reader] = []
    rounds = max(r.share for r in readers)
    for k in range(rounds):
        slots.extend(r for r in readers if r.share > k)
    return slots


def run(
    readers: Sequence[Reader],
    ctx: Context,
    *,
    count: int,
    seed: int = 0,
    time_limit: float = 0,
    per_input_timeout: float = 20,
    out: Path | None = None,
    minimise_budget: float = 6,
    progress: Callable[[str], None] = lambda _: None,
) -> RunResult:
    start = time.monotonic()
    slots = schedule(readers)
    stats = {r.name: Stats(r.name, r.level) for r in readers}
    firsts: list[Failure] = []
    if out is not None:
        prepare_out(out)
    work = Path(tempfile.mkdtemp(prefix="mrc-plan-fuzz-"))
    done = 0
    try:
        for i in range(count):
            if time_limit and time.monotonic() - start > time_limit:
                break
            reader = slots[i % len(slots)]
            rng = random.Random(f"{seed}:{i}")
            files = reader.family.mutate(rng)
            outcome, failure, _ = run_input(
                reader, files, ctx, work / "w", i, rng, per_input_timeout
            )
            done += 1
            s = stats[reader.name]
            s.inputs += 1
            if outcome == "ok":
                s.ok += 1
            elif outcome == "findings":
                s.findings += 1
            elif outcome == "error":
                s.errors += 1
            else:
                assert failure is not None
                s.failures += 1
                if failure.signature not in s.distinct:
                    _record_first(
                        failure, reader, ctx, work, seed, per_input_timeout, minimise_budget, out
                    )
                    s.distinct[failure.signature] = failure
                    firsts.append(failure)
                    progress(f"[{i}] {reader.name}: {failure.exc_type}: {failure.message[:120]}")
            if i and i % 500 == 0:
                progress(f"{i} inputs, {time.monotonic() - start:.0f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = RunResult(seed, done, time.monotonic() - start, list(stats.values()), firsts)
    if out is not None:
        (out / "summary.txt").write_text(
            table(result) + "\n\n" + failures_text(result) + "\n", errors="backslashreplace"
        )
    return result


def _record_first(
    failure: Failure,
    reader: Reader,
    ctx: Context,
    work: Path,
    seed: int,
    timeout: float,
    budget: float,
    out: Path | None,
) -> None:
    if budget > 0 and failure.exc_type != "FuzzTimeoutError":

        def still_fails(candidate: Files) -> bool:
            rng = random.Random(f"{seed}:{failure.index}:min")
            _, again, _ = run_input(reader, candidate, ctx, work / "m", failure.index, rng, timeout)
            return again is not None and again.signature == failure.signature

        small = minimise(failure, still_fails, budget)
        rng = random.Random(f"{seed}:{failure.index}:min")
        _, again, _ = run_input(reader, small, ctx, work / "m", failure.index, rng, timeout)
        if again is not None and again.signature == failure.signature:
            failure.files = small
            failure.message, failure.trace = again.message, again.trace
            failure.args, failure.inputs = again.args, again.inputs
    if out is not None:
        save(failure, out, seed, ctx.fixtures)


def replay(directory: Path, readers: Sequence[Reader], ctx: Context) -> int:
    """Run a saved reproducer again and print what happens."""
    meta: dict[str, Any] = json.loads((directory / "failure.json").read_text())
    by_name = {r.name: r for r in readers}
    reader = by_name[meta["reader"]]
    root = directory / "input"
    files = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    work = Path(tempfile.mkdtemp(prefix="mrc-plan-fuzz-replay-"))
    try:
        rng = random.Random(f"{meta['seed']}:{meta['index']}:min")
        outcome, failure, args = run_input(reader, files, ctx, work, int(meta["index"]), rng, 60)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{reader.name}: {outcome}" + (f" (mrc-plan {' '.join(args)})" if args else ""))
    if failure is not None:
        print(failure.trace)
        return 1
    return 0
