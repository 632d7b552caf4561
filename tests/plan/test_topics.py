"""The topics file: defaults, file references, and policies checked by the validate rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from placement.errors import InputError
from placement.io.inventory import load_inventory
from placement.plan.topics import InvalidPoliciesError, read_topics
from placement.rules.base import CheckContext

EXAMPLES = Path(__file__).parent.parent.parent / "examples"


def test_examples_topics_file() -> None:
    inv = load_inventory(EXAMPLES / "inventory.json").inventory
    specs = {t.name: t for t in read_topics(EXAMPLES / "topics.json", CheckContext(inv))}
    assert specs["orders"].partitions == 12 and specs["orders"].min_isr == 2
    assert specs["clickstream"].policy.per_rack() == {"us-west": (3, 0), "us-east": (0, 2)}
    # no placement: the default applies
    assert specs["inventory-updates"].policy.per_rack() == {
        "us-west": (2, 0),
        "us-east": (1, 0),
        "eu-central": (0, 1),
    }


def _write(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "topics.json"
    path.write_text(json.dumps(doc, indent=2))
    return path


POLICY = {"version": 2, "replicas": [{"count": 2, "constraints": {"rack": "us-west"}}]}


def test_invalid_inline_policy_stops_with_positioned_diagnostics(tmp_path: Path) -> None:
    bad = {"version": 2, "replicas": [{"count": "2", "constraints": {"rack": "us-west"}}]}
    path = _write(tmp_path, {"topics": [{"name": "t", "partitions": 3, "placement": bad}]})
    with pytest.raises(InvalidPoliciesError) as err:
        read_topics(path)
    (d,) = err.value.diagnostics
    assert d.code == "MRC206" and d.pointer == "/topics/0/placement/replicas/0/count"
    line = path.read_text().splitlines()[d.line - 1]
    assert line[d.column - 1 :].startswith('"2"')


def test_min_isr_feeds_the_resilience_rules(tmp_path: Path) -> None:
    path = _write(
        tmp_path, {"topics": [{"name": "t", "partitions": 3, "placement": POLICY, "min_isr": 3}]}
    )
    with pytest.raises(InvalidPoliciesError) as err:
        read_topics(path)
    assert [d.code for d in err.value.diagnostics if d.severity == "error"] == ["MRC501"]


def test_inventory_checks_apply(tmp_path: Path) -> None:
    inv = load_inventory(EXAMPLES / "inventory.json").inventory
    policy = {"version": 2, "replicas": [{"count": 2, "constraints": {"rack": "us-wset"}}]}
    path = _write(
        tmp_path, {"default_placement": policy, "topics": [{"name": "t", "partitions": 1}]}
    )
    with pytest.raises(InvalidPoliciesError) as err:
        read_topics(path, CheckContext(inv))
    assert err.value.diagnostics[0].code == "MRC401"
    assert "us-west" in err.value.diagnostics[0].hint


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"topics": []}, "non-empty"),
        ({"topics": [{"name": "t", "partitions": 0, "placement": POLICY}]}, "positive"),
        ({"topics": [{"name": "t", "partitions": 1}]}, 'no "placement"'),
        ({"topics": [{"name": "t", "partitions": 1, "placement": "missing.json"}]}, "not found"),
        (
            {
                "topics": [
                    {"name": "t", "partitions": 1, "placement": POLICY},
                    {"name": "t", "partitions": 1, "placement": POLICY},
                ]
            },
            "twice",
        ),
        ({"topics": [{"name": "t", "partitions": 1, "placment": POLICY}]}, "unknown key"),
        ([], "JSON object"),
    ],
)
def test_bad_topics_files(tmp_path: Path, doc: object, message: str) -> None:
    with pytest.raises(InputError, match=message) as err:
        read_topics(_write(tmp_path, doc))
    assert err.value.line is not None


def test_placement_file_reference_is_relative_to_the_topics_file(tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "p.json").write_text(json.dumps(POLICY))
    path = _write(
        tmp_path, {"topics": [{"name": "t", "partitions": 2, "placement": "policies/p.json"}]}
    )
    (spec,) = read_topics(path)
    assert spec.policy.sync_count == 2
