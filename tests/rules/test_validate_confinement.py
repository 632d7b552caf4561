"""`validate` in CI on a pull request's checkout: it reads nothing outside the directory it
is given, never hangs on a special file, quotes no foreign file, and lists every file it
checked (a gate can tell "checked, clean" from "nothing checked").

Via typer's CliRunner, as tests/cli/test_validate_cli.py does.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from typer.testing import Result

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
ORDERS = EXAMPLES / "placement" / "orders.json"
SECRET = "https://x-access-token:ghs_SECRETSECRET0123456789@github.com"
LEAK = "ghs_SECRET"
FORMATS = ["text", "json", "sarif", "junit", "github"]

Cli = Callable[..., Result]


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    """A `.git-credentials`-like file of the runner, outside every directory validated."""
    p = tmp_path / "runner" / "secret"
    p.parent.mkdir()
    p.write_text(SECRET + "\n", encoding="utf-8")
    return p


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A pull request's policies directory holding one clean policy."""
    root = tmp_path / "checkout" / "policies"
    root.mkdir(parents=True)
    shutil.copy(ORDERS, root / "orders.json")
    return root


def run(cli: Cli, fmt: str, *args: str | Path, monkeypatch: pytest.MonkeyPatch) -> Result:
    """`validate ARGS` in ``fmt``; github as CI runs it: the default under GITHUB_ACTIONS."""
    if fmt == "github":
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        return cli(["validate", *args])
    return cli(["validate", "--format", fmt, *args])


def checked_files(fmt: str, out: str) -> set[str]:
    """The files a report says it checked."""
    if fmt == "json":
        return {f["path"] for f in json.loads(out)["files"]}
    if fmt == "sarif":
        (run_,) = json.loads(out)["runs"]
        return {a["location"]["uri"] for a in run_["artifacts"]}
    if fmt == "junit":
        return {c.attrib["name"] for c in ET.fromstring(out.encode()).iter("testcase")}
    assert fmt == "text"
    return {line.split(" ", 1)[1] for line in out.splitlines() if line[:5] in ("PASS ", "FAIL ")}


def no_leak(result: Result) -> None:
    assert LEAK not in result.stdout, result.stdout
    assert LEAK not in result.stderr, result.stderr
    assert "x-access-token" not in result.stdout + result.stderr


# -- the directory walk stays inside the directory --------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_symlink_leading_out_of_the_directory_is_skipped_with_a_note(
    cli: Cli, checkout: Path, secret: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (checkout / "evil.json").symlink_to(secret)
    result = run(cli, fmt, checkout, monkeypatch=monkeypatch)
    no_leak(result)
    assert result.exit_code == 0, result.output  # the rest is clean: the skip is a note
    note = [line for line in result.stderr.splitlines() if "evil.json" in line]
    assert note, result.stderr
    assert note[0].startswith("note: ") and "outside" in note[0]
    assert str(secret) not in result.stderr  # the note names the link, not its target
    assert "evil.json" not in result.stdout  # not a checked file
    if fmt != "github":
        assert checked_files(fmt, result.stdout) == {str(checkout / "orders.json")}


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_directory_of_nothing_but_a_link_out_checks_nothing(
    cli: Cli, tmp_path: Path, secret: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "only"
    root.mkdir()
    (root / "evil.json").symlink_to(secret)
    result = run(cli, fmt, root, monkeypatch=monkeypatch)
    no_leak(result)
    assert result.exit_code == 2  # nothing was checked: a usage error, as an empty directory
    assert "evil.json" in result.stderr and "outside" in result.stderr
    assert result.stdout == ""


def test_a_properties_link_out_is_skipped(
    cli: Cli, checkout: Path, secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (checkout / "server.properties").symlink_to(secret)
    result = run(cli, "text", checkout, monkeypatch=monkeypatch)
    no_leak(result)
    assert result.exit_code == 0
    assert "server.properties" in result.stderr


def test_a_symlinked_directory_leading_out_is_not_walked(
    cli: Cli, checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "runner" / "config"
    outside.mkdir(parents=True)
    (outside / "leak.json").write_text(SECRET, encoding="utf-8")
    (checkout / "sub").symlink_to(outside, target_is_directory=True)
    result = run(cli, "json", checkout, monkeypatch=monkeypatch)
    no_leak(result)
    assert result.exit_code == 0
    assert checked_files("json", result.stdout) == {str(checkout / "orders.json")}
    assert any(str(checkout / "sub") in line for line in result.stderr.splitlines())


def test_a_symlinked_snapshot_leading_out_is_not_read(
    cli: Cli,
    checkout: Path,
    tmp_path: Path,
    example_snapshot: Callable[[Path], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "runner").mkdir()
    snap = example_snapshot(tmp_path / "runner" / "snap")
    (checkout / "snap").symlink_to(snap, target_is_directory=True)
    result = run(cli, "json", checkout, monkeypatch=monkeypatch)
    assert result.exit_code == 0, result.output  # the snapshot has findings: not read
    assert checked_files("json", result.stdout) == {str(checkout / "orders.json")}
    assert str(checkout / "snap") in result.stderr


def test_a_snapshot_table_linked_out_of_the_directory_skips_the_snapshot(
    cli: Cli,
    checkout: Path,
    secret: Path,
    example_snapshot: Callable[[Path], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    snap = example_snapshot(checkout / "snap")
    (snap / "topics.parquet").unlink()
    (snap / "topics.jsonl").symlink_to(secret)
    result = run(cli, "json", checkout, monkeypatch=monkeypatch)
    no_leak(result)
    assert result.exit_code == 0, result.output
    assert checked_files("json", result.stdout) == {str(checkout / "orders.json")}
    assert "topics.jsonl" in result.stderr and "outside" in result.stderr


def test_a_symlink_to_a_file_inside_the_directory_is_checked(
    cli: Cli, checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (checkout / "shared").mkdir()
    shutil.copy(EXAMPLES / "broken" / "pasted-from-docs.json", checkout / "shared" / "bad.json")
    (checkout / "alias.json").symlink_to(Path("shared") / "bad.json")
    result = run(cli, "json", checkout, monkeypatch=monkeypatch)
    assert result.exit_code == 1
    assert result.stderr == ""
    report = json.loads(result.stdout)
    assert {f["path"] for f in report["files"]} == {
        str(checkout / "orders.json"),
        str(checkout / "alias.json"),
        str(checkout / "shared" / "bad.json"),
    }
    (alias,) = [f for f in report["files"] if f["path"].endswith("alias.json")]
    assert [d["code"] for d in alias["diagnostics"]] == ["MRC102"]


def test_a_directory_given_through_a_symlink_is_walked(
    cli: Cli, checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    link = tmp_path / "link"
    link.symlink_to(checkout, target_is_directory=True)
    result = run(cli, "json", link, monkeypatch=monkeypatch)
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert checked_files("json", result.stdout) == {str(link / "orders.json")}


# -- special files: skipped, never opened -----------------------------------------------


@pytest.fixture
def watchdog() -> Iterator[Callable[[Path], list[bool]]]:
    """`watchdog(fifo)`: after a few seconds, unblocks whoever opened ``fifo`` to read it
    (by opening it to write) and records that it was stuck. A test then fails instead of
    hanging forever."""
    stop = threading.Event()
    threads: list[threading.Thread] = []

    def watch(fifo: Path) -> list[bool]:
        stuck: list[bool] = []

        def run_() -> None:
            deadline = time.monotonic() + 15
            while not stop.is_set() and time.monotonic() < deadline:
                time.sleep(0.1)
            while not stop.is_set():
                try:  # succeeds only while a reader waits on the FIFO
                    fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                except OSError:
                    time.sleep(0.1)
                    continue
                stuck.append(True)
                os.close(fd)

        thread = threading.Thread(target=run_, daemon=True)
        thread.start()
        threads.append(thread)
        return stuck

    yield watch
    stop.set()
    for thread in threads:
        thread.join(timeout=5)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_the_directory_is_skipped_with_a_note(
    cli: Cli,
    checkout: Path,
    watchdog: Callable[[Path], list[bool]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fifo = checkout / "pipe.json"
    os.mkfifo(fifo)
    stuck = watchdog(fifo)
    result = run(cli, "json", checkout, monkeypatch=monkeypatch)
    assert not stuck
    assert result.exit_code == 0, result.output
    assert checked_files("json", result.stdout) == {str(checkout / "orders.json")}
    assert any("pipe.json" in line and "FIFO" in line for line in result.stderr.splitlines())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_table_in_a_snapshot_of_the_directory_is_not_opened(
    cli: Cli,
    checkout: Path,
    example_snapshot: Callable[[Path], Path],
    watchdog: Callable[[Path], list[bool]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    snap = example_snapshot(checkout / "snap")
    (snap / "topics.parquet").unlink()
    fifo = snap / "topics.jsonl"
    os.mkfifo(fifo)
    stuck = watchdog(fifo)
    result = run(cli, "json", checkout, monkeypatch=monkeypatch)
    assert not stuck, "validate opened the FIFO and waited on it"
    assert result.exit_code == 0, result.output
    assert checked_files("json", result.stdout) == {str(checkout / "orders.json")}
    assert "topics.jsonl" in result.stderr and "FIFO" in result.stderr


# -- a file that is not what validate expects is refused without quoting it -------------


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit", "github"])
def test_a_foreign_file_named_on_the_command_line_is_refused_unquoted(
    cli: Cli, secret: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path given explicitly is read (the user chose it), never quoted."""
    result = run(cli, fmt, secret, monkeypatch=monkeypatch)
    no_leak(result)
    assert result.exit_code == 1
    if fmt == "json":
        (file,) = json.loads(result.stdout)["files"]
        (d,) = file["diagnostics"]
        assert "https" not in d["message"] + d["hint"]  # not even the first token
        assert (d["code"], d["line"], d["column"]) == ("MRC101", 1, 1)
        assert d["message"].startswith("not a placement policy (not JSON)")
        assert "'h'" in d["message"]  # the first character, at most


def test_the_text_report_shows_no_line_of_a_foreign_file(cli: Cli, secret: Path) -> None:
    result = cli(["validate", "--format", "text", secret])
    assert result.exit_code == 1
    no_leak(result)


def test_a_symlink_named_on_the_command_line_is_read_but_not_quoted(
    cli: Cli, tmp_path: Path, secret: Path
) -> None:
    link = tmp_path / "policy.json"
    link.symlink_to(secret)
    result = cli(["validate", "--format", "json", link])
    no_leak(result)
    assert result.exit_code == 1
    (file,) = json.loads(result.stdout)["files"]
    assert file["path"] == str(link)
    assert "not JSON" in file["diagnostics"][0]["message"]


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit", "github"])
def test_a_properties_value_that_is_not_json_is_not_quoted(
    cli: Cli, tmp_path: Path, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "server.properties"
    p.write_text(f"broker.id=1\nconfluent.log.placement.constraints={SECRET}\n", encoding="utf-8")
    result = run(cli, fmt, p, monkeypatch=monkeypatch)
    no_leak(result)
    assert result.exit_code == 1
    assert "not JSON" in result.stdout


JUNK = "A" * 100_000


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (JUNK, "MRC101"),  # no JSON at all
        ('{"version": 2, "replicas": ' + JUNK + "}", "MRC101"),  # a bare word
        ('{"version": 2, "replicas": [' + "1" + JUNK + "]}", "MRC101"),  # a number gone bad
        ('{"version": 2, "replicas": [<' + JUNK + ">]}", "MRC101"),  # a "placeholder"
        ('{"' + JUNK + '" 1}', "MRC101"),  # a key without its colon
        ('{"version": 2, "replicas": [], "' + JUNK + '": 1}', "MRC204"),  # an unknown key
        ('{"version": "' + JUNK + '", "replicas": []}', "MRC202"),  # a string value
        ('{"' + JUNK + '": 1, "' + JUNK + '": 2}', "MRC108"),  # a duplicate key
    ],
    ids=["not-json", "word", "number", "placeholder", "key", "unknown-key", "value", "dup"],
)
@pytest.mark.parametrize("fmt", ["json", "sarif", "junit", "github", "text"])
def test_a_100kb_token_is_not_quoted(
    cli: Cli, tmp_path: Path, text: str, code: str, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "junk.json"
    p.write_text(text, encoding="utf-8")
    result = run(cli, fmt, p, monkeypatch=monkeypatch)
    assert result.exit_code == 1
    assert code in result.stdout
    # a few characters of the token at most: the text report's excerpt (a window of 120
    # characters around the column) is the only longer piece
    limit = 120 if fmt == "text" else 16
    assert "A" * (limit + 1) not in result.stdout
    if fmt == "json":
        assert len(result.stdout) < 4_000
        for d in json.loads(result.stdout)["files"][0]["diagnostics"]:
            assert "A" * 17 not in d["message"] + d["hint"] + d["pointer"]
            assert len(d["message"]) < 200


# -- every checked file is in the report ------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "text", "sarif", "junit"])
def test_a_clean_snapshot_lists_the_files_it_checked(
    cli: Cli, tmp_path: Path, synth_snapshot: Callable[..., Path], fmt: str
) -> None:
    snap = synth_snapshot(tmp_path / "snap")
    result = cli(["validate", "--format", fmt, snap])
    assert result.exit_code == 0, result.output
    files = checked_files(fmt, result.stdout)
    assert files, "a clean snapshot reported no checked file"
    for name in ("brokers", "topics", "partitions"):
        assert any(Path(f).relative_to(snap).parts[0].startswith(name) for f in files), files
    if fmt == "json":
        report = json.loads(result.stdout)
        assert report["summary"]["files"] == len(files)
        assert all(f["valid"] for f in report["files"])


@pytest.mark.parametrize("fmt", ["json", "text", "sarif", "junit"])
def test_a_directory_of_clean_policies_lists_every_policy(
    cli: Cli, tmp_path: Path, fmt: str
) -> None:
    root = tmp_path / "policies"
    shutil.copytree(EXAMPLES / "placement", root)
    result = cli(["validate", "--format", fmt, root])
    assert result.exit_code == 0
    assert checked_files(fmt, result.stdout) == {str(p) for p in root.glob("*.json")}


def test_a_long_placement_key_of_a_properties_file_is_cut(cli: Cli, tmp_path: Path) -> None:
    """A key that looks like a placement setting is named (and checked), 64 characters at
    most: the file may be no broker configuration at all."""
    key = "confluent." + "ghs_SECRET" + "x" * 100_000 + ".placement.constraints"
    p = tmp_path / "server.properties"
    p.write_text(f'{key}={{"version": 2, "replicas": [1,]}}\n', encoding="utf-8")
    result = cli(["validate", "--format", "json", p])
    assert result.exit_code == 1
    diags = json.loads(result.stdout)["files"][0]["diagnostics"]
    assert {d["code"] for d in diags} == {"MRC601", "MRC103"}
    for d in diags:
        assert "x" * 65 not in d["message"] + d["hint"] + (d["context"] or "")
    assert len(result.stdout) < 4_000
