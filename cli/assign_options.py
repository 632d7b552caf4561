"""The options of `mrc-plan assign`, one alias each (the command's signature stays
readable), and the parsers of the values they take (byte sizes, broker ids)."""

import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from placement.errors import UsageError

RootOption = Annotated[
    Path | None,
    typer.Option(
        exists=True,
        file_okay=False,
        help="Directory that placement files named in --topics are resolved in and may "
        "not leave. Default: the topics file's directory.",
        show_default=False,
    ),
]

UNITS = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
}


# the largest throttle or byte cap: what summary.json (an int64 there, as in Kafka's
# configs) holds
MAX_SIZE = 2**63 - 1
# options that reach the solver: CP-SAT's random_seed is an int32, and time and
# tolerance must stay finite numbers (inf and nan are refused by these bounds too)
MAX_SEED = 2**31 - 1
MAX_TIME_LIMIT = 1e6
MAX_TOLERANCE = 1e6


def parse_size(raw: str, flag: str, examples: tuple[str, ...], *, rate: bool = False) -> int:
    """Bytes from ``500000000``, ``500MB``, ``1.5TiB`` (a unit of UNITS, any case, after a
    whole or decimal number), or bytes per second with ``rate`` (``/s`` may follow): 1 to
    2^63-1, computed exactly (a 400-digit figure is refused, not a float overflow). An
    error quotes at most 40 characters of ``raw``."""
    from fractions import Fraction

    what = "bytes per second" if rate else "bytes"
    hint = "e.g. " + ", ".join(f"{flag} {e}" for e in examples[:-1]) + f" or {flag} {examples[-1]}"
    shown = raw if len(raw) <= 40 else raw[:37] + "..."
    per_second = "(?:/s)?" if rate else ""
    m = re.fullmatch(rf"\s*([0-9]+)(\.[0-9]+)?\s*([A-Za-z]*?){per_second}\s*", raw)
    unit = m.group(3).upper() if m else ""
    if m is None or unit not in UNITS:
        raise UsageError(f"{flag}: expected {what}, found {shown!r}", hint)
    whole, fraction = m.group(1).lstrip("0"), (m.group(2) or "")[:31]  # exact enough
    value = int(Fraction(whole + fraction or "0") * UNITS[unit]) if len(whole) <= 30 else 0
    if not 1 <= value <= MAX_SIZE:
        raise UsageError(f"{flag}: {shown!r} is not 1 to {MAX_SIZE:,} {what}", hint)
    return value


def broker_ids(raw: str | None, flag: str) -> list[int]:
    """Broker ids as Kafka has them (ASCII digits, 0..2^31-1); none for an empty value."""
    from placement.simulate.failure import parse_ids

    if not raw or not raw.replace(" ", "").replace(",", ""):
        return []
    return parse_ids(raw, flag)


InventoryOpt = Annotated[
    Path | None,
    typer.Option(
        help="Broker inventory: JSON, CSV, a directory of server.properties, or what the "
        "cluster prints (docs/inputs.md: Where an inventory comes from). Optional with a "
        "snapshot as --current (its brokers table gives the brokers and racks) and with "
        "--bootstrap-server (the cluster's racks; it gives those of brokers reporting none).",
        show_default=False,
    ),
]
TopicsOpt = Annotated[
    Path | None,
    typer.Option(
        help="Topics file: the desired state and policies. Optional with describe output "
        "or a snapshot as --current, or with --bootstrap-server: it then carries only "
        "changes (a new policy, a new topic); the other topics keep the cluster's policy.",
        show_default=False,
    ),
]
CurrentOpt = Annotated[
    Path | None,
    typer.Option(
        help="Current assignment: reassignment JSON, kafka-topics --describe output, or a "
        "snapshot directory. Without it every partition is assigned from scratch."
    ),
]
SizesOpt = Annotated[
    Path | None,
    typer.Option(
        help="Partition sizes of --current: a CSV topic,partition,size_bytes, or what "
        "kafka-log-dirs --describe prints. With a snapshot, they replace the snapshot's sizes.",
        show_default=False,
    ),
]
DrainOpt = Annotated[
    str | None, typer.Option(help="Broker ids to empty, e.g. 4,5 (before removing them).")
]
ExcludeOpt = Annotated[
    str | None,
    typer.Option(help="Broker ids that take no new replica (existing ones may stay)."),
]
RebalanceOpt = Annotated[
    bool,
    typer.Option(
        "--rebalance",
        help="Also move valid replicas until, per rack, brokers differ by at most one "
        "replica (bytes within --tolerance when the snapshot has sizes).",
    ),
]
BalanceLeadersOpt = Annotated[
    bool,
    typer.Option(
        "--balance-leaders",
        help="Reorder replicas so preferred leaders differ by at most one per broker of "
        "each lead rack, with the fewest leadership changes.",
    ),
]
DefaultPolicyOpt = Annotated[
    Path | None,
    typer.Option(
        help="The cluster's default placement, for topics without a policy of their own: a "
        "policy JSON file, or a broker's server.properties (its "
        "confluent.log.placement.constraints, and the internal topics' placements). "
        "Topics with neither follow Kafka's rack-aware rule.",
        show_default=False,
    ),
]
RepairOpt = Annotated[
    bool,
    typer.Option(
        "--repair",
        help="Also change every partition that breaks its rule, not only those on drained "
        "or dead brokers and the topics --topics sets (the default when nothing else is "
        "asked).",
    ),
]
OnlyTopicsOpt = Annotated[
    str | None,
    typer.Option(
        help="Change only topics whose whole name matches this regular expression (Java "
        "and Python syntax agree on the usual cases, e.g. 'orders|payments-.*').",
        show_default=False,
    ),
]
FirstRackOpt = Annotated[
    bool,
    typer.Option(
        "--leaders-in-first-rack",
        help="Put every changed partition's preferred leader in its policy's first rack "
        "(how Confluent places a new topic). Without it a leader stays where it is while it "
        "remains a sync replica.",
    ),
]
ToleranceOpt = Annotated[
    float,
    typer.Option(
        min=0.0,
        max=MAX_TOLERANCE,
        help="--rebalance with sizes: bytes per broker may exceed the rack mean by this fraction.",
    ),
]
DiskOpt = Annotated[
    float,
    typer.Option(
        min=0.01,
        max=1.0,
        help="With partition sizes and capacity_bytes in the inventory: no broker may "
        "end above this fraction of its disk (a hard limit; exit 1 when it cannot hold).",
    ),
]
SeedOpt = Annotated[
    int, typer.Option(min=0, max=MAX_SEED, help="Seed: same inputs and seed, same plan.")
]
TimeLimitOpt = Annotated[
    float,
    typer.Option(min=0.1, max=MAX_TIME_LIMIT, help="Seconds the exact engine may spend per rack."),
]
OutOpt = Annotated[
    Path | None,
    typer.Option(help="Write the reassignment JSON here (atomically); default: stdout."),
]
RollbackOpt = Annotated[
    Path | None,
    typer.Option(help="Write the current assignment of exactly the partitions the plan changes."),
]
ElectionOpt = Annotated[
    Path | None,
    typer.Option(
        help="Write the kafka-leader-election file: partitions whose preferred leader changes."
    ),
]
SummaryOpt = Annotated[
    Path | None,
    typer.Option(
        "--summary",
        help="Write the summary as JSON here: every goal's value after the plan and its "
        "lower bound, the same figures as printed.",
    ),
]
PolicyDirOpt = Annotated[
    Path | None,
    typer.Option(
        help="Write here, for the topics whose policy in --topics differs from the "
        "cluster's (or that the cluster lacks): one policy file each and policy-changes.sh, "
        "the kafka-configs --alter (kafka-topics --create) commands to run before the "
        "reassignment. Needs describe output or a snapshot as --current, or "
        "--bootstrap-server.",
        show_default=False,
    ),
]


ReportOpt = Annotated[
    Path | None,
    typer.Option(
        "--report",
        help="Also write an offline HTML page of the plan (FILE.html): every figure next "
        "to its lower bound; per rack, replicas, bytes and preferred leaders per broker "
        "before and after; the bytes from rack to rack; with --out-dir, the batches on a "
        "timeline. It must lie outside --out-dir, which is replaced whole.",
        show_default=False,
    ),
]


class SummaryFormat(StrEnum):
    TEXT = "text"
    JSON = "json"


FormatOpt = Annotated[
    SummaryFormat,
    typer.Option(
        help="The summary: text on stderr, or json on stdout (the --summary JSON; needs "
        "--out or --out-dir, as stdout otherwise holds the plan)."
    ),
]
OutDirOpt = Annotated[
    Path | None,
    typer.Option(
        help="Write the plan in batches here: plan-0001.json ..., a rollback file per "
        "batch, leaders.json + election.json, summary.json. Needs at least one cap per "
        "batch: --batch-size, --max-moves-per-broker, --batch-bytes.",
        rich_help_panel="Batches",
    ),
]
BatchSizeOpt = Annotated[
    int | None,
    typer.Option(min=1, help="At most this many partitions per batch.", rich_help_panel="Batches"),
]
MovesOpt = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="At most this many replica moves per broker per batch (replicas it receives "
        "plus replicas it gives up).",
        rich_help_panel="Batches",
    ),
]
BatchBytesOpt = Annotated[
    str | None,
    typer.Option(
        help="At most this many bytes copied per batch (e.g. 200GiB, 500GB, 1.5TiB): each "
        "partition's size times the replicas it gains. A partition over it on its own is a "
        "batch alone. Needs partition sizes (--sizes, or a snapshot with them).",
        rich_help_panel="Batches",
        show_default=False,
    ),
]
ThrottleOpt = Annotated[
    str | None,
    typer.Option(
        help="Replication throttle, bytes/s (e.g. 50000000, 50MB, 48MiB), as given to "
        "kafka-reassign-partitions --throttle: each batch's ETA.",
        rich_help_panel="Batches",
    ),
]
