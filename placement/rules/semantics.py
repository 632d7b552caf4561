"""MRC3xx: a well-formed policy that Confluent Server would still reject or misread."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from placement.model.diagnostic import Severity
from placement.rules.base import CheckContext, Finding, PolicyRule

if TYPE_CHECKING:
    from placement.model.shapes import PolicyLike

OVERLAP_MIN_IBP = (3, 3)


def _entries(policy: PolicyLike) -> Iterator[tuple[str, int, str]]:
    """(list name, index, rack) for every constraint entry."""
    for field in ("replicas", "observers"):
        for i, entry in enumerate(getattr(policy, field)):
            yield field, i, entry.constraints.rack


class DuplicateRack(PolicyRule):
    """A rack appears twice in `replicas`, or twice in `observers`.

    What it does: reports the second entry for the rack.

    Why: Confluent Server accepts each rack at most once per list and rejects the
    policy otherwise.

    Example: `"replicas": [{"count": 2, "constraints": {"rack": "us-west"}},
    {"count": 1, "constraints": {"rack": "us-west"}}]`

    Fix: merge the entries into one with the summed count.
    """

    code = "MRC301"
    name = "duplicate-rack"
    severity = Severity.ERROR

    def check(self, policy: PolicyLike, ctx: CheckContext) -> Iterator[Finding]:
        for field in ("replicas", "observers"):
            first: dict[str, int] = {}
            for i, entry in enumerate(getattr(policy, field)):
                rack = entry.constraints.rack
                if rack in first:
                    total = getattr(policy, field)[first[rack]].count + entry.count
                    yield Finding(
                        f"/{field}/{i}/constraints/rack",
                        f'rack "{rack}" is listed twice in "{field}" '
                        f"(first at /{field}/{first[rack]})",
                        f'merge both entries into one with "count": {total}',
                    )
                else:
                    first[rack] = i


class RackInReplicasAndObservers(PolicyRule):
    """A rack holds both sync replicas and observers on a cluster older than IBP 3.3.

    What it does: with `--ibp` below 3.3, reports each observer entry whose rack also
    appears in `replicas`. Without `--ibp` the newest behaviour (allowed) is assumed.

    Why: sharing a rack between replicas and observers needs
    `inter.broker.protocol.version` >= 3.3 (Confluent Platform 7.3); older clusters
    reject the policy.

    Example: `"replicas": [{"count": 2, "constraints": {"rack": "us-east"}}],
    "observers": [{"count": 1, "constraints": {"rack": "us-east"}}]` with `--ibp 3.2`.

    Fix: upgrade the cluster's inter.broker.protocol.version to 3.3 or later, or put
    the observers in a rack of their own.
    """

    code = "MRC302"
    name = "rack-in-replicas-and-observers"
    severity = Severity.ERROR

    def check(self, policy: PolicyLike, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.ibp is None or ctx.ibp >= OVERLAP_MIN_IBP:
            return
        sync_racks = {e.constraints.rack for e in policy.replicas}
        for i, entry in enumerate(policy.observers):
            if entry.constraints.rack in sync_racks:
                yield Finding(
                    f"/observers/{i}/constraints/rack",
                    f'rack "{entry.constraints.rack}" holds both sync replicas and observers, '
                    f"which needs inter.broker.protocol.version >= 3.3 "
                    f"(cluster is {ctx.ibp[0]}.{ctx.ibp[1]})",
                    "upgrade inter.broker.protocol.version to 3.3+ (Confluent Platform 7.3+) "
                    "or move the observers to another rack",
                )


class PromotionPolicyInV1(PolicyRule):
    """A version 1 policy sets `observerPromotionPolicy`.

    What it does: reports the key.

    Why: version 1 policies always behave as `leader-is-observer`; the broker does not
    honour the setting, so observers are never promoted automatically although the
    file says they are.

    Example: `{"version": 1, ..., "observerPromotionPolicy": "under-min-isr"}`

    Fix: set `"version": 2`, or delete the key to keep the legacy behaviour.
    """

    code = "MRC303"
    name = "promotion-policy-in-v1"
    severity = Severity.ERROR

    def check(self, policy: PolicyLike, ctx: CheckContext) -> Iterator[Finding]:
        if policy.version == 1 and policy.observerPromotionPolicy is not None:
            yield Finding(
                "/observerPromotionPolicy",
                f'"observerPromotionPolicy" ({policy.observerPromotionPolicy}) has no effect in a '
                "version 1 policy: version 1 never promotes observers automatically",
                'set "version": 2, or remove the key',
                at_key=True,
            )


class RackWhitespace(PolicyRule):
    """A rack name starts or ends with whitespace.

    What it does: warns on the rack value.

    Why: racks are matched exactly against `broker.rack`; `" us-west"` is a
    different rack from `"us-west"` and probably names no broker.

    Example: `"constraints": {"rack": "us-west "}`

    Fix: trim the name.
    """

    code = "MRC304"
    name = "rack-whitespace"
    severity = Severity.WARNING

    def check(self, policy: PolicyLike, ctx: CheckContext) -> Iterator[Finding]:
        for field, i, rack in _entries(policy):
            if rack != rack.strip():
                yield Finding(
                    f"/{field}/{i}/constraints/rack",
                    f'rack name "{rack}" has leading or trailing whitespace',
                    f'write "{rack.strip()}"',
                )
