"""Write the README's pictures of the HTML reports:
docs/img/report-{score,plan,simulate,assign}.png.

    .venv/bin/python tests/html/screenshots.py [DIR]     # default: docs/img

The same reports the browser tests open (`_reports`), in the same headless Chromium; the
top of each page, reduced to a small palette PNG. Not a test: run it when the pages change.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from _assign import assign_report
from _reports import CHROMIUM, REPO, cluster, plan_report, score_report, simulate_report
from typer.testing import CliRunner, Result

WIDTH, HEIGHT = 1100, 1250


def cli(args: list[Any]) -> Result:
    from mrc_plan_cli.main import app

    return CliRunner().invoke(app, [str(a) for a in args])


def main() -> None:
    from PIL import Image
    from playwright.sync_api import sync_playwright

    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "img"
    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # the pages name their inputs: short relative paths read better
        root = Path("demo")
        root.mkdir()
        snap = cluster(root)
        reports = [
            score_report(cli, root),
            plan_report(cli, root, snap),
            simulate_report(cli, root, snap),
            assign_report(cli, root, snap),
        ]
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            for report in reports:
                page.goto(report.page.resolve().as_uri())
                shot = root / f"{report.kind}.png"
                page.screenshot(path=str(shot))
                with Image.open(shot) as image:
                    small = image.convert("RGB").quantize(colors=256, dither=Image.Dither.NONE)
                    target = out / f"report-{report.kind}.png"
                    small.save(target, optimize=True)
                print(f"wrote {target} ({target.stat().st_size:,} bytes)")
            browser.close()


if __name__ == "__main__":
    main()
