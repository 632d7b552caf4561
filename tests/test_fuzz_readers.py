"""A short slice of the reader fuzzer (`make fuzz` runs the full one, >= 10,000 inputs).

Every reader gets mutated inputs (policies, properties, describe output, inventories,
topics files, reassignment JSON and plans, snapshots, sizes, summary.json), in-process and
through the CLI: a reader may return findings or raise an MrcPlanError, nothing else; the
CLI never exits 101 nor prints a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the fuzzer lives at the repo root, beside placement/ and cli/
    sys.path.insert(0, str(ROOT))

from fuzz import engine, targets  # noqa: E402

SLICE = 600


@pytest.fixture(scope="module")
def fuzz_context(tmp_path_factory: pytest.TempPathFactory) -> targets.Context:
    return targets.write_fixtures(tmp_path_factory.mktemp("fuzz-fixtures"))


def test_every_family_has_seeds_and_readers(fuzz_context: targets.Context) -> None:
    readers = targets.build(fuzz_context)
    families = {r.family.name for r in readers}
    assert families >= {
        "policy",
        "properties",
        "describe",
        "inventory-json",
        "inventory-csv",
        "inventory-dir",
        "topics",
        "reassignment",
        "plan",
        "snapshot",
        "sizes",
        "summary",
        "logdirs",
        "replica-status",
        "staging",
    }
    assert all(r.family.seeds for r in readers)
    assert {r.level for r in readers} == {"lib", "cli"}
    # the slice reaches every reader at least once
    assert len(engine.schedule(readers)) <= SLICE


def test_mutation_is_deterministic(fuzz_context: targets.Context) -> None:
    import random

    for reader in targets.build(fuzz_context):
        a = reader.family.mutate(random.Random(f"7:{reader.name}"))
        b = reader.family.mutate(random.Random(f"7:{reader.name}"))
        assert a == b, reader.name


@pytest.mark.slow  # the fast tier leaves it to make test
def test_no_reader_crashes_on_mutated_input(fuzz_context: targets.Context, tmp_path: Path) -> None:
    readers = targets.build(fuzz_context)
    out = tmp_path / "fuzz-failures"
    result = engine.run(readers, fuzz_context, count=SLICE, seed=1, out=out, minimise_budget=0)
    assert result.inputs == SLICE
    assert result.failed == 0, (
        f"{result.failed} failure(s), {len(result.failures)} distinct; reproducers in {out}\n"
        + engine.failures_text(result)
        + "\n\n"
        + engine.table(result)
    )


@pytest.mark.slow  # the fast tier leaves it to make test
def test_staging_agrees_with_the_in_process_reader(
    fuzz_context: targets.Context, tmp_path: Path
) -> None:
    """Snapshots with oddly named and oddly typed part files, and JSON Lines with split
    records: `read_table` and the files staged for Spark refuse alike or hold the same
    rows (Spark itself: `test_spark_reads_the_staged_files_of_mutated_snapshots`)."""
    readers = [r for r in targets.build(fuzz_context) if r.family.name == "staging"]
    assert len(readers) == 3
    result = engine.run(readers, fuzz_context, count=140, seed=5, minimise_budget=0)
    assert result.failed == 0, engine.failures_text(result) + "\n\n" + engine.table(result)
    agree = next(s for s in result.stats if s.reader.startswith("staging agrees"))
    assert agree.ok and agree.errors  # both accepted and refused inputs were reached


def test_a_disagreement_with_the_staged_files_is_a_failure(
    fuzz_context: targets.Context, monkeypatch: pytest.MonkeyPatch
) -> None:
    import placement.io.snapshot as snapshot

    real = snapshot.stage_partitions

    def skipping(root: Path, into: Path) -> object:
        staged = real(root, into)
        staged.files[0].unlink()  # Spark would read fewer rows than the check
        return staged

    monkeypatch.setattr(snapshot, "stage_partitions", skipping)
    reader = next(r for r in targets.build(fuzz_context) if r.name.startswith("staging agrees"))
    fixed = targets.Family("fixed", None, [targets._dir_seed(fuzz_context.snapshot)], _identity)
    reader = targets.Reader(reader.name, fixed, ".", reader.call)
    result = engine.run([reader], fuzz_context, count=1, minimise_budget=0)
    assert result.failed == 1


@pytest.mark.spark
def test_spark_reads_the_staged_files_of_mutated_snapshots(
    fuzz_context: targets.Context, spark: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fuzz import staging

    sample = staging.SparkSample(every=1, session=spark)
    monkeypatch.setattr(staging, "SPARK", sample)
    reader = next(r for r in targets.build(fuzz_context) if r.name.startswith("staging agrees"))
    result = engine.run([reader], fuzz_context, count=8, seed=2, minimise_budget=0)
    assert result.failed == 0, engine.failures_text(result)
    assert sample.sampled == sample.accepted > 0
    sample.stop()  # not ours: the shared session goes on
    assert spark.range(2).count() == 2  # type: ignore[attr-defined]


# -- the harness itself: a crash is never counted as a pass ----------------------------


def _family(data: bytes) -> targets.Family:
    return targets.Family("t", "x.txt", [{"x.txt": data}], lambda rng, d, others: d)


def test_outcomes_are_classified(fuzz_context: targets.Context, tmp_path: Path) -> None:
    from placement.errors import InputError

    def crash(p: Path, c: targets.Context) -> object:
        if b"k" in p.read_bytes():
            raise KeyError("k")
        return None

    def refuse(p: Path, c: targets.Context) -> object:
        raise InputError(str(p), "no")

    fam = _family(b"aaaaaaaakaaaaaaaa\naaaa\n")
    readers = [
        targets.Reader("crash", fam, "x.txt", crash),
        targets.Reader("refuse", fam, "x.txt", refuse),
        targets.Reader("fine", fam, "x.txt", lambda p, c: None),
    ]
    out = tmp_path / "failures"
    result = engine.run(readers, fuzz_context, count=6, out=out, minimise_budget=5)
    by_name = {s.reader: s for s in result.stats}
    assert (by_name["crash"].failures, by_name["refuse"].errors, by_name["fine"].ok) == (2, 2, 2)
    assert result.failed == 2 and len(result.failures) == 1
    saved = Path(result.failures[0].saved)
    assert (saved / "input" / "x.txt").read_bytes() == b"k"  # minimised
    assert '"exception": "KeyError"' in (saved / "failure.json").read_text()


def test_a_cli_exit_101_is_a_failure(
    fuzz_context: targets.Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import placement.snapshot.facts

    def broken(*_: object) -> object:
        raise ZeroDivisionError("planted")

    monkeypatch.setattr(placement.snapshot.facts, "summarize", broken)
    snap = targets.Family("snap", None, [targets._dir_seed(fuzz_context.snapshot)], _identity)
    reader = targets.Reader(
        "cli snapshot show", snap, ".", cli=lambda p, c, r: ["snapshot", "show", str(p)]
    )
    result = engine.run([reader], fuzz_context, count=1, minimise_budget=0)
    assert result.failed == 1
    assert result.failures[0].exc_type == "ZeroDivisionError"


def _identity(rng: object, data: bytes, others: object) -> bytes:
    return data
