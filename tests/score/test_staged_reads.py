"""Spark reads exactly the bytes the driver checked: the staged copies of the partitions
table (`placement.io.snapshot.stage_partitions`), never the user's files again. Each test
scores a changed copy of one snapshot on the shared session and expects the figures of
the snapshot as it was checked."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import Result

from placement.score import run
from placement.score.run import run_score
from placement.score.simulate import run_simulate

pytestmark = pytest.mark.spark
Cli = Callable[..., Result]
Synth = Callable[..., Path]


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory, synth_snapshot: Synth) -> Path:
    """12 partitions, some breaking their policy, in one part file."""
    root = tmp_path_factory.mktemp("staged") / "clean"
    return synth_snapshot(root, "--violations", "0.4", "--seed", "5", topics=3, per_topic=4)


def _figures(spark: Any, root: Path) -> dict[str, Any]:
    report = run_score(root, master=spark.sparkContext.master)
    return report.model_dump(mode="json")


@pytest.fixture(scope="module")
def expected(spark: Any, clean: Path) -> dict[str, Any]:
    figures = _figures(spark, clean)
    assert figures["snapshot"]["partitions"] == 12 and figures["baseline"]["violations"] > 0
    return figures


@pytest.fixture
def snap(clean: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(clean, tmp_path / "snap"))


def _part(root: Path) -> Path:
    (part,) = sorted((root / "partitions").glob("*.parquet"))
    return part


def _compliant(table: pa.Table) -> pa.Table:
    """``table`` with every partition on brokers 1, 2, 3 only (one rack in synth's
    layout): scored, they change the figures."""
    replicas = [[1, 2, 3][: len(r)] for r in table.column("replicas").to_pylist()]
    i = table.column_names.index("replicas")
    table = table.set_column(i, "replicas", pa.array(replicas, pa.list_(pa.int32())))
    for column in ("observers", "isr"):
        if column in table.column_names:
            j = table.column_names.index(column)
            table = table.set_column(j, column, pa.nulls(table.num_rows, table.schema[j].type))
    return table


def test_rows_in_files_the_check_skips_are_not_scored(
    spark: Any, snap: Path, expected: dict[str, Any]
) -> None:
    """Spark reads `_x=1.parquet` (a `=` makes it a partition directory to Hadoop); the
    check, like every in-process reader, skips it: its rows (a duplicate partition, a
    negative broker id, a null topic) must not be scored either."""
    table = pq.read_table(_part(snap))
    bad = _compliant(table.slice(0, 2)).to_pylist()
    bad[1]["replicas"] = [1, -4]
    bad.append({**bad[0], "topic": None, "partition": 99})
    schema = pa.schema([f.with_nullable(True) for f in table.schema])
    pq.write_table(pa.Table.from_pylist(bad, schema), snap / "partitions" / "_x=1.parquet")
    (snap / "partitions" / "_SUCCESS").write_bytes(b"")
    assert _figures(spark, snap) == expected
    report, _ = run_simulate(snap, fail_brokers=[1], master=spark.sparkContext.master)
    assert sum(t.partitions for t in report.topics) == 12


def test_int64_ids_and_a_colon_in_a_file_name_score_like_the_snapshot(
    spark: Any, snap: Path, expected: dict[str, Any], cli: Cli
) -> None:
    """docs/formats.md allows any integer type for ids (the pyarrow readers cast them);
    Hadoop reads `part:0.parquet` as a URI. Both score as the snapshot they hold."""
    part = _part(snap)
    table = pq.read_table(part)
    wide = pa.schema(
        [
            f.with_type(
                pa.list_(pa.int64())
                if pa.types.is_list(f.type)
                else pa.int64()
                if f.type == pa.int32()
                else f.type
            )
            for f in table.schema
        ]
    )
    pq.write_table(table.cast(wide), part.with_name("part:0.parquet"))
    part.unlink()
    master = spark.sparkContext.master
    r = cli(["score", "--snapshot", snap, "--master", master, "--format", "json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["snapshot"] == expected["snapshot"]
    assert report["baseline"] == expected["baseline"]


def test_a_file_swapped_after_the_check_does_not_reach_spark(
    spark: Any, snap: Path, expected: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whoever can write the snapshot replaces the part file after the check, before
    Spark opens it: Spark still scores the bytes that were checked."""
    part = _part(snap)
    swapped = _compliant(pq.read_table(part))
    real = run.read_partitions
    swaps: list[Path] = []

    def swapping(*args: Any, **kwargs: Any) -> Any:
        pq.write_table(swapped, part)
        swaps.append(part)
        return real(*args, **kwargs)

    monkeypatch.setattr(run, "read_partitions", swapping)
    assert _figures(spark, snap) == expected
    assert swaps
    monkeypatch.setattr(run, "read_partitions", real)
    assert _figures(spark, snap) != expected  # what was swapped in does score otherwise


def test_a_jsonl_table_scores_like_its_parquet(
    spark: Any, snap: Path, expected: dict[str, Any]
) -> None:
    table = pq.read_table(_part(snap))
    shutil.rmtree(snap / "partitions")
    with open(snap / "partitions.jsonl", "w", encoding="utf-8") as fh:
        for row in table.to_pylist():
            fh.write(json.dumps(row) + "\n")
    assert _figures(spark, snap) == expected
