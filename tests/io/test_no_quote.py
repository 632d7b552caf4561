"""Every reader of an operator file refuses a foreign file without quoting it.

In CI an input may come from an untrusted pull request (a symlink to `.git-credentials`,
say) and the log is public. A file that is not recognisably the format expected is
refused with its name, a line and column, what was expected and what to do; at most the
kind of its first character, never a line or a token of it. A file that is the format but
holds a bad value may name that value only when it is short: at most 16 characters of any
value, never a whole line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from placement.errors import InputError, MrcPlanError
from placement.io.convert import load_sizes
from placement.io.current import read_current
from placement.io.inventory import inventory_for_checks, load_inventory
from placement.io.logdirs import parse_logdirs
from placement.io.reassignment import read_plan_entries, read_plan_file
from placement.io.replicastatus import read_replica_status
from placement.io.textfile import read_text
from placement.plan.topics import read_topics

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SECRET = "https://x-access-token:ghs_SECRETSECRET0123456789@github.com"
# the same, with a token of 100 KB
HUGE = "https://x-access-token:ghs_SECRETSECRET" + "0123456789" * 10_000 + "@github.com"
# past the 128 KiB field limit of Python's csv module (its own error, then)
HUGER = HUGE.replace("0123456789", "0123456789" * 2)
LONGEST = 16  # characters of the file a message may hold in a row

Cli = Callable[..., Result]
Reader = Callable[[Path], Any]


def _log_dirs(path: Path) -> Any:
    return parse_logdirs(read_text(path), str(path))


# each reader, and the file name it is given (the inventory's format follows the suffix)
READERS: dict[str, tuple[str, Reader]] = {
    "inventory-json": ("inventory.json", load_inventory),
    "inventory-json-validate": ("inventory.json", inventory_for_checks),
    "inventory-csv": ("inventory.csv", load_inventory),
    "sizes": ("sizes.csv", load_sizes),
    "log-dirs": ("log-dirs.txt", _log_dirs),
    "replica-status": ("status.txt", lambda p: read_replica_status(str(p))),
    "plan": ("plan.json", read_plan_file),
    "plan-entries": ("plan.json", read_plan_entries),
    "current": ("current.json", read_current),
    "topics": ("topics.json", read_topics),
    # a name that says nothing: the format is told from the content
    "inventory-txt": ("inventory.txt", load_inventory),
}


def assert_not_quoted(err: MrcPlanError, content: str) -> None:
    """Neither the message nor the hint holds the token, nor more than LONGEST characters
    in a row of ``content``."""
    said = f"{err.message}\n{err.hint}"
    assert "ghs_SECRET" not in said, said
    for i in range(len(said) - LONGEST):
        window = said[i : i + LONGEST + 1]
        assert window not in content, f"{window!r} of the file is quoted: {said}"


def refused(reader: Reader, path: Path) -> InputError:
    with pytest.raises(InputError) as info:
        reader(path)
    return info.value


# -- a file that is not the format at all --------------------------------------------------


@pytest.mark.parametrize(
    "secret", [SECRET, HUGE, HUGER], ids=["token", "100KB-token", "200KB-token"]
)
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_foreign_file_is_refused_without_quoting_it(
    reader: str, secret: str, tmp_path: Path
) -> None:
    name, read = READERS[reader]
    path = tmp_path / name
    text = secret + "\nsecond line\n"
    path.write_text(text)
    err = refused(read, path)
    assert err.path == str(path)
    assert err.line == 1, err.message
    assert err.hint, err.message  # what to do
    assert_not_quoted(err, text)


@pytest.mark.parametrize(
    ("reader", "text"),
    [
        # after the banner, the JSON document is expected
        ("sizes", "Querying brokers for log directories information\n{secret}\n"),
        ("log-dirs", "Received log directory information from brokers 1\n{secret}\n"),
        # a CSV header of other columns
        ("inventory-csv", "host,{secret}\n1,2\n"),
        ("inventory-csv", "{secret},id,rack\n"),
        ("sizes", "topic,partition,{secret}\n"),
        # the three forms of kafka-replica-status, each with a line that is none of them
        ("replica-status", "Topic: orders\n{secret}\n"),
        ("replica-status", "Topic: orders\n  {secret}\n"),
        ("replica-status", "Topic Partition Replica {secret}\n"),
        ("replica-status", "Topic Partition {secret}\n"),
    ],
)
def test_a_foreign_line_after_a_recognised_start_is_not_quoted(
    reader: str, text: str, tmp_path: Path
) -> None:
    name, read = READERS[reader]
    for secret in (SECRET, HUGE):
        path = tmp_path / name
        content = text.format(secret=secret)
        path.write_text(content)
        err = refused(read, path)
        assert err.line is not None and err.line >= 1, err.message
        assert_not_quoted(err, secret)


# -- a file of the format, with the secret as one of its values ----------------------------

_LOG_DIRS_HEAD = (
    "Querying brokers for log directories information\n"
    "Received log directory information from brokers 1\n"
)


def _log_dirs_doc(partition: str, log_dir: str = "/data") -> str:
    replica = {"partition": partition, "size": 1, "offsetLag": 0, "isFuture": False}
    dirs = [{"logDir": log_dir, "error": None, "partitions": [replica]}]
    return _LOG_DIRS_HEAD + json.dumps({"version": 1, "brokers": [{"broker": 1, "logDirs": dirs}]})


_STATUS_FIELDS = (
    "Partition: 0\nReplica: 1\nIsLeader: true\nIsObserver: false\nIsIsrEligible: true\n"
    "IsInIsr: true\nIsCaughtUp: true\nLastCaughtUpLagMs: 0\nLastFetchLagMs: 0\n"
    "LogStartOffset: 0\nLogEndOffset: 10\n"
)
_STATUS_HEADER = (
    "Topic Partition Replica IsLeader IsObserver IsIsrEligible IsInIsr IsCaughtUp "
    "LastCaughtUpLagMs LastFetchLagMs LogStartOffset LogEndOffset\n"
)
_STATUS_ROW = "0 1 true false true true true 0 0 0 10\n"
_REPLICA = {
    "Replica": 1,
    "IsLeader": True,
    "IsObserver": False,
    "IsIsrEligible": True,
    "IsInIsr": True,
    "IsCaughtUp": True,
    "LastCaughtUpLagMs": 0,
    "LastFetchLagMs": 0,
    "LogStartOffset": 0,
    "LogEndOffset": 10,
}


def _status_json(topic: str = "orders", **extra: Any) -> str:
    part = {"Partition": 0, "Replicas": [{**_REPLICA, **extra}]}
    return json.dumps([{"Topic": topic, "Partitions": [part]}])


def _plan(entry: dict[str, Any] | None = None, **top: Any) -> str:
    first = {"topic": "orders", "partition": 0, "replicas": [1]}
    return json.dumps({"version": 1, "partitions": [first, *([entry] if entry else [])], **top})


def _topics(entry: dict[str, Any]) -> str:
    policy = {"version": 2, "replicas": [{"count": 1, "constraints": {"rack": "us-west"}}]}
    return json.dumps({"default_placement": policy, "topics": [{"name": "orders"}, entry]})


def _valid_with_secret(s: str) -> list[tuple[str, str]]:
    """(reader, text) pairs: a file of the reader's format with ``s`` in a later field."""
    q = json.dumps(s)

    def j(template: str) -> str:
        return template.replace("KEY", q)

    return [
        # an extra key, a duplicate key, a rack that two entries of a node give apart
        ("inventory-json", j('{"brokers": [{"id": 1, "rack": "r1", KEY: 1}]}')),
        (
            "inventory-json",
            j('{"brokers": [{"id": 1, "rack": "r1"}], KEY: 1, KEY: 2}'),
        ),
        (
            "inventory-json",
            j('{"brokers": [{"id": 1, "rack": KEY}], "controllers": [{"id": 1, "rack": "r2"}]}'),
        ),
        ("inventory-json", j('{"brokers": [{"id": KEY, "rack": "r1"}]}')),
        (
            "inventory-json-validate",
            j('{"brokers": [{"id": 1, "rack": "r1", KEY: 1}]}'),
        ),
        ("inventory-csv", f"id,rack\n1,r1\n{s},r1\n"),
        ("inventory-csv", f"id,rack,capacity_bytes\n1,r1,{s}\n"),
        ("inventory-csv", f"id,rack,{s}\n1,r1,2\n"),
        ("sizes", f"topic,partition,size_bytes\norders,0,1\n{s},0,1\n"),
        ("sizes", f"topic,partition,size_bytes\norders,{s},1\n"),
        ("sizes", f"topic,partition,size_bytes\norders,0,{s}\n"),
        ("log-dirs", _log_dirs_doc(s + "-0")),
        ("log-dirs", _log_dirs_doc(s)),
        ("log-dirs", _log_dirs_doc("orders-" + s)),
        ("log-dirs", f"Received log directory information from brokers 1,{s}\n{{}}"),
        ("log-dirs", j('{"version": KEY, "brokers": []}')),
        ("log-dirs", j('{"version": 1, KEY: 1, KEY: 2, "brokers": []}')),
        ("replica-status", f"Topic: {s}\n{_STATUS_FIELDS}"),
        (
            "replica-status",
            f"Topic: orders\n{_STATUS_FIELDS.replace('Replica: 1', 'Replica: ' + s)}",
        ),
        ("replica-status", f"Topic: orders\n{_STATUS_FIELDS.replace('true', s, 1)}"),
        ("replica-status", f"{_STATUS_HEADER}{s} {_STATUS_ROW}"),
        ("replica-status", f"{_STATUS_HEADER}orders 0 {s} {_STATUS_ROW[4:]}"),
        ("replica-status", _status_json(s)),
        ("replica-status", _status_json(**{s: 1})),
        ("replica-status", j('[{"Topic": "orders", KEY: 1, KEY: 2}]')),
        ("plan", _plan({"topic": s, "partition": 0, "replicas": [1]})),
        ("plan", _plan({"topic": "orders", "partition": 1, "replicas": [1], s: 1})),
        ("plan", _plan(**{s: 1})),
        ("plan", _plan(version=s)),
        ("plan", j('{"version": 1, KEY: 1, KEY: 2, "partitions": []}')),
        ("plan-entries", _plan({"topic": s, "partition": 0, "replicas": [1]})),
        ("current", _plan({"topic": s, "partition": 0, "replicas": [1]})),
        ("topics", _topics({"name": s})),
        ("topics", _topics({"name": "payments", s: 1})),
        ("topics", _topics({"name": "payments", "placement": s})),
        ("topics", _topics({"name": "payments", "placement": s.replace(":", "")})),
        ("topics", j('{"topics": [{"name": "orders"}], KEY: 1, KEY: 2}')),
    ]


_CASES = _valid_with_secret(SECRET)


@pytest.mark.parametrize("case", range(len(_CASES)))
def test_a_secret_in_a_field_of_a_valid_looking_file_is_not_quoted(
    case: int, tmp_path: Path
) -> None:
    for secret in (SECRET, HUGE):
        reader, text = _valid_with_secret(secret)[case]
        name, read = READERS[reader]
        path = tmp_path / name
        path.write_text(text)
        err = refused(read, path)
        assert err.line is not None, err.message
        assert_not_quoted(err, secret)


def test_a_node_id_of_a_properties_directory_is_not_quoted(tmp_path: Path) -> None:
    (tmp_path / "server.properties").write_text(f"node.id={SECRET}\nbroker.rack=r1\n")
    err = refused(load_inventory, tmp_path)
    assert err.line == 1
    assert_not_quoted(err, SECRET)


# -- short values are still named ----------------------------------------------------------


def test_a_short_bad_value_is_named(tmp_path: Path) -> None:
    path = tmp_path / "inventory.csv"
    path.write_text("id,rack\n1,r1\n2x,r1\n")
    err = refused(load_inventory, path)
    assert "'2x'" in err.message
    assert (err.line, err.column) == (3, 1)


def test_a_long_legal_topic_name_is_cut_with_an_ellipsis(tmp_path: Path) -> None:
    path = tmp_path / "sizes.csv"
    name = "orders.events.customers-v2"
    path.write_text(f"topic,partition,size_bytes\n{name},0,1\n{name},0,2\n")
    err = refused(load_sizes, path)
    assert "orders.events.c…" in err.message
    assert name not in err.message
    assert err.line == 3


def test_the_kind_of_the_first_character_is_said(tmp_path: Path) -> None:
    path = tmp_path / "inventory.csv"
    path.write_text(SECRET + "\n")
    err = refused(load_inventory, path)
    assert "a letter" in err.message
    path.write_text("<html>\n")
    assert "'<'" in refused(load_inventory, path).message


# -- through the command line --------------------------------------------------------------


def _run(cli: Cli, args: list[Any]) -> Result:
    r = cli([str(a) for a in args])
    assert r.exit_code == 2, r.output
    said = r.stdout + r.stderr
    assert "ghs_SECRET" not in said, said
    assert "error:" in said
    return r


def _secret_file(tmp_path: Path, name: str, text: str = SECRET + "\n") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_cli_validate_inventory_csv(cli: Cli, tmp_path: Path) -> None:
    inventory = _secret_file(tmp_path, "inventory.csv")
    _run(cli, ["validate", EXAMPLES / "placement", "--inventory", inventory])


def test_cli_validate_inventory_json_extra_key(cli: Cli, tmp_path: Path) -> None:
    text = '{"brokers": [{"id": 1, "rack": "r1", KEY: 1}]}'.replace("KEY", json.dumps(SECRET))
    inventory = _secret_file(tmp_path, "inventory.json", text)
    _run(cli, ["validate", EXAMPLES / "placement", "--inventory", inventory])


def test_cli_assign_sizes(cli: Cli, tmp_path: Path) -> None:
    sizes = _secret_file(tmp_path, "sizes.csv")
    args = ["assign", "--inventory", EXAMPLES / "inventory.json", "--topics"]
    args += [EXAMPLES / "topics.json", "--current", EXAMPLES / "describe.txt"]
    _run(cli, [*args, "--sizes", sizes, "--out", tmp_path / "plan.json"])


def test_cli_assign_sizes_after_a_log_dirs_banner(cli: Cli, tmp_path: Path) -> None:
    sizes = _secret_file(tmp_path, "sizes.txt", _LOG_DIRS_HEAD + SECRET + "\n")
    args = ["assign", "--inventory", EXAMPLES / "inventory.json", "--topics"]
    args += [EXAMPLES / "topics.json", "--current", EXAMPLES / "describe.txt"]
    _run(cli, [*args, "--sizes", sizes, "--out", tmp_path / "plan.json"])


def test_cli_plan_show(cli: Cli, tmp_path: Path) -> None:
    plan = _secret_file(
        tmp_path, "plan.json", _plan({"topic": SECRET, "partition": 0, "replicas": [1]})
    )
    _run(cli, ["plan", "show", plan])


def test_cli_simulate_replica_status(cli: Cli, tmp_path: Path) -> None:
    status = _secret_file(tmp_path, "status.txt")
    args = ["simulate", "--current", EXAMPLES / "describe.txt", "--inventory"]
    args += [EXAMPLES / "inventory.json", "--fail-brokers", "1,2,3,4,5"]
    _run(cli, [*args, "--replica-status", status])
