"""MRC1xx: the file is not strict UTF-8 JSON. Reported by the parser, one per file."""

from __future__ import annotations

from placement.io.jsonsrc import NOT_JSON, JsonSyntaxError, SyntaxKind, shorten
from placement.io.positions import Position
from placement.model.diagnostic import Severity
from placement.rules.base import Rule

NOT_A_POLICY = f"not a placement policy ({NOT_JSON})"


class SyntaxRule(Rule):
    """A rule the JSON parser reports. The parser's message and hint hold for any JSON
    file (the inventory and topics readers show them as they are); a rule words what is
    particular to a placement policy."""

    @classmethod
    def explain(cls, exc: JsonSyntaxError) -> tuple[str, str]:
        """(message, hint) for ``exc`` in a placement policy."""
        return exc.message, exc.hint


class InvalidJson(SyntaxRule):
    """The file is not valid JSON.

    What it does: reports the first place where the text stops being JSON, with the
    line and column, and what the parser expected there.

    Why: `kafka-topics --replica-placement` and `kafka-configs` reject the file, but
    only when someone runs them against the cluster.

    Example: `{"version": 2, "replicas": [{"count": <integer>, ...}]}`

    Fix: correct the text at the reported position (placeholders, single quotes,
    unquoted keys and Python literals such as `True` are common culprits).
    """

    code = "MRC101"
    name = "invalid-json"
    severity = Severity.ERROR

    @classmethod
    def explain(cls, exc: JsonSyntaxError) -> tuple[str, str]:
        if not exc.not_json:
            return exc.message, exc.hint
        # another kind of file (a symlink to a runner's secret?): refused, not quoted
        return exc.message.replace(NOT_JSON, NOT_A_POLICY, 1), (
            "check that this path names a placement policy: a JSON object such as "
            '{"version": 2, "replicas": [...]}'
        )


class JsonComment(SyntaxRule):
    """The file contains a comment (`//`, `/* */` or `#`).

    What it does: reports the first comment in the file.

    Why: JSON has no comments. Confluent's documentation sketches the placement schema
    with `//` comments, and files pasted from it fail on the broker.

    Example: `"observers": [ // optional`

    Fix: delete every comment; keep notes in a README or commit message instead.
    """

    code = "MRC102"
    name = "json-comment"
    severity = Severity.ERROR

    @classmethod
    def explain(cls, exc: JsonSyntaxError) -> tuple[str, str]:
        if exc.found == "#":
            return exc.message, exc.hint
        return exc.message, (
            "delete every comment; Confluent's documentation uses // only to sketch the "
            "schema, the real file must be plain JSON"
        )


class TrailingComma(SyntaxRule):
    """A comma follows the last element of an object or array.

    What it does: points at the comma.

    Why: strict JSON parsers, including the one in Confluent Server, reject it.

    Example: `{"rack": "us-west",}`

    Fix: delete the comma.
    """

    code = "MRC103"
    name = "trailing-comma"
    severity = Severity.ERROR


class TruncatedJson(SyntaxRule):
    """The file ends before the JSON document does.

    What it does: reports the end of the file and the bracket or string left open.

    Why: usually a bad copy-paste or an interrupted write; the policy is incomplete.

    Example: `{"version": 2, "replicas": [`

    Fix: restore the missing end of the document.
    """

    code = "MRC104"
    name = "truncated-json"
    severity = Severity.ERROR


class EmptyFile(SyntaxRule):
    """The file is empty or holds only whitespace.

    What it does: reports line 1, column 1.

    Why: an empty policy is not "no policy"; tools that read it fail.

    Example: a zero-byte `orders.json`.

    Fix: write the policy, or delete the file.
    """

    code = "MRC105"
    name = "empty-file"
    severity = Severity.ERROR

    @classmethod
    def explain(cls, exc: JsonSyntaxError) -> tuple[str, str]:
        return exc.message, 'a placement policy needs at least {"version": 2, "replicas": [...]}'


class InvalidUtf8(SyntaxRule):
    """The file is not valid UTF-8.

    What it does: reports the line and column of the first byte that is not UTF-8.

    Why: JSON is UTF-8; rack names written in another encoding never match the
    brokers' `broker.rack`.

    Example: a rack name saved as Latin-1 (`M\\xfcnchen`).

    Fix: re-save the file as UTF-8.
    """

    code = "MRC106"
    name = "invalid-utf8"
    severity = Severity.ERROR


class Utf8Bom(Rule):
    """The file starts with a UTF-8 byte order mark.

    What it does: warns; the rest of the file is checked as usual.

    Why: some JSON readers (including Jackson's defaults in some setups) and shell
    tools choke on the invisible BOM.

    Example: a file saved as "UTF-8 with BOM" by a Windows editor.

    Fix: save as UTF-8 without BOM.
    """

    code = "MRC107"
    name = "utf8-bom"
    severity = Severity.WARNING
    message = "file starts with a UTF-8 byte order mark"
    hint = "save it without a BOM"


class DuplicateKey(Rule):
    """An object has the same key twice.

    What it does: reports the second occurrence and where the first one is.

    Why: parsers disagree on which value wins, so the policy means different things
    to different tools.

    Example: `{"version": 1, "version": 2, ...}`

    Fix: keep one of the two members.
    """

    code = "MRC108"
    name = "duplicate-key"
    severity = Severity.ERROR
    hint = "delete one of the two members"

    @staticmethod
    def message(key: str, first: Position) -> str:
        return (
            f'duplicate key "{shorten(key)}" (first at line {first.line}, column {first.column}); '
            "parsers disagree on which wins"
        )


class NestingTooDeep(SyntaxRule):
    """Arrays or objects are nested too deeply to be a placement policy.

    What it does: stops at the bracket that goes past the depth limit.

    Why: a placement policy is three levels deep; anything this deep is corrupt or
    hostile input, and recursive parsers crash on it.

    Example: `[[[[[[ ... ]]]]]]` thousands of levels deep.

    Fix: check where the file came from.
    """

    code = "MRC109"
    name = "nesting-too-deep"
    severity = Severity.ERROR


SYNTAX_RULES: dict[SyntaxKind, type[SyntaxRule]] = {
    SyntaxKind.INVALID: InvalidJson,
    SyntaxKind.COMMENT: JsonComment,
    SyntaxKind.TRAILING_COMMA: TrailingComma,
    SyntaxKind.TRUNCATED: TruncatedJson,
    SyntaxKind.EMPTY: EmptyFile,
    SyntaxKind.ENCODING: InvalidUtf8,
    SyntaxKind.TOO_DEEP: NestingTooDeep,
}
