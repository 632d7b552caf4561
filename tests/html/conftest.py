"""The HTML reports under test (built once per session, `_reports`), and one headless
Chromium for the whole session: the system's, never a downloaded one."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest
from _reports import CHROMIUM, Cli, Report, cluster, plan_report, score_report, simulate_report


@pytest.fixture(scope="session")
def reports(cli: Cli, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Report]:
    root = tmp_path_factory.mktemp("html")
    snap = cluster(root)
    return {
        "score": score_report(cli, root),
        "plan": plan_report(cli, root, snap),
        "simulate": simulate_report(cli, root, snap),
    }


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """Headless Chromium, driven by playwright; skipped, saying why, where there is none."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed: pip install -e '.[dev]'"
    )
    if shutil.which(CHROMIUM) is None:
        pytest.skip(
            f"no Chromium at {CHROMIUM}: `make test` installs Debian's chromium when run as "
            "root with the package mirror reachable (or: apt-get install chromium)"
        )
    with sync_api.sync_playwright() as p:
        # --no-sandbox: the tests may run as root, where Chromium's sandbox will not start
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()
