"""An unknown option: what other Kafka tools call one of ours points to ours, ahead of
Click's guess by spelling; options asking for a connection get a note instead."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from typer.testing import Result

from mrc_plan_cli.errors import OPTION_SYNONYMS, synonym_of

Cli = Callable[..., Result]


def _error(r: Result) -> str:
    assert r.exit_code == 2, r.output
    (line,) = [ln for ln in r.stderr.splitlines() if "No such option" in ln]
    return line


@pytest.mark.parametrize(
    "option",
    ["--remove-brokers", "--decommission", "--broker-ids-to-remove", "--remove-brokers=4"],
)
def test_removing_brokers_points_to_drain(cli: Cli, option: str) -> None:
    line = _error(cli(["assign", option, "4"]))
    assert "--drain" in line
    assert "--max-moves-per-broker" not in line


def test_a_synonym_goes_to_the_option_the_command_has(cli: Cli) -> None:
    line = _error(cli(["simulate", "--min-isr", "2"]))
    assert "--min-insync-replicas" in line and "--default-min-isr" not in line
    assert "--min-insync-replicas" in _error(cli(["validate", "--default-min-isr", "2"]))
    assert "--plan" in _error(cli(["score", "--reassignment-json-file", "p.json"]))


def test_another_commands_option_gets_no_guess_by_spelling(cli: Cli) -> None:
    line = _error(cli(["simulate", "--remove-brokers", "3"]))
    assert "--drain" in line and "does not take" in line
    assert "--fail-brokers" not in line  # Click's guess by spelling


def test_a_connection_option_names_the_commands_that_read_a_cluster(cli: Cli) -> None:
    for args in (["score", "--bootstrap-server", "k:9092"], ["--zookeeper", "z:2181"]):
        line = _error(cli(args))
        assert "this command reads files" in line and "snapshot from-cluster" in line


def test_other_unknown_options_keep_clicks_guess(cli: Cli) -> None:
    assert "--drain" in _error(cli(["assign", "--drian", "4"]))
    assert "Possible options" not in _error(cli(["assign", "--no-such-thing", "4"]))


def test_every_synonym_names_an_option_of_some_command() -> None:
    import typer

    from mrc_plan_cli.main import app

    def options(command: object) -> set[str]:
        subs = getattr(command, "commands", None)
        if subs:
            return set().union(*(options(s) for s in subs.values()))
        params = getattr(command, "params", [])
        return {o for p in params for o in (*p.opts, *p.secondary_opts)}

    known = options(typer.main.get_command(app))
    assert set(OPTION_SYNONYMS) <= known
    # the one exception: the old name of --min-insync-replicas, a hidden alias
    assert not {s for names in OPTION_SYNONYMS.values() for s in names} & known - {
        "--default-min-isr"
    }
    assert synonym_of("--Remove_Brokers", {"--drain"}) == "--drain"
