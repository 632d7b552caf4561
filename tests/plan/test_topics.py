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


def _topic(**members: object) -> dict[str, object]:
    """A topic entry; a member given as ... is left out."""
    entry: dict[str, object] = {"name": "t", "partitions": 1, "placement": POLICY}
    entry.update(members)
    return {k: v for k, v in entry.items() if v is not ...}


NAME_HINT = "topic names are 1-249 characters of [a-zA-Z0-9._-], and not '.' or '..'"
ENTRY_KEYS = 'allowed: "name", "partitions", "placement", "min_isr"'
BAD_PARTITIONS = 'topic "t": "partitions" must be a positive integer'

# (document or raw text, message, hint, line, column): the reader's exact words and the
# place it points at (the document is written with indent=2); DIR is the file's directory
EXACT = [
    ('{"topics": [], "topics": []}', 'duplicate key "topics"', "keep one of them", 1, 16),
    ('{"topics": [{"name": "a", "name": "b"}]}', 'duplicate key "name"', "keep one of them", 1, 27),
    (
        [],
        "a topics file must be a JSON object",
        '{"default_placement": {...}, "topics": [...]}',
        1,
        1,
    ),
    ({"topic": []}, 'unknown key "topic"', 'allowed: "default_placement", "topics"', 2, 3),
    ({}, '"topics" must be a non-empty array', "", 1, 1),
    ({"topics": {}}, '"topics" must be a non-empty array', "", 2, 13),
    ({"topics": [1]}, "a topic entry must be an object", "", 3, 5),
    (
        {"topics": [_topic(partition=2)]},
        'unknown key "partition" in a topic entry',
        ENTRY_KEYS,
        17,
        7,
    ),
    ({"topics": [_topic(name=...)]}, 'a topic needs a non-empty "name"', "", 3, 5),
    ({"topics": [_topic(name="")]}, 'a topic needs a non-empty "name"', "", 4, 15),
    ({"topics": [_topic(name=5)]}, 'a topic needs a non-empty "name"', "", 4, 15),
    ({"topics": [_topic(name="..")]}, "'..' is not a legal topic name", NAME_HINT, 4, 15),
    (
        {"topics": [_topic(name="a b", partitions=0)]},
        "topic name 'a b' holds ' '; Kafka allows only ASCII letters, digits, '.', '_' and '-'",
        NAME_HINT,
        4,
        15,
    ),
    (
        {"topics": [_topic(), _topic(partitions=0)]},
        'topic "t" is listed twice (first at /topics/0)',
        "",
        18,
        5,
    ),
    ({"topics": [_topic(partitions=0)]}, BAD_PARTITIONS, "", 5, 21),
    ({"topics": [_topic(partitions="3")]}, BAD_PARTITIONS, "", 5, 21),
    ({"topics": [_topic(partitions=True)]}, BAD_PARTITIONS, "", 5, 21),
    ({"topics": [_topic(partitions=1.5)]}, BAD_PARTITIONS, "", 5, 21),
    ({"topics": [_topic(partitions=None)]}, BAD_PARTITIONS, "", 5, 21),
    (
        {"topics": [_topic(partitions=1_000_001)]},
        'topic "t" asks for 1,000,001 partitions, above the cap of 1,000,000 partitions per topic',
        "the cap is 1,000,000 partitions per topic; "
        "raise it with MRC_PLAN_MAX_PARTITIONS_PER_TOPIC=N if this is right",
        5,
        21,
    ),
    ({"topics": [_topic(min_isr=0)]}, '"min_isr" must be a positive integer', "", 17, 18),
    ({"topics": [_topic(min_isr=True)]}, '"min_isr" must be a positive integer', "", 17, 18),
    ({"topics": [_topic(min_isr="2")]}, '"min_isr" must be a positive integer', "", 17, 18),
    (
        {"topics": [_topic(placement=...)]},
        'topic "t" has no "placement" and there is no "default_placement"',
        "",
        3,
        5,
    ),
    (
        {"topics": [_topic(placement="/etc/passwd")]},
        "placement reference '/etc/passwd' is absolute",
        "write a path relative to DIR",
        6,
        20,
    ),
    (
        {"topics": [_topic(placement="")]},
        "a placement reference must be a non-empty path without NUL characters",
        "",
        6,
        20,
    ),
    (
        {"default_placement": "missing.json", "topics": [_topic(placement=...)]},
        "placement file 'missing.json' not found (relative to DIR)",
        "",
        2,
        24,
    ),
    # the first problem in file order wins: a refused reference before a later bad count,
    # a bad count before an earlier invalid policy (whose findings wait for the end)
    (
        {"topics": [_topic(placement="/abs"), _topic(name="u", partitions=0)]},
        "placement reference '/abs' is absolute",
        "write a path relative to DIR",
        6,
        20,
    ),
    (
        {"topics": [_topic(placement={"version": 2}), _topic(name="u", partitions=0)]},
        'topic "u": "partitions" must be a positive integer',
        "",
        12,
        21,
    ),
]


@pytest.mark.parametrize(("doc", "message", "hint", "line", "column"), EXACT)
def test_exact_message_and_position(
    tmp_path: Path, doc: object, message: str, hint: str, line: int, column: int
) -> None:
    path = tmp_path / "topics.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, indent=2))
    with pytest.raises(InputError) as err:
        read_topics(path)
    assert not isinstance(err.value, InvalidPoliciesError)
    prefix = f"{path}:{line}:{column}: "
    assert err.value.message == prefix + message.replace("DIR", str(tmp_path))
    assert err.value.hint == hint.replace("DIR", str(tmp_path))


@pytest.mark.parametrize(
    ("doc", "pointer"),
    [
        ({"topics": [_topic(placement=None)]}, "/topics/0/placement"),
        ({"default_placement": None, "topics": [_topic(placement=...)]}, "/default_placement"),
    ],
)
def test_null_placement_is_a_policy_finding(tmp_path: Path, doc: object, pointer: str) -> None:
    with pytest.raises(InvalidPoliciesError) as err:
        read_topics(_write(tmp_path, doc))
    assert [(d.code, d.pointer) for d in err.value.diagnostics] == [("MRC201", pointer)]


def test_null_min_isr_is_no_min_isr(tmp_path: Path) -> None:
    (spec,) = read_topics(_write(tmp_path, {"topics": [_topic(min_isr=None)]}))
    assert (spec.name, spec.partitions, spec.min_isr) == ("t", 1, None)


def test_partitions_left_out_is_none_and_the_entry_is_located(tmp_path: Path) -> None:
    """Whether a count may be left out depends on --current (plan/honest.py decides); the
    reader keeps None, and where each entry starts, for that later error."""
    doc = {"topics": [_topic(), _topic(name="u", partitions=...)]}
    first, second = read_topics(_write(tmp_path, doc))
    assert (first.partitions, first.line, first.column) == (1, 3, 5)
    assert (second.name, second.partitions, second.line, second.column) == ("u", None, 18, 5)


@pytest.mark.parametrize(("min_isrs", "checks"), [((3, 3), 1), ((3, 4), 2), ((3, None), 1)])
def test_a_referenced_policy_is_checked_once_per_min_isr(
    tmp_path: Path, min_isrs: tuple[int | None, ...], checks: int
) -> None:
    (tmp_path / "p.json").write_text(json.dumps(POLICY))
    topics = [
        _topic(name=f"t{i}", placement="p.json", min_isr=...)
        | ({} if isr is None else {"min_isr": isr})
        for i, isr in enumerate(min_isrs)
    ]
    with pytest.raises(InvalidPoliciesError) as err:
        read_topics(_write(tmp_path, {"topics": topics}), CheckContext(min_insync_replicas=3))
    found = [d.code for d in err.value.diagnostics if d.severity == "error"]
    assert found == ["MRC501"] * checks
    assert {d.file for d in err.value.diagnostics} == {str(tmp_path / "p.json")}


def test_a_policy_written_again_is_checked_again_where_it_differs(tmp_path: Path) -> None:
    """Four topics write the same policy: one check serves those it is clean for; under
    another min ISR it is checked again, and each topic's finding points into its own
    entry."""
    topics = [{"name": f"t{i}", "partitions": 3, "placement": POLICY} for i in range(4)]
    specs = read_topics(_write(tmp_path, {"topics": topics}))
    assert [s.name for s in specs] == ["t0", "t1", "t2", "t3"]
    assert all(s.policy == specs[0].policy for s in specs)
    topics[1]["min_isr"] = topics[3]["min_isr"] = 3
    with pytest.raises(InvalidPoliciesError) as err:
        read_topics(_write(tmp_path, {"topics": topics}))
    errors = [d for d in err.value.diagnostics if d.severity == "error"]
    assert [(d.code, d.pointer.split("/")[2]) for d in errors] == [("MRC501", "1"), ("MRC501", "3")]
