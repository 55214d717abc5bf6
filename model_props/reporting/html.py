"""The Allure HTML report: one self-contained file generated offline from ``reports/allure-results``.

Allure 3 (the npm package ``allure``, pinned in ``reports/package.json``; install with ``npm ci --prefix
reports``) builds ``reports/allure-report/index.html`` in single-file mode, grouped paper -> section -> claim,
with the seed study's known failures and seed-dependent verdicts in their own categories and a history file
(``reports/allure-history.jsonl``) that accumulates run after run. The configuration is ``allurerc.mjs``
(``reports/`` in the repository, shipped in the package as ``model_props.reports``).

Two fixes are applied to the generated file: allure 3.18 hard-codes a Google Tag Manager snippet (removed:
the report must work offline and phone nowhere), and its single-file app can start before the browser has
parsed the embedded data at the end of the file, then fetches files that single-file mode does not write
(declaring ``window.allureReportData`` in the head makes it wait for the embedded data instead).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from ..errors import ModelPropsError

__all__ = ["ALLURE_VERSION", "INSTALL_HINT", "find_allure", "generate_html"]

ALLURE_VERSION = "3.18.0"
INSTALL_HINT = (
    f"install Node.js 20+ and Allure 3: npm ci --prefix reports (in a checkout of model-props) or "
    f"npm install --prefix reports allure@{ALLURE_VERSION}"
)
_GTAG = re.compile(
    r'\s*<script async src="https://www\.googletagmanager\.com/gtag/js\?id=[^"]*"></script>\s*'
    r"<script>\s*window\.dataLayer.*?</script>",
    re.S,
)
_PRELOAD = "<script>window.allureReportData = window.allureReportData || {};</script>"


def _config() -> Path:
    return Path(str(resources.files("model_props.reports").joinpath("allurerc.mjs")))


def find_allure(reports: Path) -> Path:
    """The Allure 3 command: ``$MODEL_PROPS_ALLURE``, the ``node_modules`` of ``reports`` or of the packaged
    configuration's folder, or ``allure`` on the PATH."""
    candidates = [
        os.environ.get("MODEL_PROPS_ALLURE"),
        reports / "node_modules" / ".bin" / "allure",
        _config().parent / "node_modules" / ".bin" / "allure",
        shutil.which("allure"),
    ]
    for c in candidates:
        if c and Path(c).is_file() and shutil.which("node"):
            return Path(c)
    raise ModelPropsError(
        f"no Allure 3 command found (looked in {reports / 'node_modules'} and on the PATH); {INSTALL_HINT}"
    )


def _harden(index: Path) -> None:
    html = index.read_text(encoding="utf-8")
    html = _GTAG.sub("", html, count=1)
    if "googletagmanager.com" in html:
        raise ModelPropsError(
            f"{index}: could not remove Allure's analytics snippet (has the Allure template changed?)"
        )
    if _PRELOAD not in html:
        html = html.replace("</title>", "</title>\n    " + _PRELOAD, 1)
    index.write_text(html, encoding="utf-8")


def generate_html(results: Path, reports: Path) -> Path:
    """Generate ``reports/allure-report/index.html`` from the Allure ``results`` folder; its path."""
    results, reports = results.resolve(), reports.resolve()
    if not list(results.glob("*-result.json")):
        raise ModelPropsError(f"no Allure results in {str(results)!r}: run pytest first (it writes them there)")
    allure = find_allure(reports)
    output = reports / "allure-report"
    shutil.rmtree(output, ignore_errors=True)  # Allure never removes stale files from its output folder
    proc = subprocess.run(
        [str(allure), "generate", str(results), "--config", str(_config())],
        cwd=reports,
        env={**os.environ, "MODEL_PROPS_REPORTS": str(reports)},
        capture_output=True,
        text=True,
    )
    index = output / "index.html"
    if proc.returncode != 0 or not index.is_file():
        raise ModelPropsError(
            f"allure generate failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()[-500:]}"
        )
    _harden(index)
    return index
