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
