"""The topics file against the cluster (placement/plan/honest.py): `partitions` left out
means a topic the cluster has, stated it must be the cluster's count or name a new topic,
and a fresh layout needs it in every entry. The cluster is examples/describe.txt: orders
(3 partitions) and legacy-events (2)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from placement.errors import InputError
from placement.io.columns import Columns
from placement.io.current import CurrentState
from placement.model.assignment import PartitionAssignment
from placement.model.policy import PlacementPolicy
from placement.plan.honest import check_topics_against_cluster, partition_counts
from placement.plan.policies import SCRIPT
from placement.plan.topics import TopicSpec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INV = EXAMPLES / "inventory.json"
DESCRIBE = EXAMPLES / "describe.txt"
POLICY = json.loads((EXAMPLES / "placement" / "orders.json").read_text())
Cli = Callable[..., Result]


def _topics(tmp_path: Path, *entries: dict[str, Any]) -> Path:
    """A topics file of ``entries``, each with the orders policy inline, indented by 2."""
    path = tmp_path / "topics.json"
    doc = {"topics": [{**e, "placement": POLICY} for e in entries]}
    path.write_text(json.dumps(doc, indent=2))
    return path


def _at(topics: Path, name: str) -> str:
    """``file:line:column`` of the entry of ``name``: its "{" is alone on the line before the
    name's, so the name's 0-based index is the 1-based line of the "{"."""
    lines = topics.read_text().splitlines()
    line = lines.index(f'      "name": "{name}",')
    return f"{topics}:{line}:5"


def _assign(cli: Cli, tmp_path: Path, topics: Path, *more: str | Path) -> Result:
    out = ["--out", tmp_path / "plan.json"]
    return cli(["assign", "--inventory", INV, "--topics", topics, *out, *more])


def _against_describe(cli: Cli, tmp_path: Path, topics: Path) -> Result:
    return _assign(
        cli, tmp_path, topics, "--current", DESCRIBE, "--policy-dir", tmp_path / "policies"
    )


def _script(tmp_path: Path) -> str:
    return (tmp_path / "policies" / SCRIPT).read_text()


def test_a_typo_is_no_new_topic_but_exit_2_with_a_guess(cli: Cli, tmp_path: Path) -> None:
    topics = _topics(tmp_path, {"name": "legacy-events"}, {"name": "order"})
    r = _against_describe(cli, tmp_path, topics)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    at = _at(topics, "order")
    assert f'error: {at}: topic "order": no topic of that name in the cluster; did ' in r.stderr
    assert 'did you mean "orders"?' in r.stderr
    assert 'give "partitions" to create "order" as a new topic' in r.stderr
    assert not (tmp_path / "policies").exists()  # no `kafka-topics --create --topic order`
    assert not (tmp_path / "plan.json").exists()


def test_a_partition_count_other_than_the_clusters_is_exit_2(cli: Cli, tmp_path: Path) -> None:
    topics = _topics(tmp_path, {"name": "orders", "partitions": 12})
    r = _against_describe(cli, tmp_path, topics)
    assert r.exit_code == 2, r.output
    assert f'error: {topics}:3:5: topic "orders" has "partitions": 12 here, but 3 in the ' in (
        r.stderr
    )
    assert "`kafka-topics --alter --topic orders --partitions 12`, not a placement change" in (
        r.stderr
    )
    assert 'drop "partitions" from the entry or set it to 3' in r.stderr
    assert not (tmp_path / "policies").exists() and not (tmp_path / "plan.json").exists()


def test_a_new_topic_with_partitions_is_created(cli: Cli, tmp_path: Path) -> None:
    topics = _topics(tmp_path, {"name": "orders"}, {"name": "refunds", "partitions": 4})
    r = _against_describe(cli, tmp_path, topics)
    assert r.exit_code == 0, r.output
    assert "topic refunds is in --topics but not in the cluster: create it first" in r.stderr
    script = _script(tmp_path)
    assert "--create --topic refunds --partitions 4 " in script
    assert "--create --topic orders" not in script


def test_an_existing_topic_needs_no_partitions(cli: Cli, tmp_path: Path) -> None:
    """orders without a count, legacy-events with the cluster's: policy changes only."""
    topics = _topics(tmp_path, {"name": "orders"}, {"name": "legacy-events", "partitions": 2})
    r = _against_describe(cli, tmp_path, topics)
    assert r.exit_code == 0, r.output
    assert "not in the cluster" not in r.stderr
    script = _script(tmp_path)
    assert "--entity-name legacy-events --alter" in script and "--create" not in script


def test_a_fresh_layout_refuses_an_entry_without_partitions(cli: Cli, tmp_path: Path) -> None:
    topics = _topics(tmp_path, {"name": "orders", "partitions": 3}, {"name": "refunds"})
    r = _assign(cli, tmp_path, topics)
    assert r.exit_code == 2, r.output
    assert (
        f'error: {_at(topics, "refunds")}: topic "refunds" needs "partitions": without '
        "--current every "
        "topic is created\n"
    ) in r.stderr
    assert not (tmp_path / "plan.json").exists()


POLICY_MODEL = PlacementPolicy.model_validate(POLICY)


def _spec(name: str, partitions: int | None) -> TopicSpec:
    return TopicSpec(name, partitions, POLICY_MODEL, line=7, column=5)


@pytest.mark.parametrize(
    ("name", "guess"),
    [
        ("orders-v3", 'did you mean "orders-v2", "orders-v1" or "orders"?'),  # at most 3
        ("zzz", ""),
    ],
)
def test_the_guess_names_at_most_three_cluster_topics(name: str, guess: str) -> None:
    cluster = {"orders": 3, "orders-v1": 3, "orders-v2": 3, "orders-eu": 3, "clicks": 1}
    with pytest.raises(InputError) as err:
        check_topics_against_cluster([_spec(name, None)], cluster, "t.json")
    message = f't.json:7:5: topic "{name}": no topic of that name in the cluster'
    assert err.value.message == message + (f"; {guess}" if guess else "")


def test_a_smaller_count_is_no_partition_increase() -> None:
    with pytest.raises(InputError) as err:
        check_topics_against_cluster([_spec("orders", 2)], {"orders": 3}, "t.json")
    assert "Kafka cannot take partitions away" in err.value.hint
    assert "--alter" not in err.value.hint


def test_partition_counts_from_the_columns_are_those_of_the_list() -> None:
    parts = [
        PartitionAssignment(t, p, (1, 2))
        for t, n in (("a", 3), ("b", 1), ("c", 5))
        for p in range(n)
    ]
    state = CurrentState(parts)
    columns = Columns.of(parts)
    assert columns is not None
    with_columns = CurrentState(parts, columns=columns)
    assert partition_counts(state) == partition_counts(with_columns) == {"a": 3, "b": 1, "c": 5}
