"""mrc-plan's library: replica placement for Confluent Multi-Region Clusters.

No printing, no exits: functions return data or raise `placement.errors` exceptions.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mrc-plan")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
