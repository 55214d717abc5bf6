"""Screenshots for the documentation, taken in headless Chromium (Playwright drives the system Chromium; every request
other than file:, data: and blob: is refused, as in ``test_html_report.py``).

    pytest --claims-html                  # or any run that includes claims 27 and 29 on vit
    python docs/screenshots.py reports/allure-report/index.html docs/

writes ``docs/cross-cka.png``: claim 27 on ViT, its verdict and the CKA heatmaps against ResNet, the seed
control and the untrained null; and ``docs/disagreement.png``: Bai et al.'s claim 29 and Park & Kim's claim 16
judged on one interval on ViT.

    mkdocs build                          # the documentation site, into site/
    python docs/screenshots.py site/ docs/

writes ``docs/site-home.png`` (the site's home page) and ``docs/site-claim.png`` (one claim's own page, claim 8's
``claims/park2022.msa-lowpass/``: its paper, rules, verdicts on the references and controls), to show the site
rendered.

    pytest                                          # a full default run: its results in reports/allure-results
    npm ci --prefix reports --no-audit --no-fund    # Allure 3, pinned
    python -c "from pathlib import Path; from model_props.reporting.html import generate_html; \\
        generate_html(Path('reports/allure-results'), Path('/tmp/shots-report'))"
    python docs/screenshots.py --claims /tmp/shots-report/allure-report/index.html docs/claims/img \\
        --commit 4cecab2 --date 2026-11-28 --machine "Intel(R) Xeon(R) Processor, 2 cores"   # that run's

writes, per claim, ``docs/claims/img/<claim id>.png``: the claim's test on the first reference the seed study
evaluates it on (its architecture-scope result where the run has one), cropped to the verdict (title, status and
message) and the result's first figure, each cut 1000 px wide at device scale 1, stacked, as a 256-colour PNG;
``<claim id>-full.png``, the whole result uncropped, where all of them together stay under ``FULL_BUDGET`` bytes;
and ``shots.json``: the run they come from and, per claim, the reference, the result and the figure shown, read by
``docs/claim_pages.py``.
"""

from __future__ import annotations

import argparse
import io
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
    "site-claim.png": ("claims/park2022.msa-lowpass/index.html", ""),
}


CROP = {"x": 200, "width": 1000}  # the result's card (x 240-1160 at a 1400 px viewport) and a margin either side
FULL_BUDGET = 8_000_000  # bytes: the whole results are written where all of them together stay under it
TALL = 6000  # px: a viewport in which the longest result needs no scrolling


def _browser(p, height: int = 1000):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])
    context = browser.new_context(viewport={"width": 1400, "height": height}, device_scale_factor=1)
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:", "blob:")) else r.abort())  # fmt: skip
    return browser, context.new_page()


def site(folder: Path, out: Path) -> None:
    """The built documentation site's home page and one claim's page."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page = _browser(p)
        for name, (path, anchor) in SITE.items():
            page.goto((folder / path).as_uri() + (f"#{anchor}" if anchor else ""))
            page.wait_for_timeout(1000)
            page.screenshot(path=str(out / name))
            print(f"wrote {out / name}")
        browser.close()


def _result(results: dict, claim_id: str, model: str) -> tuple[str, str]:
    """The report's id and title of ``claim_id``'s test on ``model``: its architecture-scope result where the run
    has one (the suite's test), else the first by title (a claim that does not apply there is skipped)."""
    found = sorted((v["name"], k) for k, v in results.items() if v["name"].startswith(f"{claim_id} [{model}]: "))
    if not found:
        sys.exit(f"no result of {claim_id} on {model} in the report")
    title, key = next((f for f in found if f[0].endswith("(architecture scope)")), found[0])
    return key, title


def _box(locator) -> dict[str, float]:
    box = locator.bounding_box()
    assert box is not None, locator
    return box


def _png(image, path: Path) -> int:
    """``image`` saved as a 256-colour PNG (no dithering, so that text stays sharp); its size in bytes."""
    from PIL import Image

    image.convert("RGB").quantize(256, dither=Image.Dither.NONE).save(path, optimize=True)
    return path.stat().st_size


def _claim_shots(page, out: Path, claim_id: str) -> tuple[str | None, int, int]:
    """The open result cropped to its verdict and first figure (``<claim_id>.png``) and whole
    (``<claim_id>-full.png``): the figure's name (None where the result has none) and the two sizes in bytes."""
    from PIL import Image

    def cut(top: float, bottom: float):
        shot = page.screenshot(clip={**CROP, "y": top, "height": bottom - top})
        return Image.open(io.BytesIO(shot))

    figures = page.get_by_test_id("test-result-attachment").filter(has_text="image/png")
    figure = None
    if figures.count():
        header = figures.first.get_by_test_id("test-result-attachment-header")
        figure = header.inner_text().split("\n")[1]  # its number, name, type and size, one a line
        header.click()
        page.wait_for_function(
            "i => i.complete && i.naturalWidth > 0", arg=figures.first.locator("img").element_handle()
        )
    error = page.get_by_test_id("test-result-error")
    verdict = _box(page.get_by_test_id("test-result-info-title"))
    verdict_end = _box(error if error.count() else page.locator("[data-testid^=test-result-status-]").first)
    parts = [cut(verdict["y"] - 16, verdict_end["y"] + verdict_end["height"] + 16)]
    if figure is not None:
        shown = _box(figures.first)
        parts.append(cut(shown["y"] - 8, shown["y"] + shown["height"] + 4))  # not the next attachment
    gap = 12  # px of the page's background between the verdict and the figure: they are not adjacent in the report
    height = sum(p.height for p in parts) + gap * (len(parts) - 1)
    crop = Image.new("RGB", (CROP["width"], height), parts[0].getpixel((0, 0)))
    for i, part in enumerate(parts):
        crop.paste(part, (0, sum(p.height + gap for p in parts[:i])))
    end = max(b["y"] + b["height"] for b in page.locator("[data-testid^=test-result]").evaluate_all(
        "els => els.map(e => e.getBoundingClientRect().toJSON())"))  # fmt: skip
    full = Image.open(io.BytesIO(page.screenshot(clip={"x": 0, "y": 0, "width": 1400, "height": end + 40})))
    return figure, _png(crop, out / f"{claim_id}.png"), _png(full, out / f"{claim_id}-full.png")


def claims(index: Path, out: Path, run: dict[str, str]) -> None:
    """One cropped screenshot per claim (and its whole result) from the report ``index`` of the run ``run``
    (its commit, date and machine), into ``out``, with ``shots.json``."""
    from playwright.sync_api import sync_playwright

    from model_props.claims import list_claims
    from model_props.verdicts.study import load_study

    study = load_study("smoke")
    assert study is not None, "fixtures/smoke-seeds.json is missing"
    results = json.loads((index.parent / "test-results.json").read_text())["byId"]
    out.mkdir(parents=True, exist_ok=True)
    shown: dict[str, dict[str, str | None]] = {}
    sizes: dict[str, tuple[int, int]] = {}
    with sync_playwright() as p:
        browser, page = _browser(p, TALL)
        for claim in list_claims():
            model = study.evaluated_on(claim)[0]
            key, title = _result(results, claim.id, model)
            page.goto(index.as_uri() + "#" + key)
            page.wait_for_selector("[data-testid=test-result-info-title]", timeout=30_000)
            page.wait_for_timeout(500)  # the description's frame
            figure, crop, full = _claim_shots(page, out, claim.id)
            shown[claim.id] = {"reference": model, "result": title, "figure": figure, "full": f"{claim.id}-full.png"}
            sizes[claim.id] = (crop, full)
            print(f"wrote {out / claim.id}.png ({crop / 1000:.0f} kB; whole result {full / 1000:.0f} kB): {title}")
        browser.close()
    if sum(c + f for c, f in sizes.values()) > FULL_BUDGET:  # the crops alone, each linking to itself
        for claim_id, entry in shown.items():
            (out / f"{claim_id}-full.png").unlink()
            entry["full"] = None
    record = {"run": run, "report": "Allure 3 HTML report (docs/screenshots.py --claims)", "claims": shown}
    (out / "shots.json").write_text(json.dumps(record, indent=1) + "\n")
    total = sum(f.stat().st_size for f in out.glob("*.png"))
    print(f"{len(shown)} claims, {len(list(out.glob('*.png')))} images, {total / 1e6:.2f} MB in {out}")


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
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("index", type=Path, help="the report's index.html, or the built site's folder")
    parser.add_argument("out", type=Path, help="the folder to write the screenshots into")
    parser.add_argument("--claims", action="store_true", help="one cropped screenshot per claim, with shots.json")
    parser.add_argument("--commit", help="--claims: the commit of the run the report shows")
    parser.add_argument("--date", help="--claims: the date of that run")
    parser.add_argument("--machine", help="--claims: the machine it ran on")
    args = parser.parse_args()
    if not args.claims:
        main(args.index.resolve(), args.out)
    elif not (args.commit and args.date and args.machine):
        parser.error("--claims needs --commit, --date and --machine: the run the report shows")
    else:
        claims(args.index.resolve(), args.out, {"commit": args.commit, "date": args.date, "machine": args.machine})
