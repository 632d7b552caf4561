"""report: the HTML reports at 1,000 brokers / 1,000,000 partitions: size and render time.

Generates a snapshot (`mrc-plan snapshot synth`, 10 racks), a plan moving one replica of
every 10th partition (100,000; `bench_score.make_plan`) and a repair of the snapshot's
policy breaches in batches (`assign --out-dir --max-moves-per-broker 5 --throttle 100MB`).
Then, each as its own process:
- `mrc-plan score --plan PLAN --master local[2] --out JSON --report HTML`;
- `mrc-plan plan show DIR --report HTML` (wall time, start-up included);
- `mrc-plan assign --drain` of 10 brokers in batches with `--summary JSON --report HTML`
  (wall time, the planning included: ~45 s);
- `mrc-plan simulate --current SNAP --fail-rack rack-01 --replica-status STATUS --format json
  --report HTML` in process, STATUS a kafka-replica-status --json file listing every
  partition that needs an unclean election (offsets and lags drawn from a seeded generator);
and, in this process, each page alone drawn again from the JSON report of that same run
(median of 3, matplotlib already imported). Goal: each page at most 5 MiB, small enough to
mail. The score and assign pages must hold the JSON report's figures (checked on a sample).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_score import make_plan, run_sampled
from harness import ROOT, clean_env, cli, result, synth_snapshot, write_inventory

BROKERS, RACKS, TOPICS, PER_TOPIC = 1_000, 10, 1_000, 1_000
DRAINED = ",".join(str(b) for b in range(1, 11))  # ten brokers (synth: all of rack-01)
SIZE_GOAL_MIB = 5.0
MIB = 2**20


def _render_seconds(render: Callable[[], str]) -> float:
    render()  # the first draw imports matplotlib
    times = []
    for _ in range(3):
        started = time.perf_counter()
        render()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def run() -> list[dict[str, Any]]:
    sys.path.insert(0, str(ROOT))
    from placement.html.plan import render_plan
    from placement.html.score import render_score
    from placement.model.planview import PlanView
    from placement.score.report import ScoreReport

    with tempfile.TemporaryDirectory(prefix="mrc-bench-report-") as tmp:
        t = Path(tmp)
        snap, plan, batches = t / "snap", t / "plan.json", t / "batches"
        synth_snapshot(snap, BROKERS, RACKS, TOPICS, PER_TOPIC)
        moved = make_plan(snap, plan)
        subprocess.run(
            [
                cli(), "assign", "--current", str(snap), "--out-dir", str(batches),
                "--max-moves-per-broker", "5", "--throttle", "100MB",
            ],
            check=True, env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        score_html, score_json = t / "score.html", t / "score.json"
        score_s, _ = run_sampled(
            [
                cli(), "score", "--snapshot", str(snap), "--plan", str(plan),
                "--plan", str(batches / "plan-0001.json"), "--master", "local[2]",
                "--out", str(score_json), "--report", str(score_html),
            ]
        )  # fmt: skip
        show_html = t / "plan.html"
        show_s, _ = run_sampled([cli(), "plan", "show", str(batches), "--report", str(show_html)])
        view_json = subprocess.run(
            [cli(), "plan", "show", str(batches), "--format", "json"],
            check=True, env=clean_env(), capture_output=True, text=True,
        ).stdout  # fmt: skip
        report = ScoreReport.model_validate_json(score_json.read_text())
        view = PlanView.model_validate_json(view_json)
        page = score_html.read_text()
        for j, p in enumerate(report.plans):  # a sample of the figures the page must hold
            if f'data-v="{json.dumps(p.score)}" data-k="/plans/{j}/score"' not in page:
                raise RuntimeError(f"the score page lacks plan {j}'s score {p.score}")
        score_size, show_size = score_html.stat().st_size, show_html.stat().st_size
        score_render = _render_seconds(
            lambda: render_score(report, source=f"snapshot {snap}; plans best first")
        )
        show_render = _render_seconds(lambda: render_plan(view))
        drain = _assign_page(snap, t)
        loss = _simulate_page(snap, t)
    what = f"{BROKERS:,} brokers, {TOPICS * PER_TOPIC:,} partitions"
    return [
        result(
            f"score --report: page size ({what}, 2 plans)",
            score_size / MIB,
            "MiB",
            SIZE_GOAL_MIB,
            f"plans: {moved:,} partitions moved, and the repair's first batch",
        ),
        result("score --report: drawing the page", score_render, "s", None, "median of 3"),
        result("score --plan x2 --report, local[2], wall", score_s, "s", None, "Spark included"),
        result(
            f"plan show --report: page size ({len(view.batches):,} batches)",
            show_size / MIB,
            "MiB",
            SIZE_GOAL_MIB,
        ),
        result("plan show --report: drawing the page", show_render, "s", None, "median of 3"),
        result("plan show DIR --report, wall", show_s, "s", None, "start-up included"),
        *drain,
        *loss,
    ]


def _assign_page(snap: Path, t: Path) -> list[dict[str, Any]]:
    """`assign --drain` of ten brokers, in batches, with its page and its JSON summary."""
    from placement.html.assign import render_assign
    from placement.plan.summary import AssignSummary

    page, summary = t / "drain.html", t / "drain-summary.json"
    seconds, _ = run_sampled(
        [
            cli(), "assign", "--current", str(snap), "--drain", DRAINED,
            "--out-dir", str(t / "drain"), "--max-moves-per-broker", "5",
            "--throttle", "100MB", "--summary", str(summary), "--report", str(page),
        ]
    )  # fmt: skip
    doc = AssignSummary.model_validate_json(summary.read_text())
    html = page.read_text()
    if 'data-k="/brokers/*/replicas_after"' not in html:
        raise RuntimeError("the assign page has no column of replicas after the plan")
    for i in range(0, len(doc.brokers), 50):  # a sample of the rows of every broker
        b = doc.brokers[i]
        row = f'<tr data-i="{i}"><td data-v="{b.broker}" class="n">'
        if row not in html:
            raise RuntimeError(f"the assign page lacks broker {b.broker}")
    batches = len(doc.batches.batches) if doc.batches else 0
    return [
        result(
            f"assign --report: page size ({len(doc.brokers):,} brokers, {batches:,} batches)",
            page.stat().st_size / MIB,
            "MiB",
            SIZE_GOAL_MIB,
            f"--drain {DRAINED}: {doc.replicas_added:,} replicas added",
        ),
        result(
            "assign --report: drawing the page",
            _render_seconds(lambda: render_assign(doc)),
            "s",
            None,
            "median of 3",
        ),
        result("assign --drain --out-dir --report, wall", seconds, "s", None, "planning included"),
    ]


def _simulate_page(snap: Path, t: Path) -> list[dict[str, Any]]:
    """rack-01 down, with the data at risk of every partition needing an unclean election."""
    from placement.html.simulate import render_simulate
    from placement.simulate.failure import SimulateReport

    inventory, unclean, status = t / "inv.json", t / "unclean.json", t / "status.json"
    write_inventory(snap, inventory)
    base = [cli(), "simulate", "--current", str(snap), "--inventory", str(inventory),
            "--fail-rack", "rack-01", "--exit-zero"]  # fmt: skip
    subprocess.run(
        [*base, "--unclean-out", str(unclean)],
        check=True, env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    listed = _write_replica_status(snap, unclean, status)
    page = t / "simulate.html"
    started = time.perf_counter()
    out = subprocess.run(
        [*base, "--replica-status", str(status), "--format", "json", "--report", str(page)],
        check=True, env=clean_env(), capture_output=True, text=True,
    ).stdout  # fmt: skip
    seconds = time.perf_counter() - started
    report = SimulateReport.model_validate_json(out)
    html = page.read_text()
    risk = report.data_at_risk
    if risk is None or risk.totals.partitions != listed:
        raise RuntimeError(f"the report has no data at risk for the {listed:,} partitions")
    want = f'data-v="{risk.totals.offsets}" data-k="/data_at_risk/totals/offsets"'
    if want not in html:
        raise RuntimeError("the simulate page lacks the offsets at risk of its JSON report")
    return [
        result(
            f"simulate --report: page size ({len(report.topics):,} topics, "
            f"{listed:,} partitions at risk)",
            page.stat().st_size / MIB,
            "MiB",
            SIZE_GOAL_MIB,
            f"rack-01 down: offline {report.totals.offline:,}, "
            f"under min ISR {report.totals.under_min_isr:,}",
        ),
        result(
            "simulate --report: drawing the page",
            _render_seconds(lambda: render_simulate(report)),
            "s",
            None,
            "median of 3",
        ),
        result("simulate --replica-status --report, wall", seconds, "s", None, "in process"),
    ]


def _write_replica_status(snap: Path, unclean: Path, path: Path) -> int:
    """A kafka-replica-status --json file for the partitions listed in ``unclean``: the
    leader at its log end, every other replica behind by a seeded amount. Returns how
    many partitions it lists."""
    import random

    import pyarrow.parquet as pq

    if not unclean.exists():
        path.write_text("[]")
        return 0
    wanted = {(p["topic"], p["partition"]) for p in json.loads(unclean.read_text())["partitions"]}
    rng = random.Random(7)
    topics: dict[str, list[dict[str, Any]]] = {}
    table = pq.read_table(snap / "partitions", columns=["topic", "partition", "replicas", "leader"])
    for row in table.to_pylist():
        if (row["topic"], row["partition"]) not in wanted:
            continue
        end = rng.randrange(10_000, 10_000_000)
        leader = row["leader"] if row["leader"] is not None else row["replicas"][0]
        replicas = []
        for b in row["replicas"]:
            behind = 0 if b == leader else rng.randrange(0, 5_000)
            replicas.append({
                "Replica": b, "IsLeader": b == leader, "IsObserver": False,
                "IsIsrEligible": True, "IsInIsr": behind == 0, "IsCaughtUp": behind == 0,
                "LastCaughtUpLagMs": 0 if behind == 0 else rng.randrange(1, 60_000),
                "LastFetchLagMs": 0, "LogStartOffset": 0, "LogEndOffset": end - behind,
            })  # fmt: skip
        topics.setdefault(row["topic"], []).append(
            {"Partition": row["partition"], "Replicas": replicas}
        )
    doc = [{"Topic": name, "Partitions": parts} for name, parts in sorted(topics.items())]
    path.write_text(json.dumps(doc))
    return sum(len(p) for p in topics.values())
