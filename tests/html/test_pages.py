"""The HTML reports without a browser: every figure the page points at equals the JSON
report of the same run, the page asks for nothing from any host, untrusted names stay
text, the same input gives the same bytes, and 1,000 brokers make a page that can be
mailed, with charts whose size does not grow with the brokers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _dom import figures, mismatches
from _reports import SCORE_FIXTURE, Report

from placement.html.plan import render_plan
from placement.html.score import render_score
from placement.html.simulate import render_simulate
from placement.model.planview import BatchView, BrokerBytes, PlanView, TotalView
from placement.score.report import (
    Balance,
    BrokerLoad,
    PlanScore,
    RackFailure,
    ScoreReport,
    SnapshotInfo,
    StateMetrics,
    Stats,
)
from placement.simulate.failure import SimulateReport

KINDS = ["score", "plan", "simulate"]
HOSTILE = '<script>alert(1)</script>"\x1b[31m\u202e$x$'


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.slow  # the fast tier leaves it to make test
def test_every_figure_is_the_json_reports(reports: dict[str, Report], kind: str) -> None:
    report = reports[kind]
    found = figures(report.html)
    assert len(found) > 20, "the page points at the JSON report's figures"
    assert mismatches(report.doc, found) == []


def test_the_score_page_has_every_plan_and_every_broker(reports: dict[str, Report]) -> None:
    doc, keys = reports["score"].doc, {k for k, _, _ in figures(reports["score"].html)}
    for j, plan in enumerate(doc["plans"]):
        assert f"/plans/{j}/score" in keys
        for i in range(len(plan["brokers"])):
            assert f"/plans/{j}/brokers/{i}/replicas" in keys
    for rack in doc["baseline"]["rack_failure"]:
        assert f"/baseline/rack_failure/{rack}/offline" in keys


def test_the_plan_page_names_the_broker_that_bounds_each_batch(
    reports: dict[str, Report],
) -> None:
    doc, found = reports["plan"].doc, figures(reports["plan"].html)
    assert len(doc["batches"]) >= 2
    bound = {k: v for k, v, _ in found if re.fullmatch(r"/batches/\d+/receivers/\d+/bytes", k)}
    assert len(bound) == len(doc["batches"])
    for key, value in bound.items():
        i = int(key.split("/")[2])
        assert value is not None and int(value) == max(
            r["bytes"] for r in doc["batches"][i]["receivers"]
        )
    assert {"/total/batches", "/total/batches_lower_bound", "/total/eta_seconds"} <= {
        k for k, _, _ in found
    }


@pytest.mark.parametrize("kind", KINDS)
def test_the_page_asks_nothing_of_any_host(reports: dict[str, Report], kind: str) -> None:
    page = reports[kind].html
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    refs = re.findall(r'(?:src|href|action)\s*=\s*"([^"]*)"', page)
    assert all(r.startswith("#") for r in refs), refs
    assert "url(" not in re.sub(r"url\(#[\w.-]+\)", "", page)
    assert "@import" not in page and "@font-face" not in page
    assert page.count("<script") == 1


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_input_gives_the_same_bytes(reports: dict[str, Report], kind: str) -> None:
    report = reports[kind]
    if kind == "score":
        again = render_score(ScoreReport.model_validate(report.doc), source=_source(report))
    elif kind == "plan":
        again = render_plan(PlanView.model_validate(report.doc))
    else:
        again = render_simulate(SimulateReport.model_validate(report.doc))
    assert again == report.html


def _source(report: Report) -> str:
    m = re.search(r'<p class="note">([^<]*)</p>', report.html)
    assert m is not None
    import html

    return html.unescape(m.group(1))


def test_untrusted_names_stay_text() -> None:
    """Rack and plan names from the input can hold markup, terminal escapes, bidi
    overrides and TeX: the page shows them escaped and runs no script but its own."""
    real = ScoreReport.model_validate_json(SCORE_FIXTURE.read_text())
    brokers = [
        b.model_copy(update={"rack": HOSTILE + (b.rack or "")}) for b in real.baseline.brokers
    ]
    failures = {HOSTILE + r: f for r, f in real.baseline.rack_failure.items()}
    plans = [
        p.model_copy(
            update={
                "plan": f"/tmp/{HOSTILE}.json",
                "rack_failure": {HOSTILE + r: f for r, f in p.rack_failure.items()},
                "brokers": [
                    b.model_copy(update={"rack": HOSTILE + (b.rack or "")}) for b in p.brokers
                ],
            }
        )
        for p in real.plans
    ]
    baseline = real.baseline.model_copy(update={"brokers": brokers, "rack_failure": failures})
    page = render_score(real.model_copy(update={"baseline": baseline, "plans": plans}))
    assert page.count("<script") == 1 and "<script>alert" not in page
    assert "\x1b" not in page and "\u202e" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\\x1b[31m" in page and "\\u202e" in page


def _big_score(brokers: int, racks: int, plans: int) -> ScoreReport:
    """A score report of ``brokers`` brokers (figures made up, shapes real)."""

    def loads(shift: int) -> list[BrokerLoad]:
        return [
            BrokerLoad(
                broker=b,
                rack=f"rack-{b % racks:02d}",
                replicas=3000 + (b * 37 + shift) % 400,
                leaders=1000 + (b * 11 + shift) % 150,
                bytes=(b * 7919 + shift) % 1000 * 2**30,
            )
            for b in range(1, brokers + 1)
        ]

    def metrics(rows: list[BrokerLoad]) -> Balance:
        return Balance(
            replicas=Stats.of([r.replicas for r in rows]),
            leaders=Stats.of([r.leaders for r in rows]),
            bytes=Stats.of([r.bytes for r in rows]),
        )

    failure = {
        f"rack-{r:02d}": RackFailure(offline=r, under_min_isr=2 * r, promoted=3)
        for r in range(racks)
    }
    base = loads(0)
    scored = [
        PlanScore(
            plan=f"/plans/plan-{j}.json",
            partitions_changed=1000 * j,
            replicas_added=900 * j,
            replicas_removed=900 * j,
            bytes_to_move=j * 2**40,
            cross_rack_bytes=j * 2**38,
            bytes_unknown_partitions=0,
            violations_before=10,
            violations_after=0,
            balance=metrics(loads(j)),
            rack_failure=failure,
            brokers=loads(j),
            score=90.0 - j,
        )
        for j in range(1, plans + 1)
    ]
    return ScoreReport(
        snapshot=SnapshotInfo(
            brokers=brokers,
            topics=1000,
            partitions=1_000_000,
            replicas=3_000_000,
            partitions_without_size=0,
        ),
        baseline=StateMetrics(
            violations=10, balance=metrics(base), rack_failure=failure, brokers=base
        ),
        plans=scored,
    )


def _svg_bytes(page: str) -> int:
    return sum(len(s) for s in re.findall(r"<svg.*?</svg>", page, flags=re.S))


@pytest.mark.slow  # the fast tier leaves it to make test
def test_a_thousand_brokers_fit_in_a_mail_and_the_charts_do_not_grow() -> None:
    small = render_score(_big_score(60, 10, 3))
    big = render_score(_big_score(1000, 10, 3))
    assert len(big.encode()) < 5 * 2**20
    assert _svg_bytes(big) < 1.5 * _svg_bytes(small)  # aggregated per rack, not a bar a broker
    assert big.count('data-table="brokers"') == 1
    assert re.search(r'<table class="sortable" data-table="brokers">', big)


@pytest.mark.slow  # the fast tier leaves it to make test
def test_a_plan_of_many_batches_draws_one_curve() -> None:
    batches = [
        BatchView(
            batch=i,
            file=f"plan-{i:04d}.json",
            rollback=f"rollback-{i:04d}.json",
            partitions=100,
            replicas_added=100,
            bytes=i * 2**30,
            senders=[BrokerBytes(broker=b, bytes=2**20 * b) for b in range(1, 200)],
            receivers=[BrokerBytes(broker=b, bytes=2**20 * (b + i % 7)) for b in range(200, 400)],
            max_moves_per_broker=3,
            eta_seconds=30.0 + i,
        )
        for i in range(1, 501)
    ]
    view = PlanView(
        path="/tmp/out",
        kind="batches",
        throttle_bytes_per_s=50_000_000,
        total=TotalView(
            batches=500,
            batches_lower_bound=480,
            partitions=50_000,
            replicas_added=50_000,
            bytes=sum(b.bytes or 0 for b in batches),
            eta_seconds=sum(b.eta_seconds or 0 for b in batches),
        ),
        order=[b.file for b in batches],
        batches=batches,
    )
    page = render_plan(view)
    assert len(page.encode()) < 5 * 2**20
    assert _svg_bytes(page) < 200_000
    assert page.count("<tr data-i=") == 500


def test_an_unknown_field_of_the_simulate_report_is_shown(reports: dict[str, Report]) -> None:
    """A count the simulation learns to report shows up without a change to the page: the
    counts are read from the model's fields."""
    doc = reports["simulate"].doc
    page = reports["simulate"].html
    for field in doc["totals"]:
        assert f'data-k="/totals/{field}"' in page


def test_the_report_writes_nothing_when_drawing_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """score --out --report: both or neither; no temporary file left."""
    real = ScoreReport.model_validate_json(SCORE_FIXTURE.read_text())
    monkeypatch.setattr("placement.score.run.run_score", lambda *a, **k: real)

    def broken(*_: object, **__: object) -> str:
        raise RuntimeError("drawing failed")

    monkeypatch.setattr("placement.html.score.render_score", broken)
    from typer.testing import CliRunner

    from mrc_plan_cli.main import app

    args = ["score", "--snapshot", str(tmp_path), "--out", str(tmp_path / "s.json")]
    result = CliRunner().invoke(app, [*args, "--report", str(tmp_path / "s.html")])
    assert result.exit_code != 0
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.slow  # the fast tier leaves it to make test
def test_the_snapshot_alone_and_without_sizes() -> None:
    """No plan: the page shows the snapshot as it stands; no size at all: no byte figure
    per broker (they would all read 0)."""
    real = ScoreReport.model_validate_json(SCORE_FIXTURE.read_text())
    alone = real.model_copy(update={"plans": []})
    page = render_score(alone)
    assert "No plan was given" in page
    assert mismatches(alone.model_dump(mode="json"), figures(page)) == []
    snap = real.snapshot.model_copy(update={"partitions_without_size": real.snapshot.partitions})
    unsized = real.model_copy(update={"snapshot": snap})
    page = render_score(unsized)
    assert "No partition has a size" in page
    assert not [k for k, _, _ in figures(page) if "/bytes" in k and "/brokers/" in k]
    assert 'data-k="/baseline/balance/bytes/min"' not in page
