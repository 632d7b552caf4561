"""The examples of Confluent's Multi-Region Clusters pages (English and Japanese), retyped.

Each fixture is the example as printed; the Japanese INVALID example lacks its opening
brace in the page (a "# INVALID" label takes its line), so the fixture restores it.
"""

from __future__ import annotations

import pytest
from _helpers import SEEDS, positions, validate

from placement.rules.validate import ValidateOptions, parse_ibp

IBP_3_2 = ValidateOptions(ibp=parse_ibp("3.2"))


def check(name: str, options: ValidateOptions | None = None) -> list[tuple[str, int, int]]:
    path = (SEEDS / name).resolve()
    found = validate([path], options or ValidateOptions())
    assert set(found) == {path}
    return positions(found[path])


@pytest.mark.parametrize(
    "name",
    [
        "en-example-1-us-west-us-east.json",
        "en-example-2-new-york-boston.json",
        "en-kafka-configs-v1.json",
        "ja-invalid-overlap.json",  # valid since inter.broker.protocol.version 3.3
        "ja-valid-distinct-racks.json",
        "en-default-placement.properties",
    ],
)
def test_examples_are_clean_on_current_clusters(name: str) -> None:
    assert check(name) == []


def test_example_2_needs_ibp_3_3() -> None:
    # New York and Boston both hold sync replicas and observers
    assert check("en-example-2-new-york-boston.json", IBP_3_2) == [
        ("MRC302", 21, 23),
        ("MRC302", 27, 23),
    ]


def test_example_1_has_no_shared_rack() -> None:
    assert check("en-example-1-us-west-us-east.json", IBP_3_2) == []


def test_example_1_loses_every_sync_replica_with_us_west() -> None:
    options = ValidateOptions(min_insync_replicas=2)
    assert check("en-example-1-us-west-us-east.json", options) == [("MRC503", 3, 5)]


def test_japanese_invalid_example_is_invalid_before_ibp_3_3() -> None:
    # us-east holds 1 sync replica and 1 observer; reported at the observers' rack
    assert check("ja-invalid-overlap.json", IBP_3_2) == [("MRC302", 21, 25)]


def test_japanese_valid_example_is_valid_before_ibp_3_3() -> None:
    assert check("ja-valid-distinct-racks.json", IBP_3_2) == []


def test_schema_sketch_reports_its_first_comment_only() -> None:
    # "// array of objects of this shape:" on line 4; the placeholders come later
    assert check("en-schema-sketch.json") == [("MRC102", 4, 5)]
