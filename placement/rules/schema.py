"""MRC2xx: the JSON is not shaped like a placement policy (docs/formats.md, placement policy).

The shape is defined once, by the pydantic model. Each rule below says which of its
validation errors are its own (`owns`) and how to tell one (`finding`: the message, a
pointer and a useful hint); `check_schema` gives every error to the first rule, in
`_PRECEDENCE` order, that owns it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from placement.io.jsonsrc import is_json_int, shorten
from placement.io.positions import pointer
from placement.model import shapes
from placement.model.diagnostic import Severity
from placement.model.shapes import PROMOTION_VALUES
from placement.rules.base import Finding, Rule
from placement.rules.suggest import describe, did_you_mean

if TYPE_CHECKING:  # pydantic is loaded when a policy is checked against the model
    from pydantic_core import ErrorDetails

    from placement.model.policy import PlacementPolicy

# the model's members (the models' model_fields, held equal by tests/model/test_shapes.py)
POLICY_KEYS = list(shapes.POLICY_KEYS)
ENTRY_KEYS = list(shapes.ENTRY_KEYS)
CONSTRAINT_KEYS = list(shapes.CONSTRAINT_KEYS)

# the hint for a missing key, by key
_ADD_HINTS = {
    "version": 'add "version": 2',
    "replicas": 'add "replicas": [{"count": 1, "constraints": {"rack": "..."}}]',
}


class SchemaRule(Rule):
    """A rule that reports validation errors of the policy model."""

    @classmethod
    def owns(cls, err: ErrorDetails) -> bool:
        """Whether ``err`` is this rule's to report (asked in `_PRECEDENCE` order)."""
        raise NotImplementedError

    @classmethod
    def finding(cls, err: ErrorDetails) -> Finding:
        """``err`` told in this rule's words."""
        raise NotImplementedError


def _as_version(value: Any) -> int | None:
    """1 or 2 when ``value`` is a string or float that means it ("2", 2.0, "1.0")."""
    if isinstance(value, bool) or not isinstance(value, str | float):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return int(number) if number in (1.0, 2.0) else None


class TopLevelNotObject(SchemaRule):
    """The document is not a JSON object.

    What it does: reports a top-level array, string, number, boolean or null.

    Why: a placement policy is an object with `version`, `replicas` and optionally
    `observers` and `observerPromotionPolicy`.

    Example: `[{"count": 3, "constraints": {"rack": "us-west"}}]`

    Fix: wrap the constraints: `{"version": 2, "replicas": [...]}`.
    """

    code = "MRC201"
    name = "top-level-not-object"
    severity = Severity.ERROR

    @classmethod
    def owns(cls, err: ErrorDetails) -> bool:
        return not err["loc"]

    @classmethod
    def finding(cls, err: ErrorDetails) -> Finding:
        return Finding(
            pointer(err["loc"]),
            f"the placement policy must be a JSON object, found {describe(err.get('input'))}",
            'write {"version": 2, "replicas": [...]}',
        )


class InvalidVersion(SchemaRule):
    """`version` is missing, or is not the integer 1 or 2.

    What it does: rejects a missing version, strings (`"2"`), numbers with a fraction
    (`2.0`), booleans and any other integer.

    Why: Confluent Server reads `version` as an integer and knows only 1 and 2;
    version 2 is needed for automatic observer promotion.

    Example: `{"version": "2", "replicas": [...]}`

    Fix: write `"version": 2` (or `1` for the legacy behaviour).
    """

    code = "MRC202"
    name = "invalid-version"
    severity = Severity.ERROR

    @classmethod
    def owns(cls, err: ErrorDetails) -> bool:
        return err["loc"] == ("version",)

    @classmethod
    def finding(cls, err: ErrorDetails) -> Finding:
        if err["type"] == "missing":
            return MissingField.finding(err)  # worded like any missing key, under this code
        value = err.get("input")
        meant = _as_version(value)
        if meant is not None:
            hint = f'write "version": {meant} (no quotes, no fraction)'
        else:
            hint = 'use "version": 2 (automatic observer promotion) or 1 (legacy)'
        return Finding(
            pointer(err["loc"]),
            f'"version" must be the integer 1 or 2, found {describe(value)}',
            hint,
        )


class MissingField(SchemaRule):
    """A required member is missing.

    What it does: reports `replicas` missing from the policy, or `count` or
    `constraints` (or `rack`) missing from an entry, at the enclosing object.

    Why: without them the broker cannot place a single replica.

    Example: `{"version": 2, "observers": [...]}` (no `replicas`).

    Fix: add the member.
    """

    code = "MRC203"
    name = "missing-field"
    severity = Severity.ERROR

    @classmethod
    def owns(cls, err: ErrorDetails) -> bool:
        return err["type"] == "missing"

    @classmethod
    def finding(cls, err: ErrorDetails) -> Finding:
        loc = err["loc"]
        field = str(loc[-1])
        where = "the policy" if len(loc) == 1 else f'the object at "{pointer(loc[:-1])}"'
        return Finding(
            pointer(loc),
            f'required key "{field}" is missing from {where}',
            _ADD_HINTS.get(field, f'add "{field}"'),
        )


class UnknownField(SchemaRule):
    """An object has a member the placement format does not define.

    What it does: reports the key and suggests the one probably meant (`observer` ->
    `observers`, `observerPromotionpolicy` -> `observerPromotionPolicy`). In
    `constraints`, only `rack` exists: `zone` or `region` are not supported.

    Why: a misspelt key is silently ignored by lenient readers, so the policy you
    meant (observers, promotion) never takes effect.

    Example: `"observer": [{"count": 2, "constraints": {"rack": "us-east"}}]`

    Fix: correct the key, or delete it.
    """

    code = "MRC204"
    name = "unknown-field"
    severity = Severity.ERROR

    @classmethod
    def owns(cls, err: ErrorDetails) -> bool:
        return err["type"] == "extra_forbidden"

    @classmethod
    def finding(cls, err: ErrorDetails) -> Finding:
        loc = err["loc"]
        field, parent = str(loc[-1]), loc[:-1]
        in_constraints = bool(parent) and parent[-1] == "constraints"
        if not parent:
            known, where = POLICY_KEYS, "the placement policy"
        elif in_constraints:
            known, where = CONSTRAINT_KEYS, '"constraints"'
        else:
            known, where = ENTRY_KEYS, f'the entry at "{pointer(parent)}"'
        hint = did_you_mean(field, known)
        if not hint and in_constraints:
            hint = 'constraints support only "rack" (the broker.rack value)'
        elif not hint:
            hint = "allowed keys: " + ", ".join(f'"{k}"' for k in known)
        message = f'unknown key "{shorten(field)}" in {where}'
        return Finding(pointer(loc), message, hint, at_key=True)


class WrongType(SchemaRule):
    """A member has the wrong JSON type.

    What it does: reports `replicas`/`observers` that are not arrays (`null`
    included), entries or `constraints` that are not objects.

    Why: `"observers": null` is not "no observers"; tools disagree on what it means.

    Example: `"observers": null`

    Fix: use an array (`[]` for none, or omit `observers`).
    """

    code = "MRC205"
    name = "wrong-type"
    severity = Severity.ERROR

    # what the model expected, by pydantic error type
    EXPECTED: ClassVar[dict[str, str]] = {
        "list_type": "an array",
        "model_type": "an object",
        "dict_type": "an object",
        "model_attributes_type": "an object",
    }

    @classmethod
    def owns(cls, err: ErrorDetails) -> bool:
        return True  # every error no other rule owns

    @classmethod
    def finding(cls, err: ErrorDetails) -> Finding:
        loc = err["loc"]
        value = err.get("input")
        field = str(loc[-1]) if loc else "the document"
        # how the value is named: "observers", or entry 0 of "replicas"
        label = (
            f'entry {loc[-1]} of "{loc[-2]}"'
            if len(loc) > 1 and isinstance(loc[-1], int)
            else f'"{field}"'
        )
        expected = cls.EXPECTED.get(err["type"], "another type")
        hint = (
            'use "observers": [] or omit the key' if value is None and field == "observers" else ""
        )
        return Finding(pointer(loc), f"{label} must be {expected}, found {describe(value)}", hint)


class InvalidCount(SchemaRule):
    """A `count` is not a positive 32-bit integer.

    What it does: rejects 0, negatives, values above 2147483647, numbers with a
    fraction (`3.0`), strings (`"3"`) and booleans.

    Why: Confluent Server parses `count` as an int and needs at least one replica.

    Example: `{"count": "3", "constraints": {"rack": "us-west"}}`

    Fix: write a plain integer such as `3`; drop the entry instead of writing 0.
    """

    code = "MRC206"
    name = "invalid-count"
    severity = Severity.ERROR

    @classmethod
    def owns(cls, err: ErrorDetails) -> bool:
        return err["loc"][-1:] == ("count",)

    @classmethod
    def finding(cls, err: ErrorDetails) -> Finding:
        value = err.get("input")
        hint = ""
        if isinstance(value, str) and value.strip().isdigit():
            hint = f"remove the quotes: {shorten(value.strip())}"
        elif isinstance(value, float) and value.is_integer():
            hint = f"write {int(value)}, without the fraction"
        elif is_json_int(value) and value < 1:
            hint = "remove the entry instead of giving it no replicas"
        return Finding(
            pointer(err["loc"]),
            f'"count" must be an integer from 1 to 2147483647, found {describe(value)}',
            hint,
        )


class InvalidRack(SchemaRule):
    """A `rack` is empty or not a string.

    What it does: rejects `""`, numbers, `null` and other non-strings.

    Why: the rack is matched against each broker's `broker.rack` string; an empty
    rack matches no broker.

    Example: `"constraints": {"rack": ""}`

    Fix: write the rack name exactly as in `broker.rack`.
    """

    code = "MRC207"
    name = "invalid-rack"
    severity = Severity.ERROR

    @classmethod
    def owns(cls, err: ErrorDetails) -> bool:
        return err["loc"][-1:] == ("rack",)

    @classmethod
    def finding(cls, err: ErrorDetails) -> Finding:
        return Finding(
            pointer(err["loc"]),
            f'"rack" must be a non-empty string, found {describe(err.get("input"))}',
            "write the rack exactly as the brokers' broker.rack",
        )


class EmptyReplicas(SchemaRule):
    """`replicas` is an empty array.

    What it does: reports `"replicas": []`.

    Why: a partition needs at least one sync replica to have a leader.

    Example: `{"version": 2, "replicas": [], "observers": [...]}`

    Fix: add at least one entry to `replicas`.
    """

    code = "MRC208"
    name = "empty-replicas"
    severity = Severity.ERROR

    @classmethod
    def owns(cls, err: ErrorDetails) -> bool:
        return err["loc"] == ("replicas",) and err["type"] == "too_short"

    @classmethod
    def finding(cls, err: ErrorDetails) -> Finding:
        return Finding(
            pointer(err["loc"]),
            '"replicas" must list at least one rack',
            "a partition needs at least one sync replica",
        )


class InvalidPromotionPolicy(SchemaRule):
    """`observerPromotionPolicy` is not one of the three known values.

    What it does: accepts `under-min-isr`, `under-replicated` and
    `leader-is-observer`, and suggests the closest one for a near miss.

    Why: an unknown value is rejected by the broker.

    Example: `"observerPromotionPolicy": "under-min-isrs"`

    Fix: use one of the three values, or omit the key (v2 then uses `under-min-isr`).
    """

    code = "MRC209"
    name = "invalid-promotion-policy"
    severity = Severity.ERROR

    @classmethod
    def owns(cls, err: ErrorDetails) -> bool:
        # an unknown key beside it is UnknownField's; the key itself is optional, never missing
        return err["loc"] == ("observerPromotionPolicy",) and err["type"] != "extra_forbidden"

    @classmethod
    def finding(cls, err: ErrorDetails) -> Finding:
        value = err.get("input")
        hint = did_you_mean(str(value), PROMOTION_VALUES) if isinstance(value, str) else ""
        return Finding(
            pointer(err["loc"]),
            f'"observerPromotionPolicy" must be one of '
            f"{', '.join(PROMOTION_VALUES)}; found {describe(value)}",
            hint or "omit the key to get the version 2 default, under-min-isr",
        )


# which rule owns an error: the whole document, then the members with rules of their own,
# then missing and unknown keys anywhere, then counts and racks anywhere; WrongType last
_PRECEDENCE: tuple[type[SchemaRule], ...] = (
    TopLevelNotObject,
    InvalidVersion,
    InvalidPromotionPolicy,
    MissingField,
    UnknownField,
    InvalidCount,
    InvalidRack,
    EmptyReplicas,
    WrongType,
)


def check_schema(value: Any) -> tuple[PlacementPolicy | None, list[tuple[type[Rule], Finding]]]:
    """Validate ``value`` against the policy model; return the model or the findings."""
    from pydantic import ValidationError

    from placement.model.policy import PlacementPolicy

    try:
        return PlacementPolicy.model_validate(value), []
    except ValidationError as exc:
        out: list[tuple[type[Rule], Finding]] = []
        for err in exc.errors():
            rule = next(r for r in _PRECEDENCE if r.owns(err))
            out.append((rule, rule.finding(err)))
        return None, out


SCHEMA_RULES: list[type[Rule]] = [
    TopLevelNotObject,
    InvalidVersion,
    MissingField,
    UnknownField,
    WrongType,
    InvalidCount,
    InvalidRack,
    EmptyReplicas,
    InvalidPromotionPolicy,
]
