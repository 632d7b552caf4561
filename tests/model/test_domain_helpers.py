"""The domain questions every layer asks of the models, answered in one place: where a
policy's leader goes, whether its observers promote themselves, which rack a broker is in."""

from __future__ import annotations

import pytest

from placement.model.inventory import Broker, Inventory
from placement.model.policy import PlacementPolicy


def _policy(version: int, promotion: str | None = None) -> PlacementPolicy:
    doc: dict[str, object] = {
        "version": version,
        "replicas": [
            {"count": 2, "constraints": {"rack": "east"}},
            {"count": 1, "constraints": {"rack": "west"}},
        ],
        "observers": [{"count": 1, "constraints": {"rack": "west"}}],
    }
    if promotion is not None:
        doc["observerPromotionPolicy"] = promotion
    return PlacementPolicy.model_validate(doc)


def test_the_lead_rack_is_the_first_replica_constraint() -> None:
    assert _policy(2).lead_rack == "east"


@pytest.mark.parametrize(
    ("version", "promotion", "promotes"),
    [
        (1, None, False),  # v1 waits for an operator
        (2, None, True),  # v2 defaults to under-min-isr
        (2, "under-min-isr", True),
        (2, "under-replicated", True),
        (2, "leader-is-observer", False),
    ],
)
def test_which_policies_promote_observers(
    version: int, promotion: str | None, promotes: bool
) -> None:
    assert _policy(version, promotion).promotes_observers is promotes


def test_rack_lookups_keep_rackless_brokers_out_of_every_rack() -> None:
    inv = Inventory(
        brokers=[
            Broker(id=7, rack="west"),
            Broker(id=3, rack="east"),
            Broker(id=5, rack=None),
            Broker(id=1, rack="west"),
        ]
    )
    assert inv.rack_of == {7: "west", 3: "east", 5: None, 1: "west"}
    assert inv.rack_members() == {"west": [7, 1], "east": [3]}  # inventory order
    members = inv.rack_members()
    members["west"].append(99)  # the caller's copy
    assert inv.rack_members()["west"] == [7, 1]
