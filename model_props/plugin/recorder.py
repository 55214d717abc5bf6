"""The session's recorder: claim records and model facts collected from every test report (also under
pytest-xdist), written to ``reports/summary.{json,md}`` with pytest's own count of every outcome, and the verdict
table in the terminal."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from ..errors import ModelPropsError
from . import state

__all__ = ["Recorder", "OUTCOME_KEYS"]

# summary.json's outcome names -> the categories of pytest's terminal reporter (``"error"``: a setup or teardown
# failure; ``"inconclusive"``: this plugin's own, ``hooks.pytest_report_teststatus``)
OUTCOME_KEYS = {"passed": "passed", "failed": "failed", "errors": "error", "skipped": "skipped", "xfailed": "xfailed",
                "xpassed": "xpassed", "inconclusive": "inconclusive"}  # fmt: skip


class Recorder:
    """Collects claim records and model facts; writes ``reports/summary.{json,md}`` and the verdict table.

    Records travel in ``report.user_properties``, so with pytest-xdist they reach the controller, which is
    the only process that writes the summary. The summary is written by every session whose tests use the plugin's
    fixtures (all of which rest on ``model_store``) or that records anything, and by every session that finds one
    there already (so that a run with nothing to record, or one that errored, never leaves the previous run's summary
    behind); a session that does neither stays inert (a user's own ``claim`` marker does not make it use the plugin).
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.records: list[dict] = []
        self.models: dict[str, dict] = {}
        self.gate: list[dict] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props: dict[str, Any] = dict(report.user_properties)  # the records this plugin put there
        if report.when == "call" and "gate_record" in props:
            self.gate.append(props["gate_record"])
        record = props.get("claim_record")
        if record is None or (report.when != "call" and not report.skipped):
            return
        record = dict(record)
        record["outcome"] = report.outcome
        if report.skipped and hasattr(report, "wasxfail"):  # an expected failure that failed
            record["measured_verdict"] = record["verdict"]
            record["verdict"] = record["outcome"] = "xfailed"
            record["reason"] = f"expected not to hold at this scale: {report.wasxfail}\n{record['reason']}"
        elif report.passed and props.get("claim_outcome") == "inconclusive":
            record["outcome"] = "inconclusive"
        self.records.append(record)
        self.models.update(props.get("model_info", {}))

    @property
    def directory(self) -> Path:
        """``reports/`` under the directory pytest was invoked from, like ``--alluredir=reports/...``."""
        return Path(self.config.invocation_params.dir) / "reports"

    def _outcomes(self) -> dict[str, int]:
        """pytest's own count of this session's outcomes (its terminal reporter's, the closing line's numbers)."""
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        stats = getattr(reporter, "stats", {})
        return {name: sum(1 for r in stats.get(key, ()) if getattr(r, "count_towards_summary", True))
                for name, key in OUTCOME_KEYS.items()}  # fmt: skip

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if hasattr(self.config, "workerinput"):
            return
        used = any("model_store" in getattr(item, "fixturenames", ()) for item in session.items)
        if not (self.records or self.gate or used or (self.directory / "summary.json").exists()):
            return
        from ..provenance import commit, provenance
        from ..reporting.summary import write_summary

        settings = state.settings(self.config)
        run = {"started": self.started, "commit": commit(Path(self.config.invocation_params.dir)),
               "exit_status": int(exitstatus)}  # fmt: skip
        found = write_summary(
            self.directory,
            profile=settings.profile,
            seed=settings.seed,
            train_seed=settings.train_seed,
            models=self.models,
            results=self.records,
            provenance=provenance(settings.device),
            gate=self.gate,
            gated=state.gate(self.config).active,
            outcomes=self._outcomes(),
            run=run,
        )
        results = getattr(self.config.option, "allure_report_dir", None)
        if results and found:  # allure-pytest writes this session's results there
            from ..reporting.disputes import write_allure_disputes

            write_allure_disputes(Path(self.config.invocation_params.dir) / results, found)

    def generate_html(self) -> None:
        """Build the HTML report from this session's Allure results (``--claims-html``)."""
        from ..reporting.html import generate_html

        results = getattr(self.config.option, "allure_report_dir", None)
        if not results:
            return
        try:
            index = generate_html(Path(results), self.directory)
        except ModelPropsError as exc:
            print(f"\nmodel-props: no HTML report: {exc}")
            return
        print(f"\nmodel-props: HTML report {index}")

    def pytest_terminal_summary(self, terminalreporter) -> None:
        tr = terminalreporter
        if self.records:
            from ..reporting.summary import verdict_table

            tr.section("model-props: claim verdicts (decisive statistic)")
            for line in verdict_table(sorted(self.records, key=lambda r: (r["claim"], r["model"]))):
                tr.write_line(line)
            tr.write_line(f"written to {self.directory / 'summary.json'} and summary.md")
        if self.gate:
            tr.section("model-props: release gate tolerances")
            for g in self.gate:
                tr.write_line(("PASS " if g["passed"] else "FAIL ") + g["message"])
        if self.models:
            tr.section("model-props: models under test")
            tr.write_line(f"{'model':24s} {'params':>9s} {'test acc':>9s}  checkpoint sha256")
            for name, m in self.models.items():
                tr.write_line(
                    f"{name:24s} {m['parameters']:9d} {m['accuracy']:9.3f}  {str(m['checkpoint_sha256'])[:16]}"
                )
