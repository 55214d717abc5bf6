"""The pytest plugin, driven through pytester: options, parametrization and one-line errors."""

from __future__ import annotations

import json

import pytest

REFERENCES = ["vit", "pit", "swin", "resnet", "alternet"]


@pytest.fixture
def suite(inprocess: pytest.Pytester):
    inprocess.makepyfile(test_models="def test_model(model_name):\n    assert model_name\n")
    return inprocess


def test_collect_shows_the_references_or_the_given_models(suite):
    # fnmatch_lines fails the test unless every pattern matches, in order
    result = suite.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines([f"test_models.py::test_model[[]{n}[]]" for n in REFERENCES] + ["5 tests collected*"])
    result = suite.runpytest("--collect-only", "-q", "--model", "timm:resnet10t", "--model", "mypkg.nets:build")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [f"test_models.py::test_model[[]{n}[]]" for n in ["timm:resnet10t", "mypkg.nets:build"]]
        + ["2 tests collected*"]
    )


def test_options_are_grouped_with_one_prefix(suite):
    result = suite.runpytest("--help")
    result.stdout.fnmatch_lines(
        [
            "model-props: published findings*",
            "*--claims-profile=*",
            "*--claims-cache=DIR*",
            "*--claims-data-root=DIR*",
            "*--claims-device=DEVICE*",
            "*--claims-seed=N*",
            "*--model=SPEC*",
            "*--checkpoint=PATH*",
        ]
    )


def test_claim_test_writes_allure_labels_attachments_and_summary(allure_run):
    """An (untrained) ResNet through ``assert_claim`` (``conftest.UNTRAINED_RESNET_TEST``, in the shared Allure run):
    the Allure result carries paper, section, claim, model, link, figure and numbers, and the session writes the
    summary files. Its claim is inconclusive, which ``--claims-inconclusive report`` reports as its own outcome:
    INCONCLUSIVE in the terminal and its count, ``unknown`` in Allure, a property in JUnit XML, ``outcome`` and
    ``outcomes`` in summary.json, never passed."""
    import re
    import xml.etree.ElementTree as ET

    assert "test_untrained.py::test_resnet_claim INCONCLUSIVE" in allure_run.stdout or (
        "test_untrained.py I" in allure_run.stdout
    ), allure_run.stdout[-3000:]
    summary_line = r"^=+ .*\b\d+ inconclusive\b.* in [\d.]+s.*=+$"  # pytest's closing count line, not the last one
    assert re.search(summary_line, allure_run.stdout, re.MULTILINE), allure_run.stdout[-500:]
    assert "model-props: claim verdicts" in allure_run.stdout
    results = [json.loads(p.read_text()) for p in allure_run.results.glob("*-result.json")]
    (data,) = [r for r in results if r["name"].startswith("park2022.conv-mlp-highpass [untrained-resnet]")]
    assert data["status"] == "unknown" and "INCONCLUSIVE" in data["statusDetails"]["message"], data
    case = next(
        c for c in ET.parse(allure_run.folder / "junit.xml").iter("testcase") if c.get("name") == "test_resnet_claim"
    )
    assert {(p.get("name"), p.get("value")) for p in case.iter("property")} >= {("claim_outcome", "inconclusive")}
    labels = {(d["name"], d["value"]) for d in data["labels"]}
    assert ("epic", "How Do Vision Transformers Work? (ICLR 2022)") in labels
    assert ("story", "park2022.conv-mlp-highpass") in labels
    assert any(name == "feature" and value.startswith("Sec. 3.1") for name, value in labels)
    assert ("severity", "critical") in labels
    assert {"name": "model", "value": "'untrained-resnet'"} in data["parameters"] or {
        "name": "model",
        "value": "untrained-resnet",
    } in data["parameters"]
    assert data["links"][0]["url"] == "https://arxiv.org/abs/2202.06709"
    assert sorted(a["type"] for a in data["attachments"]) == ["application/json", "image/png"]
    summary = json.loads((allure_run.folder / "reports" / "summary.json").read_text())
    assert summary["models"]["untrained-resnet"]["accuracy"] == 0.5
    (record,) = [r for r in summary["results"] if r["model"] == "untrained-resnet"]
    assert record["outcome"] == "inconclusive" and summary["outcomes"]["inconclusive"] >= 1
    assert "every one of its non-subsampling conv or MLP units leaves" in record["parts"][0]["degenerate"]
    assert summary["claim_outcomes"]["passed"] == sum(r["outcome"] == "passed" for r in summary["results"])
    assert [r["model"] for r in summary["results"] if r["claim"] == "park2022.conv-mlp-highpass"] == [
        "untrained-resnet"
    ]


def test_plugin_registers_its_markers(inprocess):
    result = inprocess.runpytest("--markers")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.claim: a test of a published claim*",
            "@pytest.mark.gate: a claim that gates*",
            "@pytest.mark.slow: *",
        ]
    )


def test_pyproject_table_configures_the_session(suite):
    suite.makepyprojecttoml('[tool.model_props]\nmodels = ["timm:resnet10t"]\nprofile = "smoke"\nseed = 3\n')
    result = suite.runpytest("--collect-only", "-q")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["test_models.py::test_model[[]timm:resnet10t[]]", "1 test collected*"])
    result = suite.runpytest("--collect-only", "-q", "--model", "mypkg.nets:build")  # the command line wins
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["test_models.py::test_model[[]mypkg.nets:build[]]", "1 test collected*"])


def test_users_recipes_folder_adds_profiles(suite, tmp_path):
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    (recipes / "mine.toml").write_text(
        '[defaults]\nsteps = 10\n[recipes.vit]\nmodel = "vit"\n[recipes.custom]\nmodel = ""\n'
    )
    result = suite.runpytest("--collect-only", "-q", f"--claims-recipes={recipes}", "--claims-profile=mine")
    result.stdout.fnmatch_lines(["test_models.py::test_model[[]vit[]]", "1 test collected*"])
    result = suite.runpytest("--collect-only", f"--claims-recipes={recipes}", "--claims-profile=huge")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*unknown profile='huge'; valid: 'cpu', 'mine', 'paper', 'smoke' (built-in, and the user's recipes folder*"]
    )


ONE_PASS_ONE_ERROR = """
import pytest

@pytest.fixture
def broken():
    raise RuntimeError("a fixture that cannot be set up")

def test_passes(model_store):
    pass

def test_errors(model_store, broken):
    pass
"""


def test_the_summary_counts_every_outcome_as_pytest_does_with_the_runs_exit_status(inprocess, tmp_path):
    """A run with one pass and one setup error: summary.json and summary.md count the error (it read "1 passed" and
    "failed": 0 before, counting claim records alone) and carry the start, the commit and the exit status 1."""
    inprocess.makepyfile(test_mixed=ONE_PASS_ONE_ERROR)
    result = inprocess.runpytest(f"--claims-cache={tmp_path}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=1)
    summary = json.loads((inprocess.path / "reports" / "summary.json").read_text())
    assert summary["schema_version"] == 4 and summary["run"]["exit_status"] == int(result.ret) == 1
    assert summary["outcomes"] == {"passed": 1, "failed": 0, "errors": 1, "skipped": 0, "xfailed": 0, "xpassed": 0,
                                   "inconclusive": 0}  # fmt: skip
    assert summary["run"]["started"].endswith("+00:00") and "commit" in summary["run"]
    assert "Tests: 1 passed, 1 error (exit status 1)" in (inprocess.path / "reports" / "summary.md").read_text()


def test_a_run_that_records_nothing_replaces_the_previous_summary_and_an_unrelated_one_writes_none(inprocess,
                                                                                                  tmp_path):  # fmt: skip
    """A previous run's summary is never left behind (it said passed and supported after a run that failed before it
    recorded anything); a session that runs no claim test where no summary exists writes none (the plugin is inert)."""
    inprocess.makepyfile(test_plain="def test_fails():\n    assert False\n")
    result = inprocess.runpytest(f"--claims-cache={tmp_path}", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert not (inprocess.path / "reports").exists()
    reports = inprocess.path / "reports"
    reports.mkdir()
    (reports / "summary.json").write_text(json.dumps({"schema_version": 3, "outcomes": {"passed": 30, "failed": 0}}))
    result = inprocess.runpytest(f"--claims-cache={tmp_path}", "-p", "no:cacheprovider")
    summary = json.loads((reports / "summary.json").read_text())
    assert summary["outcomes"]["failed"] == 1 and summary["outcomes"]["passed"] == 0
    assert summary["run"]["exit_status"] == 1 and summary["results"] == []
