"""`may_excerpt`: a report shows no source line of a file that is not what validate expects
(it may be a link to a secret of the machine running the check)."""

from __future__ import annotations

from pathlib import Path

import pytest

from placement.diagnostics.quoting import may_excerpt
from placement.rules.base import CheckContext
from placement.rules.validate import validate_json_bytes, validate_properties_bytes

SECRET = b"https://x-access-token:ghs_SECRETSECRET0123456789@github.com\n"
CTX = CheckContext(None, None, None)


@pytest.mark.parametrize(
    "data",
    [SECRET, b"\n\n  " + SECRET, b"\xef\xbb\xbf" + SECRET, b"\xff\xfe{\x00", b"PK\x03\x04\xff"],
    ids=["text", "after-blank-lines", "after-a-bom", "utf-16", "binary"],
)
def test_no_excerpt_of_a_file_that_is_no_json(data: bytes) -> None:
    diags = [d for d in validate_json_bytes(data, "f.json", CTX) if d.code != "MRC107"]
    (d,) = diags
    assert not may_excerpt(d)
    assert "ghs_" not in d.message + d.hint


def test_no_excerpt_of_a_properties_value_that_is_no_json() -> None:
    data = b"broker.rack=a\nconfluent.log.placement.constraints=" + SECRET
    (d,) = validate_properties_bytes(data, "server.properties", CTX)
    assert (d.code, d.line, d.column) == ("MRC101", 2, 37)
    assert not may_excerpt(d)
    assert "ghs_" not in d.message + d.hint


@pytest.mark.parametrize(
    "data",
    [b'{"version": 2, "replicas": [1,]}', b'{"version": 2,\n "replicas": x}', b"// c\n{}"],
)
def test_a_json_file_with_a_mistake_keeps_its_excerpt(data: bytes) -> None:
    (d, *_) = validate_json_bytes(data, "f.json", CTX)
    assert may_excerpt(d)


def test_the_examples_keep_their_excerpts() -> None:
    root = Path(__file__).resolve().parents[2] / "examples" / "broken"
    for path in root.glob("*.json"):
        assert all(may_excerpt(d) for d in validate_json_bytes(path.read_bytes(), "x", CTX))
