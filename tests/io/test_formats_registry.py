"""The registry of input formats (placement/io/formats.py): every row is complete (a fuzz
family, a docs section, a reader, a cap of io/limits.py), and it tells every example and
fixture file apart as the code before it did."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from fuzz import targets
from placement.errors import InputError
from placement.io import formats, limits
from placement.io.current import read_current
from placement.io.formats import FORMATS, current_format, sizes_format, validate_format
from placement.io.jsonsrc import EncodingError, decode_utf8
from placement.rules.validate import json_kind

REPO = Path(__file__).resolve().parent.parent.parent
DOCS = REPO / "docs" / "formats.md"

# What the code before the registry (commit 5c10616) took each file for: as `validate`
# checks it (a .json file by its top-level keys), as `--current` reads it, and as `--sizes`
# reads it ("-": not UTF-8, refused before the format is asked). Recorded by running that
# code's own tests of format (describe.looks_like_describe, logdirs.looks_like_logdirs,
# plan.inputs.current_kind, rules.validate.json_kind) on every file.
EXPECTED_BY_KIND: dict[tuple[str, str, str], list[str]] = {
    ("describe", "describe", "sizes"): [
        "examples/describe-apache.txt",
        "examples/describe-drifted.txt",
        "examples/describe.txt",
        "tests/fixtures/assign/describe-policies.txt",
        "tests/fixtures/degraded/describe.txt",
        "tests/fixtures/degraded/healthy.txt",
        "tests/fixtures/describe/cluster.txt",
        "tests/fixtures/describe/policy-changed.txt",
        "tests/fixtures/describe/seed-test-observers.txt",
        "tests/fixtures/describe/under-min-isr.txt",
        "tests/fixtures/replica-status/cluster-verbose.txt",
        "tests/fixtures/replica-status/seed-verbose.txt",
        "tests/fixtures/rules/MRC901/fail-broker-not-in-inventory.txt",
        "tests/fixtures/rules/MRC901/fail-policy-changed.txt",
        "tests/fixtures/rules/MRC901/pass-reassigned.txt",
        "tests/fixtures/rules/MRC902/fail-leader-minus-one.txt",
        "tests/fixtures/rules/MRC902/fail-leader-none.txt",
        "tests/fixtures/rules/MRC902/pass-every-partition-led.txt",
        "tests/fixtures/rules/MRC903/broker-default.txt",
        "tests/fixtures/rules/MRC903/fail-one-in-sync.txt",
        "tests/fixtures/rules/MRC903/pass-promoted-observer.txt",
        "tests/fixtures/rules/MRC904/fail-sync-replica-lagging.txt",
        "tests/fixtures/rules/MRC904/pass-observers-out-of-isr.txt",
        "tests/fixtures/rules/MRC905/fail-reassignment-running.txt",
        "tests/fixtures/rules/MRC905/pass-reassignment-finished.txt",
    ],
    ("inventory", "reassignment", "logdirs"): [
        "examples/inventory-expanded.json",
        "examples/inventory-two-dc.json",
        "examples/inventory.json",
        "tests/fixtures/inventories/controller-no-rack-majority.json",
        "tests/fixtures/inventories/controller-no-rack.json",
        "tests/fixtures/inventories/quorum-1-1-no-rack.json",
        "tests/fixtures/inventories/quorum-2-1.json",
        "tests/fixtures/inventories/quorum-2-2-1-three-sites.json",
        "tests/fixtures/inventories/quorum-2-2-1.json",
        "tests/fixtures/inventories/quorum-2-2.json",
        "tests/fixtures/inventories/quorum-3-1-1.json",
        "tests/fixtures/inventories/quorum-3-2.json",
        "tests/fixtures/inventories/quorum-one-rack.json",
        "tests/fixtures/inventories/rack-empty.json",
        "tests/fixtures/inventories/rack-missing.json",
        "tests/fixtures/inventories/three-racks.json",
        "tests/fixtures/inventories/two-racks-no-controllers.json",
        "tests/fixtures/logdirs/bare.json",
    ],
    ("policy", "reassignment", "-"): [
        "tests/fixtures/rules/MRC106/fail-latin1-rack.json",
        "tests/fixtures/rules/MRC106/fail-utf16.json",
    ],
    ("policy", "reassignment", "logdirs"): [
        "examples/broken/inventory-typos.json",
        "examples/broken/pasted-from-docs.json",
        "examples/broken/v1-promotion.json",
        "examples/log-dirs.txt",
        "examples/placement/audit-log.json",
        "examples/placement/clickstream.json",
        "examples/placement/orders.json",
        "examples/placement/payments-stretched.json",
        "tests/fixtures/html/score-report.json",
        "tests/fixtures/logdirs/crlf.txt",
        "tests/fixtures/logdirs/kafka.txt",
        "tests/fixtures/rules/MRC101/fail-missing-comma.json",
        "tests/fixtures/rules/MRC101/fail-nbsp.json",
        "tests/fixtures/rules/MRC101/fail-or-alternatives.json",
        "tests/fixtures/rules/MRC101/fail-placeholders.json",
        "tests/fixtures/rules/MRC101/fail-single-quotes.json",
        "tests/fixtures/rules/MRC101/fail-unquoted-keys.json",
        "tests/fixtures/rules/MRC101/pass-orders.json",
        "tests/fixtures/rules/MRC102/fail-comment-after-document.json",
        "tests/fixtures/rules/MRC102/fail-hash-comment.json",
        "tests/fixtures/rules/MRC102/fail-inline-optional.json",
        "tests/fixtures/rules/MRC102/fail-pasted-from-docs.json",
        "tests/fixtures/rules/MRC102/pass-comment-free.json",
        "tests/fixtures/rules/MRC103/fail-after-last-entry.json",
        "tests/fixtures/rules/MRC103/fail-after-last-member.json",
        "tests/fixtures/rules/MRC103/fail-after-rack.json",
        "tests/fixtures/rules/MRC103/fail-crlf.json",
        "tests/fixtures/rules/MRC103/pass-legacy-v1.json",
        "tests/fixtures/rules/MRC104/fail-mid-object.json",
        "tests/fixtures/rules/MRC104/fail-mid-string.json",
        "tests/fixtures/rules/MRC104/fail-missing-closing-brace.json",
        "tests/fixtures/rules/MRC104/pass-orders.json",
        "tests/fixtures/rules/MRC105/pass-one-line.json",
        "tests/fixtures/rules/MRC106/pass-utf8-rack.json",
        "tests/fixtures/rules/MRC107/fail-bom-and-string-version.json",
        "tests/fixtures/rules/MRC107/fail-bom-one-line.json",
        "tests/fixtures/rules/MRC107/fail-bom.json",
        "tests/fixtures/rules/MRC107/pass-no-bom.json",
        "tests/fixtures/rules/MRC108/fail-rack-twice.json",
        "tests/fixtures/rules/MRC108/fail-replicas-twice.json",
        "tests/fixtures/rules/MRC108/fail-version-twice.json",
        "tests/fixtures/rules/MRC108/pass-orders.json",
        "tests/fixtures/rules/MRC109/fail-deep-rack.json",
        "tests/fixtures/rules/MRC109/pass-orders.json",
        "tests/fixtures/rules/MRC201/pass-orders.json",
        "tests/fixtures/rules/MRC202/fail-float.json",
        "tests/fixtures/rules/MRC202/fail-missing.json",
        "tests/fixtures/rules/MRC202/fail-string-10.json",
        "tests/fixtures/rules/MRC202/fail-string.json",
        "tests/fixtures/rules/MRC202/fail-three.json",
        "tests/fixtures/rules/MRC202/fail-true.json",
        "tests/fixtures/rules/MRC202/pass-v1.json",
        "tests/fixtures/rules/MRC202/pass-v2.json",
        "tests/fixtures/rules/MRC203/fail-flattened-rack.json",
        "tests/fixtures/rules/MRC203/fail-no-constraints.json",
        "tests/fixtures/rules/MRC203/fail-no-count.json",
        "tests/fixtures/rules/MRC203/fail-no-rack.json",
        "tests/fixtures/rules/MRC203/fail-no-replicas.json",
        "tests/fixtures/rules/MRC203/pass-orders.json",
        "tests/fixtures/rules/MRC204/fail-observer-typo.json",
        "tests/fixtures/rules/MRC204/fail-promotion-policy-case.json",
        "tests/fixtures/rules/MRC204/fail-zone-instead-of-rack.json",
        "tests/fixtures/rules/MRC204/fail-zone.json",
        "tests/fixtures/rules/MRC204/pass-orders.json",
        "tests/fixtures/rules/MRC205/fail-constraints-string.json",
        "tests/fixtures/rules/MRC205/fail-observers-null.json",
        "tests/fixtures/rules/MRC205/fail-rack-names-only.json",
        "tests/fixtures/rules/MRC205/fail-replicas-null.json",
        "tests/fixtures/rules/MRC205/fail-replicas-object.json",
        "tests/fixtures/rules/MRC205/pass-observers-empty.json",
        "tests/fixtures/rules/MRC206/fail-float.json",
        "tests/fixtures/rules/MRC206/fail-int32-overflow.json",
        "tests/fixtures/rules/MRC206/fail-negative.json",
        "tests/fixtures/rules/MRC206/fail-string.json",
        "tests/fixtures/rules/MRC206/fail-true.json",
        "tests/fixtures/rules/MRC206/fail-zero.json",
        "tests/fixtures/rules/MRC206/pass-int32-max.json",
        "tests/fixtures/rules/MRC206/pass-orders.json",
        "tests/fixtures/rules/MRC207/fail-empty.json",
        "tests/fixtures/rules/MRC207/fail-null.json",
        "tests/fixtures/rules/MRC207/fail-number.json",
        "tests/fixtures/rules/MRC207/pass-rack-with-space.json",
        "tests/fixtures/rules/MRC208/fail-empty-replicas.json",
        "tests/fixtures/rules/MRC208/pass-orders.json",
        "tests/fixtures/rules/MRC209/fail-enum-constant.json",
        "tests/fixtures/rules/MRC209/fail-near-miss.json",
        "tests/fixtures/rules/MRC209/fail-null.json",
        "tests/fixtures/rules/MRC209/pass-leader-is-observer.json",
        "tests/fixtures/rules/MRC209/pass-under-replicated.json",
        "tests/fixtures/rules/MRC301/fail-observers.json",
        "tests/fixtures/rules/MRC301/fail-replicas.json",
        "tests/fixtures/rules/MRC301/pass-orders.json",
        "tests/fixtures/rules/MRC302/same-rack.json",
        "tests/fixtures/rules/MRC303/fail-v1-with-promotion.json",
        "tests/fixtures/rules/MRC303/pass-v1-without-promotion.json",
        "tests/fixtures/rules/MRC303/pass-v2.json",
        "tests/fixtures/rules/MRC304/fail-leading-space.json",
        "tests/fixtures/rules/MRC304/fail-trailing-space.json",
        "tests/fixtures/rules/MRC304/pass-inner-space.json",
        "tests/fixtures/rules/MRC401/fail-case.json",
        "tests/fixtures/rules/MRC401/fail-unknown-region.json",
        "tests/fixtures/rules/MRC401/pass-known-racks.json",
        "tests/fixtures/rules/MRC402/fail-observers.json",
        "tests/fixtures/rules/MRC402/fail-same-rack.json",
        "tests/fixtures/rules/MRC402/pass-exact-fit.json",
        "tests/fixtures/rules/MRC403/orders.json",
        "tests/fixtures/rules/MRC501/two-sync-two-observers.json",
        "tests/fixtures/rules/MRC502/fail-leader-is-observer.json",
        "tests/fixtures/rules/MRC502/fail-no-observers.json",
        "tests/fixtures/rules/MRC502/fail-v1.json",
        "tests/fixtures/rules/MRC502/pass-v2-under-min-isr.json",
        "tests/fixtures/rules/MRC503/pass-two-racks.json",
        "tests/fixtures/rules/MRC503/single-rack.json",
        "tests/fixtures/rules/MRC701/dc-orders.json",
        "tests/fixtures/rules/MRC701/orders.json",
        "tests/fixtures/rules/MRC702/orders.json",
        "tests/fixtures/rules/MRC703/dc1-only.json",
        "tests/fixtures/rules/MRC703/east-only.json",
        "tests/fixtures/rules/MRC703/stretched.json",
        "tests/fixtures/rules/MRC703/west-only.json",
        "tests/fixtures/rules/MRC704/dc-orders.json",
        "tests/fixtures/rules/MRC704/orders.json",
        "tests/fixtures/rules/MRC801/fail-101-wrong-types.json",
        "tests/fixtures/rules/MRC801/pass-100-wrong-types.json",
        "tests/fixtures/seeds/en-example-1-us-west-us-east.json",
        "tests/fixtures/seeds/en-example-2-new-york-boston.json",
        "tests/fixtures/seeds/en-kafka-configs-v1.json",
        "tests/fixtures/seeds/en-schema-sketch.json",
        "tests/fixtures/seeds/ja-invalid-overlap.json",
        "tests/fixtures/seeds/ja-valid-distinct-racks.json",
    ],
    ("policy", "reassignment", "sizes"): [
        "examples/demo.sh",
        "examples/inventory-api-versions.txt",
        "examples/inventory-configs.txt",
        "examples/inventory-zookeeper.txt",
        "examples/inventory.csv",
        "examples/replica-status.json",
        "examples/sizes.csv",
        "tests/fixtures/inventories/rack-missing.csv",
        "tests/fixtures/inventories/three-racks.csv",
        "tests/fixtures/replica-status/cluster-compact.txt",
        "tests/fixtures/replica-status/cluster-flat.json",
        "tests/fixtures/replica-status/seed.json",
        "tests/fixtures/rules/.gitattributes",
        "tests/fixtures/rules/MRC101/cases.toml",
        "tests/fixtures/rules/MRC102/cases.toml",
        "tests/fixtures/rules/MRC102/fail-block-comment.json",
        "tests/fixtures/rules/MRC103/cases.toml",
        "tests/fixtures/rules/MRC104/cases.toml",
        "tests/fixtures/rules/MRC105/cases.toml",
        "tests/fixtures/rules/MRC105/fail-empty.json",
        "tests/fixtures/rules/MRC105/fail-whitespace-only.json",
        "tests/fixtures/rules/MRC106/cases.toml",
        "tests/fixtures/rules/MRC107/cases.toml",
        "tests/fixtures/rules/MRC108/cases.toml",
        "tests/fixtures/rules/MRC109/cases.toml",
        "tests/fixtures/rules/MRC109/fail-100000-levels.json",
        "tests/fixtures/rules/MRC201/cases.toml",
        "tests/fixtures/rules/MRC201/fail-array.json",
        "tests/fixtures/rules/MRC201/fail-double-encoded.json",
        "tests/fixtures/rules/MRC201/fail-null.json",
        "tests/fixtures/rules/MRC202/cases.toml",
        "tests/fixtures/rules/MRC203/cases.toml",
        "tests/fixtures/rules/MRC204/cases.toml",
        "tests/fixtures/rules/MRC205/cases.toml",
        "tests/fixtures/rules/MRC206/cases.toml",
        "tests/fixtures/rules/MRC207/cases.toml",
        "tests/fixtures/rules/MRC208/cases.toml",
        "tests/fixtures/rules/MRC209/cases.toml",
        "tests/fixtures/rules/MRC301/cases.toml",
        "tests/fixtures/rules/MRC302/cases.toml",
        "tests/fixtures/rules/MRC303/cases.toml",
        "tests/fixtures/rules/MRC304/cases.toml",
        "tests/fixtures/rules/MRC401/cases.toml",
        "tests/fixtures/rules/MRC402/cases.toml",
        "tests/fixtures/rules/MRC403/cases.toml",
        "tests/fixtures/rules/MRC501/cases.toml",
        "tests/fixtures/rules/MRC502/cases.toml",
        "tests/fixtures/rules/MRC503/cases.toml",
        "tests/fixtures/rules/MRC601/cases.toml",
        "tests/fixtures/rules/MRC602/cases.toml",
        "tests/fixtures/rules/MRC701/cases.toml",
        "tests/fixtures/rules/MRC702/cases.toml",
        "tests/fixtures/rules/MRC703/cases.toml",
        "tests/fixtures/rules/MRC704/cases.toml",
        "tests/fixtures/rules/MRC801/cases.toml",
        "tests/fixtures/rules/MRC901/cases.toml",
        "tests/fixtures/rules/MRC902/cases.toml",
        "tests/fixtures/rules/MRC903/cases.toml",
        "tests/fixtures/rules/MRC904/cases.toml",
        "tests/fixtures/rules/MRC905/cases.toml",
        "tests/fixtures/rules/README.md",
    ],
    ("properties", "reassignment", "sizes"): [
        "examples/server.properties",
        "tests/fixtures/inventories/combined-two-sites-servers/dc1-node-1/server.properties",
        "tests/fixtures/inventories/combined-two-sites-servers/dc1-node-2/server.properties",
        "tests/fixtures/inventories/combined-two-sites-servers/dc2-node-3/server.properties",
        "tests/fixtures/inventories/combined-two-sites-servers/dc2-node-4/server.properties",
        "tests/fixtures/inventories/kraft-no-rack-servers/kafka-1/server.properties",
        "tests/fixtures/inventories/kraft-no-rack-servers/kafka-2/server.properties",
        "tests/fixtures/inventories/kraft-no-rack-servers/kafka-3/server.properties",
        "tests/fixtures/inventories/kraft-no-rack-servers/kraft-1/server.properties",
        "tests/fixtures/inventories/kraft-no-rack-servers/kraft-2/server.properties",
        "tests/fixtures/inventories/kraft-no-rack-servers/kraft-3/server.properties",
        "tests/fixtures/inventories/rack-missing-servers/kafka-east-1/server.properties",
        "tests/fixtures/inventories/rack-missing-servers/kafka-east-2/server.properties",
        "tests/fixtures/inventories/rack-missing-servers/kafka-east-3/server.properties",
        "tests/fixtures/inventories/rack-missing-servers/kafka-west-1/log4j.properties",
        "tests/fixtures/inventories/rack-missing-servers/kafka-west-1/server.properties",
        "tests/fixtures/inventories/rack-missing-servers/kafka-west-2/server.properties",
        "tests/fixtures/inventories/rack-missing-servers/kraft-central-1/server.properties",
        "tests/fixtures/inventories/rack-missing-servers/kraft-east-1/server.properties",
        "tests/fixtures/inventories/rack-missing-servers/kraft-west-1/server.properties",
        "tests/fixtures/inventories/three-racks-servers/kafka-central-1/server.properties",
        "tests/fixtures/inventories/three-racks-servers/kafka-central-2/server.properties",
        "tests/fixtures/inventories/three-racks-servers/kafka-central-3/server.properties",
        "tests/fixtures/inventories/three-racks-servers/kafka-east-1/server.properties",
        "tests/fixtures/inventories/three-racks-servers/kafka-east-2/server.properties",
        "tests/fixtures/inventories/three-racks-servers/kafka-east-3/server.properties",
        "tests/fixtures/inventories/three-racks-servers/kafka-east-4/server.properties",
        "tests/fixtures/inventories/three-racks-servers/kafka-west-1/log4j.properties",
        "tests/fixtures/inventories/three-racks-servers/kafka-west-1/server.properties",
        "tests/fixtures/inventories/three-racks-servers/kafka-west-2/server.properties",
        "tests/fixtures/inventories/three-racks-servers/kafka-west-3/server.properties",
        "tests/fixtures/inventories/three-racks-servers/kafka-west-4/server.properties",
        "tests/fixtures/inventories/three-racks-servers/kraft-central-1/server.properties",
        "tests/fixtures/inventories/three-racks-servers/kraft-east-1/server.properties",
        "tests/fixtures/inventories/three-racks-servers/kraft-west-1/server.properties",
        "tests/fixtures/rules/MRC102/fail-comment-in-server.properties",
        "tests/fixtures/rules/MRC104/fail-cut-value.properties",
        "tests/fixtures/rules/MRC105/pass-empty-default.properties",
        "tests/fixtures/rules/MRC206/fail-quoted-count.properties",
        "tests/fixtures/rules/MRC601/fail-topic-config-key.properties",
        "tests/fixtures/rules/MRC601/fail-typo-key-and-continued-value.properties",
        "tests/fixtures/rules/MRC601/fail-typo-key.properties",
        "tests/fixtures/rules/MRC601/pass-server.properties",
        "tests/fixtures/rules/MRC602/fail-leader-selector.properties",
        "tests/fixtures/rules/MRC602/fail-observers-without-selector.properties",
        "tests/fixtures/rules/MRC602/pass-controller-only.properties",
        "tests/fixtures/rules/MRC602/pass-no-observers.properties",
        "tests/fixtures/rules/MRC602/pass-server.properties",
        "tests/fixtures/seeds/en-default-placement.properties",
    ],
    ("reassignment", "reassignment", "logdirs"): [
        "fuzz/seeds/batches/plan-0001.json",
        "fuzz/seeds/batches/rollback-0001.json",
        "fuzz/seeds/current.json",
    ],
    ("summary", "reassignment", "logdirs"): [
        "fuzz/seeds/batches/summary.json",
    ],
    ("topics", "reassignment", "logdirs"): [
        "examples/topics-changes.json",
        "examples/topics-describe.json",
        "examples/topics.json",
        "tests/fixtures/assign/changes.json",
    ],
}
EXPECTED = {name: kinds for kinds, names in EXPECTED_BY_KIND.items() for name in names}


def _slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors() -> set[str]:
    return {
        _slug(line.lstrip("#"))
        for line in DOCS.read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    }


def test_names_are_distinct_and_rows_complete() -> None:
    names = [f.name for f in FORMATS]
    assert len(names) == len(set(names))
    for f in FORMATS:
        assert f.cap in limits.ALL_LIMITS, f.name
        assert callable(f.reader), f.name
        assert f.title and f.recognised_by, f.name


def test_every_row_has_a_docs_section() -> None:
    anchors = _anchors()
    missing = [f"{f.name}: #{f.anchor}" for f in FORMATS if f.anchor not in anchors]
    assert not missing, "docs/formats.md has no section for:\n" + "\n".join(missing)


def test_every_row_has_a_fuzz_family(tmp_path: Path) -> None:
    readers = targets.build(targets.write_fixtures(tmp_path))
    families = {r.family.name for r in readers}
    missing = [f"{f.name}: {f.fuzz}" for f in FORMATS if f.fuzz not in families]
    assert not missing, "fuzz/targets.py has no family for:\n" + "\n".join(missing)
    assert targets.unfuzzed_formats(readers) == []  # what `python -m fuzz` refuses to run on
    assert targets.unfuzzed_formats(readers[:1]) != []


def test_the_markdown_table_has_a_row_per_format() -> None:
    table = formats.markdown_table()
    lines = table.splitlines()
    assert len(lines) == 2 + len(FORMATS)
    for f, line in zip(FORMATS, lines[2:], strict=True):
        assert line.startswith(f"| `{f.name}` |")
        assert f"(formats.md#{f.anchor})" in line
        assert f.cap.name in line
    assert "(docs/formats.md#" in formats.markdown_table("docs/formats.md")


def test_every_example_and_fixture_is_listed() -> None:
    """A new example or fixture gets its expected kinds here (from the old answer)."""
    found = {
        p.relative_to(REPO).as_posix()
        for base in ("examples", "tests/fixtures", "fuzz/seeds")
        for p in (REPO / base).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert found == set(EXPECTED)


def _validate_kind(path: Path, data: bytes) -> str:
    fmt = validate_format(path, data)
    if fmt.name != "policy":
        return fmt.name
    import orjson

    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        value = None
    found = formats.json_format(value)
    kind = json_kind(value)
    assert (found is None or found.name == "policy") == (kind is None)
    return "policy" if found is None else found.name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_file_is_recognised_as_before(name: str) -> None:
    path = REPO / name
    data = path.read_bytes()
    validate, current, sizes = EXPECTED[name]
    assert _validate_kind(path, data) == validate
    assert current_format(path).name == current
    try:
        text, _ = decode_utf8(data)
    except EncodingError:
        assert sizes == "-"
    else:
        assert sizes_format(path, text).name == sizes


def test_directories_are_snapshots(tmp_path: Path) -> None:
    assert current_format(tmp_path).name == "snapshot"
    assert current_format(tmp_path / "missing").name == "reassignment"  # reading says why


def test_describe_is_told_by_the_first_4096_bytes(tmp_path: Path) -> None:
    late = tmp_path / "late.txt"
    late.write_bytes(b" " * formats.SNIFF_BYTES + b"Topic: orders\n")
    assert current_format(late).name == "reassignment"
    early = tmp_path / "early.txt"
    early.write_bytes(b"\n\t Topic: orders\tPartitionCount: 1\n")
    assert current_format(early).name == "describe"
    named = tmp_path / "describe.json"
    named.write_bytes(early.read_bytes())
    assert validate_format(named, named.read_bytes()).name == "policy"  # .json: JSON
    assert current_format(named).name == "describe"  # --current goes by the bytes


def test_a_changed_file_is_looked_at_again(tmp_path: Path) -> None:
    path = tmp_path / "current"
    path.write_bytes(b'{"version":1,"partitions":[]}')
    assert current_format(path).name == "reassignment"
    path.write_bytes(b"Topic: orders\tPartitionCount: 1\tReplicationFactor: 1\n")
    assert current_format(path).name == "describe"


def test_a_file_of_no_format_is_refused_without_quoting_it(tmp_path: Path) -> None:
    secret = "AKIAabcdefSECRETVALUE=hunter2"
    path = tmp_path / "current.txt"
    path.write_text(secret + "\n", encoding="utf-8")
    assert current_format(path).name == "reassignment"
    with pytest.raises(InputError) as err:
        read_current(path)
    assert "SECRET" not in str(err.value) and "hunter2" not in str(err.value)
    assert "SECRET" not in err.value.hint


def test_the_start_of_current_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`assign` asks what --current is several times (the CLI's checks, the inputs, the
    reader): its first bytes are read once."""
    from placement.plan.inputs import current_kind

    path = tmp_path / "describe.txt"
    path.write_bytes(b"Topic: orders\tPartitionCount: 1\tReplicationFactor: 1\n")
    opened: list[Path] = []
    real = Path.open

    def counting(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == path:
            opened.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", counting)
    assert current_kind(path) == "describe"
    assert current_kind(path) == "describe"
    assert current_format(path).name == "describe"
    assert len(opened) == 1
