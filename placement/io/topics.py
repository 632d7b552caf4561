"""The topics file: the planner's desired state (topics, partition counts, policies).

    {"default_placement": {...},
     "topics": [{"name": "orders", "partitions": 12, "placement": {...} | "orders.json",
                 "min_isr": 2}]}

A placement given as a string is a path relative to the topics file. Every policy is
checked with the `validate` rules; errors stop the read with their diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from placement.diagnostics.model import Diagnostic, Severity
from placement.errors import InputError
from placement.io.jsonsrc import JsonSyntaxError, ParsedJson, parse_json
from placement.io.positions import LineIndex
from placement.io.textfile import read_text
from placement.model.policy import PlacementPolicy
from placement.rules.base import CheckContext
from placement.validate import check_policy_text, check_policy_value


class InvalidPoliciesError(InputError):
    """One or more policies in the topics file fail validation; carries the diagnostics."""

    def __init__(self, path: str, diagnostics: list[Diagnostic]) -> None:
        errors = [d for d in diagnostics if d.severity is Severity.ERROR]
        first = errors[0]
        super().__init__(
            first.file,
            f"{len(errors)} placement error(s); first: {first.code} {first.message}",
            "fix the placement; the diagnostics below list every finding",
            line=first.line,
            column=first.column,
        )
        self.diagnostics = diagnostics


@dataclass(frozen=True, slots=True)
class TopicSpec:
    name: str
    partitions: int
    policy: PlacementPolicy
    min_isr: int | None = None


def _read_doc(path: Path) -> tuple[str, ParsedJson]:
    text = read_text(path)
    try:
        doc = parse_json(text)
    except JsonSyntaxError as exc:
        pos = LineIndex(text).position(exc.offset)
        raise InputError(
            str(path), exc.message, exc.hint, line=pos.line, column=pos.column
        ) from None
    return text, doc


def read_topics(path: str | Path, ctx: CheckContext | None = None) -> list[TopicSpec]:
    """Read and check a topics file; ``ctx`` adds inventory checks to every policy."""
    p = Path(path)
    name = str(p)
    ctx = ctx or CheckContext()
    _, doc = _read_doc(p)

    def fail(ptr: str, message: str, hint: str = "", key: bool = False) -> InputError:
        pos = doc.locate(ptr, key=key)
        return InputError(name, message, hint, line=pos.line, column=pos.column)

    if doc.duplicates:
        d = doc.duplicates[0]
        raise fail(d.pointer, f'duplicate key "{d.key}"', key=True)
    root: Any = doc.value
    if not isinstance(root, dict):
        raise fail(
            "",
            "a topics file must be a JSON object",
            '{"default_placement": {...}, "topics": [...]}',
        )
    for key in root:
        if key not in ("default_placement", "topics"):
            raise fail(
                f"/{key}",
                f'unknown key "{key}"',
                'allowed: "default_placement", "topics"',
                key=True,
            )
    topics = root.get("topics")
    if not isinstance(topics, list) or not topics:
        raise fail("/topics" if "topics" in root else "", '"topics" must be a non-empty array')

    diagnostics: list[Diagnostic] = []
    cache: dict[str, PlacementPolicy | None] = {}

    def policy_at(ptr: str, value: Any, ctx: CheckContext) -> PlacementPolicy | None:
        if isinstance(value, str):
            ref = (p.parent / value).resolve()
            if not ref.is_file():
                raise fail(ptr, f"placement file {value!r} not found (relative to {name})")
            key = f"{ref}|{ctx.min_insync_replicas}"
            if key not in cache:
                text, _ = _read_doc(ref)
                checked = check_policy_text(text, str(ref), ctx)
                diagnostics.extend(checked.diagnostics)
                cache[key] = checked.policy
            return cache[key]
        diags, policy = check_policy_value(doc, ptr, name, ctx)
        diagnostics.extend(diags)
        return policy

    default = None
    if "default_placement" in root:
        default = policy_at("/default_placement", root["default_placement"], ctx)
    specs: list[TopicSpec] = []
    seen: dict[str, int] = {}
    for i, t in enumerate(topics):
        ptr = f"/topics/{i}"
        if not isinstance(t, dict):
            raise fail(ptr, "a topic entry must be an object")
        for key in t:
            if key not in ("name", "partitions", "placement", "min_isr"):
                raise fail(
                    f"{ptr}/{key}",
                    f'unknown key "{key}" in a topic entry',
                    'allowed: "name", "partitions", "placement", "min_isr"',
                    key=True,
                )
        topic = t.get("name")
        if not isinstance(topic, str) or not topic:
            raise fail(f"{ptr}/name" if "name" in t else ptr, 'a topic needs a non-empty "name"')
        if topic in seen:
            raise fail(ptr, f'topic "{topic}" is listed twice (first at /topics/{seen[topic]})')
        seen[topic] = i
        count = t.get("partitions")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise fail(
                f"{ptr}/partitions" if "partitions" in t else ptr,
                f'topic "{topic}" needs "partitions": a positive integer',
            )
        min_isr = t.get("min_isr")
        if min_isr is not None and (
            not isinstance(min_isr, int) or isinstance(min_isr, bool) or min_isr < 1
        ):
            raise fail(f"{ptr}/min_isr", '"min_isr" must be a positive integer')
        if "placement" in t:
            topic_ctx = CheckContext(ctx.inventory, min_isr or ctx.min_insync_replicas, ctx.ibp)
            policy = policy_at(f"{ptr}/placement", t["placement"], topic_ctx)
        elif default is not None or "default_placement" in root:
            policy = default
        else:
            raise fail(
                ptr, f'topic "{topic}" has no "placement" and there is no "default_placement"'
            )
        if policy is not None:
            specs.append(TopicSpec(topic, count, policy, min_isr))
    if any(d.severity is Severity.ERROR for d in diagnostics):
        raise InvalidPoliciesError(name, diagnostics)
    return specs
