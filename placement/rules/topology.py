"""MRC7xx: the cluster layout in the inventory: KRaft controllers and the racks they sit in.

These rules need an inventory that lists controllers (`"controllers"` in JSON, or
`process.roles=controller` in a directory of `server.properties`); without them they say
nothing. A controller without a rack (MRC704) is counted as surviving the loss of any rack, so
a rack the quorum rules name loses the quorum wherever those controllers really are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from placement.model.diagnostic import Severity
from placement.rules.base import CheckContext, Finding, InventoryRule, NodeFinding, PolicyRule

if TYPE_CHECKING:
    from placement.model.shapes import InventoryLike, PolicyLike


def majority(voters: int) -> int:
    """Raft needs a strict majority of the voters to elect a leader and commit."""
    return voters // 2 + 1


def quorum_breaking_racks(inventory: InventoryLike) -> dict[str, int]:
    """Racks whose loss leaves fewer than a majority of the controllers -> controllers held."""
    voters = len(inventory.controllers)
    held = Counter(c.rack for c in inventory.controllers if c.rack is not None)
    return {rack: n for rack, n in held.items() if voters - n < majority(voters)}


def _spread_hint(voters: int, racks: int) -> str:
    # an even quorum survives no more losses than one controller fewer, and 1 or 2 survive none
    target = max(3, voters | 1)
    layout = "+".join(str(target // 3 + (i < target % 3)) for i in range(3))
    if target == voters:
        hint = (
            f"keep at most {voters - majority(voters)} of the {voters} controllers in any rack, "
            f"e.g. {layout} over three racks"
        )
    else:
        hint = f"run {target} controllers, {layout} over three racks"
    if racks == 2:
        hint += "; with two data centres, put a controller in a third site (the 2.5-DC layout)"
    return hint


class ControllerQuorumRackLoss(InventoryRule):
    """Losing one rack would take away the majority of the KRaft controllers.

    What it does: with N controllers in the inventory, a majority is N/2 + 1 (rounded
    down). For each rack holding controllers, reports the rack when the controllers
    outside it are fewer than a majority, with how many it holds; at the first
    controller declared in that rack. A controller without a rack (MRC704) counts as
    outside every rack.

    Why: the controller quorum (Raft) acts only with a majority of its voters. When a
    rack holding too many of them is lost, the quorum is gone: no leader elections, no
    broker fencing, no topic or config changes, and no unclean election onto an
    observer either, until an operator rebuilds the quorum by hand. Controllers in
    only two racks always have this problem: the rack holding more of them (either one,
    when they are split evenly) takes the quorum with it.

    Example: 3 controllers, 2 in `us-west` and 1 in `us-east`: losing `us-west` leaves
    1, short of the majority of 2. 4 controllers as 2+2 lose the quorum with either
    rack. 5 controllers as 2+2+1 survive the loss of any one rack.

    Fix: spread the controllers over at least three racks so that no rack holds a
    majority (3 as 1+1+1, 5 as 2+2+1). With two data centres, add a controller in a
    third site (the 2.5-DC layout Confluent recommends); brokers need not be there.
    """

    code = "MRC701"
    name = "controller-quorum-rack-loss"
    severity = Severity.ERROR

    def check(self, inventory: InventoryLike) -> Iterator[NodeFinding]:
        voters = len(inventory.controllers)
        breaking = quorum_breaking_racks(inventory)
        # the 2.5-DC advice fits whenever the whole cluster spans two racks, brokers included
        racks = {c.rack for c in inventory.controllers if c.rack is not None}
        racks.update(inventory.racks())
        for rack, held in breaking.items():
            first = next(c for c in inventory.controllers if c.rack == rack)
            yield NodeFinding(
                "controller",
                first.id,
                f'losing rack "{rack}" loses the KRaft controller quorum: it holds {held} of '
                f"the {voters} controllers, leaving {voters - held}, fewer than the majority "
                f"of {majority(voters)}",
                _spread_hint(voters, len(racks)),
            )


class TwoDcPartition(InventoryRule):
    """The brokers sit in two data centres: a network cut between them needs manual recovery.

    What it does: with an inventory that lists controllers, warns once when every
    broker with a rack is in one of exactly two racks, whatever the controllers'
    layout; at the first controller outside those two racks (the tie-breaker of a
    2.5-DC layout), else at the first controller. The message says what a cut between
    the two sites does to that layout.

    Why: a cut between the two broker sites is not the loss of one of them (MRC701),
    and Kafka does not heal it by itself. With a controller in a third site, both
    sides still reach the quorum: no broker is fenced and leadership does not move,
    replicas across the cut drop out of the ISR and clients cannot reach the leaders
    on the other side; Confluent documents that this needs manual action, even with
    automatic observer promotion. With the controllers only in the two sites, just the
    side holding a majority of them keeps the quorum: the other side's brokers are
    fenced and partitions whose sync replicas are all there stay offline until an
    unclean election. When neither side holds a majority (2+2), the metadata is
    frozen on both (no leader elections, no ISR changes) until the quorum is
    reconfigured by hand.

    Example: brokers in `us-west` and `us-east` with controllers as 2+2 there plus one
    in `eu-central` (2.5 DC), or as 3+2 in the two sites.

    Fix: nothing in the layout removes this if two data centres is the design; put
    the tie-breaking controller in a third site (MRC701), monitor under-replicated and
    under-min-ISR partitions across the two sites, and keep a runbook for choosing the
    side that keeps serving (for example, stop the brokers of the other side).
    """

    code = "MRC702"
    name = "two-dc-partition"
    severity = Severity.WARNING

    def check(self, inventory: InventoryLike) -> Iterator[NodeFinding]:
        broker_racks = inventory.racks()
        if len(broker_racks) != 2 or not inventory.controllers:
            return
        a, b = broker_racks
        cut = f'if the network between "{a}" and "{b}" fails'
        voters = len(inventory.controllers)
        outside = [c for c in inventory.controllers if c.rack not in (None, a, b)]
        if outside:
            others = ", ".join(f'"{r}"' for r in sorted({str(c.rack) for c in outside}))
            at = outside[0]
            what = (
                f"the brokers sit in two racks with controllers also in {others}: {cut} "
                "while both still reach the controllers, no broker is fenced and recovery "
                "needs manual action, even with automatic observer promotion"
            )
        else:
            at = inventory.controllers[0]
            held = Counter(c.rack for c in inventory.controllers if c.rack is not None)
            winner = next((r for r in (a, b) if held[r] >= majority(voters)), None)
            if winner is not None:
                loser = b if winner == a else a
                what = (
                    f'the brokers and controllers sit in two racks: {cut}, only "{winner}" '
                    f"keeps the KRaft quorum ({held[winner]} of the {voters} controllers); "
                    f'the brokers in "{loser}" are fenced and partitions whose sync replicas '
                    "are all there stay offline until an unclean election"
                )
            else:
                counted = "" if held.total() == voters else " (counting those with a rack)"
                what = (
                    f"the brokers and controllers sit in two racks: {cut}, neither side "
                    f"holds a majority of the {voters} controllers{counted}, so the metadata "
                    "is frozen (no leader elections, no ISR changes) until the quorum is "
                    "reconfigured by hand"
                )
        yield NodeFinding(
            "controller",
            at.id,
            what,
            "monitor under-replicated and under-min-ISR partitions across the two sites and "
            "keep a runbook for choosing the side that keeps serving",
        )


class SyncReplicasInQuorumRack(PolicyRule):
    """All sync replicas are in a rack whose loss also loses the KRaft quorum.

    What it does: with an inventory that lists controllers, warns when `replicas`
    names one rack and losing that rack leaves fewer than a majority of the
    controllers (the rack MRC701 reports).

    Why: losing that rack takes every partition of the topic offline and the
    controller quorum with it. The usual way back for a partition whose sync
    replicas are all gone, an unclean election onto an observer, needs a working
    controller: the topic stays offline until the quorum is rebuilt by hand.

    Example: `"replicas": [{"count": 3, "constraints": {"rack": "us-west"}}]` with
    controllers 2 in `us-west`, 1 in `us-east`.

    Fix: spread the sync replicas over two or more racks, or spread the controllers
    so that no rack holds a majority of them (see MRC701).
    """

    code = "MRC703"
    name = "sync-replicas-in-quorum-rack"
    severity = Severity.WARNING

    def check(self, policy: PolicyLike, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.inventory is None:
            return
        racks = {e.constraints.rack for e in policy.replicas}
        if len(racks) != 1:
            return
        rack = next(iter(racks))
        held = quorum_breaking_racks(ctx.inventory).get(rack)
        if held is not None:
            voters = len(ctx.inventory.controllers)
            yield Finding(
                "/replicas",
                f'all {policy.sync_count} sync replicas are in rack "{rack}", which holds '
                f"{held} of the {voters} KRaft controllers: losing it takes these partitions "
                "offline and the quorum with them, so not even an unclean election onto an "
                "observer can run until the quorum is rebuilt",
                "spread the sync replicas over two or more racks, or move controllers "
                f'out of "{rack}"',
                at_key=True,
            )


class ControllerWithoutRack(InventoryRule):
    """A KRaft controller in the inventory has no rack.

    What it does: reports each such controller, in the inventory file.

    Why: the quorum checks (MRC701, MRC703) cannot tell which rack failure takes it
    down; they count it as surviving every rack loss, so they may miss a rack whose
    loss would break the quorum.

    Example: `{"id": 9002}` in `controllers`, or a controller's `server.properties`
    without `broker.rack`.

    Fix: give the controller the rack (data centre, zone) it runs in: `"rack"` in the
    inventory JSON, or `broker.rack` in its `server.properties`.
    """

    code = "MRC704"
    name = "controller-without-rack"
    severity = Severity.WARNING

    def check(self, inventory: InventoryLike) -> Iterator[NodeFinding]:
        for controller in inventory.controllers:
            if controller.rack is None:
                yield NodeFinding(
                    "controller",
                    controller.id,
                    f"controller {controller.id} has no rack: the quorum checks count it as "
                    "surviving the loss of any rack",
                    'set its rack ("rack" in the inventory JSON, broker.rack in its '
                    "server.properties)",
                )
