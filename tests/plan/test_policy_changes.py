"""Policy changes: which topics change, the names and bytes of their policy files, and a
script that hands every argument to Kafka's tools exactly (docs/formats.md, policy changes)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from placement.model.diagnostic import Severity
from placement.model.kafka import topic_name_error
from placement.model.policy import PlacementPolicy
from placement.plan.policies import (
    SCRIPT,
    TOPICS_FILE,
    file_names,
    policy_changes,
    policy_file_text,
    render_policy_dir,
    render_script,
    same_policy,
)
from placement.plan.topics import TopicSpec, read_topics
from placement.rules.base import CheckContext
from placement.rules.validate import check_policy_text


def policy(
    *sync: tuple[str, int],
    observers: tuple[tuple[str, int], ...] = (),
    version: int = 2,
    promotion: str | None = None,
) -> PlacementPolicy:
    doc: dict[str, object] = {
        "version": version,
        "replicas": [{"count": n, "constraints": {"rack": r}} for r, n in sync],
    }
    if observers:
        doc["observers"] = [{"count": n, "constraints": {"rack": r}} for r, n in observers]
    if promotion is not None:
        doc["observerPromotionPolicy"] = promotion
    return PlacementPolicy.model_validate(doc)


WEST_EAST = policy(("us-west", 2), ("us-east", 1), observers=(("eu-central", 1),))


def test_an_absent_promotion_of_version_2_is_under_min_isr() -> None:
    explicit = policy(
        ("us-west", 2), ("us-east", 1), observers=(("eu-central", 1),), promotion="under-min-isr"
    )
    assert same_policy(WEST_EAST, explicit)
    assert not same_policy(
        WEST_EAST,
        policy(
            ("us-west", 2),
            ("us-east", 1),
            observers=(("eu-central", 1),),
            promotion="under-replicated",
        ),
    )


def test_the_lead_rack_and_the_version_are_part_of_a_policy() -> None:
    swapped = policy(("us-east", 1), ("us-west", 2), observers=(("eu-central", 1),))
    assert not same_policy(WEST_EAST, swapped)  # another lead rack
    v1 = policy(("us-west", 2), ("us-east", 1), observers=(("eu-central", 1),), version=1)
    assert not same_policy(WEST_EAST, v1)
    assert not same_policy(WEST_EAST, policy(("us-west", 2), ("us-east", 1)))


def test_only_changed_and_new_topics_are_listed_by_name() -> None:
    new = policy(("us-east", 2), ("us-west", 1))
    specs = [
        TopicSpec("zeta", 3, new, 2),  # not in the cluster: created
        TopicSpec("orders", 12, WEST_EAST),  # the same policy: no change
        TopicSpec("payments", 8, new),  # another policy
        TopicSpec("legacy", 2, new),  # none in the cluster
    ]
    cluster = {"orders": WEST_EAST, "payments": WEST_EAST}
    changes = policy_changes(specs, cluster, {"orders", "payments", "legacy"})
    assert [(c.topic, c.action) for c in changes] == [
        ("legacy", "alter"),
        ("payments", "alter"),
        ("zeta", "create"),
    ]
    legacy, payments, zeta = changes
    assert legacy.before is None and payments.before == WEST_EAST
    assert all(c.after == new for c in changes)
    assert (zeta.partitions, zeta.min_isr) == (3, 2)
    assert legacy.partitions is None and legacy.min_isr is None  # alter: counts unchanged
    assert [c.file for c in changes] == ["legacy.json", "payments.json", "zeta.json"]


def test_topics_that_differ_only_in_case_get_files_a_case_blind_disk_keeps_apart() -> None:
    long = "A" * 249
    topics = ["orders", "Orders", "ORDERS", "payments", long, long.lower(), "x.json", "x"]
    assert all(topic_name_error(t) is None for t in topics)
    names = file_names(topics)
    assert names["payments"] == "payments.json" and names["x"] == "x.json"
    assert names["x.json"] == "x.json.json"
    values = list(names.values())
    assert len({v.lower() for v in values}) == len(topics)
    assert all(len(v.encode()) <= 255 and "/" not in v for v in values)
    assert all("~" in names[t] for t in ("orders", "Orders", "ORDERS", long, long.lower()))
    assert SCRIPT.lower() not in {v.lower() for v in values}
    assert "~" in file_names(["Topics"])["Topics"] and "~" in file_names(["topics"])["topics"]


def test_a_policy_file_is_canonical_and_reads_back_as_the_same_policy() -> None:
    text = policy_file_text(WEST_EAST)
    assert text == policy_file_text(PlacementPolicy.model_validate_json(text))
    assert PlacementPolicy.model_validate_json(text) == WEST_EAST
    assert text.isascii() and text.endswith("}\n")
    assert list(json.loads(text)) == ["version", "replicas", "observers"]
    bare = json.loads(policy_file_text(policy(("us-west", 3))))
    assert "observers" not in bare and "observerPromotionPolicy" not in bare
    checked = check_policy_text(text, "orders.json", CheckContext())
    assert checked.policy == WEST_EAST
    assert not [d for d in checked.diagnostics if d.severity is Severity.ERROR]


def test_the_directory_reads_back_as_a_topics_file_of_the_changes(tmp_path: Path) -> None:
    new = policy(("us-east", 2), ("us-west", 1))
    specs = [
        TopicSpec("zeta", 3, new, 2),
        TopicSpec("payments", 8, new),
        TopicSpec("topics", 1, WEST_EAST),  # its own file is not the topics file
        TopicSpec("orders", 12, WEST_EAST),
    ]
    changes = policy_changes(specs, {"orders": WEST_EAST}, {"orders", "payments", "topics"})
    files = render_policy_dir(changes)
    assert TOPICS_FILE in files and len(files) == len(changes) + 2
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    read = {t.name: t for t in read_topics(tmp_path / TOPICS_FILE)}
    assert set(read) == {"zeta", "payments", "topics"}  # orders did not change
    assert (read["zeta"].policy, read["zeta"].partitions, read["zeta"].min_isr) == (new, 3, 2)
    assert (read["payments"].policy, read["payments"].min_isr) == (new, None)
    assert read["topics"].policy == WEST_EAST


def test_no_change_no_files() -> None:
    assert render_policy_dir([]) == {}


RECORDER = """#!/bin/sh
for a in "$@"; do printf '%s\\n' "$a"; done >> "$RECORD"
printf -- '--\\n' >> "$RECORD"
"""


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX sh")
def test_the_script_hands_each_argument_over_exactly(tmp_path: Path) -> None:
    new = policy(("us-east", 2), ("us-west", 1))
    specs = [TopicSpec("-dash", 1, new), TopicSpec("a.b_c", 5, new, 2)]
    changes = policy_changes(specs, {"-dash": WEST_EAST}, {"-dash"})
    where = tmp_path / "odd $dir 'x'"  # spaces, a dollar and quotes in the path
    where.mkdir()
    for name, body in render_policy_dir(changes).items():
        (where / name).write_text(body, encoding="utf-8")
    tool = tmp_path / "tool"
    tool.write_text(RECORDER)
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    record = tmp_path / "record"
    env = {
        **os.environ,
        "KAFKA_CONFIGS": str(tool),
        "KAFKA_TOPICS": str(tool),
        "RECORD": str(record),
    }
    script = where / SCRIPT
    done = subprocess.run(
        ["sh", str(script), "broker:9092", "--command-config", "my client.properties"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    calls = [c.strip("\n").split("\n") for c in record.read_text().split("--\n") if c.strip()]
    real = os.path.realpath(where)
    assert calls == [
        [
            "--bootstrap-server",
            "broker:9092",
            "--command-config",
            "my client.properties",
            "--entity-type",
            "topics",
            "--entity-name",
            "-dash",
            "--alter",
            "--replica-placement",
            f"{real}/-dash.json",
        ],
        [
            "--bootstrap-server",
            "broker:9092",
            "--command-config",
            "my client.properties",
            "--create",
            "--topic",
            "a.b_c",
            "--partitions",
            "5",
            "--replica-placement",
            f"{real}/a.b_c.json",
            "--config",
            "min.insync.replicas=2",
        ],
    ]
    for call in calls:
        placed = Path(call[call.index("--replica-placement") + 1])
        assert PlacementPolicy.model_validate_json(placed.read_text()) == new


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX sh")
def test_the_script_without_a_server_is_a_usage_error(tmp_path: Path) -> None:
    script = tmp_path / SCRIPT
    script.write_text(render_script(policy_changes([TopicSpec("t", 1, WEST_EAST)], {}, {"t"})))
    done = subprocess.run(
        ["sh", str(script)], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 2 and "HOST:PORT" in done.stderr
