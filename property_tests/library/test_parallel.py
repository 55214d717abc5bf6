"""``pytest -n 2`` gives the verdicts and numbers of a serial run, both measuring afresh over one model cache."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

KEPT = ("passed", "failed", "skipped", "xfailed", "xpassed", "errors")  # xdist reports no deselected count


def records(folder: Path) -> dict:
    """The records of the run's summary.json by (claim, model)."""
    data = json.loads((folder / "reports" / "summary.json").read_text())
    return {(r["claim"], r["model"]): r for r in data["results"]}


def test_two_workers_give_the_serial_verdicts_and_numbers(inprocess: pytest.Pytester, model_store, xdist_run,
                                                          parallel_options):  # fmt: skip
    serial_run = inprocess.runpytest_inprocess(*parallel_options(inprocess.path, model_store.settings.cache_dir))
    assert serial_run.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), serial_run.stdout.str()[-3000:]
    run, folder = xdist_run  # the same options with -n 2 --dist loadgroup, in a subprocess started at session start
    assert run.returncode in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), (run.stdout + run.stderr)[-3000:]
    outcomes = serial_run.parseoutcomes()
    outcomes_n2 = pytest.RunResult.parse_summary_nouns(run.stdout.splitlines())
    assert {k: outcomes.get(k, 0) for k in KEPT} == {k: outcomes_n2.get(k, 0) for k in KEPT}
    serial, parallel = records(inprocess.path), records(folder)
    assert serial.keys() == parallel.keys() and len(serial) == 6
    assert all(s["scope"] == "checkpoint" for s in serial.values() if s["verdict"] != "skipped")
    assert sum(s["value"] is not None for s in serial.values()) >= 4
    for key, s in serial.items():
        p = parallel[key]
        assert (s["verdict"], s.get("measured_verdict")) == (p["verdict"], p.get("measured_verdict")), key
        for a, b in zip([s["value"], *(s["interval"] or [])], [p["value"], *(p["interval"] or [])]):
            assert (a is None and b is None) or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9), (key, a, b)
