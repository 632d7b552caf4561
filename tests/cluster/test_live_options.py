"""`--bootstrap-server` on assign, simulate and validate: the usage errors, said before any
connection, and the extra a missing client library needs. No broker is needed here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

import placement.errors

Cli = Callable[..., Result]
ADDRESS = "kafka-1:9092"


@pytest.mark.parametrize(
    "args",
    [
        ["assign", "--current", "S", "--drain", "4"],
        ["simulate", "--current", "S", "--fail-brokers", "4"],
        ["simulate", "--snapshot", "S", "--fail-brokers", "4"],
    ],
)
def test_the_cluster_given_twice_is_a_usage_error_naming_both(cli: Cli, args: list[str]) -> None:
    r = cli([*args, "--bootstrap-server", ADDRESS])
    assert r.exit_code == 2, r.output
    flag = args[1]
    assert f"--bootstrap-server and {flag} both give the cluster" in r.stderr
    assert r.stdout == ""


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--command-config", "client.properties"), ("--timeout", "5"), ("--skip-unauthorized", None)],
)
@pytest.mark.parametrize(
    "args",
    [
        ["assign", "--current", "S", "--drain", "4"],
        ["simulate", "--current", "S", "--fail-brokers", "4"],
        ["validate", "S"],
    ],
)
def test_a_companion_without_bootstrap_server_is_a_usage_error(
    cli: Cli, args: list[str], flag: str, value: str | None
) -> None:
    r = cli([*args, flag, *([value] if value else [])])
    assert r.exit_code == 2, r.output
    assert f"{flag} goes with --bootstrap-server" in r.stderr


def test_validate_needs_paths_or_a_cluster(cli: Cli) -> None:
    r = cli(["validate"])
    assert r.exit_code == 2, r.output
    assert "nothing to check" in r.stderr and "--bootstrap-server" in r.stderr


def test_simulate_names_the_three_ways_to_give_the_cluster(cli: Cli) -> None:
    r = cli(["simulate", "--fail-brokers", "4"])
    assert r.exit_code == 2, r.output
    assert "--bootstrap-server HOST:PORT" in r.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["assign", "--drain", "4"],
        ["simulate", "--fail-brokers", "4"],
        ["validate"],
    ],
)
def test_a_missing_client_library_names_the_kafka_extra(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: list[str]
) -> None:
    real = placement.errors._installed
    monkeypatch.setattr(
        placement.errors, "_installed", lambda m: m != "confluent_kafka" and real(m)
    )
    r = cli([*args, "--bootstrap-server", ADDRESS])
    assert r.exit_code == 2, r.output
    assert f"mrc-plan {args[0]} --bootstrap-server" in r.stderr
    assert "pip install 'mrc-plan[kafka]'" in r.stderr
