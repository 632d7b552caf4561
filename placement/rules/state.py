"""MRC9xx: the cluster as it stands, from `kafka-topics --describe` output or a snapshot.

Every other family checks files someone writes (policies, broker configs, the inventory).
These check what the cluster reports: where each partition's replicas are and which of
them are in sync. A policy change moves no data, so a cluster can pass every policy check
and still hold partitions that break their topic's policy. The checks are vectorised over
the partitions (placement/rules/partitions.py); placement/rules/audit.py turns their
answers into findings, at most the per-file cap of them (MRC801 counts the rest).
"""

from __future__ import annotations

from typing import NamedTuple

from placement.model.diagnostic import Diagnostic, Severity
from placement.rules.base import Rule


# named tuples: cheaper to create than dataclasses, at every start (the registry loads this)
class Unlisted(NamedTuple):
    """Findings of one file that were counted but not built: how many errors and
    warnings, and the first of them (where the MRC801 note that counts them sits)."""

    errors: int
    warnings: int
    first: Diagnostic


class Audit(NamedTuple):
    """What the audit of one file found: the findings to list (at most the per-file cap,
    errors first) and those only counted."""

    diagnostics: list[Diagnostic]
    unlisted: Unlisted | None


class ReplicasBreakPolicy(Rule):
    """A partition's replicas break its topic's placement policy.

    What it does: with the brokers' racks (`--inventory`, or a snapshot's brokers
    table), reports each partition of a topic with a valid policy when a broker appears
    twice in its replicas, when one of its brokers has no known rack (absent from the
    inventory, or listed without a rack), or when, in some rack, its number of sync
    replicas or of observers differs from the policy's count there
    (docs/definitions.md, policy violations). The message lists every difference. In
    describe output it points at the partition's `Replicas:`; in a snapshot at the
    partition's row of the partitions table. Without racks (describe output and no
    `--inventory`) the check is skipped and a note says so.

    Why: `kafka-configs --alter` of `confluent.placement.constraints` moves no data:
    partitions created before a policy change keep their old layout until they are
    reassigned, and so do partitions moved by hand or by a tool that ignores the policy.
    Such a partition does not have the failure tolerance its policy promises (sync
    replicas where a rack loss takes them all, no observer in the remote site). This is
    an error so that `validate` on the cluster's own output is a CI gate on its state.

    Example: policy 2 sync replicas in `us-west` and 1 in `us-east`, partition
    `Replicas: 1,2,3` with brokers 1, 2 and 3 all in `us-west`: rack `us-west` holds 3
    sync replicas where the policy wants 2, `us-east` holds 0 where it wants 1.

    Fix: reassign the partition to fit its policy (`mrc-plan assign --current` with the
    describe output or snapshot plans the fewest moves); for a broker of unknown rack,
    add it to the inventory with its rack if it exists.
    """

    code = "MRC901"
    name = "replicas-break-policy"
    severity = Severity.ERROR


class OfflinePartition(Rule):
    """A partition has no leader: it is offline.

    What it does: reports each partition whose describe line says `Leader: none` (or
    `-1`), or whose snapshot row has a recorded `isr` and a null `leader`; at the
    `Leader:` field. Topics without a policy are checked too. A snapshot row without
    an `isr` records no state and is not checked.

    Why: no replica serves the partition: every produce and every fetch fails, whatever
    `acks` is. Automatic observer promotion does not cover it: it only adds replicas to
    an ISR that still has a leader.

    Example: `Topic: orders Partition: 2 Leader: none Replicas: 3,4,7,11 Isr: 3
    Offline: 3,4,7 Observers: 11`.

    Fix: bring back a broker of the last ISR (listed in `Isr:`). If none can return, an
    unclean leader election (`kafka-leader-election --election-type UNCLEAN`) onto a
    surviving replica brings the partition back and loses what that replica had not
    copied.
    """

    code = "MRC902"
    name = "offline-partition"
    severity = Severity.ERROR


class UnderMinIsr(Rule):
    """A partition has a leader but fewer in-sync replicas than its `min.insync.replicas`.

    What it does: reports each partition with a leader whose recorded ISR (`Isr:`, or a
    snapshot's `isr`) is shorter than its topic's `min.insync.replicas`: the topic's own
    config (describe `Configs:`, a snapshot's `min_isr`), else `--min-insync-replicas`,
    else 1 (Kafka's default). At the `Isr:` field. Offline partitions are MRC902 instead.

    Why: this is the state now, not a what-if: every `acks=all` write to the partition
    fails with NotEnoughReplicas until the ISR grows back, so producers that need
    durability are stopped. It is an error for the same reason an offline partition
    is: the cluster is failing writes.

    Example: `min.insync.replicas=2`, `Replicas: 1,2,5 Isr: 1`.

    Fix: bring the replicas outside the ISR back (a broker down, a disk or network too
    slow to catch up). A version 2 policy with `under-min-isr` promotion lets observers
    join the ISR in such a case.
    """

    code = "MRC903"
    name = "under-min-isr"
    severity = Severity.ERROR


class UnderReplicated(Rule):
    """A partition has a sync replica outside its ISR, but still enough in sync to write.

    What it does: reports each partition with a leader and at least
    `min.insync.replicas` in its ISR where some sync replica (not an observer) is
    missing from the ISR; at the `Isr:` field.

    Why: writes succeed, but the partition tolerates one failure fewer than its policy
    says until the replica catches up. A warning, not an error: every rolling restart
    and every reassignment makes partitions under-replicated for a while, and a gate
    that failed on them would fail on routine maintenance. `--strict` makes it fail.

    Example: `Replicas: 6,7,8 Isr: 6,7` with `min.insync.replicas=2`.

    Fix: find out why the replica lags (its broker down or restarting, a slow disk, the
    network) and let it catch up before taking anything else down.
    """

    code = "MRC904"
    name = "under-replicated"
    severity = Severity.WARNING


class ReassignmentInProgress(Rule):
    """Partitions are being reassigned: their replicas are the old and the new together.

    What it does: when describe output shows partitions with `Adding Replicas:` or
    `Removing Replicas:` naming one of their replicas (a reassignment in progress, as
    Kafka 2.5 and later print it), reports once per file how many there are, at the
    `Replicas:` of the first. Those partitions are not checked against their topics'
    policies (MRC901): until the move ends, `Replicas` lists the brokers leaving and
    those arriving, more than the policy counts. A broker being added is not counted as
    out of the ISR (MRC904): it is still copying. Offline partitions and partitions
    under `min.insync.replicas` are reported as usual. A snapshot records no
    reassignment, so this is checked on describe output only.

    Why: such output is the state between two batches of a plan, or during a move by
    hand or by another tool. Judging it as a final layout would report errors that the
    move is about to fix, and planning another move on top of it would race the one in
    flight. A warning: a reassignment is routine, but the state it reports is not final.

    Example: `Replicas: 10,8,9,7 Isr: 8,9,7 Adding Replicas: 10 Removing Replicas: 7`
    (broker 7's replica moving to broker 10).

    Fix: wait for the reassignment to end (`kafka-reassign-partitions --verify` says it
    is complete, or describe shows no `Adding Replicas:`), then describe the topics and
    check again.
    """

    code = "MRC905"
    name = "reassignment-in-progress"
    severity = Severity.WARNING
