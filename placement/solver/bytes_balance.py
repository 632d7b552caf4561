"""Goal `bytes` (`placement/solver/goals/bytes.py`), the pass after the flow: bytes per
broker evened by trading replicas the plan adds anyway between brokers of a rack, so no
count the flow evened and no move changes."""

from __future__ import annotations

from collections.abc import Mapping

from placement.model.assignment import Key, PartitionAssignment
from placement.solver.cluster import Cluster
from placement.solver.tallies import swap_broker


def bytes_load(
    before: Mapping[Key, PartitionAssignment],
    chosen: Mapping[Key, Mapping[str, tuple[int, ...]]],
    sizes: Mapping[Key, int],
    c: Cluster,
) -> dict[int, int]:
    """Bytes per usable broker after the flow, in one pass over every partition: the
    brokers the flow chose where it placed a partition in a rack, the ones that hold it
    elsewhere."""
    load: dict[int, int] = {}
    for key, a in before.items():
        mine = chosen.get(key, {})
        size = sizes.get(key, 0)
        for b in dict.fromkeys(a.replicas):
            r = c.rack_of.get(b)
            if r is not None and b in c.usable and r not in mine:
                load[b] = load.get(b, 0) + size
        for brokers in mine.values():
            for b in brokers:
                load[b] = load.get(b, 0) + size
    return load


def even_bytes(
    receivers: tuple[int, ...],
    rack: str,
    before: Mapping[Key, PartitionAssignment],
    chosen: dict[Key, dict[str, tuple[int, ...]]],
    sizes: Mapping[Key, int],
    loads: Mapping[int, int],
) -> None:
    """Bytes per broker, without touching the counts the flow evened: two replicas this
    plan adds in the rack trade brokers (a big one from the heaviest broker for a smaller
    one on a lighter broker) while a trade narrows the gap. Both are added anyway, so no
    trade costs a move. ``loads``: bytes per broker after the flow (trades in one rack
    change no other rack's)."""
    if len(receivers) < 2:
        return
    load = {b: loads.get(b, 0) for b in receivers}
    holders: dict[Key, set[int]] = {}
    added: dict[int, list[Key]] = {b: [] for b in receivers}
    for key, racks in chosen.items():
        mine = racks.get(rack)
        if mine is None:
            continue
        holders[key] = set(mine)
        old = set(before[key].replicas)
        for b in mine:
            if b in added and b not in old:
                added[b].append(key)
    for _ in range(sum(len(v) for v in added.values())):
        order = sorted(receivers, key=lambda b: (load[b], b))
        done = True
        for heavy in reversed(order[-8:]):
            for light in order[:8]:
                gap = load[heavy] - load[light]
                if gap < 2:
                    break
                trade = _best_trade(added[heavy], added[light], heavy, light, gap, holders, sizes)
                if trade is None:
                    continue
                x, y = trade
                swap_broker(chosen, rack, x, heavy, light)
                added[heavy].remove(x)
                added[light].append(x)
                holders[x] = (holders[x] - {heavy}) | {light}
                moved = sizes.get(x, 0)
                if y is not None:
                    swap_broker(chosen, rack, y, light, heavy)
                    added[light].remove(y)
                    added[heavy].append(y)
                    holders[y] = (holders[y] - {light}) | {heavy}
                    moved -= sizes.get(y, 0)
                load[heavy] -= moved
                load[light] += moved
                done = False
                break
            if not done:
                break
        if done:
            return


def _best_trade(
    on_heavy: list[Key],
    on_light: list[Key],
    heavy: int,
    light: int,
    gap: int,
    holders: Mapping[Key, set[int]],
    sizes: Mapping[Key, int],
) -> tuple[Key, Key | None] | None:
    """The trade of an added replica of ``heavy`` for one of ``light`` whose size
    difference comes nearest half the gap (and stays below the gap)."""
    best: tuple[int, Key, Key | None] | None = None
    smalls = sorted(on_light, key=lambda k: (sizes.get(k, 0), k))
    for x in sorted(on_heavy, key=lambda k: (-sizes.get(k, 0), k))[:64]:
        if light in holders[x]:
            continue
        for y in smalls[:64]:
            if heavy in holders[y]:
                continue
            delta = sizes.get(x, 0) - sizes.get(y, 0)
            if 0 < delta < gap:
                score = abs(gap - 2 * delta)
                if best is None or score < best[0]:
                    best = (score, x, y)
    return None if best is None else (best[1], best[2])
