"""mrc-plan's library: replica placement for Confluent Multi-Region Clusters.

No printing, no exits: functions return data or raise `placement.errors` exceptions. Each
command is one call in `placement.api` (`validate`, `assign`, `score`, `simulate`), a
request in and a result out.
"""

from __future__ import annotations


def __getattr__(name: str) -> str:
    # importlib.metadata costs ~15 ms; only `--version` and reports need it
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("mrc-plan")
        except PackageNotFoundError:  # a source tree that was never installed
            return "0.0.0+unknown"
    raise AttributeError(name)
