"""What a plan may change: the operator's scope (README, `assign`: the scope rule)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from placement.model.assignment import Key


@dataclass(frozen=True)
class Scope:
    """What a plan may change (README, `assign`: the scope rule).

    A partition is in scope when ``everything`` is (``--repair``, ``--rebalance``, or a
    run asked for nothing but the state), when its topic is one of ``topics`` (the topics
    file sets its policy), or when a replica of it sits on a broker that cannot keep it
    (drained, not in the inventory, no rack). ``only`` (``--only-topics``) and ``frozen``
    (offline partitions: no leader to copy from) take partitions out of any scope."""

    everything: bool = True
    topics: frozenset[str] = frozenset()
    only: re.Pattern[str] | None = None
    frozen: frozenset[Key] = frozenset()

    def allows(self, key: Key) -> bool:
        """Whether the plan may touch ``key`` at all."""
        if self.only is not None and self.only.fullmatch(key[0]) is None:
            return False
        return key not in self.frozen

    def asks(self, key: Key, displaced: bool) -> bool:
        """Whether ``key`` must be made to follow its rule (``displaced``: a replica of
        it sits on a broker that cannot keep it)."""
        if not self.allows(key):
            return False
        return self.everything or displaced or key[0] in self.topics
