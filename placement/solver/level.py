"""Even out unit items over bins with the fewest moves (preferred leaders over brokers).

Each item sits on one bin and may move to any bin of its candidates. The targets give
every bin ``floor(total / bins)`` items and one more to the ``total % bins`` bins that
hold the most already: no other targets need fewer moves, so the moves made by the direct
phase (an item goes straight from a bin above its target to one below) are a lower bound
that is met whenever direct moves suffice. What they cannot reach, chains finish: an item
moves from the heaviest bin to another, which passes one on, and so on to a bin at least
two lighter (shortest chains first, breadth-first over bins).
"""

from __future__ import annotations

from collections.abc import Sequence


def targets(weight: dict[int, int]) -> dict[int, int]:
    """floor(mean) per bin; one more for the ``total % bins`` most loaded (ties: lowest id)."""
    q, r = divmod(sum(weight.values()), len(weight))
    order = sorted(weight, key=lambda b: (-weight[b], b))
    return {b: q + (1 if i < r else 0) for i, b in enumerate(order)}


def excess(weight: dict[int, int]) -> int:
    """Moves no plan can avoid: the items above target, summed over bins."""
    if not weight:
        return 0
    goal = targets(weight)
    return sum(max(0, w - goal[b]) for b, w in weight.items())


def level_units(weight: dict[int, int], at: list[int], cands: Sequence[Sequence[int]]) -> int:
    """Move items (``at[i]`` is item i's bin) until max - min <= 1 over ``weight``'s bins,
    or no chain can narrow it. ``weight`` counts every item on each bin (and any fixed
    load). Mutates ``at`` and ``weight``; returns the number of item moves."""
    if len(weight) < 2:
        return 0
    by_bin: dict[int, dict[int, None]] = {b: {} for b in weight}  # ordered sets
    for i, b in enumerate(at):
        if b in by_bin and len(cands[i]) > 1:
            by_bin[b][i] = None
    moves = 0

    def move(i: int, src: int, dst: int) -> None:
        nonlocal moves
        at[i] = dst
        weight[src] -= 1
        weight[dst] += 1
        del by_bin[src][i]
        by_bin[dst][i] = None
        moves += 1

    goal = targets(weight)
    for src in sorted(weight, key=lambda b: (-(weight[b] - goal[b]), b)):
        if weight[src] <= goal[src]:
            break
        for i in list(by_bin[src]):
            if weight[src] <= goal[src]:
                break
            dst = next((c for c in cands[i] if c in goal and weight[c] < goal[c]), None)
            if dst is not None:
                move(i, src, dst)

    stuck: set[int] = set()
    while True:
        floor = min(weight.values())
        sources = [b for b in weight if b not in stuck and weight[b] >= floor + 2]
        if not sources:
            return moves
        heavy = max(sources, key=lambda b: (weight[b], -b))
        parent: dict[int, tuple[int, int]] = {}
        frontier, seen, found = [heavy], {heavy}, None
        while frontier and found is None:
            nxt: list[int] = []
            for src in frontier:
                for i in by_bin[src]:
                    for c in cands[i]:
                        if c in seen or c not in weight:
                            continue
                        seen.add(c)
                        parent[c] = (src, i)
                        if weight[c] <= weight[heavy] - 2:
                            found = c
                            break
                        nxt.append(c)
                    if found is not None:
                        break
                if found is not None:
                    break
            frontier = nxt
        if found is None:
            stuck.add(heavy)
            continue
        node = found
        while node != heavy:
            src, i = parent[node]
            move(i, src, node)
            node = src
