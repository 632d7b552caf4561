"""The `assign --report` page without a browser: every figure it points at equals the JSON
summary `assign --format json` printed in the same run, the summary's new figures hold
together (brokers, racks, the rack-to-rack matrix and the batches count the same moves),
the page asks nothing of any host, untrusted names stay text, the same run gives the same
bytes, a page inside --out-dir is refused, and 1,000 brokers make a page that can be
mailed, with charts whose size does not grow with the brokers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from _assign import DRAIN, assign_report
from _dom import figures, mismatches
from _reports import REPO, Cli, Report, cluster

from placement.html.assign import render_assign
from placement.plan.summary import (
    AssignSummary,
    BrokerFigures,
    GoalFigure,
    LeftAlone,
    RackFigures,
    RackFlow,
    TopicFigures,
)

HOSTILE = '<script>alert(1)</script>"\x1b[31m\u202e$x$'
EXAMPLES = REPO / "examples"


@pytest.fixture(scope="module")
def drained(cli: Cli, tmp_path_factory: pytest.TempPathFactory) -> Report:
    root = tmp_path_factory.mktemp("assign")
    return assign_report(cli, root, cluster(root))


def _keys(report: Report) -> set[str]:
    return {k for k, _, _ in figures(report.html)}


@pytest.mark.slow  # the fast tier leaves it to make test
def test_every_figure_is_the_json_summarys(drained: Report) -> None:
    found = figures(drained.html)
    assert len(found) > 200
    assert mismatches(drained.doc, found) == []


def test_the_page_shows_every_broker_goal_flow_and_batch(drained: Report) -> None:
    doc, keys = drained.doc, _keys(drained)
    for i in range(len(doc["brokers"])):
        for field in ("replicas_before", "replicas_after", "bytes_after", "leaders_after"):
            assert f"/brokers/{i}/{field}" in keys
    for i, goal in enumerate(doc["goals"]):  # each figure next to its bound
        assert f"/goals/{i}/value" in keys
        assert goal["bound"] is None or f"/goals/{i}/bound" in keys
    for i in range(len(doc["rack_to_rack"])):
        assert {f"/rack_to_rack/{i}/replicas", f"/rack_to_rack/{i}/bytes"} <= keys
    for j, rack in enumerate(doc["racks"]):  # the per-rack ranges are the summary's
        assert {f"/racks/{j}/replicas_before/0", f"/racks/{j}/replicas_after/1"} <= keys
        if rack["leaders_after"] is not None:
            assert f"/racks/{j}/leaders_after/0" in keys
    assert len(doc["batches"]["batches"]) >= 2
    assert {"/batches/total/batches", "/batches/total/batches_lower_bound"} <= keys
    assert {
        f"/batches/batches/{i}/partitions" for i in range(len(doc["batches"]["batches"]))
    } <= keys
    assert {"/partitions_changed", "/replicas_added", "/bytes_to_move", "/engine"} <= keys
    for chart in ("racks", "histogram", "flows", "timeline"):
        assert f'data-chart="{chart}"' in drained.html


def test_brokers_racks_flows_and_batches_count_the_same_moves(drained: Report) -> None:
    doc = drained.doc
    brokers = doc["brokers"]
    assert [b["broker"] for b in brokers] == sorted(b["broker"] for b in brokers)
    assert {b["broker"] for b in brokers if b["status"] == "drained"} == {4, 8}
    for b in brokers:
        if b["status"] == "drained":
            assert b["replicas_after"] == b["leaders_after"] == b["bytes_after"] == 0
    change = sum(b["replicas_after"] - b["replicas_before"] for b in brokers)
    assert change == doc["replicas_added"] - doc["replicas_removed"]
    assert all(b["bytes_before"] is not None and b["bytes_after"] is not None for b in brokers)
    for j, rack in enumerate(doc["racks"]):
        stay = [b for b in brokers if b["rack"] == rack["rack"] and b["status"] != "drained"]
        for state in ("before", "after"):
            values = [b[f"replicas_{state}"] for b in stay]
            assert rack[f"replicas_{state}"] == [min(values), max(values)], (j, state)
    flows = doc["rack_to_rack"]
    assert sum(f["replicas"] for f in flows) == doc["replicas_added"]
    assert sum(f["bytes"] for f in flows) == doc["bytes_to_move"]
    assert doc["batches"]["total"]["bytes"] == doc["bytes_to_move"]
    # "from rack" is the rack of the batches' sender: the bytes each rack sends agree
    rack_of = {b["broker"]: b["rack"] for b in brokers}
    sent: Counter[str] = Counter()
    for batch in doc["batches"]["batches"]:
        for s in batch["senders"]:
            sent[rack_of[s["broker"]]] += s["bytes"]
    by_flow: Counter[str] = Counter()
    for f in flows:
        by_flow[f["from_rack"]] += f["bytes"]
    assert +sent == +by_flow
    assert {f["to_rack"] for f in flows} <= {b["rack"] for b in brokers if b["status"] == "active"}


def test_the_page_asks_nothing_of_any_host(drained: Report) -> None:
    page = drained.html
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    refs = re.findall(r'(?:src|href|action)\s*=\s*"([^"]*)"', page)
    assert all(r.startswith("#") for r in refs), refs
    assert "url(" not in re.sub(r"url\(#[\w.-]+\)", "", page)
    assert "<image" not in page  # the heat map is vector cells, not an embedded picture
    assert page.count("<script") == 1
    assert '<body data-report="assign">' in page


@pytest.mark.slow  # the fast tier leaves it to make test
def test_the_same_run_gives_the_same_bytes(cli: Cli, drained: Report) -> None:
    root = drained.page.parent
    again = assign_report(cli, root, root / "snap")
    assert again.page.read_bytes() == drained.page.read_bytes()
    assert render_assign(AssignSummary.model_validate(drained.doc), source=_source(drained)) == (
        drained.html
    )


def _source(report: Report) -> str:
    import html

    m = re.search(r'<p class="note">([^<]*)</p>', report.html)
    assert m is not None
    return html.unescape(m.group(1))


def _renamed(doc: Any, names: dict[str, str]) -> Any:
    """``doc`` with every string that is a key of ``names`` replaced."""
    if isinstance(doc, dict):
        return {k: _renamed(v, names) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_renamed(v, names) for v in doc]
    return names.get(doc, doc) if isinstance(doc, str) else doc


def test_untrusted_names_stay_text(drained: Report) -> None:
    racks = {r["rack"] for r in drained.doc["racks"]}
    doc = _renamed(drained.doc, {r: HOSTILE + r for r in racks})
    page = render_assign(AssignSummary.model_validate(doc))
    assert page.count("<script") == 1 and "<script>alert" not in page
    assert "\x1b" not in page and "\u202e" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert mismatches(doc, figures(page)) == []


def test_a_page_inside_the_out_dir_is_refused_and_nothing_is_written(
    cli: Cli, drained: Report, tmp_path: Path
) -> None:
    root = drained.page.parent
    out = tmp_path / "drain"
    r = cli(["assign", "--current", root / "snap", "--inventory", root / "inv.json", *DRAIN,
             "--out-dir", out, "--report", out / "page.html"])  # fmt: skip
    assert r.exit_code == 2
    assert f"--report {out / 'page.html'} is inside --out-dir {out}" in r.stderr
    assert "must lie outside it" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_without_sizes_or_batches_the_page_says_so(cli: Cli, tmp_path: Path) -> None:
    """Describe output holds no sizes: bytes are left out, not drawn as 0; no --out-dir:
    no batch section. The figures are those of --summary of the same run."""
    page, summary = tmp_path / "drain.html", tmp_path / "summary.json"
    r = cli(["assign", "--inventory", EXAMPLES / "inventory.json", "--current",
             EXAMPLES / "describe.txt", "--drain", "4", "--out", tmp_path / "plan.json",
             "--summary", summary, "--report", page])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert f"wrote {page}" in r.stderr
    doc, html = json.loads(summary.read_text()), page.read_text()
    assert doc["batches"] is None and doc["bytes_to_move"] is None
    assert "No partition has a known size: bytes per broker are left out." in html
    assert 'data-section="batch-' not in html
    assert not [k for k in _keys(Report("assign", page, doc)) if k.endswith("bytes_after")]
    assert mismatches(doc, figures(html)) == []


def test_policy_changes_are_on_the_page(cli: Cli, tmp_path: Path) -> None:
    fixtures = REPO / "tests" / "fixtures" / "assign"  # the fixtures of the policy changes
    page = tmp_path / "p.html"
    r = cli(["assign", "--inventory", EXAMPLES / "inventory.json", "--current",
             fixtures / "describe-policies.txt", "--topics", fixtures / "changes.json",
             "--out", tmp_path / "plan.json", "--format", "json", "--report", page])  # fmt: skip
    assert r.exit_code == 0, r.output
    doc, html = json.loads(r.stdout), page.read_text()
    assert {c["action"] for c in doc["policy_changes"]} == {"alter", "create"}
    assert 'data-section="policies"' in html
    keys = _keys(Report("assign", page, doc))
    for i in range(len(doc["policy_changes"])):
        assert {f"/policy_changes/{i}/topic", f"/policy_changes/{i}/action"} <= keys
    assert mismatches(doc, figures(html)) == []


def test_without_report_matplotlib_is_not_loaded(tmp_path: Path) -> None:
    args = ["assign", "--inventory", str(EXAMPLES / "inventory.json"), "--topics",
            str(EXAMPLES / "topics.json"), "--out", str(tmp_path / "p.json")]  # fmt: skip
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from mrc_plan_cli.main import app\n"
        f"r = CliRunner().invoke(app, {args!r})\n"
        "assert r.exit_code == 0, r.output\n"
        "print('matplotlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- 1,000 brokers ------------------------------------------------------------------------


def _big(brokers: int, racks: int) -> AssignSummary:
    """A drain of one broker per rack over ``brokers`` brokers (figures made up, shapes real)."""
    rows = []
    for b in range(1, brokers + 1):
        drained = b <= racks
        before = 3000 + (b * 37) % 400
        after = 0 if drained else before + (b * 13) % 20
        rows.append(
            BrokerFigures(
                broker=b,
                rack=f"rack-{b % racks:02d}",
                status="drained" if drained else "active",
                replicas_before=before,
                replicas_after=after,
                bytes_before=before * 2**28,
                bytes_after=after * 2**28,
                leaders_before=before // 3,
                leaders_after=after // 3,
            )
        )
    names = sorted({r.rack or "" for r in rows})
    flows = [
        RackFlow(from_rack=f, to_rack=t, replicas=100 + i, bytes=(100 + i) * 2**28)
        for i, (f, t) in enumerate((f, t) for f in names for t in names)
    ]
    return AssignSummary(
        engine="goal-ordered core",
        partitions_changed=30_000,
        replicas_added=30_000,
        replicas_removed=30_000,
        bytes_to_move=30_000 * 2**28,
        leadership_changes=5_000,
        goals=[
            GoalFigure(name="replicas added", value=30_000, bound=30_000),
            GoalFigure(name="leadership changes", value=5_000, bound=4_900, forced=4_000),
        ],
        racks=[
            RackFigures(rack=r, replicas_before=(3000, 3399), replicas_after=(3000, 3419))
            for r in names
        ],
        topic_rules={"policy": 900, "default": 60, "rack-aware": 40},
        scope="asked",
        only_topics=None,
        replicas_left_on_drained=0,
        leadership_forced=4_000,
        leadership_chosen=1_000,
        topics=[
            TopicFigures(
                topic=f"topic-{i:04d}",
                rule="policy",
                partitions_changed=30,
                replicas_added=30,
                replicas_removed=30,
                bytes_to_move=30 * 2**28,
                leadership_changes=5,
            )
            for i in range(1_000)
        ],
        left_alone=[LeftAlone(topic="legacy", partitions=3, rule="rack-aware")],
        offline_kept=0,
        missing_topics=[],
        brokers_from="snapshot",
        cluster_policies_known=True,
        policy_changes=[],
        brokers=rows,
        rack_to_rack=flows,
    )


def _svg_bytes(page: str) -> int:
    return sum(len(s) for s in re.findall(r"<svg.*?</svg>", page, flags=re.S))


@pytest.mark.slow  # the fast tier leaves it to make test
def test_a_thousand_brokers_fit_in_a_mail_and_the_charts_do_not_grow() -> None:
    small = render_assign(_big(60, 10))
    big = render_assign(_big(1000, 10))
    assert len(big.encode()) < 5 * 2**20
    assert _svg_bytes(big) < 1.5 * _svg_bytes(small)  # aggregated per rack, not a bar a broker
    assert big.count('<table class="sortable" data-table="brokers">') == 1
    assert len(re.findall(r'<tr data-i="\d+">', big)) >= 1000
