"""The HTML reports in a real browser (headless Chromium, the system's), with every request
but the page's own file refused: no console error, no request to any host, every chart
drawn (pixels in its box), the figures in the live DOM equal to the JSON report, and the
tables sort."""

from __future__ import annotations

import io
from typing import Any

import pytest
from _assign import assign_report
from _dom import DOM_FIGURES_JS, mismatches
from _reports import Cli, Report, cluster

KINDS = ["score", "plan", "simulate", "assign"]


class Visit:
    """A page opened offline, with what it logged and asked for."""

    def __init__(self, browser: Any, report: Report) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        self.page.goto(report.page.as_uri(), wait_until="load")

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith("file://"):
            route.continue_()
        else:
            self.requests.append(url)
            route.abort()

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(f"{message.type}: {message.text}")

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="module")
def pages(
    reports: dict[str, Report], cli: Cli, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Report]:
    """The session's reports and the `assign --report` page (a drain in batches)."""
    root = tmp_path_factory.mktemp("assign-browser")
    return {**reports, "assign": assign_report(cli, root, cluster(root))}


@pytest.fixture(scope="module")
def visits(browser: Any, pages: dict[str, Report]) -> Any:
    opened = {kind: Visit(browser, pages[kind]) for kind in KINDS}
    yield opened
    for v in opened.values():
        v.close()


@pytest.mark.parametrize("kind", KINDS)
def test_offline_with_no_error_and_no_request(visits: dict[str, Visit], kind: str) -> None:
    v = visits[kind]
    assert v.errors == []
    assert v.requests == []
    assert v.page.evaluate("document.body.dataset.report") == kind


@pytest.mark.parametrize("kind", KINDS)
def test_every_chart_drew(visits: dict[str, Visit], kind: str) -> None:
    from PIL import Image

    v = visits[kind]
    charts = v.page.locator("figure.chart svg")
    assert charts.count() >= 1
    for i in range(charts.count()):
        box = charts.nth(i)
        size = box.bounding_box()
        assert size is not None and size["width"] > 200 and size["height"] > 50
        shot = Image.open(io.BytesIO(box.screenshot())).convert("L")
        inked = sum(shot.histogram()[:200])  # pixels darker than near-white
        assert inked > 0.01 * shot.width * shot.height, f"chart {i} of {kind} looks blank"


@pytest.mark.parametrize("kind", KINDS)
def test_the_dom_holds_the_json_reports_figures(
    visits: dict[str, Visit], pages: dict[str, Report], kind: str
) -> None:
    found = [tuple(f) for f in visits[kind].page.evaluate(DOM_FIGURES_JS)]
    assert len(found) > 20
    assert mismatches(pages[kind].doc, found) == []


def test_a_click_sorts_a_table_and_a_second_reverses_it(visits: dict[str, Visit]) -> None:
    page = visits["score"].page
    table = page.locator('table[data-table="brokers"]')
    header = table.locator("thead th").nth(2)  # replicas as it stands

    def column() -> list[float]:
        return [
            float(v)
            for v in page.evaluate(
                """() => Array.from(document.querySelectorAll(
                       'table[data-table="brokers"] tbody tr')).map(
                       r => r.cells[2].getAttribute("data-v"))"""
            )
        ]

    header.click()
    assert column() == sorted(column())
    assert header.get_attribute("aria-sort") == "ascending"
    header.click()
    assert column() == sorted(column(), reverse=True)
    header.press("Enter")
    assert column() == sorted(column())


@pytest.mark.parametrize("kind", KINDS)
def test_a_screenshot_of_the_whole_page(
    visits: dict[str, Visit], kind: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from PIL import Image

    path = tmp_path_factory.mktemp("shots") / f"{kind}.png"
    visits[kind].page.screenshot(path=str(path), full_page=True)
    with Image.open(path) as shot:
        assert shot.width >= 1000 and shot.height > 900
