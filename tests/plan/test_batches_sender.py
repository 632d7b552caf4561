"""The sending broker of a move is the partition's current leader (docs/definitions.md,
movement): the batches' senders and ETA count the recorded leader, not the first replica."""

from __future__ import annotations

from placement.model.assignment import PartitionAssignment
from placement.plan.batches import sender, split, summary

Pa = PartitionAssignment


def test_the_recorded_leader_sends_and_bounds_the_eta() -> None:
    # three partitions listing 1 first, but broker 2 leads each (a failover left it there)
    current = {("orders", p): Pa("orders", p, (1, 2)) for p in range(3)}
    plan = [Pa("orders", p, (1, 2, 3 + p)) for p in range(3)]
    sizes = {("orders", p): 1_000 for p in range(3)}
    leaders = {("orders", p): 2 for p in range(3)}
    (b,) = split(plan, current, sizes, batch_size=10, current_leaders=leaders).batches
    assert b.senders == {2: 3_000}  # not broker 1, the first replica
    assert b.receivers == {3: 1_000, 4: 1_000, 5: 1_000}
    # broker 2's leader-side quota carries all three copies: 3,000 bytes at 100 bytes/s
    assert b.eta_seconds(100) == 30.0
    row = summary(split(plan, current, sizes, batch_size=10, current_leaders=leaders), 100)
    assert row["batches"][0]["senders"] == [{"broker": 2, "bytes": 3_000}]


def test_without_a_recorded_leader_the_first_replica_sends() -> None:
    current = {("t", 0): Pa("t", 0, (7, 8)), ("t", 1): Pa("t", 1, (8, 7))}
    plan = [Pa("t", 0, (7, 9)), Pa("t", 1, (8, 9))]
    sizes = {("t", 0): 10, ("t", 1): 20}
    # reassignment JSON records no leader; an offline partition has none (t-1)
    (b,) = split(plan, current, sizes, batch_size=10, current_leaders={("t", 1): None}).batches
    assert b.senders == {7: 10, 8: 20}
    (b,) = split(plan, current, sizes, batch_size=10).batches
    assert b.senders == {7: 10, 8: 20}
    assert sender(current[("t", 0)], 8) == 8 and sender(current[("t", 0)], None) == 7
