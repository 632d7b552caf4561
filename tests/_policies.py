"""A v2 placement policy from counts per rack: the shorthand the solver tests share."""

from __future__ import annotations

from collections.abc import Mapping

from placement.model.policy import PlacementPolicy


def policy(
    replicas: Mapping[str, int], observers: Mapping[str, int] | None = None
) -> PlacementPolicy:
    return PlacementPolicy.model_validate(
        {
            "version": 2,
            "replicas": [{"count": n, "constraints": {"rack": r}} for r, n in replicas.items()],
            "observers": [
                {"count": n, "constraints": {"rack": r}} for r, n in (observers or {}).items()
            ],
        }
    )
