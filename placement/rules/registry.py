"""The explicit list of every rule. A code is never reused."""

from __future__ import annotations

from placement.rules import (
    inventory,
    properties,
    report,
    resilience,
    schema,
    semantics,
    state,
    syntax,
    topology,
)
from placement.rules.base import InventoryRule, PolicyRule, Rule

ALL_RULES: tuple[type[Rule], ...] = (
    syntax.InvalidJson,
    syntax.JsonComment,
    syntax.TrailingComma,
    syntax.TruncatedJson,
    syntax.EmptyFile,
    syntax.InvalidUtf8,
    syntax.Utf8Bom,
    syntax.DuplicateKey,
    syntax.NestingTooDeep,
    *schema.SCHEMA_RULES,
    semantics.DuplicateRack,
    semantics.RackInReplicasAndObservers,
    semantics.PromotionPolicyInV1,
    semantics.RackWhitespace,
    inventory.UnknownRack,
    inventory.InsufficientBrokers,
    inventory.BrokerWithoutRack,
    resilience.MinIsrUnreachable,
    resilience.MinIsrNoHeadroom,
    resilience.SingleRackSyncReplicas,
    properties.UnknownPlacementProperty,
    properties.FollowerFetchingDisabled,
    topology.ControllerQuorumRackLoss,
    topology.TwoDcPartition,
    topology.SyncReplicasInQuorumRack,
    topology.ControllerWithoutRack,
    report.TooManyFindings,
    state.ReplicasBreakPolicy,
    state.OfflinePartition,
    state.UnderMinIsr,
    state.UnderReplicated,
    state.ReassignmentInProgress,
)

RULES: dict[str, type[Rule]] = {r.code: r for r in ALL_RULES}

POLICY_RULES: tuple[PolicyRule, ...] = tuple(r() for r in ALL_RULES if issubclass(r, PolicyRule))

INVENTORY_RULES: tuple[InventoryRule, ...] = tuple(
    r() for r in ALL_RULES if issubclass(r, InventoryRule)
)


def lookup(code_or_name: str) -> type[Rule] | None:
    key = code_or_name.strip()
    if key.upper() in RULES:
        return RULES[key.upper()]
    return next((r for r in ALL_RULES if r.name == key.lower()), None)
