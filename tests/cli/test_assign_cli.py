"""`mrc-plan assign` end to end: fresh, drain, rollback, infeasible, usage errors, determinism."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from placement.io.reassignment import parse_reassignment, read_reassignment
from placement.model.assignment import PartitionAssignment

ROOT = Path(__file__).parent.parent.parent
INV = str(ROOT / "examples" / "inventory.json")
TOPICS = str(ROOT / "examples" / "topics.json")
Cli = Callable[..., Result]


def assign(
    *args: str | Path, inventory: str = INV, topics: str | Path = TOPICS
) -> list[str | Path]:
    """`mrc-plan assign` with the example inventory and topics, then ``args``."""
    return ["assign", "--inventory", inventory, "--topics", topics, *args]


def fresh(cli: Cli, tmp_path: Path) -> Path:
    out = tmp_path / "fresh.json"
    r = cli(assign("--out", out))
    assert r.exit_code == 0, r.output
    return out


def test_fresh_assignment_covers_every_partition(cli: Cli, tmp_path: Path) -> None:
    plan = read_reassignment(fresh(cli, tmp_path))
    counts = Counter(a.topic for a in plan)
    assert counts == {
        "orders": 12,
        "clickstream": 24,
        "audit-log": 6,
        "payments": 8,
        "inventory-updates": 6,
    }


def test_drain_writes_plan_and_rollback_and_empties_the_brokers(cli: Cli, tmp_path: Path) -> None:
    current = fresh(cli, tmp_path)
    out, rollback = tmp_path / "plan.json", tmp_path / "rollback.json"
    r = cli(assign("--current", current, "--drain", "4,8", "--out", out, "--rollback", rollback))
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    assert "(plan is 0 above it)" in r.stderr
    plan, back = read_reassignment(out), read_reassignment(rollback)
    before = {a.key: a for a in read_reassignment(current)}
    assert [a.key for a in plan] == [a.key for a in back]
    assert all(before[a.key] == a for a in back)
    after = before | {a.key: a for a in plan}
    assert not {4, 8} & {b for a in after.values() for b in a.replicas}


def test_same_input_same_bytes(cli: Cli, tmp_path: Path) -> None:
    current = fresh(cli, tmp_path)
    outs = []
    for name in ("a.json", "b.json"):
        out = tmp_path / name
        cli(assign("--current", current, "--drain", "3", "--out", out))
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_nothing_to_do(cli: Cli, tmp_path: Path) -> None:
    current = fresh(cli, tmp_path)
    r = cli(assign("--current", current))
    assert r.exit_code == 0
    assert r.stdout == ""
    assert "nothing to do" in r.stderr


def test_infeasible_drain_exits_1_and_names_the_rack(cli: Cli, tmp_path: Path) -> None:
    current = fresh(cli, tmp_path)
    out = tmp_path / "plan.json"
    r = cli(assign("--current", current, "--drain", "1,2,3", "--out", out))  # no traceback
    assert r.exit_code == 1
    assert 'rack "us-west" needs 3 brokers' in r.stderr and "only 1 of its 4 remain" in r.stderr
    assert not out.exists()


def test_unknown_broker_ids_are_usage_errors(cli: Cli) -> None:
    for args in (["--drain", "42"], ["--exclude", "1,x"]):
        r = cli(assign(*args))  # no traceback
        assert r.exit_code == 2, r.output


def test_current_from_describe_with_a_dead_broker(cli: Cli, tmp_path: Path) -> None:
    describe = tmp_path / "describe.txt"
    policy = json.dumps(
        {"version": 2, "replicas": [{"count": 2, "constraints": {"rack": "us-west"}}]}
    )
    describe.write_text(
        f"Topic: t\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: "
        f"confluent.placement.constraints={policy}\n"
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n"
        "\tTopic: t\tPartition: 1\tLeader: 3\tReplicas: 3,77\tIsr: 3\n"
    )
    topics = tmp_path / "topics.json"
    topics.write_text(
        json.dumps(
            {"topics": [{"name": "other", "partitions": 1, "placement": json.loads(policy)}]}
        )
    )
    r = cli(assign("--current", describe, topics=topics))
    assert r.exit_code == 0, r.output
    (a,) = parse_reassignment(r.stdout)
    assert a.key == ("t", 1) and a.replicas[0] == 3 and 77 not in a.replicas
    assert "topic other is in --topics but not in the cluster" in r.stderr


GROWN = str(ROOT / "examples" / "inventory-expanded.json")


def loads(state: dict[tuple[str, int], PartitionAssignment]) -> Counter[int]:
    return Counter(b for a in state.values() for b in a.replicas)


def test_rebalance_after_adding_brokers_evens_every_rack(cli: Cli, tmp_path: Path) -> None:
    current = fresh(cli, tmp_path)
    out, election = tmp_path / "rebalance.json", tmp_path / "election.json"
    args = assign("--current", current, inventory=GROWN)
    r = cli([*args, "--out", out])
    assert r.exit_code == 0 and not out.exists()  # repair alone: nothing breaks a policy
    assert "--rebalance evens them" in r.stderr
    r = cli([*args, "--rebalance", "--balance-leaders", "--out", out, "--election", election])
    assert r.exit_code == 0, r.output
    assert "(plan is 0 above it)" in r.stderr and "leadership changes:" in r.stderr
    before = {a.key: a for a in read_reassignment(current)}
    plan = read_reassignment(out)
    after = before | {a.key: a for a in plan}
    load = loads(after)
    for rack in ([1, 2, 3, 4, 12], [5, 6, 7, 8, 13], [9, 10, 11]):
        assert max(load[b] for b in rack) - min(load[b] for b in rack) <= 1
    elected = json.loads(election.read_text())["partitions"]
    changed = sorted(
        [a.topic, a.partition] for a in plan if a.replicas[0] != before[a.key].replicas[0]
    )
    assert sorted([e["topic"], e["partition"]] for e in elected) == changed and changed


def test_seed_and_time_limit_options(cli: Cli, tmp_path: Path) -> None:
    outs = []
    for seed in ("3", "3", "4"):
        out = tmp_path / f"s{len(outs)}.json"
        r = cli(assign("--seed", seed, "--out", out))
        assert r.exit_code == 0, r.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] != outs[2]
    r = cli(assign("--time-limit", "0"))
    assert r.exit_code == 2


def test_no_solution_is_exit_3() -> None:
    from mrc_plan_cli.errors import exit_code_for
    from placement.errors import NoSolutionError

    assert exit_code_for(NoSolutionError("x")) == 3
