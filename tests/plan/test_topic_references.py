"""Placement references in a topics file stay inside its directory (or --root), and a file
that is not a placement policy is refused without a word of its content.

In CI the topics file comes from a pull request: a reference to /etc/shadow or
/proc/self/environ used to be read and its first token echoed in the error.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from placement.errors import InputError
from placement.plan.topics import read_topics

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INV = EXAMPLES / "inventory.json"
SECRET = "s3cr3t-t0ken-value"
POLICY = {"version": 2, "replicas": [{"count": 2, "constraints": {"rack": "us-west"}}]}

Cli = Callable[..., Result]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """tmp/outside/{passwd,secrets.json} next to tmp/repo/ (where the topics file lives)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "passwd").write_text(f"{SECRET}:x:0:0:root:/root:/bin/bash\n")
    (outside / "secrets.json").write_text(json.dumps({"token": SECRET}))
    (outside / "policy.json").write_text(json.dumps(POLICY))
    root = tmp_path / "repo"
    root.mkdir()
    return root


def _topics(repo: Path, placement: object) -> Path:
    path = repo / "topics.json"
    doc = {"topics": [{"name": "orders", "partitions": 3, "placement": placement}]}
    path.write_text(json.dumps(doc, indent=2))
    return path


def _refused(cli: Cli, topics: Path, *needles: str, extra: tuple[str, ...] = ()) -> str:
    result = cli(["assign", "--inventory", INV, "--topics", topics, *extra])
    assert result.exit_code == 2, result.output
    # the topics file's line holding the reference: "placement" is on line 6
    assert f"error: {topics}:6:" in result.stderr, result.stderr
    for needle in needles:
        assert needle in result.stderr
    assert SECRET not in result.stderr + result.stdout
    return result.stderr


def test_absolute_reference_is_refused(cli: Cli, repo: Path) -> None:
    topics = _topics(repo, str(repo.parent / "outside" / "passwd"))
    _refused(cli, topics, "is absolute")


def test_etc_passwd_is_refused_without_echo(cli: Cli, repo: Path) -> None:
    stderr = _refused(cli, _topics(repo, "/etc/passwd"), "is absolute")
    assert "root:" not in stderr


def test_dotdot_escape_is_refused(cli: Cli, repo: Path) -> None:
    _refused(cli, _topics(repo, "../outside/passwd"), "leads outside")


def test_dotdot_escape_to_a_valid_policy_is_refused_too(cli: Cli, repo: Path) -> None:
    _refused(cli, _topics(repo, "../outside/policy.json"), "leads outside")


def test_symlink_leading_outside_is_refused(cli: Cli, repo: Path) -> None:
    (repo / "orders.json").symlink_to(repo.parent / "outside" / "passwd")
    _refused(cli, _topics(repo, "orders.json"), "leads outside")


def test_overlong_reference_is_exit_2_not_a_crash(cli: Cli, repo: Path) -> None:
    """ENAMETOOLONG used to escape as exit 101."""
    _refused(cli, _topics(repo, "p" * 300 + ".json"), "longer than a file name can be")
    _refused(cli, _topics(repo, "/".join(["d" * 200] * 30)), "longer than a file name can be")


@pytest.mark.parametrize("name", ["passwd", "secrets.json"])
def test_file_inside_root_that_is_not_a_policy_is_not_echoed(
    cli: Cli, repo: Path, name: str
) -> None:
    shutil.copy(repo.parent / "outside" / name, repo / name)
    _refused(cli, _topics(repo, name), "is not a placement policy")


def test_device_or_fifo_is_not_read(cli: Cli, repo: Path) -> None:
    os.mkfifo(repo / "pipe.json")
    _refused(cli, _topics(repo, "pipe.json"), "not a regular file")


def test_root_option_widens_where_references_may_point(cli: Cli, repo: Path) -> None:
    (repo / "policies").mkdir()
    (repo / "policies" / "orders.json").write_text(json.dumps(POLICY))
    (spec,) = read_topics(_topics(repo, "policies/../policies/orders.json"))  # inside: read
    assert spec.policy.per_rack() == {"us-west": (2, 0)}
    topics = _topics(repo, "../outside/policy.json")
    result = cli(["assign", "--inventory", INV, "--topics", topics, "--root", repo.parent])
    assert result.exit_code == 0, result.output
    # and still confines: the parent of the root is out of bounds
    (repo / "sub").mkdir()
    _refused(cli, topics, "leads outside", extra=("--root", str(repo / "sub")))


def test_reader_error_names_the_topics_file_line(repo: Path) -> None:
    topics = _topics(repo, "../outside/secrets.json")
    with pytest.raises(InputError) as err:
        read_topics(topics)
    assert (err.value.path, err.value.line) == (str(topics), 6)
    assert SECRET not in err.value.message + err.value.hint
