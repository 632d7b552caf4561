"""`--sizes` on `snapshot from-describe` and `assign`: a CSV or kafka-log-dirs output, the
notes on stderr, and clear refusals."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from placement.io.snapshot import read_snapshot

ROOT = Path(__file__).parent.parent.parent
EXAMPLES = ROOT / "examples"
INV = EXAMPLES / "inventory.json"
DESCRIBE = EXAMPLES / "describe.txt"
LOG_DIRS = EXAMPLES / "log-dirs.txt"
CSV = EXAMPLES / "sizes.csv"
TOPICS = EXAMPLES / "topics-describe.json"  # fits describe.txt's cluster
Cli = Callable[..., Result]


def _snapshot_sizes(path: Path) -> dict[tuple[str, int], int | None]:
    rows = read_snapshot(path).partitions.to_pylist()
    return {(r["topic"], r["partition"]): r["size_bytes"] for r in rows}


def _from_describe(cli: Cli, out: Path, sizes: Path) -> Result:
    return cli(
        ["snapshot", "from-describe", DESCRIBE, "--inventory", INV, "--sizes", sizes, "--out", out]
    )


def test_from_describe_takes_log_dirs_output_as_it_takes_the_csv(cli: Cli, tmp_path: Path) -> None:
    r = _from_describe(cli, tmp_path / "ld", LOG_DIRS)
    assert r.exit_code == 0, r.output
    c = _from_describe(cli, tmp_path / "csv", CSV)
    assert c.exit_code == 0, c.output
    sizes = _snapshot_sizes(tmp_path / "ld")
    assert sizes == _snapshot_sizes(tmp_path / "csv")
    assert None not in sizes.values()
    notes = [line for line in r.stderr.splitlines() if line.startswith("note: ")]
    assert len(notes) == 3
    assert "broker 3 /var/lib/kafka/data2: KafkaStorageException" in notes[0]
    assert "legacy-events-0 on broker 5 /var/lib/kafka/data2" in notes[1]
    assert "legacy-events-1: 943,718,400 to 1,181,116,006 bytes" in notes[2]
    assert "note:" not in c.stderr  # the CSV covers the cluster and says nothing more


def test_from_describe_notes_partitions_without_a_size(cli: Cli, tmp_path: Path) -> None:
    sizes = tmp_path / "sizes.csv"
    sizes.write_text("topic,partition,size_bytes\norders,0,5\nelsewhere,0,1\n")
    r = _from_describe(cli, tmp_path / "snap", sizes)
    assert r.exit_code == 0, r.output
    assert f"4 of the 5 partitions of {DESCRIBE} have no size in {sizes}" in r.stderr
    assert "1 partitions in" in r.stderr and "elsewhere-0" in r.stderr
    assert _snapshot_sizes(tmp_path / "snap")[("orders", 1)] is None


def test_garbage_sizes_are_one_clear_line(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "snap"
    for text, where, words in [
        ('{"version":1,"brokers":[{"broker":1,"logDirs":[}]}\n', ":1:48:", "expected a value"),
        ('[{"partition":"a-0","size":1}]\n', ":1:1:", "not a sizes file"),
        ("Querying brokers for log directories information\nboom\n", ":2:1:", "expected the"),
    ]:
        bad = tmp_path / "sizes.txt"
        bad.write_text(text)
        r = _from_describe(cli, out, bad)
        assert r.exit_code == 2, r.output
        (error, hint) = r.stderr.splitlines()
        assert error.startswith(f"error: {bad}{where}") and words in error
        assert hint.startswith("hint: ")
        assert not out.exists()


def _bytes_line(r: Result) -> str:
    (line,) = [s for s in r.stderr.splitlines() if "bytes to move" in s]
    return line


def test_assign_reads_sizes_beside_describe_output(cli: Cli, tmp_path: Path) -> None:
    base = ["assign", "--inventory", INV, "--topics", TOPICS, "--drain", "2"]
    without = cli([*base, "--current", DESCRIBE, "--out", tmp_path / "a.json"])
    assert without.exit_code == 0, without.output
    assert "unknown (no partition sizes)" in _bytes_line(without)
    ld = cli([*base, "--current", DESCRIBE, "--sizes", LOG_DIRS, "--out", tmp_path / "b.json"])
    assert ld.exit_code == 0, ld.output
    moved = re.search(r"bytes to move: ([\d,]+)", _bytes_line(ld))
    assert moved is not None and int(moved[1].replace(",", "")) > 0
    assert "KafkaStorageException" in ld.stderr  # the log-dirs notes come along
    csv = cli([*base, "--current", DESCRIBE, "--sizes", CSV, "--out", tmp_path / "c.json"])
    assert _bytes_line(csv) == _bytes_line(ld)
    assert (tmp_path / "b.json").read_bytes() == (tmp_path / "c.json").read_bytes()


def test_assign_batches_count_the_bytes_of_the_sizes_file(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "batches"
    args = ["assign", "--inventory", INV, "--topics", TOPICS, "--current", DESCRIBE]
    r = cli([*args, "--sizes", LOG_DIRS, "--drain", "2", "--out-dir", out, "--batch-size", "1"])
    assert r.exit_code == 0, r.output
    summary = json.loads((out / "summary.json").read_text())
    assert all(b["bytes"] is not None and b["bytes"] > 0 for b in summary["batches"])


def test_assign_sizes_replace_a_snapshots_own(cli: Cli, tmp_path: Path) -> None:
    snap = tmp_path / "snap"
    assert _from_describe(cli, snap, CSV).exit_code == 0
    smaller = tmp_path / "sizes.csv"
    rows = CSV.read_text().splitlines()
    smaller.write_text("\n".join([rows[0], *(f"{r.rsplit(',', 1)[0]},1" for r in rows[1:])]))
    args = ["assign", "--inventory", INV, "--topics", TOPICS, "--current", snap, "--drain", "2"]
    own = cli([*args, "--out", tmp_path / "a.json"])
    replaced = cli([*args, "--sizes", smaller, "--out", tmp_path / "b.json"])
    assert replaced.exit_code == 0, replaced.output
    assert f"note: --sizes {smaller} replaces the partition sizes in the snapshot" in (
        replaced.stderr
    )
    moved = re.search(r"bytes to move: ([\d,]+)", _bytes_line(replaced))
    assert moved is not None and 0 < int(moved[1]) <= 5  # one byte per partition moved
    assert _bytes_line(own) != _bytes_line(replaced)


def test_assign_sizes_need_a_current_state(cli: Cli, tmp_path: Path) -> None:
    r = cli(["assign", "--inventory", INV, "--topics", TOPICS, "--sizes", LOG_DIRS])
    assert r.exit_code == 2
    assert "--sizes gives the sizes of the current partitions: use it with --current" in r.stderr
    assert r.stdout == ""


def test_assign_refuses_a_bad_sizes_file_before_writing(cli: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "ld.txt"
    bad.write_text(LOG_DIRS.read_text().replace('"size":52613349376', '"size":-1', 1))
    out = tmp_path / "plan.json"
    args = ["assign", "--inventory", INV, "--topics", TOPICS, "--current", DESCRIBE]
    r = cli([*args, "--sizes", bad, "--drain", "2", "--out", out])
    assert r.exit_code == 2
    assert re.search(rf"error: {re.escape(str(bad))}:3:\d+: \"size\" must be", r.stderr)
    assert not out.exists()
