"""MRC4xx: the policy cannot be met by the brokers in the inventory (`--inventory`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from placement.model.diagnostic import Severity
from placement.rules.base import CheckContext, Finding, InventoryRule, NodeFinding, PolicyRule
from placement.rules.suggest import did_you_mean

if TYPE_CHECKING:
    from placement.model.shapes import InventoryLike, PolicyLike


def _first_pointer(policy: PolicyLike, rack: str) -> str:
    for field in ("replicas", "observers"):
        for i, entry in enumerate(getattr(policy, field)):
            if entry.constraints.rack == rack:
                return f"/{field}/{i}"
    return ""


class UnknownRack(PolicyRule):
    """The policy names a rack that no broker in the inventory has.

    What it does: reports each entry whose rack is not any broker's `broker.rack`,
    suggesting a close match (case and whitespace differences included).

    Why: topic creation and reassignment fail: no broker can take those replicas.

    Example: `"rack": "us-West"` when the brokers say `broker.rack=us-west`.

    Fix: use the exact rack name, or add brokers with that `broker.rack`.
    """

    code = "MRC401"
    name = "unknown-rack"
    severity = Severity.ERROR

    def check(self, policy: PolicyLike, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.inventory is None:
            return
        racks = ctx.inventory.racks()
        for field in ("replicas", "observers"):
            for i, entry in enumerate(getattr(policy, field)):
                rack = entry.constraints.rack
                if rack not in racks:
                    yield Finding(
                        f"/{field}/{i}/constraints/rack",
                        f'rack "{rack}" has no brokers in the inventory '
                        f"(racks: {', '.join(racks) or 'none'})",
                        did_you_mean(rack, racks)
                        or "add brokers with this broker.rack, or fix the rack name",
                    )


class InsufficientBrokers(PolicyRule):
    """A rack has fewer brokers than the replicas and observers placed in it.

    What it does: for each rack, compares sync replicas + observers the policy puts
    there with the brokers the inventory has there; names the rack, the number
    needed and the number available.

    Why: every replica of a partition needs its own broker; Confluent Server fails
    topic creation when a rack is too small.

    Example: 3 replicas + 1 observer in `us-west`, which has 3 brokers.

    Fix: lower the counts, move some to another rack, or add brokers to the rack.
    """

    code = "MRC402"
    name = "insufficient-brokers"
    severity = Severity.ERROR

    def check(self, policy: PolicyLike, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.inventory is None:
            return
        available = ctx.inventory.brokers_per_rack()
        for rack, (sync, obs) in policy.per_rack().items():
            have = available.get(rack, 0)
            if have and sync + obs > have:
                parts = [f"{sync} replica{'s' * (sync != 1)}"] if sync else []
                parts += [f"{obs} observer{'s' * (obs != 1)}"] if obs else []
                yield Finding(
                    _first_pointer(policy, rack),
                    f'rack "{rack}" needs {sync + obs} brokers ({" + ".join(parts)}) '
                    f"but has {have}",
                    f"add {sync + obs - have} broker(s) to {rack} or lower the counts there",
                )


class BrokerWithoutRack(InventoryRule):
    """A broker in the inventory has no `broker.rack`.

    What it does: reports each such broker, in the inventory file.

    Why: Multi-Region Clusters need `broker.rack` on every broker; a broker without
    one can never hold a replica of a topic with a placement policy.

    Example: a `server.properties` without a `broker.rack` line.

    Fix: set `broker.rack` on the broker (and restart it).
    """

    code = "MRC403"
    name = "broker-without-rack"
    severity = Severity.ERROR

    def check(self, inventory: InventoryLike) -> Iterator[NodeFinding]:
        for broker in inventory.brokers:
            if broker.rack is None:
                yield NodeFinding(
                    "broker",
                    broker.id,
                    f"broker {broker.id} has no broker.rack",
                    "set broker.rack on this broker; no placement policy can use it until then",
                )
