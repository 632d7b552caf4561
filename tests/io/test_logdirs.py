"""Partition sizes from `kafka-log-dirs --describe` output: Kafka's layout (banners, then the
JSON on one line), the bare JSON, the notes, and every problem named by line and column."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from placement.errors import InputError, UsageError
from placement.io.convert import load_sizes, read_sizes
from placement.io.jsonsrc import JsonSyntaxError, parse_json
from placement.io.logdirs import (
    DISAGREE_BYTES,
    DISAGREE_FRACTION,
    QUERYING,
    RECEIVED,
    looks_like_logdirs,
    parse_logdirs,
)
from placement.io.positions import LineIndex, position_in

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "logdirs"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MiB = 2**20
BANNERS = f"{QUERYING}\n{RECEIVED} 1,2\n"

# what tests/fixtures/logdirs holds: the largest current replica of each partition
FIXTURE_SIZES = {
    ("orders-events", 12): 300 * MiB,
    ("orders-events", 3): 120 * MiB,
    ("payments.eu-west-1.ledger", 0): 7 * MiB,
    ("__consumer_offsets", 49): 4096,
    ("x-1", 0): 0,
}


def replica(name: str, size: int, future: bool = False, lag: int = 0) -> dict[str, Any]:
    return {"partition": name, "size": size, "offsetLag": lag, "isFuture": future}


def document(*brokers: tuple[int, list[dict[str, Any]]], error: str | None = None) -> str:
    """Kafka's layout: one log dir per broker, the JSON on one line after the banners."""
    entries = [
        {"broker": b, "logDirs": [{"logDir": "/data", "error": error, "partitions": reps}]}
        for b, reps in brokers
    ]
    ids = ",".join(str(b) for b, _ in brokers)
    body = json.dumps({"version": 1, "brokers": entries}, separators=(",", ":"))
    return f"{QUERYING}\n{RECEIVED} {ids}\n{body}\n"


def fails(text: str) -> InputError:
    with pytest.raises(InputError) as info:
        parse_logdirs(text, "ld.txt")
    return info.value


# -- Kafka's own layout ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["kafka.txt", "bare.json", "crlf.txt"])
def test_fixtures_give_the_largest_current_replica(name: str) -> None:
    result = load_sizes(FIXTURES / name)
    assert result.sizes == FIXTURE_SIZES
    text = "\n".join(result.notes)
    # the future replicas are left out (staging.tmp-7 has no other) and named
    assert "2 future replicas" in text and "staging.tmp-7 on broker 104 /data/kafka-b" in text
    # the log dir with an error, by broker and path
    assert "broker 102 /data/kafka-b: KafkaStorageException" in text
    # replicas 120 and 80 MiB apart disagree; 300 and 299 MiB (1 MiB apart) do not
    assert "orders-events-3: 83,886,080 to 125,829,120 bytes" in text
    assert "replicas of 1 partition differ" in text


def test_kafka_prints_the_document_on_one_line_after_two_banners() -> None:
    lines = (FIXTURES / "kafka.txt").read_text().split("\n")
    assert lines[0] == QUERYING
    assert lines[1].startswith(RECEIVED + " ")
    assert len(lines) == 4 and lines[3] == ""  # the JSON, then the newline println adds
    assert looks_like_logdirs(lines[2]) and looks_like_logdirs("\n".join(lines))


def test_the_example_matches_the_example_csv() -> None:
    """examples/log-dirs.txt describes the cluster of examples/describe.txt: same sizes as
    examples/sizes.csv, with an offline log dir, a move in flight and a lagging replica."""
    result = load_sizes(EXAMPLES / "log-dirs.txt")
    assert result.sizes == read_sizes(EXAMPLES / "sizes.csv")
    assert len(result.notes) == 3


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("orders-events-12", ("orders-events", 12)),
        ("a.b-c.d-0", ("a.b-c.d", 0)),
        ("x--1", ("x-", 1)),
        ("-1-0", ("-1", 0)),
        ("t-2147483647", ("t", 2147483647)),
        ("_confluent-telemetry-metrics-11", ("_confluent-telemetry-metrics", 11)),
    ],
)
def test_names_split_at_the_last_dash(name: str, key: tuple[str, int]) -> None:
    assert parse_logdirs(document((1, [replica(name, 5)]))).sizes == {key: 5}


def test_sizes_of_every_broker_and_log_dir_merge() -> None:
    text = document(
        (1, [replica("a-0", 10), replica("b-0", 7)]),
        (2, [replica("a-0", 12), replica("a-1", 3)]),
        (3, [replica("a-0", 11), replica("b-0", 7)]),
    )
    assert parse_logdirs(text).sizes == {("a", 0): 12, ("a", 1): 3, ("b", 0): 7}


@pytest.mark.parametrize(
    ("small", "reported"),
    [
        (89 * MiB, True),  # 11 MiB and 11% apart
        (91 * MiB, False),  # 9 %: within the fraction
        (100 * MiB - DISAGREE_BYTES, False),  # exactly the byte threshold: not more
    ],
)
def test_disagreeing_replicas_are_reported_past_both_thresholds(small: int, reported: bool) -> None:
    assert DISAGREE_FRACTION == 0.10
    text = document((1, [replica("big-0", 100 * MiB)]), (2, [replica("big-0", small)]))
    result = parse_logdirs(text)
    assert result.sizes == {("big", 0): 100 * MiB}
    assert any("differ in size" in n for n in result.notes) == reported


def test_sizes_beyond_float_precision_are_compared_not_refused() -> None:
    """Found by the fuzzer: a size past 2^53 made the 10 % comparison raise (exit 101)."""
    huge = 2**62 + 1
    text = document((1, [replica("big-0", huge)]), (2, [replica("big-0", 2**61)]))
    result = parse_logdirs(text)
    assert result.sizes == {("big", 0): huge}
    assert any("differ in size" in n for n in result.notes)
    same = document((1, [replica("big-0", huge)]), (2, [replica("big-0", huge - 1)]))
    assert parse_logdirs(same).notes == []


def test_a_small_partition_is_never_reported() -> None:
    text = document((1, [replica("tiny-0", DISAGREE_BYTES)]), (2, [replica("tiny-0", 0)]))
    assert parse_logdirs(text).notes == []


def test_disagreements_are_counted_and_a_few_named_in_order() -> None:
    reps = [replica(f"t-{p}", 100 * MiB) for p in range(10)]
    low = [replica(f"t-{p}", 10 * MiB) for p in range(10)]
    (note,) = parse_logdirs(document((1, reps), (2, low))).notes
    assert "replicas of 10 partitions differ" in note
    assert "t-0:" in note and "t-1:" in note and "t-2:" in note and "t-3:" not in note
    assert "(and 7 more)" in note


def test_future_replicas_are_left_out_and_reported() -> None:
    text = document(
        (1, [replica("a-0", 10), replica("a-0", 99, future=True), replica("b-0", 5, True)]),
    )
    result = parse_logdirs(text)
    assert result.sizes == {("a", 0): 10}  # b-0 has only a future replica: no size
    (note,) = result.notes
    assert "2 future replicas" in note and "a-0 on broker 1 /data" in note


def test_log_dirs_with_an_error_are_reported_by_broker_and_path() -> None:
    text = document((7, []), error="org.apache.kafka.common.errors.KafkaStorageException")
    notes = parse_logdirs(text).notes
    assert any("broker 7 /data: KafkaStorageException" in n for n in notes)
    assert any("lists no replica" in n for n in notes)


def test_the_banner_and_the_document_naming_different_brokers_is_a_note() -> None:
    text = document((1, [replica("a-0", 1)])).replace(f"{RECEIVED} 1", f"{RECEIVED} 1,4")
    (note,) = parse_logdirs(text).notes
    assert "only in the banner: 4" in note


def test_bare_json_and_blank_lines_and_no_banner_broker_list() -> None:
    body = document((1, [replica("a-0", 1)])).split("\n")[2]
    for text in (body, f"\n\n  {body}\n\n", f"{QUERYING}\r\n{RECEIVED}\r\n{body}\r\n"):
        assert parse_logdirs(text).sizes == {("a", 0): 1}


def test_unknown_keys_are_ignored_and_offset_lag_and_error_are_optional() -> None:
    text = (
        '{"version":1,"extra":{"x":[1]},"brokers":[{"broker":1,"rack":"r","logDirs":'
        '[{"logDir":"/d","partitions":[{"partition":"a-0","size":3,"isFuture":false,'
        '"new":null}]}]}]}'
    )
    assert parse_logdirs(text).sizes == {("a", 0): 3}


def test_a_colon_in_a_log_dir_is_not_a_duplicate_key() -> None:
    text = document((1, [replica("a-0", 1)])).replace('"/data"', '"C:/kafka:data"')
    assert parse_logdirs(text).sizes == {("a", 0): 1}


def test_the_csv_is_still_read_and_has_no_notes(tmp_path: Path) -> None:
    path = tmp_path / "sizes.csv"
    path.write_text("topic,partition,size_bytes\norders-events,12,5\n")
    result = load_sizes(path)
    assert result.sizes == {("orders-events", 12): 5} and result.notes == []


# -- problems, with the position -------------------------------------------------------

ONE = '{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/d","error":null,"partitions":['


def at(text: str, marker: str, line: int = 3) -> tuple[int, int]:
    """Line and column of ``marker`` in the last line of ``text`` (the JSON's)."""
    return line, text.split("\n")[line - 1].index(marker) + 1


@pytest.mark.parametrize(
    ("body", "marker", "message"),
    [
        (ONE + '{"partition":"a-0","size":-1,"isFuture":false}]}]}]}', "-1", '"size" must be'),
        (ONE + '{"partition":"a-0","size":1.5,"isFuture":false}]}]}]}', "1.5", '"size" must'),
        (ONE + f'{{"partition":"a-0","size":{2**63},"isFuture":false}}]}}]}}]}}', "92", "size"),
        (ONE + '{"partition":"a-0","size":"7","isFuture":false}]}]}]}', '"7"', '"size" must'),
        (ONE + '{"partition":"a-0","size":1,"isFuture":0}]}]}]}', "0}", '"isFuture" must'),
        (ONE + '{"partition":"a-0","size":1}]}]}]}', '{"partition', 'lacks "isFuture"'),
        (ONE + '{"partition":7,"size":1,"isFuture":false}]}]}]}', "7,", '"partition" must'),
        (ONE + '{"partition":"a-0","size":1,"isFuture":false,"offsetLag":"x"}]}]}]}', '"x"', "Lag"),
        (ONE + "[1]]}]}]}", "[1]", "a replica entry must be an object"),
        (ONE + '{"partition":"a-0","size":1,"isFuture":false,"size":2}]}]}]}', '"size":2', "dup"),
        (ONE + '{"partition":"a-0","size":NaN,"isFuture":false}]}]}]}', "NaN", "NaN"),
        (ONE + '{"partition":"a-0","size":1,"isFuture":false},]}]}]}', ",]", "trailing comma"),
        (ONE + '{"partition":"a-0","size":1,"isFuture":false}]}]}]', "", "unexpected end"),
        (ONE + '{"partition":"a-0","size":1,"isFuture":false}]}]}]} {}', "{}", "end of the doc"),
        (ONE + '{"partition":"a-0","size":1,"isFuture":false}]}]}]} // c', "//", "comments"),
        (ONE + '{"partition":"orders","size":1,"isFuture":false}]}]}]}', '"orders"', "<topic>"),
        (ONE + '{"partition":"a-01","size":1,"isFuture":false}]}]}]}', '"a-01"', "leading zero"),
        (ONE + '{"partition":"a-2147483648","size":1,"isFuture":false}]}]}]}', '"a-2', "number"),
        (ONE + '{"partition":"a b-0","size":1,"isFuture":false}]}]}]}', '"a b', "holds ' '"),
        (ONE + '{"partition":"..-0","size":1,"isFuture":false}]}]}]}', '"..-0', "legal topic"),
        (ONE + '{"partition":"x-0","size":1,"isFuture":true},"q"]}]}]}', '"q"', "an object"),
        (ONE + '{"partition":"-0","size":1,"isFuture":true}]}]}]}', '"-0"', "empty"),
        ('{"version":2,"brokers":[]}', "2,", "unsupported version 2"),
        ('{"version":"1","brokers":[]}', '"1"', "unsupported version"),
        ('{"version":1,"brokers":{}}', "{}", '"brokers" must be an array'),
        ('{"version":1}', "{", 'lacks "brokers"'),
        ('{"brokers":[]}', "{", 'lacks "version"'),
        ('{"version":1,"version":1,"brokers":[]}', '"version":1,"b', 'duplicate key "version"'),
        ('{"version":1,"brokers":[7]}', "7", "a broker entry must be an object"),
        ('{"version":1,"brokers":[{"broker":1}]}', '{"broker', 'lacks "logDirs"'),
        ('{"version":1,"brokers":[{"broker":-1,"logDirs":[]}]}', "-1", '"broker" must'),
        ('{"version":1,"brokers":[{"broker":true,"logDirs":[]}]}', "true", '"broker" must'),
        ('{"version":1,"brokers":[{"broker":1,"logDirs":{}}]}', "{}", '"logDirs" must'),
        (
            '{"version":1,"brokers":[{"broker":1,"logDirs":[]},{"broker":1,"logDirs":[]}]}',
            '1,"logDirs":[]}]',
            "broker 1 is listed twice (first at line 3, column 25)",
        ),
        (
            '{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"","partitions":[]}]}]}',
            '""',
            "logDir",
        ),
        ('{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/d"}]}]}', '{"logDir', "lacks"),
        (
            '{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/d","error":5,'
            '"partitions":[]}]}]}',
            "5,",
            '"error" must be null or a string',
        ),
        (
            '{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/d","partitions":[]},'
            '{"logDir":"/d","partitions":[]}]}]}',
            '"/d","partitions":[]}]',
            "lists log dir /d twice",
        ),
        ('{"version":1,"brokers":[{"broker":1,"logDirs":[] }{}]}', "{}]", "expected ',' or ']'"),
    ],
)
def test_problems_name_the_line_and_column(body: str, marker: str, message: str) -> None:
    text = BANNERS + body + "\n"
    err = fails(text)
    line, column = (4, 1) if not marker else at(text, marker)  # no marker: the end
    assert (err.line, err.column) == (line, column), err.message
    assert message in err.message
    assert err.message.startswith(f"ld.txt:{line}:{column}: ")


@pytest.mark.parametrize("where", ['"/d', '"x', '"error":"e', '"extra":"'])
def test_a_lone_surrogate_is_refused_wherever_it_is(where: str) -> None:
    """The standard library takes it; the strict parser does not, and neither does this."""
    body = (
        '{"version":1,"extra":"","brokers":[{"broker":1,"logDirs":[{"logDir":"/d","error":"e",'
        '"partitions":[{"partition":"x-0","size":1,"isFuture":false}]}]}]}'
    ).replace(where, where + "\\ud800", 1)
    err = fails(BANNERS + body)
    assert "lone surrogate" in err.message
    assert (err.line, err.column) == (3, body.index("\\ud800") + 1)
    pair = BANNERS + body.replace("\\ud800", "\\ud83d\\ude00")  # a character: JSON's fine
    if where == '"x':
        assert "Kafka allows only ASCII letters" in fails(pair).message  # not a topic's
    else:
        assert parse_logdirs(pair).sizes == {("x", 0): 1}


def test_a_partition_held_twice_by_one_broker_names_the_second() -> None:
    body = (
        '{"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":"/a","partitions":'
        '[{"partition":"t-0","size":1,"isFuture":false}]},{"logDir":"/b","partitions":'
        '[{"partition":"t-0","size":1,"isFuture":true},{"partition":"t-0","size":1,'
        '"isFuture":false}]}]}]}'
    )
    err = fails(BANNERS + body)
    assert "broker 1 holds partition t-0 twice" in err.message
    assert (err.line, err.column) == (3, body.rindex('"t-0"') + 1)


def test_the_first_bad_name_in_the_file_is_named() -> None:
    reps = [replica(f"ok-{p}", 1) for p in range(50)]
    text = document((1, reps), (2, [*reps[:10], replica("bad name-0", 1)]), (3, reps))
    err = fails(text)
    assert (err.line, err.column) == at(text, '"bad name-0"')


def test_a_problem_deep_in_a_large_file_is_placed_exactly() -> None:
    brokers = [(b, [replica(f"t-{p}", p) for p in range(200)]) for b in range(300)]
    text = document(*brokers).replace('"size":150,', '"size":150.0,', 250)  # every broker
    err = fails(text)
    assert err.line == 3 and err.column == text.split("\n")[2].index("150.0") + 1
    cut = document(*brokers)[:-1000]
    err = fails(cut)  # truncated: the end of the file
    assert (err.line, err.column) == (3, len(cut.split("\n")[2]) + 1)
    assert "unexpected end of file" in err.message


def test_a_pretty_printed_problem_names_its_own_line() -> None:
    text = (FIXTURES / "bare.json").read_text().replace('"size": 4000', '"size": -4000')
    err = fails(text)
    lines = text.split("\n")
    line = next(i for i, s in enumerate(lines, 1) if '"size": -4000' in s)
    assert (err.line, err.column) == (line, lines[line - 1].index("-4000") + 1)


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        (f"{QUERYING}\n", "no JSON document follows", 2, 1),
        (f"{QUERYING}\n{RECEIVED} 1,2\n", "no JSON document follows", 3, 1),
        (f"{QUERYING}\nSLF4J: no binding\n{{}}", "expected the JSON document", 2, 1),
        (f"{QUERYING}\n[1]\n", "expected the JSON document", 2, 1),
        (f"{RECEIVED} 1,x2,3\n{{}}", "'x2' among the brokers", 1, len(RECEIVED) + 4),
        (f"{RECEIVED} 1, 99999999999\n{{}}", "'99999999999'", 1, len(RECEIVED) + 5),
    ],
)
def test_banner_problems(text: str, message: str, line: int, column: int) -> None:
    err = fails(text)
    assert message in err.message
    assert (err.line, err.column) == (line, column), err.message


@pytest.mark.parametrize(
    "text",
    [
        "hello world\n",
        '["version",1]\n',
        "topic,partition,size\norders,0,1\n",
        "\x00\x01binary",
    ],
)
def test_anything_else_is_one_clear_sentence(text: str, tmp_path: Path) -> None:
    path = tmp_path / "sizes"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_sizes(path)
    assert info.value.message.startswith(f"{path}:1:1: not a sizes file")
    assert "kafka-log-dirs" in info.value.hint


def test_an_empty_sizes_file(tmp_path: Path) -> None:
    path = tmp_path / "sizes"
    path.write_text("\n \n")
    with pytest.raises(InputError, match="the sizes file is empty"):
        load_sizes(path)


def test_oversized_output_is_refused_before_parsing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "log-dirs.txt"
    path.write_text(document((1, [replica(f"t-{p}", p) for p in range(100)])))
    monkeypatch.setenv("MRC_PLAN_MAX_LOGDIRS_BYTES", "1000")
    with pytest.raises(InputError) as info:
        load_sizes(path)
    assert "too large" in info.value.message
    assert "MRC_PLAN_MAX_LOGDIRS_BYTES" in info.value.hint
    monkeypatch.setenv("MRC_PLAN_MAX_LOGDIRS_BYTES", "1000000")
    monkeypatch.setenv("MRC_PLAN_MAX_SIZES_BYTES", "1000")
    with pytest.raises(InputError, match="too large"):
        load_sizes(path)  # the cap of every sizes file holds too
    monkeypatch.setenv("MRC_PLAN_MAX_SIZES_BYTES", "x")
    with pytest.raises(UsageError):
        load_sizes(path)


# -- the fast path against the strict parser -------------------------------------------


def _mutate(rng: random.Random, text: str) -> str:
    i = rng.randrange(len(text))
    choice = rng.randrange(6)
    if choice == 0:
        return text[:i] + text[i + 1 :]
    if choice == 1:
        return text[:i] + rng.choice('{}[],:"0-e.\\ ntx') + text[i:]
    if choice == 2:
        return text[:i]
    if choice == 3:
        return text.replace('"size"', '"size":1,"size"', 1)
    if choice == 4:
        return text.replace("false", rng.choice(["true", "0", "null", '"false"']), 1)
    return (
        text[:i] + rng.choice(["-", "99999999999999999999", "NaN", "\\u0000", "\\udc00"]) + text[i:]
    )


def _refusal(text: str) -> InputError | None:
    try:
        parse_logdirs(text, "m.txt")
    except InputError as err:
        return err
    return None


def test_mutations_fail_cleanly_and_the_fast_path_is_as_strict_as_jsonsrc() -> None:
    """Every mutation of Kafka's output either reads (and then jsonsrc takes the JSON too,
    without duplicate keys) or fails with a position inside the file."""
    rng = random.Random(15)
    base = (FIXTURES / "kafka.txt").read_text()
    body_at = base.index("{")
    for _ in range(600):
        text = _mutate(rng, base)
        err = _refusal(text)
        if err is not None:
            lines = text.split("\n")
            assert err.line is not None and 1 <= err.line <= len(lines)
            assert err.column is not None and 1 <= err.column <= len(lines[err.line - 1]) + 1
        elif text[:body_at] == base[:body_at]:
            try:
                doc = parse_json(text[body_at:])
            except JsonSyntaxError as exc:  # pragma: no cover - the assertion's message
                raise AssertionError(f"read, but jsonsrc refuses: {exc.message}") from None
            assert not doc.duplicates


def test_positions_agree_with_line_index() -> None:
    text = "a\r\nbc\rd\n\ne\r\n"
    index = LineIndex(text)
    for offset in range(len(text) + 1):
        assert position_in(text, offset) == index.position(offset), offset
