"""`plan show --format json`: one shape (schema `plan-view`) for a batch directory, one
batch of it and a lone reassignment file; the figures are the summary's, sizes that are
unknown stay null down to each broker, and a summary the text view refuses is refused
here too."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from placement.io.snapshot import write_snapshot
from placement.schemas import schema_filename
from placement.snapshot.synth import SynthSpec, synth

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

Cli = Callable[[list[Any]], Result]


@pytest.fixture
def out_dir(cli: Cli, tmp_path: Path) -> Path:
    """A drain of a synthetic cluster (sizes known) in batches, with a throttle."""
    root = tmp_path
    snap = synth(SynthSpec(12, 3, 4, 12, seed=5)).snapshot
    write_snapshot(root / "snap", snap)
    brokers = [{"id": b["broker_id"], "rack": b["rack"]} for b in snap.brokers.to_pylist()]
    (root / "inv.json").write_text(json.dumps({"brokers": brokers}))
    topics = [
        {"name": t["topic"], "partitions": 12, "placement": json.loads(t["placement"])}
        for t in snap.topics.to_pylist()
    ]
    (root / "topics.json").write_text(json.dumps({"topics": topics}))
    out = root / "batches"
    args = ["assign", "--inventory", root / "inv.json", "--topics", root / "topics.json"]
    args += ["--current", root / "snap", "--drain", "1", "--out-dir", out]
    r = cli([*args, "--batch-size", "3", "--throttle", "10MB"])
    assert r.exit_code == 0, r.stdout + r.stderr
    return out


def _json(cli: Cli, target: Path) -> dict[str, Any]:
    r = cli(["plan", "show", target, "--format", "json"])
    assert r.exit_code == 0, r.stdout + r.stderr
    doc: dict[str, Any] = json.loads(r.stdout)
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((REPO / "schemas" / schema_filename("plan-view")).read_text())
    jsonschema.validate(doc, schema)
    return doc


def test_a_directory_gives_every_batch_and_totals_that_add_up(cli: Cli, out_dir: Path) -> None:
    summary = json.loads((out_dir / "summary.json").read_text())
    doc = _json(cli, out_dir)
    assert doc["kind"] == "batches" and doc["path"] == str(out_dir)
    assert [b["file"] for b in doc["batches"]] == [b["file"] for b in summary["batches"]]
    assert doc["order"] == summary["order"]
    total = doc["total"]
    assert total["batches"] == len(doc["batches"]) >= 2
    assert total["partitions"] == sum(b["partitions"] for b in doc["batches"])
    assert total["replicas_added"] == sum(b["replicas_added"] for b in doc["batches"])
    assert doc["throttle_bytes_per_s"] == summary["throttle_bytes_per_s"] > 0
    assert total["bytes"] == sum(b["bytes"] for b in doc["batches"]) > 0
    assert total["eta_seconds"] > 0
    for b in doc["batches"]:
        assert sum(r["bytes"] for r in b["receivers"]) == b["bytes"]
    assert doc["reassignment"] is None


def test_unknown_sizes_stay_null_down_to_each_broker(cli: Cli, tmp_path: Path) -> None:
    """The example cluster has no sizes: `assign` writes 0 per sender and receiver there,
    and the JSON view must not pass that off as a byte count."""
    out = tmp_path / "batches"
    args = ["assign", "--inventory", EXAMPLES / "inventory-expanded.json", "--rebalance"]
    args += ["--topics", EXAMPLES / "topics-describe.json", "--current", EXAMPLES / "describe.txt"]
    r = cli([*args, "--out-dir", out, "--batch-size", "1"])
    assert r.exit_code == 0, r.stdout + r.stderr
    doc = _json(cli, out)
    assert doc["total"]["bytes"] is None and doc["total"]["eta_seconds"] is None
    for b in doc["batches"]:
        assert b["bytes"] is None and b["senders"] and b["receivers"]
        assert all(r["bytes"] is None for r in b["senders"] + b["receivers"])


def test_one_batch_gives_its_row_only(cli: Cli, out_dir: Path) -> None:
    summary = json.loads((out_dir / "summary.json").read_text())
    second = summary["batches"][1]
    for name in (second["file"], second["rollback"]):
        doc = _json(cli, out_dir / name)
        assert doc["kind"] == "batch" and doc["path"] == str(out_dir / name)
        assert [b["file"] for b in doc["batches"]] == [second["file"]]
        assert doc["total"] is None and doc["leaders"] is None and doc["order"] == []


def test_a_lone_reassignment_file_gives_what_it_lists(cli: Cli, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    entries = [
        {"topic": "orders", "partition": 0, "replicas": [1, 2, 3], "log_dirs": ["any"] * 3},
        {"topic": "orders", "partition": 1, "replicas": [2, 3, 4], "log_dirs": ["any"] * 3},
        {"topic": "audit", "partition": 0, "replicas": [4, 1], "log_dirs": ["any"] * 2},
    ]
    plan.write_text(json.dumps({"version": 1, "partitions": entries}))
    doc = _json(cli, plan)
    assert doc["kind"] == "reassignment" and doc["batches"] == [] and doc["total"] is None
    assert doc["reassignment"] == {"partitions": 3, "topics": 2, "replicas": 8, "brokers": 4}


def test_json_and_text_refuse_the_same_summary(cli: Cli, out_dir: Path) -> None:
    doc = json.loads((out_dir / "summary.json").read_text())
    first = doc["batches"][0]
    bad = {
        "partitions a string": doc | {"batches": [first | {"partitions": "1"}]},
        "no total": {k: v for k, v in doc.items() if k != "total"},
    }
    for kind, value in bad.items():
        (out_dir / "summary.json").write_text(json.dumps(value))
        for fmt in ("text", "json"):
            r = cli(["plan", "show", out_dir, "--format", fmt])
            assert r.exit_code == 2, (kind, fmt, r.stdout + r.stderr)
            assert "summary.json" in r.stderr


def test_what_only_the_json_view_reads_is_refused_not_crashed(cli: Cli, out_dir: Path) -> None:
    """The text view never prints a sender's bytes; the JSON view does, so a hand-edited
    one is an input error (exit 2), not a validation traceback (exit 101)."""
    doc = json.loads((out_dir / "summary.json").read_text())
    first = doc["batches"][0]
    sender = {"broker": 1, "bytes": "lots"}
    (out_dir / "summary.json").write_text(
        json.dumps(doc | {"batches": [first | {"senders": [sender]}]})
    )
    assert cli(["plan", "show", out_dir]).exit_code == 0
    r = cli(["plan", "show", out_dir, "--format", "json"])
    assert r.exit_code == 2, r.stdout + r.stderr
    assert "summary.json" in r.stderr and "senders" in r.stderr
