"""The Allure HTML report, generated offline (``--claims-html``) and opened in headless Chromium.

Playwright drives the system Chromium (Debian ``chromium``): no browser is downloaded, and every request
other than file:, data: and blob: is refused. The test checks that the report shows the paper -> section ->
claim tree, a claim's title with its model and verdict, the model parameter and the figure, and a disagreement
between papers with both claims' parts side by side; it saves screenshots to ``reports/html-report.png`` and
``reports/html-dispute.png``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from model_props.reporting.html import INSTALL_HINT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CLAIMS = "park2022.msa-lowpass"  # the shared run's suite tests (conftest.ALLURE_RUN_SUITE)
DISPUTE = "bai2021.same-recipe-adversarial vs park2022.msa-adversarial-robust"  # a disagreement it shows


def _missing(html: bool) -> str | None:
    if CHROMIUM is None:
        return "no Chromium: apt-get install -y chromium"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return 'no Playwright: pip install -e ".[test]" (it drives the system Chromium; no browser download)'
    if not html:
        return f"no Allure 3: {INSTALL_HINT}"
    return None


def test_html_report_shows_claims_verdicts_models_and_figures(allure_run, request):
    if (reason := _missing(allure_run.html)) is not None:
        pytest.skip(reason)
    from playwright.sync_api import expect, sync_playwright

    index = allure_run.folder / "reports" / "allure-report" / "index.html"
    assert index.is_file(), allure_run.stdout[-3000:]
    assert "googletagmanager" not in index.read_text(encoding="utf-8")
    results = json.loads((index.parent / "test-results.json").read_text())["byId"]
    by_name = {v["name"]: k for k, v in results.items()}
    title = f"{CLAIMS} [vit]: supported (architecture scope)"
    assert title in by_name, sorted(by_name)
    assert f"{CLAIMS} [resnet]: does not apply" in by_name
    shot = Path(request.config.invocation_params.dir) / "reports" / "html-report.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.route(
                "**/*",
                lambda route: (
                    route.continue_() if route.request.url.startswith(("file:", "data:", "blob:")) else route.abort()
                ),
            )
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(index.as_uri())
            page.wait_for_selector("[data-testid=tree-section-title]", timeout=30_000)  # the app booted, read its data
            sections = page.locator("[data-testid=tree-section-title]").all_inner_texts()
            assert any("How Do Vision Transformers Work?" in s for s in sections), sections  # epic = paper
            page.goto(index.as_uri() + "#" + by_name[title])
            expect(page.get_by_test_id("test-result-info-title")).to_have_text(title)
            model = page.get_by_test_id("metadata-item").filter(
                has=page.get_by_test_id("metadata-item-key").get_by_text("model", exact=True)
            )
            expect(model.get_by_test_id("metadata-item-value")).to_have_text("'vit'")  # allure-pytest shows repr()
            figure = page.get_by_test_id("test-result-attachment").filter(has_text="fourier - vit")
            figure.get_by_test_id("test-result-attachment-header").click()
            image = figure.locator("img")
            expect(image).to_be_visible()
            page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=image.element_handle())
            assert image.evaluate("i => i.naturalWidth") >= 400, "the claim's figure is shown"
            page.screenshot(path=str(shot), full_page=True)
            (dispute,) = [k for n, k in by_name.items() if n.startswith(f"{DISPUTE} [vit]: ")]
            page.goto(index.as_uri() + "#" + dispute)
            expect(page.get_by_test_id("test-result-info-title")).to_contain_text(f"{DISPUTE} [vit]")
            shown = ("bai2021.same-recipe-adversarial", "park2022.msa-adversarial-robust", "pgd-drop-equivalent",
                     "Both judged on one statistic:", "The evidence favours:", "Training of the models compared:")  # fmt: skip
            for text in shown:  # the description is shown in a frame of its own
                expect(page.frame_locator("iframe").get_by_text(text, exact=False).first).to_be_visible()
            page.screenshot(path=str(shot.with_name("html-dispute.png")), full_page=True)
            assert not errors, errors
        finally:
            browser.close()
    assert shot.stat().st_size > 20_000 and shot.with_name("html-dispute.png").stat().st_size > 20_000
