"""`simulate` as one call: a request of what fails, after which plan, on which cluster, in;
the report, and the partitions that only an unclean election brings back, out.

A cluster given as ``current`` (reassignment JSON, describe output or a snapshot
directory) is simulated here, in process; one given as ``snapshot`` runs on the Spark
stage (`placement.score.front.simulate` takes either). `check` reads the inputs and
refuses what cannot run before any work, so that a caller may check its outputs between
the two; `run_in_process` calls it itself. Nothing here prints; the unclean partitions go
to a file only when asked (`SimulateResult.write_unclean`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from placement.errors import UsageError
from placement.io.inventory import load_inventory
from placement.io.replicastatus import read_replica_status

if TYPE_CHECKING:  # the models load with the run, not with `import placement`
    from placement.io.inventory import LoadedInventory
    from placement.io.replicastatus import ReplicaStatusRead
    from placement.simulate.failure import SimulateReport, UncleanPartition


@dataclass(frozen=True)
class SimulateRequest:
    """What `mrc-plan simulate` is asked, flags already parsed: one failure (a rack or
    broker ids) and one cluster (``snapshot`` on Spark, or ``current`` in process). The
    inventory and the replica status are paths, or what `check` read from them."""

    fail_rack: str | None = None
    fail_brokers: Sequence[int] | None = None
    snapshot: Path | None = None
    current: Path | None = None
    inventory: Path | LoadedInventory | None = None
    topics: Path | None = None
    root: Path | None = None  # where --topics' placement files are resolved
    plan: Path | None = None  # reassignment JSON, or an `assign --out-dir` directory
    min_insync_replicas: int = 1  # the cluster's, for topics that set none
    assume_in_sync: bool = False
    replica_status: Path | ReplicaStatusRead | None = None
    master: str | None = None  # Spark's, with ``snapshot``
    # with ``snapshot``: where the unclean partitions are streamed as they come back
    unclean_out: Path | None = None
    progress: Callable[[str], None] | None = None  # each stage of a Spark run, named

    @property
    def loaded(self) -> LoadedInventory | None:
        """The inventory once `check` read it."""
        return None if isinstance(self.inventory, Path) else self.inventory

    @property
    def status(self) -> ReplicaStatusRead | None:
        """The replica status once `check` read it."""
        return None if isinstance(self.replica_status, Path) else self.replica_status


@dataclass(frozen=True)
class SimulateResult:
    report: SimulateReport
    # in process: every partition needing an unclean election (None: a Spark run, which
    # streamed them to ``unclean_out``)
    unclean: list[UncleanPartition] | None = None
    written: int | None = None  # how many a Spark run wrote to ``unclean_out``

    @property
    def failed(self) -> bool:
        """A partition goes offline or under min ISR, or the KRaft quorum is lost."""
        return self.report.failed

    def write_unclean(self, path: Path) -> int:
        """Write the unclean partitions at ``path`` as an election file (none: no file);
        how many. A Spark run's are written already: its count."""
        if self.unclean is None:
            return self.written or 0
        from placement.io.reassignment import write_election_stream

        return write_election_stream(path, ((u.topic, u.partition) for u in self.unclean))


def check(request: SimulateRequest) -> SimulateRequest:
    """The request with its inventory and replica status read, once the combination of
    inputs is one that can run: a snapshot carries its topics' policies and runs one plan
    file; ``current`` needs the inventory's racks. Failures raise (`placement.errors`)."""
    if isinstance(request.inventory, Path):
        request = replace(request, inventory=load_inventory(request.inventory))
    if isinstance(request.replica_status, Path):
        request = replace(request, replica_status=read_replica_status(str(request.replica_status)))
    if request.snapshot is not None:
        from placement.simulate.batches import is_directory

        if request.topics is not None:
            raise UsageError(
                "--topics goes with --current; a snapshot carries its topics' policies"
            )
        if request.plan is not None and is_directory(request.plan):
            raise UsageError(
                "--plan DIR, the steps of a batch directory, runs in-process, not on Spark",
                f"give the snapshot as --current {request.snapshot} --inventory INV",
            )
    elif request.current is not None and request.inventory is None:
        raise UsageError("--current needs --inventory: the racks of the brokers")
    return request


def run_in_process(request: SimulateRequest) -> SimulateResult:
    """The failure applied to ``current`` in process (`simulate_files`)."""
    from placement.simulate.failure import simulate_files

    request = check(request)
    loaded = request.loaded
    if request.current is None or loaded is None:
        raise ValueError("run_in_process needs current and an inventory")
    report, partitions = simulate_files(
        request.current,
        loaded,
        topics=request.topics,
        refs_root=request.root,
        plan=request.plan,
        fail_rack=request.fail_rack,
        fail_brokers=request.fail_brokers,
        default_min_isr=request.min_insync_replicas,
        assume_in_sync=request.assume_in_sync,
        replica_status=request.status,
    )
    return SimulateResult(report, unclean=partitions)
