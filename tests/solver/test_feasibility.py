"""The preliminary feasibility check names the rack, the topics, needed and remaining."""

from __future__ import annotations

import pytest

from placement.model.assignment import PartitionAssignment
from placement.model.inventory import Broker, Inventory
from placement.model.policy import PlacementPolicy
from placement.solver.feasibility import InfeasibleError, check_feasible

INVENTORY = Inventory(
    brokers=[
        *(Broker(id=i, rack="us-west") for i in range(1, 5)),
        *(Broker(id=i, rack="us-east") for i in range(5, 8)),
        *(Broker(id=i, rack="eu-central") for i in range(8, 10)),
    ]
)


def policy(**racks: tuple[int, int]) -> PlacementPolicy:
    return PlacementPolicy.model_validate(
        {
            "version": 2,
            "replicas": [
                {"count": s, "constraints": {"rack": r.replace("_", "-")}}
                for r, (s, _) in racks.items()
                if s
            ],
            "observers": [
                {"count": o, "constraints": {"rack": r.replace("_", "-")}}
                for r, (_, o) in racks.items()
                if o
            ],
        }
    )


ORDERS = policy(us_west=(3, 0), eu_central=(0, 1))
AUDIT = policy(us_west=(2, 0), us_east=(2, 1))


def test_feasible_cluster_passes() -> None:
    check_feasible(INVENTORY, {"orders": ORDERS, "audit": AUDIT})
    check_feasible(INVENTORY, {"orders": ORDERS, "audit": AUDIT}, drained=[4])


def test_draining_too_many_names_rack_topics_needed_and_remaining() -> None:
    with pytest.raises(InfeasibleError) as err:
        check_feasible(INVENTORY, {"orders": ORDERS, "audit": AUDIT}, drained=[3, 4])
    (short,) = err.value.shortfalls
    assert (short.rack, short.needed, short.remaining, short.total) == ("us-west", 3, 2, 4)
    assert short.topics == ("orders",)
    assert short.drained == (3, 4)
    assert 'rack "us-west" needs 3 brokers for topic(s) orders but only 2 of its 4 remain' in (
        err.value.message
    )


def test_dead_rack_and_several_racks_at_once() -> None:
    policies = {"orders": ORDERS, "audit": AUDIT, "x": policy(ap_south=(1, 0))}
    with pytest.raises(InfeasibleError) as err:
        check_feasible(INVENTORY, policies, drained=[5, 6])
    racks = {s.rack: s for s in err.value.shortfalls}
    assert set(racks) == {"ap-south", "us-east"}
    assert racks["ap-south"].total == 0
    assert "no broker in the inventory has this rack" in err.value.message
    assert racks["us-east"].needed == 3 and racks["us-east"].remaining == 1


def test_excluded_brokers_keep_what_they_hold() -> None:
    current = [PartitionAssignment("audit", p, (1, 2, 5, 6, 7), (7,)) for p in range(3)]
    # 5 and 6 excluded: every audit partition keeps them, and 7 is still usable
    check_feasible(INVENTORY, {"audit": AUDIT}, excluded=[5, 6], current=current)
    # a partition that does not hold them cannot count on them
    current.append(PartitionAssignment("audit", 3, (1, 2, 7, 5, 6), (6,)))
    check_feasible(INVENTORY, {"audit": AUDIT}, excluded=[5, 6], current=current)
    current.append(PartitionAssignment("audit", 4, (1, 2, 7, 8, 9), (9,)))
    with pytest.raises(InfeasibleError) as err:
        check_feasible(INVENTORY, {"audit": AUDIT}, excluded=[5, 6], current=current)
    assert err.value.shortfalls[0].excluded == (5, 6)
