"""The options of `mrc-plan simulate`, one alias each (score shares the min ISR ones),
and the cluster's min.insync.replicas from them."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from placement.errors import UsageError


class SimFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


# topics listed in the text table; the JSON report has every topic
FailRackOpt = Annotated[
    str | None, typer.Option(help="Take every broker of this rack down.", show_default=False)
]
FailBrokersOpt = Annotated[
    str | None,
    typer.Option(help="Take these brokers down: ids separated by commas.", show_default=False),
]
SnapshotOpt = Annotated[
    Path | None,
    typer.Option(help="Snapshot directory: runs on the Spark stage.", show_default=False),
]
CurrentOpt = Annotated[
    Path | None,
    typer.Option(
        help="Current assignment (reassignment JSON, kafka-topics --describe output, or a "
        "snapshot directory): runs in-process; needs --inventory.",
        show_default=False,
    ),
]
InventoryOpt = Annotated[
    Path | None,
    typer.Option(
        help="Broker inventory: the racks of the brokers (with --current; with "
        "--bootstrap-server, of those that report none) and the KRaft controllers (the "
        "quorum check, with any input).",
        show_default=False,
    ),
]
TopicsOpt = Annotated[
    Path | None,
    typer.Option(
        help="Topics file with each topic's policy and min_isr (with --current; "
        "default: the configs in the describe output or snapshot).",
        show_default=False,
    ),
]
PlanOpt = Annotated[
    Path | None,
    typer.Option(
        help="Apply this reassignment JSON first; or an `assign --out-dir` directory: the "
        "failure before any batch and after each step, worst first (with --current).",
        show_default=False,
    ),
]
MinInsyncReplicasOpt = Annotated[
    int | None,
    typer.Option(
        min=1,
        max=2**31 - 1,
        help="The cluster's min.insync.replicas, for topics that set none of their own "
        "(Kafka's default: 1).",
        show_default=False,
    ),
]
# the old name of --min-insync-replicas: still taken, with a note, and not listed
DefaultMinIsrOpt = Annotated[
    int | None,
    typer.Option(min=1, max=2**31 - 1, hidden=True, help="Now --min-insync-replicas."),
]
ALIAS_NOTE = "note: --default-min-isr is now --min-insync-replicas"
KAFKA_MIN_ISR = 1  # min.insync.replicas when neither the topic nor the cluster sets it


def resolve_min_isr(value: int | None, alias: int | None) -> int:
    """The cluster's min.insync.replicas from --min-insync-replicas or its old name
    --default-min-isr (which prints a note); both with different values: a usage error."""
    if alias is None:
        return KAFKA_MIN_ISR if value is None else value
    if value is not None and value != alias:
        raise UsageError(
            f"--min-insync-replicas {value} and --default-min-isr {alias} disagree",
            "--default-min-isr is the old name of --min-insync-replicas: give one of them",
        )
    sys.stderr.write(ALIAS_NOTE + "\n")
    return alias


UncleanOutOpt = Annotated[
    Path | None,
    typer.Option(
        help="Write the partitions that only an unclean election onto a replica outside "
        "the ISR can bring back, as kafka-leader-election --path-to-json-file input.",
        show_default=False,
    ),
]
ReplicaStatusOpt = Annotated[
    Path | None,
    typer.Option(
        help="Output of kafka-replica-status (--json, --verbose or the default columns), "
        "taken before the failure: estimate what the unclean elections would truncate, and "
        "list them riskiest first in --unclean-out.",
        show_default=False,
    ),
]
MasterOpt = Annotated[
    str | None,
    typer.Option(help="Spark master for --snapshot (default as for score).", show_default=False),
]
FormatOpt = Annotated[SimFormat, typer.Option(help="text (tables) or json.")]
AssumeInSyncOpt = Annotated[
    bool,
    typer.Option(
        help="Count every sync replica as in the ISR, as if none lagged (default: the ISR "
        "the describe output or snapshot records; reassignment JSON records none)."
    ),
]
ReportOpt = Annotated[
    Path | None,
    typer.Option(
        "--report",
        help="Also write an offline HTML page (FILE.html): outcomes per topic, the "
        "partitions needing an unclean election and, with --replica-status, the data at risk.",
        show_default=False,
    ),
]
ExitZeroOpt = Annotated[
    bool, typer.Option(help="Exit 0 even when partitions go offline or under min ISR.")
]
