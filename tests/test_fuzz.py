"""Property tests: whatever the bytes, validation returns findings and never raises.

Three layers: raw bytes into the JSON and properties validators; random JSON documents
(policy-shaped or not, with the mistakes people make) checked against the standard
library's parser; and a few whole CLI runs.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import Result

from placement.io.jsonsrc import parse_json
from placement.model.diagnostic import Diagnostic, Severity
from placement.rules.base import CheckContext
from placement.rules.registry import RULES
from placement.rules.validate import validate_json_bytes, validate_properties_bytes

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SEEDS = [p.read_bytes() for p in sorted(EXAMPLES.glob("*/*.json"))]
CONTEXTS = [
    CheckContext(),
    CheckContext(min_insync_replicas=2, ibp=(3, 2)),
]
FAST = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# The syntax rules a document the stdlib accepts must never trigger (NaN, duplicate keys
# and depth are where we are deliberately stricter than `json`).
PARSE_FAILURES = {"MRC101", "MRC102", "MRC103", "MRC104", "MRC105"}


def check_diagnostics(diags: list[Diagnostic], data: bytes) -> None:
    """Every finding is registered and points inside the file."""
    # \r\n, a lone \r and \n end lines, as in placement.io.positions.LineIndex
    lines = re.split(r"\r\n|\r|\n", data.decode("utf-8-sig", errors="replace"))
    for d in diags:
        rule = RULES.get(d.code)
        assert rule is not None, f"unregistered code {d.code}"
        assert d.name == rule.name
        assert d.severity is rule.severity
        assert d.line >= 1
        assert d.column >= 1
        assert d.line <= len(lines), (d, len(lines))
        assert d.column <= len(lines[d.line - 1]) + 1, (d, lines[d.line - 1])
        assert d.message


# -- (a) random bytes -----------------------------------------------------------------


@st.composite
def spliced(draw: st.DrawFn) -> bytes:
    """An example policy with random bytes inserted, overwritten, or cut off."""
    seed = draw(st.sampled_from(SEEDS))
    i = draw(st.integers(0, len(seed)))
    j = draw(st.integers(i, min(len(seed), i + 20)))
    junk = draw(st.binary(max_size=8))
    return seed[:i] + junk + seed[j:]


ANY_BYTES = st.one_of(
    st.binary(max_size=200),
    spliced(),
    st.builds(lambda b: b"\xef\xbb\xbf" + b, st.binary(max_size=50)),
)


@FAST
@given(data=ANY_BYTES, ctx=st.sampled_from(CONTEXTS))
def test_json_bytes_never_raise(data: bytes, ctx: CheckContext) -> None:
    diags = validate_json_bytes(data, "fuzz.json", ctx)
    check_diagnostics(diags, data)
    if not data.strip(b" \t\r\n"):  # JSON whitespace only (not bytes.strip's \v, \f)
        assert [d.code for d in diags] == ["MRC105"]


PLACEMENT_KEYS = [
    b"confluent.log.placement.constraints",
    b"confluent.offsets.topic.placement.constraints",
    b"confluent.placement.constraints",
    b"confluent.log.placment.constraints",
    b"broker.rack",
]


@st.composite
def properties_bytes(draw: st.DrawFn) -> bytes:
    parts = []
    for _ in range(draw(st.integers(0, 3))):
        key = draw(st.sampled_from(PLACEMENT_KEYS))
        sep = draw(st.sampled_from([b"=", b": ", b" ", b" = "]))
        value = draw(st.one_of(st.sampled_from(SEEDS), spliced(), st.binary(max_size=40)))
        if draw(st.booleans()):  # one-line the value, or continue it with backslashes
            value = value.replace(b"\n", b" ")
        else:
            value = value.replace(b"\n", b"\\\n    ")
        eol = draw(st.sampled_from([b"\n", b"\r\n", b"\\\n", b""]))
        parts.append(key + sep + value + eol)
    parts.append(draw(st.binary(max_size=30)))
    return b"".join(draw(st.permutations(parts)))


@FAST
@given(data=st.one_of(st.binary(max_size=200), properties_bytes()), ctx=st.sampled_from(CONTEXTS))
def test_properties_bytes_never_raise(data: bytes, ctx: CheckContext) -> None:
    check_diagnostics(validate_properties_bytes(data, "server.properties", ctx), data)


# -- (b) random JSON documents ----------------------------------------------------------

REAL_KEYS = [
    "version",
    "replicas",
    "observers",
    "observerPromotionPolicy",
    "count",
    "constraints",
    "rack",
]
TYPO_KEYS = [
    "observer",
    "observerPromotionpolicy",
    "Version",
    "replica",
    "racks",
    "zone",
    "constraint",
    "count ",
    "Rack",
]
# any character but lone surrogates (json.dumps writes astral ones as escaped surrogate pairs)
BMP_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=10)
KEYS = st.one_of(st.sampled_from(REAL_KEYS + TYPO_KEYS), BMP_TEXT)
INTS = st.one_of(
    st.integers(-5, 10),
    st.sampled_from([2**31 - 1, 2**31, -(2**31), 2**63, 2**64 + 1, 10**40, -(10**300)]),
    st.integers(-(10**100), 10**100),
)
STRINGS = st.one_of(
    st.sampled_from(
        [
            "us-west",
            "us-east",
            "eu-central",
            " us-west",
            "",
            "2",
            "under-min-isr",
            "under-replicated",
            "leader-is-observer",
            "under-min-isrs",
        ]
    ),
    BMP_TEXT,
)
LEAVES = st.one_of(st.none(), st.booleans(), INTS, st.floats(), STRINGS)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=5)),
    max_leaves=25,
)
ENTRY = st.fixed_dictionaries(
    {
        "count": st.one_of(st.integers(-1, 6), VALUES),
        "constraints": st.one_of(st.fixed_dictionaries({"rack": STRINGS}), VALUES),
    },
    optional={"extra": VALUES},
)
POLICY = st.fixed_dictionaries(
    {
        "version": st.one_of(st.sampled_from([1, 2]), LEAVES),
        "replicas": st.lists(ENTRY, max_size=4),
    },
    optional={
        "observers": st.one_of(st.lists(ENTRY, max_size=3), LEAVES),
        "observerPromotionPolicy": STRINGS,
        "observer": st.lists(ENTRY, max_size=2),
    },
)
DOCUMENTS = st.one_of(POLICY, VALUES)


@st.composite
def serialized(draw: st.DrawFn) -> tuple[str, str]:
    """(text, mutation): a JSON dump, maybe broken the way hand-edited files break."""
    value: Any = draw(DOCUMENTS)
    text = json.dumps(
        value, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 2]))
    )
    kind = draw(st.sampled_from(["none", "none", "truncate", "comment", "trailing-comma", "dup"]))
    if kind == "truncate" and len(text) > 1:
        text = text[: draw(st.integers(0, len(text) - 1))]
    elif kind == "comment":
        i = draw(st.integers(0, len(text)))
        comment = draw(st.sampled_from(["// optional\n", "/* note */", "# x\n"]))
        text = text[:i] + comment + text[i:]
    elif kind == "trailing-comma":
        closers = [i for i, c in enumerate(text) if c in "]}"]
        if closers:
            i = draw(st.sampled_from(closers))
            text = text[:i] + "," + text[i:]
    elif kind == "dup" and isinstance(value, dict) and value:
        first = next(iter(value))
        member = json.dumps(first) + ": " + json.dumps(value[first])
        text = "{" + member + ", " + text[1:]
    else:
        kind = "none"
    return text, kind


def _no_constants(name: str) -> Any:
    raise ValueError(f"non-standard constant {name}")


def _has_lone_surrogate(value: object) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


@FAST
@given(doc=serialized(), ctx=st.sampled_from(CONTEXTS))
@pytest.mark.slow  # the fast tier leaves it to make test
def test_json_documents_never_raise_and_agree_with_the_stdlib(
    doc: tuple[str, str], ctx: CheckContext
) -> None:
    text, kind = doc
    data = text.encode("utf-8")
    diags = validate_json_bytes(data, "fuzz.json", ctx)
    check_diagnostics(diags, data)
    codes = {d.code for d in diags}
    try:
        expected = json.loads(text)
    except ValueError:
        syntax_errors = [
            d for d in diags if d.code.startswith("MRC1") and d.severity is Severity.ERROR
        ]
        assert syntax_errors, f"stdlib rejects {text!r} but we report {codes}"
        return
    try:
        strict = json.loads(text, parse_constant=_no_constants)
    except ValueError:  # NaN / Infinity: the stdlib accepts them, JSON does not
        assert "MRC101" in codes
        return
    if _has_lone_surrogate(strict):  # the stdlib keeps "\ud800"; no UTF-8 file can hold it
        assert "MRC101" in codes
        return
    if kind == "dup":
        assert "MRC108" in codes
    assert not codes & PARSE_FAILURES, f"stdlib accepts {text!r} but we report {codes}"
    assert parse_json(text).value == strict == expected


# -- (c) whole CLI runs -----------------------------------------------------------------------


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    docs=st.lists(serialized(), min_size=1, max_size=3),
    fmt=st.sampled_from(["text", "json", "github", "sarif", "junit"]),
    options=st.lists(
        st.sampled_from(
            [
                ["--strict"],
                ["--min-insync-replicas", "2"],
                ["--ibp", "3.2"],
                ["--inventory", str(EXAMPLES / "inventory.json")],
                ["--inventory", str(EXAMPLES / "inventory.csv")],
            ]
        ),
        max_size=3,
        unique_by=lambda o: o[0],
    ),
)
def test_cli_on_random_files(
    cli: Callable[..., Result], docs: list[tuple[str, str]], fmt: str, options: list[list[str]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for i, (text, _) in enumerate(docs):
            Path(tmp, f"p{i}.json").write_text(text, encoding="utf-8")
        flat = [arg for option in options for arg in option]
        result = cli(["validate", "--format", fmt, *flat, tmp])  # checks: no traceback
        assert result.exit_code in (0, 1), result.output
        assert result.stderr == ""
        if fmt == "json":
            report = json.loads(result.stdout)
            assert report["summary"]["files"] == len(docs)
            assert result.exit_code == (1 if report["summary"]["invalid_files"] else 0)
