"""The audit of a cluster's state (MRC9xx): the explanation agrees with the vectorised
violation check, the ISR state of each partition, and `validate` on snapshots (positions
at table rows, racks from the brokers table or the inventory, the per-file cap)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _helpers import positions
from _violation_cases import CASES, RACKS, STRETCHED, Case, case_snapshot

import placement.rules.partitions
from placement.io.inventory import load_inventory
from placement.io.snapshot import (
    BROKERS,
    PARTITIONS,
    TOPICS,
    Snapshot,
    snapshot_policies,
    write_snapshot,
)
from placement.model.diagnostic import Diagnostic, Severity
from placement.rules.partitions import explain_rows, isr_state, violation_mask
from placement.rules.validate import ValidateOptions, validate_paths

REPO = Path(__file__).resolve().parents[2]
INVENTORY = REPO / "examples" / "inventory.json"
POLICY = STRETCHED  # sync: 2 in west, 1 in east; one observer in central
DESCRIBE = REPO / "tests" / "fixtures" / "describe"


def at(path: Path, line: int, label: str) -> tuple[int, int]:
    """The position of the value of ``label`` on ``line`` of a describe file."""
    text = path.read_text().splitlines()[line - 1]
    return line, text.index(f"{label}: ") + len(label) + 3


BY_ID = pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])


@BY_ID
def test_the_explanation_names_a_problem_exactly_when_the_mask_flags(case: Case) -> None:
    """One definition, two spellings: what `validate` and `snapshot show --violations` say
    is wrong, and what every count (numpy) flags."""
    snap = case_snapshot(case)
    flagged = bool(violation_mask(snap)[0])
    assert flagged is case.violates
    if case.policy is None or not case.listed:
        return  # no policy to explain against
    policies = snapshot_policies("cases", snap.topics)
    (violation,) = explain_rows(snap, [0], policies, "the brokers table")
    assert bool(violation.problems) is case.violates, violation.problems
    unknown = {b for b in case.replicas if not RACKS.get(b)}
    for b in unknown:
        assert any(f"broker {b} " in p for p in violation.problems)


def _snapshot(
    rows: list[dict[str, object]], topics: list[dict[str, object]] | None = None
) -> Snapshot:
    brokers = [{"broker_id": b, "rack": r, "capacity_bytes": None} for b, r in RACKS.items()]
    full = [
        {"observers": [], "isr": None, "leader": None, "size_bytes": None, "partition": i, **r}
        for i, r in enumerate(rows)
    ]
    return Snapshot(
        pa.Table.from_pylist(brokers, schema=BROKERS),
        pa.Table.from_pylist(topics or [], schema=TOPICS),
        pa.Table.from_pylist(full, schema=PARTITIONS),
    )


def test_isr_state_of_each_partition() -> None:
    rows: list[dict[str, object]] = [
        {"topic": "t", "replicas": [1, 4, 6], "observers": [6], "isr": [1, 4], "leader": 1},
        {"topic": "t", "replicas": [1, 4, 6], "observers": [6], "isr": [1], "leader": 1},
        {"topic": "t", "replicas": [1, 4, 6], "observers": [6], "isr": [1], "leader": None},
        {"topic": "t", "replicas": [1, 4, 6], "observers": [6], "isr": [], "leader": None},
        {"topic": "t", "replicas": [1, 4, 6], "observers": [6], "isr": None, "leader": None},
        {"topic": "t", "replicas": [1, 4, 6], "observers": [6], "isr": [1, 6], "leader": 1},
        {"topic": "u", "replicas": [1, 4, 5], "isr": [1, 5], "leader": 5},
        {"topic": "u", "replicas": [1, 4, 5], "isr": [5], "leader": 5},
    ]
    snap = _snapshot(rows, [{"topic": "t", "placement": None, "min_isr": 2}])
    state = isr_state(snap)
    assert state.offline.tolist() == [0, 0, 1, 1, 0, 0, 0, 0]
    # t: its own min ISR of 2; u: Kafka's default of 1; a promoted observer counts
    assert state.under_min_isr.tolist() == [0, 1, 0, 0, 0, 0, 0, 0]
    assert state.under_replicated.tolist() == [0, 0, 0, 0, 0, 1, 1, 1]
    assert state.min_isr.tolist() == [2] * 6 + [1] * 2
    # the default stands in for topics without their own, never over it
    assert isr_state(snap, 3).min_isr.tolist() == [2] * 6 + [3] * 2
    assert isr_state(snap, 3).under_min_isr.tolist() == [0, 1, 0, 0, 0, 0, 1, 1]
    # the three are exclusive: each partition has one state at most
    total = state.offline.astype(int) + state.under_min_isr + state.under_replicated
    assert total.max() <= 1


def test_isr_state_of_an_empty_table() -> None:
    state = isr_state(_snapshot([]))
    assert state.offline.size == state.under_min_isr.size == state.under_replicated.size == 0


def _write(root: Path, rows: list[dict[str, object]], placement: str = POLICY) -> Path:
    snap = _snapshot(rows, [{"topic": "t", "placement": placement, "min_isr": 2}])
    write_snapshot(root, snap)
    return root


def _broken(n: int) -> list[dict[str, object]]:
    """``n`` partitions of `t` with every sync replica in west (the policy wants 2 west,
    1 east), each in its ISR."""
    row = {"topic": "t", "replicas": [1, 2, 3, 6], "observers": [6], "isr": [1, 2, 3]}
    return [{**row, "leader": 1} for _ in range(n)]


def _found(*paths: Path, options: ValidateOptions | None = None) -> dict[str, list[Diagnostic]]:
    return validate_paths(list(paths), options or ValidateOptions())


def test_snapshot_findings_point_at_partition_rows(tmp_path: Path) -> None:
    rows: list[dict[str, object]] = [
        {"topic": "t", "replicas": [1, 4, 2, 6], "observers": [6], "isr": [1, 4, 2], "leader": 1},
        *_broken(1),
        {"topic": "t", "replicas": [1, 4, 2, 6], "observers": [6], "isr": [1], "leader": 1},
        {"topic": "t", "replicas": [2, 5, 3, 7], "observers": [7], "isr": [2], "leader": None},
    ]
    root = _write(tmp_path / "snap", rows)
    found = _found(root)
    table = str(root / "partitions" / "part-00000.parquet")
    # every table file checked is listed, the clean ones with no finding
    assert set(found) == {table, str(root / "brokers.parquet"), str(root / "topics.parquet")}
    assert found[str(root / "brokers.parquet")] == found[str(root / "topics.parquet")] == []
    assert positions(found[table]) == [("MRC901", 2, 1), ("MRC902", 4, 1), ("MRC903", 3, 1)]
    (broken,) = [d for d in found[table] if d.code == "MRC901"]
    assert broken.message.startswith("t-1 breaks its topic's placement policy")
    assert 'rack "west": 3 sync replicas, the policy wants 2' in broken.message


def test_rows_count_within_each_part_file(tmp_path: Path) -> None:
    """A table of part files (as Spark writes it): rows restart in each file, in the order
    the snapshot reader joins them."""
    root = _write(tmp_path / "snap", _broken(1))
    parts = root / "partitions"
    good = {"topic": "t", "replicas": [1, 4, 2, 6], "observers": [6], "isr": [1, 4, 2]}
    rows = [{**good, "partition": 7}, {**_broken(1)[0], "partition": 8}]
    full = [{"leader": 1, "size_bytes": None, **r} for r in rows]
    pq.write_table(pa.Table.from_pylist(full, schema=PARTITIONS), parts / "part-00001.parquet")
    found = _found(root)
    assert {f: positions(d) for f, d in found.items() if d} == {
        str(parts / "part-00000.parquet"): [("MRC901", 1, 1)],
        str(parts / "part-00001.parquet"): [("MRC901", 2, 1)],
    }


def test_json_lines_rows_are_the_lines(tmp_path: Path) -> None:
    root = tmp_path / "snap"
    root.mkdir()
    brokers = [{"broker_id": b, "rack": r} for b, r in RACKS.items() if r]
    topics = [{"topic": "t", "placement": POLICY, "min_isr": 2}]
    rows = [*_broken(2), *_broken(1)]
    rows[1] = {"topic": "t", "replicas": [1, 4, 2, 6], "observers": [6], "isr": [1, 4, 2]}
    for name, table in (("brokers", brokers), ("topics", topics)):
        (root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in table))
    lines = [json.dumps({**r, "partition": i, "leader": 1}) + "\n" for i, r in enumerate(rows)]
    (root / "partitions.jsonl").write_text("".join(lines))
    found = _found(root)
    assert positions(found[str(root / "partitions.jsonl")]) == [("MRC901", 1, 1), ("MRC901", 3, 1)]


def test_the_inventory_gives_a_snapshot_its_racks(tmp_path: Path) -> None:
    """With --inventory the brokers table is not used: it has no us-west or us-east, the
    inventory (examples/inventory.json) has."""
    policy = (REPO / "examples" / "placement" / "orders.json").read_text()
    row = {"topic": "t", "replicas": [1, 2, 5, 9], "observers": [9], "isr": [1, 2, 5]}
    root = _write(tmp_path / "snap", [{**row, "leader": 1}], placement=policy)
    own = _found(root)
    assert [d.code for ds in own.values() for d in ds if d.code == "MRC901"] == ["MRC901"]
    options = ValidateOptions(inventory=load_inventory(INVENTORY))
    assert [d.code for ds in _found(root, options=options).values() for d in ds] == []


def test_an_invalid_policy_is_a_finding_and_its_partitions_are_not_audited(
    tmp_path: Path,
) -> None:
    root = _write(tmp_path / "snap", _broken(2), placement='{"version": 3, "replicas": []}')
    found = _found(root)
    topics = str(root / "topics.parquet")
    assert {f for f, d in found.items() if d} == {topics}
    assert {d.code for d in found[topics]} <= {"MRC202", "MRC208"}
    assert all(d.line == 1 and d.context == "topic t" for d in found[topics])


def test_findings_past_the_cap_are_counted_not_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Errors first; the rest, warnings included, counted by MRC801 at the first one left
    out; only the listed partitions are ever explained."""
    monkeypatch.setenv("MRC_PLAN_MAX_DIAGNOSTICS_PER_FILE", "5")
    lagging = {"topic": "t", "replicas": [1, 4, 2, 6], "observers": [6], "isr": [1, 4]}
    rows = [{**lagging, "leader": 1}] * 40 + _broken(30) + [{**lagging, "leader": 1}] * 10
    root = _write(tmp_path / "snap", rows)
    explained: list[int] = []
    real = placement.rules.partitions.explain_violation

    def counting(*args: object, **kwargs: object) -> list[str]:
        explained.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(placement.rules.partitions, "explain_violation", counting)
    (diags,) = [d for d in _found(root).values() if d]
    listed = [d for d in diags if d.code != "MRC801"]
    assert [d.code for d in listed] == ["MRC901"] * 5
    assert [d.line for d in listed] == [41, 42, 43, 44, 45]
    (more,) = [d for d in diags if d.code == "MRC801"]
    assert more.line == 46
    assert "75 more finding(s) not shown (25 error(s), 50 warning(s))" in more.message
    assert len(explained) <= 6


def test_a_snapshot_inside_a_directory_is_audited_not_read_as_policies(tmp_path: Path) -> None:
    """`validate DIR` finds the snapshot under it; the snapshot's own marker file
    (`_mrc-plan-snapshot.json`) is not a placement policy."""
    (tmp_path / "cluster").mkdir()
    root = _write(tmp_path / "cluster" / "snap", _broken(1))
    policy = tmp_path / "cluster" / "orders.json"
    policy.write_text(POLICY)
    found = _found(tmp_path / "cluster")
    tables = [root / "brokers.parquet", root / "topics.parquet", root / "partitions"]
    assert set(found) == {str(policy), *(str(t) for t in tables[:2])} | {
        str(root / "partitions" / "part-00000.parquet")
    }
    assert found[str(policy)] == []
    assert not any(str(f).endswith("_mrc-plan-snapshot.json") for f in found)


def test_describe_without_an_inventory_says_once_that_placement_went_unchecked() -> None:
    notes: list[str] = []
    files = [DESCRIBE / "policy-changed.txt", DESCRIBE / "under-min-isr.txt"]
    found = validate_paths(files, ValidateOptions(), notes=notes)
    assert len(notes) == 1
    assert "policy-changed.txt and 1 more" in notes[0] and "--inventory" in notes[0]
    assert not any(d.code == "MRC901" for ds in found.values() for d in ds)
    notes.clear()
    validate_paths(files, ValidateOptions(inventory=load_inventory(INVENTORY)), notes=notes)
    assert notes == []


def test_describe_audit_against_the_inventory() -> None:
    path = DESCRIBE / "policy-changed.txt"
    found = validate_paths([path], ValidateOptions(inventory=load_inventory(INVENTORY)))
    diags = found[str(path)]
    # partitions 5 and 6 keep the layout of the old policy; 7 has broker 12, unknown
    assert positions(diags) == [("MRC901", *at(path, line, "Replicas")) for line in (7, 8, 9)]
    assert "broker 12 is not in the inventory" in diags[-1].message
    assert all(d.severity is Severity.ERROR for d in diags)


@pytest.mark.parametrize("min_isr", [None, 2, 3])
def test_describe_under_min_isr(min_isr: int | None) -> None:
    """orders (min.insync.replicas=2) and payments (3) set their own: the flag does not
    change them; metrics sets none, so the flag (else 1) holds it."""
    path = DESCRIBE / "under-min-isr.txt"
    found = validate_paths([path], ValidateOptions(min_insync_replicas=min_isr))
    metrics_0 = "MRC903" if (min_isr or 1) > 2 else "MRC904"
    assert positions(found[str(path)]) == sorted(
        [
            ("MRC904", *at(path, 2, "Isr")),  # orders-0: 2 in sync, us-east's 5 out
            ("MRC903", *at(path, 4, "Isr")),  # orders-2: 1 in sync
            ("MRC903", *at(path, 6, "Isr")),  # payments-0: 2 in sync
            (metrics_0, *at(path, 9, "Isr")),  # metrics-0: 2 in sync
            ("MRC902", *at(path, 10, "Leader")),  # metrics-1: no leader
        ]
    )


def test_the_summary_counts_what_the_audit_reports(tmp_path: Path) -> None:
    """`snapshot show` and `validate` count with the same checks."""
    from placement.io.snapshot import read_snapshot
    from placement.snapshot.facts import summarize

    lagging = {"topic": "t", "replicas": [1, 4, 2, 6], "observers": [6], "isr": [1, 4]}
    rows = _broken(3) + [{**lagging, "leader": 1}] * 2
    root = _write(tmp_path / "snap", rows)
    s = summarize(read_snapshot(root))
    (diags,) = [d for d in _found(root).values() if d]
    codes = [d.code for d in diags]
    assert (s.violations, s.under_replicated) == (codes.count("MRC901"), codes.count("MRC904"))
    assert np.array_equal(violation_mask(read_snapshot(root)), np.array([True] * 3 + [False] * 2))


MOVING_RACKS = {"brokers": [{"id": b, "rack": r} for b, r in [(1, "a"), (2, "a"), (3, "b")]]}
MOVING = (
    "Topic: pay\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: min.insync.replicas=2,"
    'confluent.placement.constraints={"version":1,"replicas":[{"count":2,"constraints":'
    '{"rack":"a"}},{"count":1,"constraints":{"rack":"b"}}]}\n'
    "\tTopic: pay\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\n"
    # broker 2's replica moving to 4: 4 still copying, out of the ISR
    "\tTopic: pay\tPartition: 1\tLeader: 1\tReplicas: 4,1,3,2\tIsr: 1,3,2\t"
    "Adding Replicas: 4\tRemoving Replicas: 2\n"
    # the same move, with broker 2 (leaving, still a sync replica) out of the ISR too
    "\tTopic: pay\tPartition: 2\tLeader: 1\tReplicas: 1,3,5,2\tIsr: 1,3\t"
    "Adding Replicas: 5\tRemoving Replicas: 2\n"
)


def test_partitions_being_reassigned_are_one_warning_not_policy_errors(tmp_path: Path) -> None:
    """Their replicas are the old and the new brokers together (4 where the policy
    wants 3, brokers 4 and 5 of no known rack): no MRC901 for them, one MRC905 for the
    file; a broker being added is still copying, not lagging (MRC904)."""
    path = tmp_path / "moving.txt"
    path.write_text(MOVING)
    inventory = tmp_path / "inventory.json"
    inventory.write_text(json.dumps(MOVING_RACKS))
    found = validate_paths([path], ValidateOptions(inventory=load_inventory(inventory)))
    diags = found[str(path)]
    assert sorted(positions(diags)) == [
        ("MRC904", *at(path, 4, "Isr")),
        ("MRC905", *at(path, 3, "Replicas")),
    ]
    assert all(d.severity is Severity.WARNING for d in diags)
    messages = {d.code: d.message for d in diags}
    assert "2 partitions are being reassigned" in messages["MRC905"]
    assert "sync replica(s) 2 out of the ISR" in messages["MRC904"]


def test_without_a_reassignment_no_in_flight_finding(tmp_path: Path) -> None:
    path = tmp_path / "settled.txt"
    path.write_text("".join(MOVING.splitlines(keepends=True)[:2]))
    found = validate_paths([path], ValidateOptions())
    assert not any(d.code == "MRC905" for d in found[str(path)])
