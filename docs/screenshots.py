"""Screenshots for the documentation, taken in headless Chromium (Playwright drives the system Chromium; every request
other than file:, data: and blob: is refused, as in ``test_html_report.py``).

    pytest --claims-html                  # or any run that includes claims 27 and 29 on vit
    python docs/screenshots.py reports/allure-report/index.html docs/

writes ``docs/cross-cka.png``: claim 27 on ViT, its verdict and the CKA heatmaps against ResNet, the seed
control and the untrained null; and ``docs/disagreement.png``: Bai et al.'s claim 29 and Park & Kim's claim 16
judged on one interval on ViT.

    mkdocs build                          # the documentation site, into site/
    python docs/screenshots.py site/ docs/

writes ``docs/site-home.png`` (the site's home page) and ``docs/site-claim.png`` (one claim's section of the
catalogue page: claim 8, its rules, controls and verdicts on the references), to show the site rendered.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

SHOTS = {  # file -> (the result's title starts with, the attachment to open or None)
    "cross-cka.png": ("raghu2021.vit-lower-like-resnet-mid [vit]", "cross - vit"),
    "disagreement.png": ("bai2021.same-recipe-adversarial vs park2022.msa-adversarial-robust [vit]", None),
}


SITE = {  # file -> (the page, relative to the site's folder, and the anchor to show)
    "site-home.png": ("index.html", ""),
    "site-claim.png": ("claims/index.html", "8-park2022msa-lowpass"),
}


def _browser(p):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:", "blob:")) else r.abort())  # fmt: skip
    return browser, context.new_page()


def site(folder: Path, out: Path) -> None:
    """The built documentation site's home page and one claim's section."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page = _browser(p)
        for name, (path, anchor) in SITE.items():
            page.goto((folder / path).as_uri() + (f"#{anchor}" if anchor else ""))
            page.wait_for_timeout(1000)
            page.screenshot(path=str(out / name))
            print(f"wrote {out / name}")
        browser.close()


def main(index: Path, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    if index.is_dir():
        return site(index, out)
    results = json.loads((index.parent / "test-results.json").read_text())["byId"]
    with sync_playwright() as p:
        browser, page = _browser(p)
        for name, (title, attachment) in SHOTS.items():
            found = [k for k, v in results.items() if v["name"].startswith(title)]
            if not found:
                sys.exit(f"no result titled {title!r} in {index}")
            page.goto(index.as_uri() + "#" + found[0])
            page.wait_for_selector("[data-testid=test-result-info-title]", timeout=30_000)
            if attachment is not None:
                shown = page.get_by_test_id("test-result-attachment").filter(has_text=attachment).first
                shown.get_by_test_id("test-result-attachment-header").click()
            page.wait_for_timeout(1500)  # the image or HTML frame loads
            page.screenshot(path=str(out / name), full_page=True)
            print(f"wrote {out / name}")
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve(), Path(sys.argv[2]))
