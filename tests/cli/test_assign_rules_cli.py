"""`assign` on the clusters operators run: a plain Apache Kafka cluster (no policy anywhere),
the cluster default from a broker's server.properties, the scope (--repair, --only-topics),
the leader rule (--leaders-in-first-rack) and the per-topic breakdown, through the CLI."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import Result

from placement.io.current import read_current
from placement.io.reassignment import read_reassignment

REPO = Path(__file__).resolve().parent.parent.parent
EXAMPLES = REPO / "examples"
INV = EXAMPLES / "inventory.json"
APACHE = EXAMPLES / "describe-apache.txt"
Cli = Callable[..., Result]
RACK = {1: "w", 2: "w", 3: "w", 4: "w", 5: "e", 6: "e", 7: "e", 8: "e", 9: "c", 10: "c", 11: "c"}


def _summary(r: Result) -> dict[str, Any]:
    assert r.exit_code == 0, r.output
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


def test_a_plain_apache_drain_empties_the_brokers_and_keeps_each_partition_spread(
    cli: Cli, tmp_path: Path
) -> None:
    out = tmp_path / "plan.json"
    args = ["assign", "--inventory", INV, "--current", APACHE, "--drain", "9,10"]
    doc = _summary(cli([*args, "--out", out, "--format", "json"]))
    before = {a.key: a for a in read_current(APACHE).assignments}
    plan = read_reassignment(out)
    after = before | {a.key: a for a in plan}
    assert not any({9, 10} & set(a.replicas) for a in after.values())
    assert doc["replicas_left_on_drained"] == 0
    assert doc["topic_rules"] == {"policy": 0, "default": 0, "rack-aware": 6}
    assert doc["scope"] == "asked"
    # the moves are the replicas the two brokers held: no partition has both
    held = sum(1 for a in before.values() for b in a.replicas if b in (9, 10))
    assert doc["replicas_added"] == held == doc["goals"][0]["bound"]
    # each partition keeps its spread over the racks (the same racks, unless eu-central,
    # left with broker 11 alone, can no longer hold two), and its leader unless it left
    for a in plan:
        old = before[a.key]
        now, then = (Counter(RACK[b] for b in x.replicas) for x in (a, old))
        if then["c"] <= 1:
            assert now == then
        assert max(now[r] for r in "wec") - min(now[r] for r in "wec") <= 1
        if old.replicas[0] not in (9, 10):
            assert a.replicas[0] == old.replicas[0]
    assert doc["leadership_chosen"] == 0
    assert doc["leadership_forced"] == doc["leadership_changes"]
    # the per-topic breakdown adds up to the plan, largest first
    rows = doc["topics"]
    assert sum(t["partitions_changed"] for t in rows) == len(plan)
    assert sum(t["replicas_added"] for t in rows) == doc["replicas_added"]
    assert rows[0]["topic"] == "__consumer_offsets" and rows[0]["rule"] == "rack-aware"


def test_only_topics_keeps_the_rest_out_and_says_what_stays_on_drained_brokers(
    cli: Cli, tmp_path: Path
) -> None:
    out = tmp_path / "plan.json"
    args = ["assign", "--inventory", INV, "--current", APACHE, "--drain", "9,10"]
    doc = _summary(
        cli([*args, "--only-topics", "orders|payments", "--out", out, "--format", "json"])
    )
    plan = read_reassignment(out)
    assert plan and {a.topic for a in plan} == {"orders", "payments"}
    before = read_current(APACHE).assignments
    left = sum(
        1
        for a in before
        if a.topic not in ("orders", "payments")
        for b in a.replicas
        if b in (9, 10)
    )
    assert doc["replicas_left_on_drained"] == left > 0
    assert doc["only_topics"] == "orders|payments"
    r = cli([*args, "--only-topics", "orders[", "--out", tmp_path / "x.json"])
    assert r.exit_code == 2 and "--only-topics" in r.stderr


def test_the_default_comes_from_a_brokers_server_properties(cli: Cli, tmp_path: Path) -> None:
    """examples/server.properties sets the cluster default (2 us-west, 1 us-east, an
    eu-central observer) and the internal topics' placements: a plain cluster's topics
    break them all, and with nothing else asked every one is repaired to them."""
    out = tmp_path / "plan.json"
    args = ["assign", "--inventory", INV, "--current", APACHE]
    props = EXAMPLES / "server.properties"
    doc = _summary(cli([*args, "--default-policy", props, "--out", out, "--format", "json"]))
    assert doc["topic_rules"] == {"policy": 0, "default": 6, "rack-aware": 0}
    assert doc["scope"] == "everything"
    plan = {a.key: a for a in read_reassignment(out)}
    offsets = [a for k, a in plan.items() if k[0] == "__consumer_offsets"]
    assert offsets and all(
        Counter(RACK[b] for b in a.replicas) == {"w": 2, "e": 2} for a in offsets
    )
    orders = [a for k, a in plan.items() if k[0] == "orders"]
    assert orders and all(len(a.observers) == 1 and RACK[a.observers[0]] == "c" for a in orders)
    # a file that is neither a policy nor properties is refused without being quoted
    secret = tmp_path / "token.json"
    secret.write_text("ghp_secretsecretsecret\n")
    r = cli([*args, "--default-policy", secret, "--out", tmp_path / "y.json"])
    assert r.exit_code == 2 and "ghp_" not in r.output


def test_a_drain_leaves_broken_partitions_alone_unless_repair(cli: Cli, tmp_path: Path) -> None:
    """examples/describe.txt: legacy-events (no policy) keeps all three replicas of each
    partition in us-east. A drain of broker 10 changes only orders-1 (its observer sits
    there, and it ends meeting its policy); --repair fixes legacy-events too."""
    describe = EXAMPLES / "describe.txt"
    args = ["assign", "--inventory", INV, "--current", describe, "--drain", "10"]
    doc = _summary(cli([*args, "--out", tmp_path / "a.json", "--format", "json"]))
    assert {t["topic"]: t["partitions"] for t in doc["left_alone"]} == {"legacy-events": 2}
    changed = {(a.topic, a.partition) for a in read_reassignment(tmp_path / "a.json")}
    assert changed == {("orders", 1)}  # its eu-central observer sat on broker 10
    doc = _summary(cli([*args, "--repair", "--out", tmp_path / "b.json", "--format", "json"]))
    assert doc["left_alone"] == [] and doc["scope"] == "everything"
    changed = {(a.topic, a.partition) for a in read_reassignment(tmp_path / "b.json")}
    assert {("legacy-events", 0), ("legacy-events", 1), ("orders", 1)} <= changed
    assert ("orders", 2) not in changed  # offline: never moved
    assert doc["offline_kept"] == 1


def test_leaders_in_first_rack_is_an_opt_in(cli: Cli, tmp_path: Path) -> None:
    args = ["assign", "--inventory", INV, "--current", APACHE, "--drain", "9,10"]
    base = _summary(cli([*args, "--out", tmp_path / "a.json", "--format", "json"]))
    moved = _summary(
        cli([*args, "--leaders-in-first-rack", "--out", tmp_path / "b.json", "--format", "json"])
    )
    assert base["leadership_chosen"] == 0
    assert moved["leadership_changes"] >= base["leadership_changes"]


def test_the_page_has_the_per_topic_breakdown(cli: Cli, tmp_path: Path) -> None:
    page = tmp_path / "plan.html"
    args = ["assign", "--inventory", INV, "--current", EXAMPLES / "describe.txt"]
    r = cli([*args, "--drain", "10", "--out", tmp_path / "p.json", "--report", page])
    assert r.exit_code == 0, r.output
    html = page.read_text()
    assert "Per topic" in html and "legacy-events" in html and "--repair" in html
