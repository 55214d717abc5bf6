"""The documentation site, built (``mkdocs build --strict``) and read in headless Chromium by ``docs/check_site.py``.

The check opens Home, one claim's page, the API, options and results pages and finds raw Sphinx roles, overflowing
or clipped tables, code broken across lines in a table, screenshots without a full-size link and requests to another
host (see its docstring). Playwright drives the system Chromium, as in ``test_html_report.py``; without Chromium,
Playwright or mkdocs the tests skip with the install command. The screenshots go to ``tmp_path``.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _missing() -> str | None:
    if CHROMIUM is None:
        return "no Chromium: apt-get install -y chromium"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return 'no Playwright: pip install -e ".[test]" (it drives the system Chromium; no browser download)'
    if shutil.which("mkdocs") is None:
        return "no mkdocs: pip install -r docs/requirements.txt"
    return None


@pytest.fixture(scope="module")
def check_site():
    if (reason := _missing()) is not None:
        pytest.skip(reason)
    spec = importlib.util.spec_from_file_location("check_site", DOCS / "check_site.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_built_site_reads_as_a_user_would_see_it(check_site, tmp_path):
    site = tmp_path / "site"
    check_site.build(site)
    found = check_site.check(site, tmp_path / "shots")
    assert set(found) == {
        "home",
        "getting-started",
        "claim",
        "api",
        "options",
        "results",
        "your-model",
        "verdicts",
        "gate",
    }
    assert check_site.pages(site)["claim"].parent.parent == site / "claims", "a claim's own page, not the catalogue"
    assert {name: problems for name, problems in found.items() if problems} == {}
    assert all((tmp_path / "shots" / f"{name}.png").stat().st_size > 10_000 for name in found)


def test_the_check_finds_a_raw_role_a_clipped_table_wide_outputs_and_a_missing_page(check_site, tmp_path):
    wide = "<table><tr>" + f"<td><code>{'x' * 80}</code></td>" * 20 + "</tr></table>"  # unbreakable, 20 x 80 chars
    scrolls = '<pre style="width: 600px"><code style="display: block; overflow-x: auto">{}</code></pre>'
    output = scrolls.format("y " * 10 + "y" * 400)  # wider than its box, with no hint above it
    hinted = '<div class="scroll-hint">scroll</div>' + scrolls.format("z" * 400)
    key = scrolls.format("== model-props: claim verdicts == " + "v" * 400)  # a key output must fit, hint or not
    page = f"<html><body><article><p>See :class:`Claim`.</p>{wide}{output}{hinted}{key}</article></body></html>"
    (tmp_path / "index.html").write_text(page)
    found = check_site.check(tmp_path, tmp_path / "shots")
    assert any(p.startswith("raw role: :class:`Claim`") for p in found["home"]), found["home"]
    assert any("clipped, wider than its column" in p for p in found["home"]), found["home"]
    assert any(p.startswith("code block 1 (y y y") and p.endswith("without a scroll hint") for p in found["home"])
    assert not any(p.startswith("code block 2") for p in found["home"]), "a hinted wide block is fine"
    assert any(p.startswith("code block 3 (== model-props: claim verdicts") and "a key output" in p
               for p in found["home"]), found["home"]  # fmt: skip
    assert found["api"] == ["no page api/index.html"]
