"""`score`, and `simulate` whichever way it runs, as one call each: a request in, a
result out.

`score`: the snapshot as it stands and after each plan, on Spark (`run_score`). `check`
resolves and reads the policies the plans set before Spark starts, so that a caller may
check its outputs between the two; `run` calls it itself. `simulate`: a request with a
``snapshot`` runs on the Spark stage (`run_simulate`), one with ``current`` in process
(`placement.simulate.front`). The HTML pages are drawn from the results a layer above
this one (`placement.html`); nothing here prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from placement.diagnostics.jsonout import report_json
from placement.errors import InputError, UsageError
from placement.simulate.front import SimulateRequest, SimulateResult, run_in_process
from placement.simulate.front import check as check_simulate

if TYPE_CHECKING:  # pydantic and the report models load with the run
    from placement.model.policy import PlacementPolicy
    from placement.score.report import ScoreReport

    # per topic, the policy and min.insync.replicas (None: the snapshot's) the plans set
    Planned = Mapping[str, tuple[PlacementPolicy, int | None]]


@dataclass(frozen=True)
class ScoreRequest:
    """What `mrc-plan score` is asked, flags already parsed. The policies the plans set
    come from ``topics``, or from the topics file of ``policy_dir`` (what `assign
    --policy-dir` wrote); `check` reads them into ``planned``."""

    snapshot: Path
    plans: Sequence[Path] = ()
    topics: Path | None = None
    policy_dir: Path | None = None
    master: str | None = None  # Spark's; None: SPARK_MASTER, spark-submit's, else local
    min_insync_replicas: int = 1  # the cluster's, for topics that set none
    progress: Callable[[str], None] | None = None  # each stage of the run, named
    planned: Planned | None = None


@dataclass(frozen=True)
class ScoreResult:
    report: ScoreReport
    snapshot: Path

    @cached_property
    def report_json(self) -> str:
        """The JSON report (`score --format json`, `--out`)."""
        return report_json(self.report)

    @property
    def source(self) -> str:
        """How the run was asked for, under the HTML page's title."""
        return f"snapshot {self.snapshot}; plans best first"


def planned_topics(topics: Path | None, policy_dir: Path | None) -> Path | None:
    """The topics file holding the policies the plans set: ``topics``, or the topics.json
    of ``policy_dir`` (the one a plan's policy changes are written with)."""
    from placement.plan.policies import SCRIPT, TOPICS_FILE

    if policy_dir is None:
        return topics
    if topics is not None:
        raise UsageError("--topics and --policy-dir both give the policies the plans set: pass one")
    found = policy_dir / TOPICS_FILE
    if not found.is_file():
        written = (policy_dir / SCRIPT).is_file()
        raise InputError(
            str(policy_dir),
            f"holds no {TOPICS_FILE}"
            + (" (written by an older mrc-plan)" if written else "")
            + ": it is not a directory assign --policy-dir wrote",
            "write it again with assign --policy-dir, or pass the topics file the plans "
            "were made with as --topics",
        )
    return found


def check(request: ScoreRequest) -> ScoreRequest:
    """The request with ``policy_dir`` resolved to its topics file (as ``topics``) and the
    policies that file sets read into ``planned``. Failures raise (`placement.errors`)."""
    topics = planned_topics(request.topics, request.policy_dir)
    request = replace(request, topics=topics, policy_dir=None)
    if topics is None or request.planned is not None:
        return request
    from placement.plan.topics import read_topics

    planned = {t.name: (t.policy, t.min_isr) for t in read_topics(topics)}
    return replace(request, planned=planned)


def run(request: ScoreRequest) -> ScoreResult:
    """Score the snapshot as it stands and after each plan (`run_score`)."""
    from placement.score.run import run_score

    request = check(request)
    report = run_score(
        request.snapshot,
        request.plans,
        master=request.master,
        default_min_isr=request.min_insync_replicas,
        progress=request.progress or (lambda _: None),
        planned=request.planned,
    )
    return ScoreResult(report, request.snapshot)


def simulate(request: SimulateRequest) -> SimulateResult:
    """The failure on the Spark stage (``snapshot``) or in process (``current``)."""
    snapshot = request.snapshot
    if snapshot is None:
        return run_in_process(request)
    from placement.score.simulate import run_simulate

    request = check_simulate(request)
    loaded = request.loaded
    report, written = run_simulate(
        snapshot,
        fail_rack=request.fail_rack,
        fail_brokers=list(request.fail_brokers) if request.fail_brokers is not None else None,
        plan=request.plan,
        master=request.master,
        default_min_isr=request.min_insync_replicas,
        inventory=loaded.inventory if loaded is not None else None,
        unclean_out=request.unclean_out,
        assume_in_sync=request.assume_in_sync,
        replica_status=request.status,
        progress=request.progress or (lambda _: None),
    )
    return SimulateResult(report, written=written)
