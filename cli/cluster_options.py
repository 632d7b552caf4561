"""`--bootstrap-server` and its companions, shared by `assign`, `simulate` and `validate`:
read a live cluster in place of a snapshot file. The cluster is read once, as `snapshot
from-cluster` reads it (placement/io/cluster.py: describe and metadata requests only), and
the snapshot it makes is what the command then takes, as it would take that snapshot's
directory: the same result as `snapshot from-cluster --out S` then `--current S`."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from placement.errors import MrcPlanError, UsageError, require

if TYPE_CHECKING:
    from placement.io.snapshot import Snapshot
    from placement.model.shapes import InventoryLike

PANEL = "Live cluster"
DEFAULT_TIMEOUT = 30.0

BootstrapOpt = Annotated[
    str | None,
    typer.Option(
        "--bootstrap-server",
        help="Read the cluster at HOST:PORT (a comma-separated list works) instead of a "
        "file: read-only (describe and metadata requests), the same result as `snapshot "
        "from-cluster` then its snapshot as input. Brokers without a rack take it from "
        "--inventory.",
        rich_help_panel=PANEL,
        show_default=False,
    ),
]
CommandConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--command-config",
        help="With --bootstrap-server: Kafka client properties, as for kafka-topics "
        "(security.protocol, sasl.mechanism, sasl.jaas.config, ssl.*); no secret of it is "
        "ever shown.",
        rich_help_panel=PANEL,
        show_default=False,
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        min=0.1,
        max=3600,
        help=f"With --bootstrap-server: seconds for the whole read (default {DEFAULT_TIMEOUT:g}).",
        rich_help_panel=PANEL,
        show_default=False,
    ),
]
SkipUnauthorizedOpt = Annotated[
    bool,
    typer.Option(
        "--skip-unauthorized",
        help="With --bootstrap-server: leave out the topics the client may not describe "
        "(listed on stderr) instead of stopping.",
        rich_help_panel=PANEL,
    ),
]


@dataclass(frozen=True)
class Live:
    """The four options as given (``bootstrap`` None: no cluster to read)."""

    bootstrap: str | None = None
    command_config: Path | None = None
    timeout: float | None = None
    skip_unauthorized: bool = False

    def check(self, *instead: tuple[str, object]) -> None:
        """Usage errors before any work: a companion without --bootstrap-server, or
        --bootstrap-server with a flag it stands in for (``instead``: flag, value)."""
        if self.bootstrap is None:
            given = [
                flag
                for flag, value in (
                    ("--command-config", self.command_config),
                    ("--timeout", self.timeout),
                    ("--skip-unauthorized", self.skip_unauthorized or None),
                )
                if value is not None
            ]
            if given:
                raise UsageError(
                    f"{given[0]} goes with --bootstrap-server: it says how to read a live cluster",
                    "add --bootstrap-server HOST:PORT, or leave it out",
                )
            return
        for flag, value in instead:
            if value is not None:
                raise UsageError(
                    f"--bootstrap-server and {flag} both give the cluster: give one of them",
                    f"read the cluster with --bootstrap-server, or a file with {flag}",
                )

    def read(self, inventory: InventoryLike | None, command: str) -> Snapshot:
        """The cluster's snapshot (the brokers without a rack take it from ``inventory``),
        checked as a snapshot directory's tables are when read; its notes on stderr.
        Named ``cluster HOST:PORT`` (its ``source``): findings and messages say that."""
        require("kafka", f"`mrc-plan {command} --bootstrap-server`")
        from placement.io.cluster import ClusterConfig, read_cluster, snapshot_from_cluster
        from placement.io.cluster_config import ClientSettings, load_command_config
        from placement.io.snapshot import check_rows, conform
        from placement.model.inventory import Broker, Inventory

        from .render import safe

        assert self.bootstrap is not None
        command_config = self.command_config
        client = load_command_config(command_config) if command_config else ClientSettings()
        timeout = DEFAULT_TIMEOUT if self.timeout is None else self.timeout
        config = ClusterConfig(self.bootstrap, client, timeout)
        racks = inventory
        if racks is not None and not isinstance(racks, Inventory):  # validate's record
            brokers = [
                Broker(id=b.id, rack=b.rack, capacity_bytes=b.capacity_bytes) for b in racks.brokers
            ]
            racks = Inventory(brokers=brokers)
        state = read_cluster(config, skip_unauthorized=self.skip_unauthorized)
        made = snapshot_from_cluster(state, racks)
        source = source_name(config.bootstrap)
        tables = {}
        for name in ("brokers", "topics", "partitions"):
            # as a snapshot directory's tables are read: the same types, the same checks
            table = conform(getattr(made.snapshot, name), name, source)
            check_rows(table, name, source)
            tables[name] = table
        notes = list(made.notes)
        if client.ignored:
            notes.append(
                f"--command-config: {', '.join(client.ignored)} have no effect on this read"
            )
        for note in notes:
            sys.stderr.write(f"note: {safe(note)}\n")
        return replace(made.snapshot, **tables, source=source)


@contextmanager
def naming(snap: Snapshot, *paths: Path) -> Iterator[None]:
    """A failure while taking the snapshot of a live cluster names the cluster: where it
    names ``paths`` (a directory the snapshot went through), and in the command its hint
    gives to see every finding (`validate --bootstrap-server`, not a directory)."""
    address = snap.source.removeprefix("cluster ")
    try:
        yield
    except MrcPlanError as exc:
        for path in paths:
            exc.message = exc.message.replace(str(path), snap.source)
            exc.hint = exc.hint.replace(str(path), snap.source)
        exc.hint = exc.hint.replace(
            f"mrc-plan validate {snap.source}", f"mrc-plan validate --bootstrap-server {address}"
        )
        raise


def source_name(bootstrap: str) -> str:
    """What findings and messages call a live cluster: its address, said as one."""
    return f"cluster {bootstrap}"
