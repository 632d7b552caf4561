"""What Spark is given to read: the user's path literally (not a Hadoop glob), and only
partitions the driver-side scan accepted (as the in-process readers do)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from placement.errors import InputError
from placement.io.reassignment import render_reassignment
from placement.io.snapshot import read_snapshot
from placement.model.assignment import PartitionAssignment
from placement.score.report import SnapshotInfo
from placement.score.run import read_plan, run_score
from placement.score.simulate import run_simulate

pytestmark = pytest.mark.spark


def _scored(spark: Any, root: Path) -> SnapshotInfo:
    """The snapshot as `score` reads it, through its entry point on the shared session."""
    return run_score(root, master=spark.sparkContext.master).snapshot


Synth = Callable[..., Path]


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory, synth_snapshot: Synth) -> Path:
    """`s[1]` (12 partitions) next to `s1` (10 partitions): as a glob `s[1]` means `s1`."""
    root = tmp_path_factory.mktemp("glob")
    synth_snapshot(root / "s[1]", topics=3, per_topic=4)
    synth_snapshot(root / "s1", topics=2, per_topic=5)
    return root


def test_score_and_simulate_read_the_directory_named_not_the_glob(spark: Any, pair: Path) -> None:
    assert _scored(spark, pair / "s[1]").partitions == 12
    assert _scored(spark, pair / "s1").partitions == 10
    report, _ = run_simulate(pair / "s[1]", fail_brokers=[1])
    assert sum(t.partitions for t in report.topics) == 12


def test_snapshot_star_is_not_a_wildcard(spark: Any, synth_snapshot: Synth, tmp_path: Path) -> None:
    synth_snapshot(tmp_path / "snapshot", topics=2, per_topic=5)
    (tmp_path / "snap*").mkdir()  # not a snapshot: refused, not read as `snapshot`
    with pytest.raises(InputError):
        _scored(spark, tmp_path / "snap*")
    shutil.rmtree(tmp_path / "snap*")
    synth_snapshot(tmp_path / "snap*", topics=3, per_topic=4)
    assert _scored(spark, tmp_path / "snap*").partitions == 12


def test_plan_file_name_with_glob_characters(spark: Any, pair: Path, tmp_path: Path) -> None:
    """A plan in `assign`'s layout is read by Spark line by line: from its own file."""
    snap = read_snapshot(pair / "s[1]")
    rows = snap.partitions.to_pylist()

    def plan(n: int) -> str:
        return render_reassignment(
            PartitionAssignment(r["topic"], r["partition"], tuple(r["replicas"][::-1]))
            for r in rows[:n]
        )

    (tmp_path / "p[1].json").write_text(plan(3))
    (tmp_path / "p1.json").write_text(plan(5))
    assert read_plan(spark, tmp_path / "p[1].json").count() == 3


def test_a_snapshot_path_that_is_not_utf8_is_read_through_its_staged_copy(
    spark: Any, pair: Path, tmp_path: Path
) -> None:
    """Spark cannot open a path that is not UTF-8; it is given the staged copies (under
    names of ours), so such a snapshot scores as any other."""
    odd = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/s\xff"))
    shutil.copytree(pair / "s1", odd)
    assert _scored(spark, odd).partitions == 10


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("duplicate", "appears more than once"),
        ("null", "null broker id"),
        ("negative", "negative broker id"),
        ("topic", "Kafka allows only"),
    ],
)
def test_spark_path_refuses_rows_kafka_would(
    spark: Any, pair: Path, tmp_path: Path, damage: str, message: str
) -> None:
    snap = tmp_path / "snap"
    shutil.copytree(pair / "s1", snap)
    (part,) = sorted((snap / "partitions").glob("*.parquet"))
    table = pq.read_table(part)
    if damage == "duplicate":
        table = pa.concat_tables([table, table.slice(0, 1)])
    elif damage == "topic":
        topics = table.column("topic").to_pylist()
        topics[3] = "a/b"
        table = table.set_column(0, "topic", pa.array(topics, pa.string()))
    else:
        replicas = table.column("replicas").to_pylist()
        replicas[3] = [replicas[3][0], None if damage == "null" else -4]
        i = table.column_names.index("replicas")
        table = table.set_column(i, "replicas", pa.array(replicas, pa.list_(pa.int32())))
    pq.write_table(table, part)
    with pytest.raises(InputError, match=message) as err:
        _scored(spark, snap)
    assert str(snap) in err.value.path
    with pytest.raises(InputError, match=message):
        run_simulate(snap, fail_brokers=[1])


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting Spark fails the test: what is refused must be refused before it starts."""
    import placement.score.session as session

    def build_session(*args: object, **kwargs: object) -> None:
        raise AssertionError("Spark started before the inputs were checked")

    monkeypatch.setattr(session, "build_session", build_session)


@pytest.mark.usefixtures("no_spark")
def test_bad_rows_fail_before_spark_starts(pair: Path, tmp_path: Path) -> None:
    """`score` and `simulate` scan the partitions on the driver before starting Spark."""
    from placement.score.run import run_score

    snap = tmp_path / "snap"
    shutil.copytree(pair / "s1", snap)
    (part,) = sorted((snap / "partitions").glob("*.parquet"))
    table = pq.read_table(part)
    pq.write_table(pa.concat_tables([table, table.slice(2, 1)]), part)
    with pytest.raises(InputError, match="appears more than once"):
        run_score(snap, [])
    with pytest.raises(InputError, match="appears more than once"):
        run_simulate(snap, fail_brokers=[1])


@pytest.mark.usefixtures("no_spark")
def test_non_utf8_plan_paths_are_refused_before_spark_starts(pair: Path, tmp_path: Path) -> None:
    """(A snapshot's path never reaches Spark: it reads the staged copies.)"""
    from placement.score.run import run_score

    rows = read_snapshot(pair / "s1").partitions.to_pylist()[:2]
    plan = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/p\xfe.json"))
    plan.write_text(
        render_reassignment(
            PartitionAssignment(r["topic"], r["partition"], tuple(r["replicas"][::-1]))
            for r in rows
        )
    )
    for run in (
        lambda: run_score(pair / "s1", [plan]),
        lambda: run_simulate(pair / "s1", fail_brokers=[1], plan=plan),
    ):
        with pytest.raises(InputError, match="not UTF-8") as err:
            run()
        assert err.value.path == str(plan)
