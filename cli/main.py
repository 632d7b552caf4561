"""The `mrc-plan` command line. Thin: parse arguments, call placement/, render, exit."""

import contextlib
import io
import os
import signal
import sys

try:  # Ctrl-C while these load (most of the first 0.1 s): no traceback either
    from enum import StrEnum
    from pathlib import Path
    from typing import TYPE_CHECKING, Annotated, Any, TextIO

    import typer
    import typer.core

    from placement.diagnostics.escape import escape
    from placement.diagnostics.reporters import REPORTERS, Reporter
    from placement.errors import MrcPlanError, UsageError
    from placement.schemas import SCHEMAS, render_schema, schema_filename

    from .cluster_options import (
        BootstrapOpt,
        CommandConfigOpt,
        Live,
        SkipUnauthorizedOpt,
        TimeoutOpt,
    )
    from .errors import (
        EXIT_FINDINGS,
        EXIT_OK,
        EXIT_USAGE,
        exit_code_for,
        handle_errors,
        install_signal_handlers,
        interrupted,
        on_signal,
        received,
        report_failure,
        signal_of,
        suggest_option,
    )
    from .outputs import report as report_outputs
except KeyboardInterrupt:
    sys.stderr.write("interrupted\n")
    raise SystemExit(130) from None

if TYPE_CHECKING:
    from placement.model.diagnostic import ValidationReport


class _Group(typer.core.TyperGroup):
    """The `mrc-plan` group: an unknown option, of the group or of the command it runs
    (parsed inside `invoke`), gets our suggestion (cli/errors.py `suggest_option`)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except Exception as exc:
            suggest_option(exc)
            raise

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as exc:
            suggest_option(exc)
            raise


def _typer() -> typer.Typer:
    """The `mrc-plan` group, before its commands are added."""
    return typer.Typer(
        cls=_Group,
        rich_markup_mode=None,
        name="mrc-plan",
        help="Validate, plan and score replica placement for Confluent Multi-Region Clusters.",
        epilog="Exit codes: 0 success, 1 findings or infeasible request, 2 usage error or "
        "unreadable input, 3 no solution within the time limit, 101 internal error (a bug), "
        "130 interrupted (Ctrl-C), 143 terminated (SIGTERM). MRC_PLAN_DEBUG=1 shows tracebacks.",
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )


# The choices of `validate --format` and `schema NAME` come from the library's registries:
# adding a reporter or a schema there is the only step. Members are named by their values;
# mypy cannot list members computed at run time, hence the ignores.
# --format: the reporters, after the two the CLI adds (auto picks one, text is rendered here)
Format = StrEnum("Format", [(n, n) for n in ("auto", "text", *REPORTERS)])  # type: ignore[misc]
SchemaName = StrEnum("SchemaName", [(n, n) for n in SCHEMAS])  # type: ignore[misc]


def _version(value: bool) -> None:
    if value:
        from placement import __version__

        typer.echo(f"mrc-plan {__version__}")
        raise typer.Exit()


def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Validate, plan and score replica placement for Confluent Multi-Region Clusters."""


def _color() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


PathsArg = Annotated[
    list[Path] | None,
    typer.Argument(
        help="Placement .json files, server.properties files, saved kafka-topics --describe "
        "output, snapshot directories, or directories to search (none with "
        "--bootstrap-server alone).",
        show_default=False,
    ),
]
InventoryOpt = Annotated[
    Path | None,
    typer.Option(
        help="Broker inventory: JSON, CSV, a directory of server.properties, or saved "
        "kafka-broker-api-versions, kafka-configs --describe --all or zookeeper-shell output "
        "(docs/inputs.md: Where an inventory comes from). Checks racks "
        "exist and have enough brokers, and gives describe output's partitions their racks."
    ),
]
MinIsrOpt = Annotated[
    int | None,
    typer.Option(
        min=1,
        max=2**31 - 1,  # an int in Kafka
        help="The topic's min.insync.replicas: enables the resilience checks; for describe "
        "output and snapshots, the broker default for topics that set none.",
    ),
]
IbpOpt = Annotated[
    str | None,
    typer.Option(
        help="The cluster's inter.broker.protocol.version, e.g. 3.2 or 3.3-IV3 (below 3.3, a "
        "rack may not hold both replicas and observers); a Confluent Platform version such "
        "as 7.2 is refused with the Kafka version it ships. Default: newest behaviour."
    ),
]
FormatOpt = Annotated[
    Format, typer.Option("--format", help="auto = github under GitHub Actions, else text.")
]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Write the report to this file (atomically) instead of stdout."
    ),
]
StrictOpt = Annotated[bool, typer.Option(help="Warnings fail too.")]
ExitZeroOpt = Annotated[
    bool, typer.Option(help="Exit 0 even when there are findings (reports still show them).")
]


@handle_errors
def validate(
    paths: PathsArg = None,
    bootstrap_server: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    timeout: TimeoutOpt = None,
    skip_unauthorized: SkipUnauthorizedOpt = False,
    inventory: InventoryOpt = None,
    min_insync_replicas: MinIsrOpt = None,
    ibp: IbpOpt = None,
    fmt: FormatOpt = Format("auto"),
    output: OutputOpt = None,
    strict: StrictOpt = False,
    exit_zero: ExitZeroOpt = False,
) -> None:
    """Check placement policies offline: syntax, schema, semantics, inventory, resilience;
    and a cluster's state from describe output, a snapshot or the live cluster
    (--bootstrap-server): partitions breaking their policy, offline, under min ISR,
    under-replicated.

    Exits 1 when any file has an error (or a warning with --strict), 0 otherwise.
    """
    from placement.rules.front import ValidateRequest
    from placement.rules.front import run as run_validate

    paths = paths or []
    live = Live(bootstrap_server, command_config, timeout, skip_unauthorized)
    live.check()
    if not paths and live.bootstrap is None:
        raise UsageError(
            "nothing to check: give PATHS, --bootstrap-server HOST:PORT, or both",
            "e.g. mrc-plan validate policies/ or mrc-plan validate --bootstrap-server "
            "kafka-1:9092 --inventory inventory.json",
        )
    output_file = outputs = None
    if output is not None:  # the checks of output paths (and their module) only when writing
        from placement.io.outputs import Outputs

        inputs = [*(("PATHS", p) for p in paths), ("--inventory", inventory)]
        outputs = Outputs.of([*inputs, ("--command-config", command_config)])
        output_file = outputs.add("--output", output)
    if fmt.value == "auto":
        fmt = Format("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")
    request = ValidateRequest(
        paths,
        inventory,
        min_insync_replicas,
        ibp,
        strict,
        # its notes go to stderr as it is read, before the report
        cluster=(lambda racks: live.read(racks, "validate"))
        if live.bootstrap is not None
        else None,
        tool_version=_tool_version(fmt),
    )
    result = run_validate(request)
    report = result.report
    rendered = _render_report(report, fmt, color=_color() and output is None)
    for note in result.notes:  # on stderr: not findings, so no report format carries them
        sys.stderr.write(f"note: {escape(note)}\n")
    if outputs is not None and output_file is not None:
        with outputs:
            output_file.write(rendered)
            report_outputs(outputs, outputs.commit())
    else:
        sys.stdout.write(rendered)
    raise typer.Exit(EXIT_FINDINGS if report.failed and not exit_zero else EXIT_OK)


def _tool_version(fmt: Format) -> str:
    """The version the report carries: the text report does not show it, and reading it
    (importlib.metadata) costs ~20 ms of a command that hooks run once per file."""
    if fmt.value == "text":
        return ""
    from placement import __version__

    return __version__


def _render_report(report: "ValidationReport", fmt: Format, *, color: bool) -> str:
    """The report in ``fmt`` (not auto): a reporter of the library, or text from here."""
    from .render import render_text

    def text(r: "ValidationReport") -> str:
        return render_text(r, color=color)

    reporters: dict[str, Reporter] = {**REPORTERS, "text": text}
    return reporters[fmt.value](report)


class RulesFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


def _rule_completion(incomplete: str) -> list[str]:
    """Shell completion of `rules CODE`: the codes and names that start as typed."""
    from placement.rules.registry import ALL_RULES

    words = [w for r in ALL_RULES for w in (r.code, r.name)]
    return [w for w in words if w.startswith(incomplete)]


@handle_errors
def rules(
    code: Annotated[
        str | None,
        typer.Argument(
            help="A rule code (MRC102) or name (json-comment) to explain.",
            autocompletion=_rule_completion,
        ),
    ] = None,
    format: Annotated[
        RulesFormat,
        typer.Option("--format", help="text, or json (schema: `mrc-plan schema rules`)."),
    ] = RulesFormat.TEXT,
) -> None:
    """List every rule, or print one rule's documentation."""
    from rich.console import Console
    from rich.table import Table

    from placement.rules.registry import ALL_RULES, RULES, lookup
    from placement.rules.suggest import did_you_mean

    rule = None if code is None else lookup(code)
    if code is not None and rule is None:
        names = [*RULES, *(r.name for r in ALL_RULES)]
        raise UsageError(
            f"no rule {code!r}", did_you_mean(code, names) or "run `mrc-plan rules` to list them"
        )
    if format is RulesFormat.JSON:
        from placement.diagnostics.jsonout import report_json
        from placement.rules.catalog import catalog

        sys.stdout.write(report_json(catalog(ALL_RULES if rule is None else (rule,))))
        return
    # a pipe gets full rows (grep-able), a terminal gets its own width
    console = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 200)
    if rule is None:
        table = Table("code", "name", "severity", "family", "summary", box=None)
        for r in ALL_RULES:
            table.add_row(r.code, r.name, r.severity.value, r.family(), r.summary())
        console.print(table)
        return
    console.print(
        f"[bold]{rule.code} {rule.name}[/] ({rule.severity.value}, {rule.family()})\n", markup=True
    )
    console.print(rule.doc(), markup=False)


@handle_errors
def schema(
    name: Annotated[SchemaName | None, typer.Argument(help="Which schema to print.")] = None,
    write: Annotated[
        Path | None,
        typer.Option(help="Write every schema into this directory instead of printing one."),
    ] = None,
) -> None:
    """Print the JSON Schema of a placement policy, an inventory or the validate report."""
    from placement.io.outputs import Outputs

    if write is not None:  # every file or none: an existing directory, files replaced
        outputs = Outputs.of()
        files = {n: outputs.add("--write", write / schema_filename(n)) for n in SCHEMAS}
        with outputs:
            for n, out in files.items():
                out.write(render_schema(n))
            report_outputs(outputs, outputs.commit())
        return
    if name is None:
        *others, last = SCHEMAS
        raise UsageError(f"name a schema: {', '.join(others)} or {last}")
    sys.stdout.write(render_schema(name.value))


class _GuardedStdout(io.TextIOBase):
    """sys.stdout for the console script: a write that fails (a full disk, a closed pipe,
    EIO) is the usage error it names, exit 2, rather than an OSError from deep inside a
    renderer (exit 101); with no standard output at all, the first write says so."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__()
        self._stream = stream

    def _failed(self, exc: OSError | None) -> Exception:
        if exc is None:
            return UsageError("standard output is closed: nothing can be printed")
        return UsageError(f"standard output: cannot write ({exc.strerror or exc})")

    def write(self, text: str) -> int:
        if self._stream is None:
            raise self._failed(None)
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise self._failed(exc) from None

    def flush(self) -> None:
        if self._stream is not None:
            try:
                self._stream.flush()
            except OSError as exc:
                raise self._failed(exc) from None

    def isatty(self) -> bool:
        return self._stream is not None and self._stream.isatty()

    def fileno(self) -> int:
        if self._stream is None:
            raise io.UnsupportedOperation("standard output is closed")
        return self._stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._stream.encoding if self._stream is not None else "utf-8"

    def writable(self) -> bool:
        return True


class _BestEffortStderr(_GuardedStdout):
    """sys.stderr for the console script: messages that cannot be written are lost (there
    is nowhere left to say so) and the command's exit code stands, rather than the failed
    write becoming an exception of its own (exit 1 after `assign` had written its plan)."""

    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except MrcPlanError:
            return len(text)

    def flush(self) -> None:
        with contextlib.suppress(MrcPlanError):
            super().flush()


def _guard_std_streams() -> None:
    """A closed fd 0, 1 or 2 is filled with /dev/null, so that no file this process opens
    becomes its standard output (a JVM it starts inherits 1 and 2); sys.stdout reports
    write failures as usage errors, sys.stderr drops what it cannot write."""
    for fd in (0, 1, 2):  # lowest first: os.open takes the lowest free descriptor
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)
    sys.stdout = _GuardedStdout(sys.stdout)
    sys.stderr = _BestEffortStderr(sys.stderr)


def _flush_stdout() -> int | None:
    """Flush what is still buffered; on failure report it and return exit 2. Either way
    fd 1 is then /dev/null, so that Python's own flush at exit has nothing left to fail."""
    try:
        sys.stdout.flush()
        return None
    except MrcPlanError as exc:
        report_failure(exc)
        return EXIT_USAGE
    finally:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)


def _full_app() -> typer.Typer:
    """Every command, in the order --help lists them."""
    from . import assign, cache, plan, score, simulate, snapshot

    full = _typer()
    full.callback()(main)
    full.add_typer(snapshot.app, name="snapshot")
    full.command("assign")(assign.assign)
    full.add_typer(plan.app, name="plan")
    full.command("score")(score.score)
    full.command("simulate")(simulate.simulate)
    full.add_typer(score.cluster_app, name="spark-local-cluster")
    full.add_typer(cache.app, name="cache")
    full.command()(validate)
    full.command()(rules)
    full.command()(schema)
    return full


_APP: list[typer.Typer] = []  # the whole app, once made


def _the_app() -> typer.Typer:
    if not _APP:
        _APP.append(_full_app())
    return _APP[0]


def __getattr__(name: str) -> typer.Typer:
    """`app`: the whole command tree, made on first use (`validate` runs a group of its
    own, `_app_for`, and needs none of the other commands' modules)."""
    if name == "app":
        return _the_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _app_for(args: list[str]) -> typer.Typer:
    """The app to run for ``args``: for `validate`, a group holding only it. Click builds
    every command's parameters before it runs one (~25 ms for the fourteen here), and
    `validate` is run once per file by editors and hooks. What the group does
    before it hands over to the command (no options of its own were given) is the same;
    shell completion walks the whole tree, so it gets the whole app."""
    if not args or args[0] != "validate" or "_MRC_PLAN_COMPLETE" in os.environ:
        return _the_app()
    only = _typer()
    only.callback()(main)
    only.command("validate")(validate)
    return only


def run() -> None:
    """Console-script entry point. SIGINT and SIGTERM end every command the same way
    (cli/errors.py interrupted: Spark stopped, one line, exit 130 or 143), wherever they
    land: in a command (handle_errors), or while Click builds the command and parses the
    arguments (where it would exit 130 without a word, even for SIGTERM)."""
    install_signal_handlers()
    _guard_std_streams()
    code: int | str | None = 0
    try:
        _app_for(sys.argv[1:])()
    except KeyboardInterrupt as exc:
        code = interrupted(signal_of(exc), again=False)
    except SystemExit as exc:
        signum = received()
        code = interrupted(signum, again=False) if signum is not None else exc.code
    except MrcPlanError as exc:  # outside any command: standard output failing under --help
        report_failure(exc)
        code = exit_code_for(exc)
    finally:  # done: a signal from here on ends the process as it would any other
        for s in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(s) is on_signal:
                signal.signal(s, signal.SIG_DFL)
    failed = _flush_stdout()
    # output cut short outranks success and findings, not an error or an interrupt
    sys.exit(failed if failed is not None and code in (0, 1, None) else code)
