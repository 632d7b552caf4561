"""Kafka's own rules on names, ids and versions, in one place for every reader.

Topic names follow `org.apache.kafka.common.internals.Topic.validate`: 1 to 249
characters from [a-zA-Z0-9._-], and not `.` or `..`. Broker ids and partition numbers
are Java ints (32-bit) and never negative. Numbers are ASCII digits only: Python's
int() and str.isdigit() also accept '²', '٣' and '1_000', which Kafka's tools never print.
"""

from __future__ import annotations

import re

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
TOPIC_NAME_MAX = 249

_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]+")
_ASCII_INT = re.compile(r"-?[0-9]+")


def topic_name_error(name: str) -> str | None:
    """Why ``name`` is not a legal Kafka topic name, or None when it is."""
    if not name:
        return "a topic name cannot be empty"
    if name in (".", ".."):
        return f"{name!r} is not a legal topic name"
    if len(name) > TOPIC_NAME_MAX:
        return f"a topic name has at most {TOPIC_NAME_MAX} characters, this one has {len(name)}"
    if _TOPIC_NAME.fullmatch(name) is None:
        bad = next(ch for ch in name if not _TOPIC_NAME.fullmatch(ch))
        shown = bad if bad.isprintable() and bad.isascii() else f"U+{ord(bad):04X}"
        # a name from an untrusted file is quoted only when short (it may be a secret)
        named = (
            f"topic name {name!r}" if len(name) <= 16 else f"a topic name of {len(name)} characters"
        )
        at = name.index(bad) + 1
        return (
            f"{named} holds {shown!r} (its character {at}); Kafka allows only ASCII letters, "
            "digits, '.', '_' and '-'"
        )
    return None


TOPIC_NAME_HINT = "topic names are 1-249 characters of [a-zA-Z0-9._-], and not '.' or '..'"


def parse_ascii_int(text: str, *, low: int = 0, high: int = INT32_MAX) -> int | None:
    """``text`` (stripped) as an integer in [low, high], written in ASCII digits; else None."""
    s = text.strip()
    if _ASCII_INT.fullmatch(s) is None or len(s) > 20:
        return None
    value = int(s)
    return value if low <= value <= high else None


def int_problem(text: str, what: str, *, low: int = 0, high: int = INT32_MAX) -> str:
    """The message for a value that :func:`parse_ascii_int` refused."""
    s = text.strip()
    if _ASCII_INT.fullmatch(s) is None:
        return f"{what}: {s!r} is not an integer (ASCII digits only)"
    return f"{what}: {s} is out of range ({low}..{high})"


# --- inter.broker.protocol.version -----------------------------------------------------

# (release, number of internal versions) in Kafka's MetadataVersion order; a release
# without internal versions (0.8.0 .. 0.9.0) has 0
_IBP_RELEASES: tuple[tuple[str, int], ...] = (
    ("0.8.0", 0),
    ("0.8.1", 0),
    ("0.8.2", 0),
    ("0.9.0", 0),
    ("0.10.0", 2),
    ("0.10.1", 3),
    ("0.10.2", 1),
    ("0.11.0", 3),
    ("1.0", 1),
    ("1.1", 1),
    ("2.0", 2),
    ("2.1", 3),
    ("2.2", 2),
    ("2.3", 2),
    ("2.4", 2),
    ("2.5", 1),
    ("2.6", 1),
    ("2.7", 3),
    ("2.8", 2),
    ("3.0", 2),
    ("3.1", 1),
    ("3.2", 1),
    ("3.3", 4),
    ("3.4", 1),
    ("3.5", 3),
    ("3.6", 3),
    ("3.7", 5),
    ("3.8", 1),
    ("3.9", 1),
    ("4.0", 4),
    ("4.1", 2),
    ("4.2", 2),
    ("4.3", 1),
    ("4.4", 2),
)
IBP_RELEASES: dict[str, int] = dict(_IBP_RELEASES)

# Confluent Platform release -> the Apache Kafka release it ships
CP_TO_KAFKA: dict[str, str] = {
    "4.0": "1.0",
    "4.1": "1.1",
    **{f"5.{i}": f"2.{i}" for i in range(6)},
    "6.0": "2.6",
    "6.1": "2.7",
    "6.2": "2.8",
    **{f"7.{i}": f"3.{i}" for i in range(10)},
    "8.0": "4.0",
    "8.1": "4.1",
}

# compiled when an IBP is given (re caches it)
_IBP = r"([0-9]+)\.([0-9]+)(?:\.([0-9]+))?(?:\.[0-9]+)?(?:-IV([0-9]+))?"


def parse_ibp_version(text: str) -> tuple[int, int] | None:
    """A real `inter.broker.protocol.version` (3.3, 3.3-IV3, 2.8.1, 0.10.2, 0.10.2-IV0)
    -> (major, minor) as Kafka compares them; None for anything Kafka would refuse."""
    m = re.fullmatch(_IBP, text.strip())
    if m is None:
        return None
    major, minor, third, iv = m.group(1), m.group(2), m.group(3), m.group(4)
    # 0.x releases have three significant parts, later ones two (3.3.1 means 3.3)
    release = f"{major}.{minor}"
    if major == "0" and third is not None:
        release += f".{third}"
    ivs = IBP_RELEASES.get(release)
    if ivs is None:
        return None
    if iv is not None and int(iv) >= ivs:
        return None
    if major == "0":
        # 0.10.2 sorts below 1.0: keep (0, 10) ordering, which is all callers compare
        return 0, int(minor)
    return int(major), int(minor)


def ibp_hint(text: str) -> str:
    """What to write instead of ``text``: the Kafka release for a Confluent Platform one."""
    m = re.fullmatch(r"\s*([0-9]+)\.([0-9]+)(?:\.[0-9]+)?\s*", text)
    if m is not None:
        cp = f"{int(m.group(1))}.{int(m.group(2))}"
        if cp in CP_TO_KAFKA and cp not in IBP_RELEASES:
            kafka = CP_TO_KAFKA[cp]
            return (
                f"{text.strip()} looks like a Confluent Platform version: CP {cp} ships Apache "
                f"Kafka {kafka}, so write --ibp {kafka}"
            )
    newest = _IBP_RELEASES[-1][0]
    return (
        "give a Kafka inter.broker.protocol.version such as 2.8, 3.3-IV3 or 4.0 "
        f"(0.8.0 .. {newest}); Confluent Platform 7.x ships Kafka 3.x (CP 7.4 -> 3.4), "
        "CP 8.x ships Kafka 4.x"
    )
