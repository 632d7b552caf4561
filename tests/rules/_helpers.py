"""Shared by the rule tests: the fixture manifests (`cases.toml`) and how a case is run.

A manifest lists cases; each runs `validate_paths([file], ...)` and compares the sorted
(code, line, column) of every diagnostic with `expect`. Keys of a case:

- `file`: the fixture, relative to the manifest's directory;
- `args`: optional `inventory` (a path relative to the manifest), `min_insync_replicas`, `ibp`;
- `expect`: the exact sorted list of `[code, line, column]` for `file`;
- `elsewhere`: `{path: [[code, line, column], ...]}` for diagnostics reported in other files
  (the inventory); any other file must have none;
- `hints` / `messages`: `[code, text]` pairs: some diagnostic with that code has exactly that
  hint / a message containing that text;
- `xfail` / `xfail_texts`: a reason starting with "BUG:" when the positions / the hints and
  messages of the case expose a library bug.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from placement.io.inventory import load_inventory
from placement.model.diagnostic import Diagnostic
from placement.rules.validate import ValidateOptions, parse_ibp, validate_paths

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RULE_FIXTURES = FIXTURES / "rules"
SEEDS = FIXTURES / "seeds"
INVENTORIES = FIXTURES / "inventories"

Triple = tuple[str, int, int]

CASE_KEYS = frozenset(
    {"file", "args", "expect", "elsewhere", "hints", "messages", "xfail", "xfail_texts"}
)
ARG_KEYS = frozenset({"inventory", "min_insync_replicas", "ibp"})


def _triples(raw: Iterable[list[Any]]) -> list[Triple]:
    return [(str(code), int(line), int(column)) for code, line, column in raw]


@dataclass(frozen=True)
class Case:
    code: str  # the fixture directory, i.e. the rule the case is about
    directory: Path
    raw: Mapping[str, Any]

    @property
    def file(self) -> str:
        return str(self.raw["file"])

    @property
    def path(self) -> Path:
        return (self.directory / self.file).resolve()

    @property
    def args(self) -> dict[str, Any]:
        return dict(self.raw.get("args", {}))

    @property
    def expect(self) -> list[Triple]:
        return _triples(self.raw["expect"])

    @property
    def elsewhere(self) -> dict[Path, list[Triple]]:
        return {
            (self.directory / p).resolve(): _triples(v)
            for p, v in self.raw.get("elsewhere", {}).items()
        }

    @property
    def hints(self) -> list[tuple[str, str]]:
        return [(c, t) for c, t in self.raw.get("hints", [])]

    @property
    def messages(self) -> list[tuple[str, str]]:
        return [(c, t) for c, t in self.raw.get("messages", [])]

    @property
    def id(self) -> str:
        shown = {k: Path(v).name if k == "inventory" else v for k, v in self.args.items()}
        suffix = ",".join(f"{k}={v}" for k, v in sorted(shown.items()))
        return f"{self.code}/{self.file}" + (f"@{suffix}" if suffix else "")

    def codes(self) -> set[str]:
        """Every code this case expects, in its file or elsewhere."""
        found = {code for code, _, _ in self.expect}
        for triples in self.elsewhere.values():
            found.update(code for code, _, _ in triples)
        return found

    def options(self) -> ValidateOptions:
        args = self.args
        inventory = args.get("inventory")
        ibp = args.get("ibp")
        return ValidateOptions(
            inventory=load_inventory(self.directory / inventory) if inventory else None,
            min_insync_replicas=args.get("min_insync_replicas"),
            ibp=parse_ibp(ibp) if ibp else None,
        )


def load_cases(root: Path = RULE_FIXTURES) -> list[Case]:
    cases = []
    for manifest in sorted(root.glob("*/cases.toml")):
        with manifest.open("rb") as f:
            data = tomllib.load(f)
        cases.extend(Case(manifest.parent.name, manifest.parent, raw) for raw in data["case"])
    return cases


def validate(paths: Iterable[Path], options: ValidateOptions) -> dict[Path, list[Diagnostic]]:
    """`validate_paths`, keyed by resolved path."""
    return {Path(f).resolve(): d for f, d in validate_paths(list(paths), options).items()}


def positions(diagnostics: Iterable[Diagnostic]) -> list[Triple]:
    return sorted((d.code, d.line, d.column) for d in diagnostics)
