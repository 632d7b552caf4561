"""The independent plan checker catches every hard-constraint breach of SPEC §8."""

from __future__ import annotations

import pytest

from placement.model.assignment import PartitionAssignment as PA  # noqa: N817 - short rows read better
from placement.model.inventory import Broker, Inventory
from placement.model.policy import PlacementPolicy
from placement.plan.checker import PlanCheckError, PlanContext, check_plan, verify_plan

# us-west: 1-4, us-east: 5-8, eu-central: 9-11, 12 has no rack
INVENTORY = Inventory(
    brokers=[
        *(Broker(id=i, rack="us-west") for i in range(1, 5)),
        *(Broker(id=i, rack="us-east") for i in range(5, 9)),
        *(Broker(id=i, rack="eu-central") for i in range(9, 12)),
        Broker(id=12),
    ]
)
POLICY = PlacementPolicy.model_validate(
    {
        "version": 2,
        "replicas": [
            {"count": 2, "constraints": {"rack": "us-west"}},
            {"count": 1, "constraints": {"rack": "us-east"}},
        ],
        "observers": [{"count": 1, "constraints": {"rack": "eu-central"}}],
    }
)
CURRENT = {
    ("orders", 0): PA("orders", 0, (1, 2, 5, 9), (9,)),
    ("orders", 1): PA("orders", 1, (2, 3, 6, 10), (10,)),
}


def ctx(**kw: object) -> PlanContext:
    base: dict[str, object] = {
        "inventory": INVENTORY,
        "policies": {"orders": POLICY},
        "current": CURRENT,
    }
    base.update(kw)
    return PlanContext(**base)  # type: ignore[arg-type]


def messages(plan: list[PA], context: PlanContext) -> list[str]:
    return [p.message for p in check_plan(plan, context)]


def test_a_valid_plan_passes() -> None:
    plan = [PA("orders", 0, (3, 4, 7, 11), (11,))]
    assert check_plan(plan, ctx()) == []
    verify_plan(plan, ctx())


@pytest.mark.parametrize(
    ("entry", "fragment"),
    [
        (PA("orders", 0, (1, 1, 5, 9), (9,)), "twice"),
        (PA("orders", 0, (1, 2, 5, 9), (5,)), "suffix"),
        (PA("orders", 0, (1, 2, 5, 99), (99,)), "not in the inventory"),
        (PA("orders", 0, (1, 2, 12, 9), (9,)), "no broker.rack"),
        (PA("orders", 0, (1, 2, 3, 9), (9,)), "differ from the policy"),
        (PA("orders", 0, (5, 1, 2, 9), (9,)), "preferred leader"),
        (PA("orders", 0, (1, 2, 5, 9, 10), (9, 10)), "differ from the policy"),
        (PA("orders", 7, (1, 2, 5, 9), (9,)), "not a partition of the cluster"),
        (PA("payments", 0, (1, 2, 5, 9), (9,)), "without a placement policy"),
        (PA("payments", 0, (1, 2, 3)), "rack-aware rule"),
        (PA("orders", 0, (), ()), "empty"),
    ],
)
def test_each_breach_is_reported(entry: PA, fragment: str) -> None:
    found = messages([entry], ctx())
    assert any(fragment in m for m in found), found
    with pytest.raises(PlanCheckError) as err:
        verify_plan([entry], ctx())
    assert "bug" in err.value.hint


def test_drained_brokers_end_empty() -> None:
    context = ctx(drained=frozenset({2}))
    assert any("drained" in m for m in messages([PA("orders", 0, (1, 2, 5, 9), (9,))], context))
    # orders-1 sits on broker 2 and the plan does not move it
    plan = [PA("orders", 0, (1, 3, 5, 9), (9,))]
    assert messages(plan, context) == ["still on a drained broker after the plan"]
    plan.append(PA("orders", 1, (3, 4, 6, 10), (10,)))
    assert messages(plan, context) == []


def test_excluded_brokers_keep_old_replicas_but_get_no_new_ones() -> None:
    context = ctx(excluded=frozenset({1, 4}))
    assert messages([PA("orders", 0, (1, 3, 5, 9), (9,))], context) == []  # 1 stays
    assert any("excluded" in m for m in messages([PA("orders", 0, (4, 2, 5, 9), (9,))], context))


def test_fresh_assignment_must_cover_every_partition() -> None:
    context = ctx(current={}, partition_counts={"orders": 3})
    plan = [PA("orders", 0, (1, 2, 5, 9), (9,)), PA("orders", 2, (3, 4, 6, 10), (10,))]
    assert messages(plan, context) == ["1 partition(s) left unassigned"]
    assert any(
        "not a partition of the topic" in m
        for m in messages([PA("orders", 3, (1, 2, 5, 9), (9,))], context)
    )


def test_duplicate_entries() -> None:
    entry = PA("orders", 0, (3, 4, 7, 11), (11,))
    assert messages([entry, entry], ctx()) == ["listed twice in the plan"]


SIZES = {("orders", 0): 100, ("orders", 1): 50}


def test_a_plan_may_not_fill_a_disk_past_its_cap() -> None:
    plan = [PA("orders", 0, (3, 2, 5, 9), (9,))]  # broker 3: 50 held + 100 added
    over = messages(plan, ctx(disk_caps={3: 149}, sizes=SIZES))
    assert over == [
        "broker 3 would hold 150 bytes, above its disk cap of 149 (it held 50 before the plan)"
    ]
    with pytest.raises(PlanCheckError):
        verify_plan(plan, ctx(disk_caps={3: 149}, sizes=SIZES))
    assert messages(plan, ctx(disk_caps={3: 150}, sizes=SIZES)) == []
    # no caps, or no sizes (unknown: 0 bytes): nothing to check
    assert messages(plan, ctx(sizes=SIZES)) == []
    assert messages(plan, ctx(disk_caps={3: 0})) == []


def test_a_broker_already_over_its_cap_and_not_made_worse_is_not_the_checkers_business() -> None:
    context = ctx(disk_caps={3: 40, 4: 40}, sizes=SIZES)  # 3 holds orders-1 (50) before
    assert messages([PA("orders", 1, (2, 3, 7, 10), (10,))], context) == []  # 3 untouched
    assert messages([PA("orders", 1, (2, 4, 6, 10), (10,))], context) == [
        "broker 4 would hold 50 bytes, above its disk cap of 40 (it held 0 before the plan)"
    ]
    # 3 gives orders-1 away and takes orders-0: 50 bytes more than it held, above its cap
    trade = [PA("orders", 1, (2, 1, 6, 10), (10,)), PA("orders", 0, (3, 2, 5, 9), (9,))]
    assert messages(trade, context) == [
        "broker 3 would hold 100 bytes, above its disk cap of 40 (it held 50 before the plan)"
    ]
    # a plan that leaves 3 with less, even if still over its cap, passes
    assert (
        messages([PA("orders", 1, (2, 1, 6, 10), (10,))], ctx(disk_caps={3: 0}, sizes=SIZES)) == []
    )
