"""MRC5xx: a valid policy that will not survive the failures it should (`--min-insync-replicas`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from placement.model.diagnostic import Severity
from placement.rules.base import CheckContext, Finding, PolicyRule

if TYPE_CHECKING:
    from placement.model.shapes import PolicyLike


class MinIsrUnreachable(PolicyRule):
    """`min.insync.replicas` is larger than the number of sync replicas.

    What it does: with `--min-insync-replicas N`, reports N > total sync replicas.

    Why: observers stay out of the ISR, so the ISR can never reach N: every
    `acks=all` write fails with NotEnoughReplicas, even on a healthy cluster.

    Example: 2 sync replicas + 2 observers with `min.insync.replicas=3`.

    Fix: add sync replicas, or lower `min.insync.replicas`.
    """

    code = "MRC501"
    name = "min-isr-unreachable"
    severity = Severity.ERROR

    def check(self, policy: PolicyLike, ctx: CheckContext) -> Iterator[Finding]:
        n = ctx.min_insync_replicas
        if n is not None and n > policy.sync_count:
            yield Finding(
                "/replicas",
                f"min.insync.replicas={n} exceeds the {policy.sync_count} sync replicas: "
                "acks=all writes can never succeed (observers do not count toward the ISR)",
                f"lower min.insync.replicas to at most {policy.sync_count}, or add sync replicas",
                at_key=True,
            )


class MinIsrNoHeadroom(PolicyRule):
    """`min.insync.replicas` equals the sync replica count and nothing promotes observers.

    What it does: with `--min-insync-replicas N`, warns when N == sync replicas and the
    policy has no automatic observer promotion (version 1, `leader-is-observer`, or
    no observers at all).

    Why: the loss of any single sync replica drops the ISR below N and blocks
    `acks=all` writes until the broker returns.

    Example: 3 sync replicas, `min.insync.replicas=3`, version 1.

    Fix: add a sync replica, lower `min.insync.replicas`, or use version 2 with
    observers and `under-min-isr` promotion.
    """

    code = "MRC502"
    name = "min-isr-no-headroom"
    severity = Severity.WARNING

    def check(self, policy: PolicyLike, ctx: CheckContext) -> Iterator[Finding]:
        n = ctx.min_insync_replicas
        if (
            n is not None
            and n == policy.sync_count
            and not (policy.promotes_observers and policy.observer_count)
        ):
            why = (
                "there are no observers to promote"
                if policy.observer_count == 0
                else f"observers are never promoted automatically ({policy.promotion})"
            )
            yield Finding(
                "/replicas",
                f"min.insync.replicas={n} equals the sync replica count and {why}: "
                "any single sync-replica failure blocks acks=all writes",
                "add a sync replica, lower min.insync.replicas, or use version 2 with "
                "observers and under-min-isr promotion",
                at_key=True,
            )


class SingleRackSyncReplicas(PolicyRule):
    """All sync replicas are in one rack.

    What it does: with `--min-insync-replicas`, warns when `replicas` names one rack.

    Why: losing that rack leaves no sync replica: the partition goes offline, and
    observers elsewhere can only take over through an unclean leader election
    (possible data loss). Automatic promotion handles partial failures only.

    Example: `"replicas": [{"count": 3, "constraints": {"rack": "us-west"}}]`

    Fix: spread sync replicas over two or more racks if the partition must survive
    a rack loss; otherwise accept and document the manual failover.
    """

    code = "MRC503"
    name = "single-rack-sync-replicas"
    severity = Severity.WARNING

    def check(self, policy: PolicyLike, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.min_insync_replicas is None:
            return
        racks = {e.constraints.rack for e in policy.replicas}
        if len(racks) == 1:
            rack = next(iter(racks))
            yield Finding(
                "/replicas",
                f'all {policy.sync_count} sync replicas are in rack "{rack}": losing it takes '
                "every partition offline until an unclean election onto an observer",
                "spread the sync replicas over at least two racks",
                at_key=True,
            )
