"""Goal `leaders` inside each rack, right after its flow (`core`): a new leader and a new
follower of the rack trade brokers while that narrows the rack's spread of preferred
leaders; replicas per broker stay, no topic's range widens (goal `topics` is higher), no
trade costs a move."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from placement.model.assignment import Key, PartitionAssignment
from placement.solver.tallies import RackState, swap_broker


class LeaderTrades:
    """Preferred leaders, without touching what the flow evened: a partition whose old
    leader is gone and that has one replica in its lead rack is led by the broker the flow
    gave it. Such a new leader and a new follower of the rack trade brokers (the leader
    goes to a broker that leads less) while a trade narrows the rack's leader spread:
    replicas per broker stay as they were, no topic's range per broker widens past one,
    and no trade costs a move."""

    def __init__(
        self,
        rack: str,
        receivers: tuple[int, ...],
        st: RackState,
        placed: list[tuple[int, ...]],
        before: Mapping[Key, PartitionAssignment],
        chosen: dict[Key, dict[str, tuple[int, ...]]],
    ) -> None:
        self.rack, self.chosen = rack, chosen
        self.weight = {b: st.leaders[b] for b in receivers}
        self.lead_on: dict[int, list[Key]] = {b: [] for b in receivers}
        self.other_on: dict[int, list[Key]] = {b: [] for b in receivers}
        self.holders: dict[Key, set[int]] = {}
        self.count = Counter(st.topic_base)  # (topic, broker) -> replicas after the flow
        # per topic: how many receiving brokers hold each count (its range per broker)
        self.hists: dict[str, Counter[int]] = {}
        for key, it, brokers in zip(st.keys, st.items, placed, strict=True):
            self.holders[key] = set(brokers)
            old = set(before[key].replicas)
            if it.sticky is not None and it.sticky in brokers and it.sticky in self.weight:
                self.weight[it.sticky] += 1  # a changing partition that keeps its leader
            for b in brokers:
                self.count[(key[0], b)] += 1
                if b in self.weight and b not in old:
                    if it.leads:
                        self.weight[b] += 1
                        self.lead_on[b].append(key)
                    else:
                        self.other_on[b].append(key)

    def hist(self, topic: str) -> Counter[int]:
        h = self.hists.get(topic)
        if h is None:
            h = self.hists[topic] = Counter(self.count[(topic, b)] for b in self.weight)
        return h

    def moved(self, topic: str, src: int, dst: int) -> Counter[int]:
        h = Counter(self.hist(topic))
        cs, cd = self.count[(topic, src)], self.count[(topic, dst)]
        h[cs] -= 1
        h[cd] -= 1
        h[cs - 1] += 1
        h[cd + 1] += 1
        return h

    def room(self, topic: str, src: int, dst: int) -> bool:
        """Leaders come after topics in the goal order: a topic's range per broker may not
        widen, except from 0 to 1 (which leaves no pair of brokers uneven)."""
        return _span(self.moved(topic, src, dst)) <= max(_span(self.hist(topic)), 1)

    def fits(self, x: Key, y: Key, heavy: int, light: int) -> bool:
        """x (leading, on heavy) and y (following, on light) may trade brokers."""
        if light in self.holders[x] or heavy in self.holders[y]:
            return False
        return x[0] == y[0] or (self.room(x[0], heavy, light) and self.room(y[0], light, heavy))

    def run(self) -> None:
        weight = self.weight
        stuck: set[tuple[int, int]] = set()
        for _ in range(sum(len(v) for v in self.lead_on.values())):
            order = sorted(weight, key=lambda b: (weight[b], b))
            pair = next(
                (
                    (h, lt)
                    for h in reversed(order)
                    for lt in order
                    if weight[h] - weight[lt] >= 2 and (h, lt) not in stuck
                ),
                None,
            )
            if pair is None:
                return
            heavy, light = pair
            trade = next(
                (
                    (x, y)
                    for x in self.lead_on[heavy]
                    for y in self.other_on[light]
                    if self.fits(x, y, heavy, light)
                ),
                None,
            )
            if trade is None:
                stuck.add(pair)
            else:
                self.trade(*trade, heavy, light)

    def trade(self, x: Key, y: Key, heavy: int, light: int) -> None:
        for key, src, dst in ((x, heavy, light), (y, light, heavy)):
            swap_broker(self.chosen, self.rack, key, src, dst)
            self.holders[key] = (self.holders[key] - {src}) | {dst}
            self.hists[key[0]] = self.moved(key[0], src, dst)
            self.count[(key[0], src)] -= 1
            self.count[(key[0], dst)] += 1
        self.lead_on[heavy].remove(x)
        self.lead_on[light].append(x)
        self.other_on[light].remove(y)
        self.other_on[heavy].append(y)
        self.weight[heavy] -= 1
        self.weight[light] += 1


def _span(h: Mapping[int, int]) -> int:
    values = [v for v, n in h.items() if n > 0]
    return max(values) - min(values)
