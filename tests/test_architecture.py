"""Dependency direction (STYLE.md, Layout): cli -> placement -> libraries, never back.

placement/ is a library: no typer/rich/click, no printing, no exits; pyspark only in
placement/score/. The CLI imports ortools, pyspark, pandas and matplotlib only in the
commands (and with the options) that need them, so `--help` and `validate` start fast.
"""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PLACEMENT = REPO / "placement"
MODULES = sorted(PLACEMENT.rglob("*.py"))
UI_LIBRARIES = {"typer", "rich", "click"}
CLI_PACKAGES = {"cli", "mrc_plan_cli"}
HEAVY = ["ortools", "pyspark", "pandas", "matplotlib"]


def imported_modules(tree: ast.AST) -> Iterator[tuple[str, int]]:
    """Absolute module names imported anywhere in ``tree`` (functions included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, node.lineno
        elif (  # importlib.import_module("x") / __import__("x") with a literal name
            isinstance(node, ast.Call)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id == "__import__")
            )
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value, node.lineno


@functools.cache  # each module parsed once for all the tests here; no test changes a tree
def parse(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def test_the_walk_sees_the_library() -> None:
    names = {rel(p) for p in MODULES}
    assert {"placement/rules/validate.py", "placement/io/jsonsrc.py"} <= names


def test_placement_never_imports_ui_libraries_or_the_cli() -> None:
    offences = [
        f"{rel(path)}:{line}: import {name}"
        for path in MODULES
        for name, line in imported_modules(parse(path))
        if name.split(".")[0] in UI_LIBRARIES | CLI_PACKAGES
    ]
    assert not offences, "placement/ is a library; move UI code to cli/:\n" + "\n".join(offences)


def test_pyspark_only_in_placement_score() -> None:
    score = PLACEMENT / "score"
    offences = [
        f"{rel(path)}:{line}: import {name}"
        for path in MODULES
        if score not in path.parents
        for name, line in imported_modules(parse(path))
        if name.split(".")[0] == "pyspark"
    ]
    assert not offences, "pyspark belongs in placement/score/ only:\n" + "\n".join(offences)


def test_placement_does_not_print_or_exit() -> None:
    offences = []
    for path in MODULES:
        for node in ast.walk(parse(path)):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = (
                f.id
                if isinstance(f, ast.Name)
                else f"{f.value.id}.{f.attr}"
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                else ""
            )
            if name in {"print", "exit", "quit", "sys.exit", "os._exit", "pprint"}:
                offences.append(f"{rel(path)}:{node.lineno}: {name}()")
    assert not offences, "the library returns data or raises:\n" + "\n".join(offences)


def test_the_checker_catches_an_offence() -> None:
    tree = ast.parse(
        "import rich.console\nfrom typer import Typer\n"
        "def f():\n    import pyspark.sql\n    importlib.import_module('click')\n"
    )
    assert [n for n, _ in imported_modules(tree)] == [
        "rich.console",
        "typer",
        "pyspark.sql",
        "click",
    ]


def _modules_after(code: str, watched: list[str] = HEAVY) -> list[str]:
    """Run ``code`` in a fresh interpreter; return which ``watched`` modules it loaded."""
    probe = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps(sorted(m for m in {watched!r} if m in sys.modules)))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO.parent,  # not the repo: import what is installed
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_importing_the_cli_loads_no_heavy_library() -> None:
    assert _modules_after("import mrc_plan_cli.main") == []


def test_the_registries_behind_the_cli_choices_load_nothing_on_import() -> None:
    """--format and schema NAME come from REPORTERS and SCHEMAS on every start: their
    modules must not pull in pydantic, the rules or the reports' models."""
    watched = ["pydantic", "placement.rules.registry", "placement.score.report"]
    assert _modules_after("import mrc_plan_cli.main", watched) == []


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        [
            "validate",
            str(REPO / "examples" / "placement"),
            "--inventory",
            str(REPO / "examples" / "inventory.json"),
            "--min-insync-replicas",
            "2",
        ],
        ["validate", "--format", "sarif", str(REPO / "examples")],
    ],
    ids=["help", "validate", "validate-sarif"],
)
def test_fast_commands_load_no_heavy_library(args: list[str]) -> None:
    code = (
        "import contextlib, io\nfrom mrc_plan_cli.main import app\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    try:\n        app({args!r})\n    except SystemExit:\n        pass"
    )
    assert _modules_after(code) == []


# The layers of placement/, lowest first. A module may import its own package and any
# lower layer, never a higher one (docs/architecture.md explains each).
LAYERS: list[set[str]] = [
    {"errors", "model"},  # the domain records: no I/O, no rules
    {"io"},  # every reader and writer of a file format
    {"rules"},  # the checks, each with its message; validate runs them
    {"diagnostics"},  # reporters of findings
    {"solver"},  # planning algorithms over models
    {"plan"},  # the desired state, assign, batches, the independent checker
    {"snapshot"},  # facts about a snapshot, synthetic clusters
    {"simulate"},  # failure what-ifs, in process
    {"score"},  # Spark: scoring and simulation at scale
    {"schemas"},  # the JSON Schemas of every format and report
    {"html"},  # the HTML reports, from the report models of every layer below
    {"api"},  # the front door of each command, one call each
]
LAYER_OF = {name: i for i, names in enumerate(LAYERS) for name in names}


def unit_of(module: str) -> str:
    """The package (or top-level module) of ``placement`` a dotted name belongs to."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "placement"


def test_every_unit_of_the_library_has_a_layer() -> None:
    units = {unit_of(".".join(p.relative_to(REPO).with_suffix("").parts)) for p in MODULES}
    units -= {"__init__", "placement"}
    assert units == set(LAYER_OF), "give a new package or module its layer in LAYERS"


def test_no_import_points_up_the_layers() -> None:
    """Every import inside placement/ (function-level ones included) goes down or stays
    in its own package."""
    offences = []
    for path in MODULES:
        here = unit_of(".".join(path.relative_to(REPO).with_suffix("").parts))
        if here not in LAYER_OF:
            continue
        for name, line in imported_modules(parse(path)):
            if not name.startswith("placement."):
                continue
            there = unit_of(name)
            if there != here and LAYER_OF[there] >= LAYER_OF[here]:
                offences.append(f"{rel(path)}:{line} imports {name}")
    assert offences == []


def runtime_imports(tree: ast.AST) -> Iterator[str]:
    """Module names imported anywhere in ``tree``, deferred (function-level) imports included,
    ``if TYPE_CHECKING:`` blocks left out (they never run); ``from a import b`` yields ``a.b``
    too, for when ``b`` is a module."""
    skipped: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(ast.walk(node))
            skipped.difference_update(ast.walk(ast.Module(body=node.orelse, type_ignores=[])))
    for node in ast.walk(tree):
        if node in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
            yield from (f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


def import_cycles(graph: dict[str, set[str]]) -> list[str]:
    """Each back-arrow of a depth-first walk of ``graph``, as the cycle it closes."""
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*trail[trail.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return cycles


def import_graph(trees: dict[str, ast.AST]) -> dict[str, set[str]]:
    """Module -> the modules of ``trees`` it imports (at any level: a deferred import only
    hides a cycle, it does not break it)."""
    return {
        me: {d for d in runtime_imports(tree) if d in trees and d != me}
        for me, tree in trees.items()
    }


# Cycles allowed, each with why it cannot be broken by moving shared code down: none.
ALLOWED_CYCLES: set[str] = set()


def test_no_import_cycle_between_modules() -> None:
    """The imports inside placement/, function-level ones included, form no cycle (a cycle
    inside one package is a back-arrow too, just a shorter one)."""
    trees = {".".join(p.relative_to(REPO).with_suffix("").parts): parse(p) for p in MODULES}
    cycles = [c for c in import_cycles(import_graph(trees)) if c not in ALLOWED_CYCLES]
    assert cycles == [], "move what both sides need into a module below them"


def test_the_cycle_check_sees_deferred_imports() -> None:
    trees = {
        "placement.a": ast.parse("from placement.b import x\n"),
        "placement.b": ast.parse("def f():\n    from placement import a\n"),
        "placement.c": ast.parse(
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import placement.a\n"
        ),
        "placement.d": ast.parse("import placement.c\n"),
    }
    assert import_cycles(import_graph(trees)) == ["placement.a -> placement.b -> placement.a"]


def test_the_layer_check_catches_an_offence() -> None:
    tree = ast.parse("def f():\n    from placement.score.run import run_score\n")
    names = [n for n, _ in imported_modules(tree)]
    here = "io"
    ups = [n for n in names if LAYER_OF[unit_of(n)] > LAYER_OF[here]]
    assert ups == ["placement.score.run"]


MAX_FUNCTION_LINES = 80
# Functions allowed over MAX_FUNCTION_LINES, "path:qualified.name" -> why: none.
LONG_FUNCTIONS_ALLOWED: dict[str, str] = {}


def long_functions(tree: ast.AST, limit: int = MAX_FUNCTION_LINES) -> Iterator[tuple[str, int]]:
    """(qualified name, lines) of each function in ``tree`` longer than ``limit`` lines, from
    its ``def`` to its last line (docstring and signature counted, decorators not)."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    assert child.end_lineno is not None
                    lines = child.end_lineno - child.lineno + 1
                    if lines > limit:
                        yield name, lines
                yield from walk(child, f"{name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def test_no_function_is_longer_than_80_lines() -> None:
    found = {
        f"{rel(path)}:{name}": lines
        for path in [*MODULES, *sorted((REPO / "cli").rglob("*.py"))]
        for name, lines in long_functions(parse(path))
    }
    over = {k: v for k, v in found.items() if k not in LONG_FUNCTIONS_ALLOWED}
    assert over == {}, "split these into named helpers (lines from def to the end)"
    stale = sorted(set(LONG_FUNCTIONS_ALLOWED) - set(found))
    assert stale == [], "no longer over the limit: take them off LONG_FUNCTIONS_ALLOWED"


def test_the_length_check_counts_from_def_to_the_end() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(79))  # short: 80 lines, at the limit
    tree = ast.parse(
        f"@decorator\ndef short():\n{body}\n"
        f"class C:\n    def long(self):\n        '''doc'''\n{body.replace('    ', '        ')}"
    )
    assert list(long_functions(tree)) == [("C.long", 80 + 1)]


# --- imports inside functions ------------------------------------------------------------

# Third-party libraries slow to import (tens of ms and more) or optional extras.
SLOW_LIBRARIES = {
    "click",
    "confluent_kafka",
    "matplotlib",
    "numpy",
    "orjson",
    "ortools",
    "pandas",
    "pyarrow",
    "pydantic",
    "pydantic_core",
    "pyspark",
    "rich",
    "typer",
}
# Standard modules that `mrc-plan --help` does not load and that cost over ~1 ms alone
# (`python -X importtime`, after the CLI has started), with what they cost.
SLOW_STDLIB: dict[str, str] = {
    "concurrent.futures": "~7 ms",
    "csv": "~2 ms",
    "ctypes": "~6-10 ms with ctypes.util",
    "fractions": "~6 ms",
    "hashlib": "~5 ms",
    "importlib.metadata": "~35 ms",
    "json": "~4 ms with its decoder and encoder; --help and rules never need it",
    "secrets": "~13 ms",
    "tempfile": "~4 ms",
    "urllib.request": "~33 ms, with http.client and email",
    "xml.etree": "~6 ms",
}
# Light modules a function may still import, each with why.
DEFERRED_ALLOWED: dict[str, str] = {
    "importlib.util": "the probe of optional extras; loaded at start by editable installs only",
    "placement.__version__": "reads the installed metadata (importlib.metadata) when asked",
    "placement.io.properties": "~2 ms on validate's path; only .properties files need it",
    "placement.io.describe": "~10 ms on validate's path; only describe output needs it",
    "placement.io.inventory_sources": "on validate's path; only what a cluster prints needs it",
}
# Modules whose function-level imports are their lazy loading by design, with why.
LAZY_MODULES: dict[str, str] = {
    "placement.api": "each front door loads its command on first call (test_front_import)",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _targets(importer: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules ``node`` may load, in absolute form (``from a import b``: ``a`` and
    ``a.b``, for when ``b`` is a module)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        here = importer.split(".")
        here = here if is_package else here[:-1]
        here = here[: len(here) - (node.level - 1)]
        base = ".".join([*here, *([base] if base else [])])
    return [base, *(f"{base}.{a.name}" for a in node.names)]


def _split_imports(
    tree: ast.AST,
) -> tuple[list[ast.Import | ast.ImportFrom], list[ast.Import | ast.ImportFrom]]:
    """(module-level imports, function-level imports) of ``tree``; ``if TYPE_CHECKING:``
    blocks are neither (they never run)."""
    top: list[ast.Import | ast.ImportFrom] = []
    inner: list[ast.Import | ast.ImportFrom] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.orelse:
                    walk(ast.Module(body=[stmt], type_ignores=[]), in_function)
            elif isinstance(child, ast.Import | ast.ImportFrom):
                (inner if in_function else top).append(child)
            else:
                fn = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                walk(child, in_function or fn)

    walk(tree, False)
    return top, inner


def _ours(name: str) -> str:
    return "cli" + name[len("mrc_plan_cli") :] if name.startswith("mrc_plan_cli") else name


def _with_packages(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def modules_at_start(main: ast.AST) -> list[str]:
    """What `mrc-plan --help` starts from: cli.main and the module of each command, which
    cli/main.py's `_full_app` imports to list them."""
    full_app = next(
        n for n in ast.walk(main) if isinstance(n, ast.FunctionDef) and n.name == "_full_app"
    )
    imports = [n for n in ast.walk(full_app) if isinstance(n, ast.Import | ast.ImportFrom)]
    return ["cli.main", *(t for n in imports for t in _targets("cli.main", False, n)[1:])]


def deferred_imports_without_reason(
    trees: dict[str, tuple[ast.AST, bool]], starts: list[list[str]]
) -> list[str]:
    """The function-level imports of ``trees`` (module name -> (tree, is a package)), as
    "importer:line: target", that have no reason: they load nothing slow, nor one of our
    modules that a start leaves out, and are not allowed by name. ``starts``: the modules
    each way the program starts imports first, the narrowest first."""
    split = {m: _split_imports(tree) for m, (tree, _) in trees.items()}
    loads = {
        m: {p for n in top for t in _targets(m, trees[m][1], n) for p in _with_packages(_ours(t))}
        for m, (top, _) in split.items()
    }
    slow: dict[str, bool] = {}

    def is_slow(name: str) -> bool:
        if name.split(".")[0] in SLOW_LIBRARIES or any(
            p in SLOW_STDLIB for p in _with_packages(name)
        ):
            return True
        if name not in loads or slow.get(name) is not None:
            return bool(slow.get(name))
        slow[name] = False  # in progress: a cycle adds nothing
        slow[name] = any(is_slow(t) for t in loads[name])
        return slow[name]

    def closure(start: list[str]) -> tuple[set[str], set[str]]:
        """The modules of ours ``start`` imports, and everything those import."""
        ours, todo = set(), list(start)
        while todo:
            if (name := todo.pop()) in loads and name not in ours:
                ours.add(name)
                todo.extend(loads[name])
        return ours, ours.union(*(loads[m] for m in ours))

    runs = [closure(start) for start in starts]
    offences = []
    for importer, (_, inner) in split.items():
        if importer in LAZY_MODULES:
            continue
        ours, loaded = next((run for run in runs if importer in run[0]), (set(), set()))
        for node in inner:
            first, *more = (_ours(t) for t in _targets(importer, trees[importer][1], node))
            modules = [first, *(t for t in more if t in loads)]
            if any(t in DEFERRED_ALLOWED for t in [first, *more]):
                continue
            if ours and set(modules) <= loaded:
                pass  # loaded before this function can run anyway
            elif any(is_slow(t) for t in modules) or (ours and not set(modules) <= ours):
                continue  # slow, or code of a command that this start leaves out
            offences.append(f"{importer}:{node.lineno}: {', '.join(modules[1:]) or first}")
    return offences


def test_imports_inside_functions_defer_something_heavy() -> None:
    """An import inside a function is there for one reason: `mrc-plan --help` and
    `mrc-plan validate` must start fast. So a module that is slow to import (a heavy
    library, or one of ours that loads one), and a command's own code, which starting any
    other command must not load, are imported by the functions that need them. Everything
    else is imported at the top of its module, where a reader looks for it, and so is what
    the start has loaded anyway. A light module stays deferred only with its reason written
    next to it in DEFERRED_ALLOWED or LAZY_MODULES."""
    paths = [*MODULES, *sorted((REPO / "cli").rglob("*.py"))]
    trees = {_module_name(p): (parse(p), p.name == "__init__.py") for p in paths}
    found = deferred_imports_without_reason(
        trees, [["cli.main"], modules_at_start(trees["cli.main"][0])]
    )
    assert found == [], "import these at the top of the module:\n" + "\n".join(found)


def test_the_deferral_check_tells_heavy_from_light() -> None:
    trees = {
        "placement.a": (ast.parse("import numpy\n"), False),
        "placement.b": (ast.parse("from placement import a\n"), False),
        "placement.c": (
            ast.parse(
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import numpy\n"
                "def f():\n    import shlex\n    from placement import b\n"
                "    from .a import x\n    from placement.errors import E\n"
                "    import hashlib\n"
            ),
            False,
        ),
    }
    assert deferred_imports_without_reason(trees, [["placement.a"]]) == [
        "placement.c:5: shlex",
        "placement.c:8: placement.errors",
    ]


def test_the_deferral_check_knows_what_a_start_loads() -> None:
    trees = {
        "cli.main": (
            ast.parse("import placement.d\ndef f():\n    from placement import d, e\n"),
            False,
        ),
        "placement.d": (ast.parse("def g():\n    from placement import e\n"), False),
        "placement.e": (ast.parse(""), False),
        "placement.f": (ast.parse("def h():\n    from placement import e\n"), False),
    }
    # cli.main: d is loaded with cli.main, e is not (a command's own code); d: the same
    # start leaves e out; f is no start's, and e is light
    assert deferred_imports_without_reason(trees, [["cli.main"]]) == ["placement.f:2: placement.e"]
    trees["cli.main"] = (
        ast.parse("import placement.d\ndef f():\n    from placement import d\n"),
        False,
    )
    assert deferred_imports_without_reason(trees, [["cli.main"]]) == [
        "cli.main:3: placement.d",
        "placement.f:2: placement.e",
    ]
