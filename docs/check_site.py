"""The built documentation site, read in headless Chromium as a user reads it.

    python docs/check_site.py SCREENSHOTS_DIR [--site DIR]

builds the site (``mkdocs build --strict``) into a temporary folder, or reads an already built ``--site``, opens
at 1280 px wide Home, Getting started, one claim's page, the API, options, results, your-model, verdicts and gate
pages (the widest tables and outputs), and checks on each:

- no raw Sphinx role (``:class:``, ``:func:``, ``:mod:``, ``:meth:``, ...) in the text a reader sees;
- no table cell whose content overflows it, and no table clipped: a table wider than its column sits in a box that
  scrolls sideways;
- no code block or table wider than its box without the visible hint above it that it scrolls sideways
  (``javascripts/scroll_hint.js``), and no key output (the verdict table, a claim's failure message) wider than its
  box at all;
- no code in a table cell (a claim id, a command) broken across lines;
- every screenshot in a paragraph of its own links to its full-size image;
- no request to another host: Playwright drives the system Chromium (Debian's ``chromium``, nothing downloaded,
  as in ``property_tests/library/test_html_report.py``), and every request other than ``file:``, ``data:`` and
  ``blob:`` is recorded and refused.

It writes one screenshot per page (``home.png``, ``getting-started.png``, ``claim.png``, ...) into SCREENSHOTS_DIR, prints what it found per page and exits 1 if anything is found.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCAL = ("file:", "data:", "blob:")
WIDTH = 1280  # the narrowest common laptop window the key outputs must fit
KEY_OUTPUTS = ["model-props: claim verdicts", "ClaimContradicted"]  # text that marks a code block as a key output

# Runs in the page: what a reader would find wrong, as a list of strings.
FINDINGS_JS = r"""
(keyOutputs) => {
  const found = [];
  const hinted = (host) => {
    const hint = host.previousElementSibling;
    return hint !== null && hint.classList.contains("scroll-hint") && hint.getClientRects().length > 0;
  };
  document.querySelectorAll("article pre > code").forEach((code, i) => {
    if (code.clientWidth === 0 || code.scrollWidth <= code.clientWidth + 1) return;
    const name = `code block ${i + 1} (${code.innerText.trim().replace(/\s+/g, " ").slice(0, 40)})`;
    const wide = `${code.scrollWidth} px wide in ${code.clientWidth} px`;
    if (keyOutputs.some((key) => code.innerText.includes(key))) found.push(`${name}: a key output, ${wide}`);
    else if (!hinted(code.parentElement)) found.push(`${name}: ${wide}, without a scroll hint`);
  });
  const text = document.querySelector("article")?.innerText ?? document.body.innerText;
  for (const m of text.matchAll(/:(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const):`?\S*/g)) {
    found.push(`raw role: ${m[0].slice(0, 60)}`);
  }
  const overflowing = (el) => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  document.querySelectorAll("article table").forEach((table, t) => {
    const box = table.getBoundingClientRect();
    const name = `table ${t + 1} (${(table.rows[0]?.innerText ?? "").replace(/\s+/g, " ").slice(0, 40)})`;
    for (const cell of table.querySelectorAll("td, th")) {
      if (cell.scrollWidth > cell.clientWidth + 1) {
        found.push(`${name}: cell overflows: ${cell.innerText.slice(0, 40)}`);
      }
      if (cell.getBoundingClientRect().right > box.right + 1) {
        found.push(`${name}: cell outside its table: ${cell.innerText.slice(0, 40)}`);
      }
    }
    for (const code of table.querySelectorAll("td code, th code")) {
      if (code.getClientRects().length > 1) found.push(`${name}: code broken across lines: ${code.innerText}`);
    }
    let parent = table.parentElement;
    while (parent && parent.tagName !== "ARTICLE" && !overflowing(parent)) parent = parent.parentElement;
    const column = document.querySelector("article").getBoundingClientRect();
    const scrolls = parent && parent.tagName !== "ARTICLE";
    if (!scrolls && box.right > column.right + 1) found.push(`${name}: clipped, wider than its column`);
    if (scrolls && parent.scrollWidth > parent.clientWidth + 1 && !hinted(parent)) {
      found.push(`${name}: ${parent.scrollWidth} px wide in ${parent.clientWidth} px, without a scroll hint`);
    }
  });
  document.querySelectorAll("article p > img").forEach((img) => {
    if (img.parentElement.childNodes.length === 1) found.push(`screenshot without a full-size link: ${img.src}`);
  });
  return found;
}
"""


def build(folder: Path) -> None:
    """``mkdocs build --strict`` of this checkout into ``folder``."""
    subprocess.run(["mkdocs", "build", "--strict", "--quiet", "--site-dir", str(folder)], cwd=ROOT, check=True)


def pages(site: Path) -> dict[str, Path]:
    """The pages to read: Home, Getting started, one claim's page (the first, else the catalogue), and the pages
    with the widest tables and outputs."""
    claims = sorted(p for p in (site / "claims").glob("*/index.html"))
    found = {"home": site / "index.html", "claim": claims[0] if claims else site / "claims" / "index.html"}
    for name in ("getting-started", "api", "options", "results", "your-model", "verdicts", "gate"):
        found[name] = site / name / "index.html"
    return found


def refusing_remote(requests: list[str]):
    """A route handler that lets ``file:``, ``data:`` and ``blob:`` through and records and refuses the rest."""

    def handle(route) -> None:
        if route.request.url.startswith(LOCAL):
            route.continue_()
        else:
            requests.append(route.request.url)
            route.abort()

    return handle


def check(site: Path, shots: Path) -> dict[str, list[str]]:
    """What each page shows wrong (empty lists: nothing), with a screenshot of each written to ``shots``."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no Chromium: apt-get install -y chromium")
    shots.mkdir(parents=True, exist_ok=True)
    found: dict[str, list[str]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])
        context = browser.new_context(viewport={"width": WIDTH, "height": 1000})
        for name, page_file in pages(site).items():
            if not page_file.exists():
                found[name] = [f"no page {page_file.relative_to(site)}"]
                continue
            requests: list[str] = []
            page = context.new_page()
            page.route("**/*", refusing_remote(requests))
            page.goto(page_file.as_uri(), wait_until="load")
            found[name] = page.evaluate(FINDINGS_JS, KEY_OUTPUTS) + [
                f"request to another host: {url}" for url in requests
            ]
            page.screenshot(path=str(shots / f"{name}.png"))
            page.close()
        browser.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shots", type=Path, help="folder for the screenshots")
    parser.add_argument("--site", type=Path, help="an already built site (default: build one into a temp folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="model-props-site-") as tmp:
        site = args.site or Path(tmp) / "site"
        if args.site is None:
            build(site)
        found = check(site, args.shots)
    for name, problems in found.items():
        print(f"{name}: {len(problems)} found" + "".join(f"\n  {p}" for p in problems))
    print(f"screenshots in {args.shots}")
    sys.exit(1 if any(found.values()) else 0)


if __name__ == "__main__":
    main()
