"""The pytest plugin, driven through pytester: options, parametrization and one-line errors."""

from __future__ import annotations

import json

import pytest
import torch

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


def test_unknown_model_is_a_usage_error(suite):
    result = suite.runpytest("--model", "vitt")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*unknown --model 'vitt'; expected a reference name ('alternet', 'pit', 'resnet', 'swin', 'vit'), 'timm:NAME'*'package.module:factory'*"
        ]
    )
    assert "Traceback" not in result.stderr.str()


def test_checkpoints_must_pair_with_models(suite):
    result = suite.runpytest("--model", "timm:resnet10t", "--checkpoint", "a.pt", "--checkpoint", "b.pt")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*got 2 --checkpoint for 1 --model; give one --checkpoint per --model, in order*"])


def test_bad_device_is_a_usage_error(suite):
    result = suite.runpytest("--claims-device", "tpu")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*device='tpu' (--claims-device or [[]tool.model_props[]] device); valid: 'cpu', 'cuda', 'cuda:N', 'mps'*"]
    )


@pytest.mark.parametrize("device", ["cuda", "cuda:7", "mps"])
def test_a_device_this_machine_lacks_is_a_usage_error_in_one_line(suite, device):
    """It printed one torch traceback per model (374 lines for --claims-device cuda on a CPU-only machine)."""
    import torch

    available = {"cuda": torch.cuda.device_count() > 0, "cuda:7": torch.cuda.device_count() > 7,
                 "mps": torch.backends.mps.is_available()}  # fmt: skip
    if available[device]:
        pytest.skip(f"this machine has {device}")
    result = suite.runpytest("--claims-device", device)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    expected = "has no usable MPS device" if device == "mps" else "CUDA device(s)"
    result.stderr.fnmatch_lines([f"*device={device!r} (--claims-device or [[]tool.model_props[]] device): this torch *"
                                 f"{expected}*; use 'cpu'*"])  # fmt: skip
    assert "Traceback" not in result.stderr.str() and len(result.stderr.str().strip().splitlines()) <= 2


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--claims-seed=-1"], "seed=-1 (--claims-seed or [[]tool.model_props[]] seed); valid: 0 or more"),
        (["--claims-train-seed=-1"], "train_seed=-1 (--claims-train-seed or [[]tool.model_props[]] train_seed); valid: 0 or more"),
        (["--claims-img-size=0"], "img_size=0 (--claims-img-size or [[]tool.model_props[]] img_size); valid: 1 or more"),
        (["--claims-cache="], "cache='' is empty (--claims-cache or [[]tool.model_props[]] cache); valid: a folder, or leave the option out"),
        (["--claims-cache=pyproject.toml"], "cache='*pyproject.toml' (--claims-cache or [[]tool.model_props[]] cache) is a file; valid: a folder*"),
    ],
    ids=["seed", "train-seed", "img-size", "empty-cache", "cache-a-file"],
)  # fmt: skip
def test_a_bad_value_is_a_usage_error_in_one_line_before_anything_trains(suite, args, expected):
    """--claims-train-seed=-1 started training, --claims-seed=-1 failed four claims with a numpy traceback, an empty
    --claims-cache made the working folder the cache, --claims-img-size=0 was ignored (issue 61)."""
    suite.makefile(".toml", pyproject="[tool.other]\n")
    result = suite.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{expected}*"])
    assert "Traceback" not in result.stderr.str() and "training" not in result.stdout.str()


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--model", "timm:NOT_A_MODEL"], "unknown timm model 'NOT_A_MODEL'"),
        (["--model", "no_such_package.nets:build"], "--model 'no_such_package.nets:build': cannot import 'build'*"),
        (
            ["--model", "vit", "--checkpoint", "missing.safetensors"],
            "--checkpoint '*missing.safetensors' does not exist",
        ),
    ],
    ids=["unknown-timm-name", "factory-not-importable", "missing-checkpoint"],
)
def test_a_bad_user_model_is_a_usage_error_before_the_references_train(suite, args, expected):
    """On a cold cache these started training the references ("training 3 models, 2 at a time") before they said
    what was wrong (issue 61): every user model is built, and every checkpoint loaded, before anything trains."""
    result = suite.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{expected}*"])
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "training" not in output


def test_a_data_root_no_model_reads_is_said(suite, tmp_path):
    """--claims-data-root with models that read the generated dead leaves was ignored without a word (issue 61)."""
    result = suite.runpytest(f"--claims-data-root={tmp_path}", "--collect-only", "-W", "default")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*model-props: --claims-data-root * is not read: every model of this session reads*"])
    quiet = suite.runpytest("--collect-only", "-W", "default")
    assert "claims-data-root" not in quiet.stdout.str()


def test_an_unreachable_scheduler_is_a_usage_error_even_with_nothing_to_train(suite, monkeypatch):
    """It was ignored when nothing needed training, and fell back to training here after one line when something did
    (issue 61): a scheduler given is reached at session start."""
    import model_props.execution.backends as backends

    monkeypatch.setattr(backends, "CONNECT_TIMEOUT_S", 1)
    result = suite.runpytest("--claims-scheduler", "tcp://127.0.0.1:9", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*cannot reach the Dask scheduler at 'tcp://127.0.0.1:9' within 1 s*"])
    assert "Traceback" not in result.stderr.str()


@pytest.mark.parametrize(
    "table, expected",
    [
        (
            "[tool.model_props.recipes.vit]\nlr = -0.1\n",
            "recipe 'vit' in profile 'smoke': lr=-0.1; valid: a learning rate above 0",
        ),
        (
            "[tool.model_props.recipes.vit]\nmodel = 3\n",
            "recipe 'vit' in profile 'smoke': model=3; valid: a reference's name*",
        ),
    ],
    ids=["negative-lr", "model-not-a-string"],
)
def test_a_bad_recipe_field_is_a_usage_error_in_one_line(suite, table, expected):
    """lr = -0.1 gave an 87-line optimizer traceback (issue 61)."""
    suite.makefile(".toml", pyproject=table)
    result = suite.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{expected}*"])
    assert "Traceback" not in result.stderr.str()


def test_nan_model_fails_in_one_line(inprocess: pytest.Pytester, tmp_path, model_store, user_module):
    pytester = inprocess
    pytester.makepyfile(test_it="def test_model(model_under_test):\n    assert model_under_test\n")
    ckpt = tmp_path / "nan.pt"
    torch.save({"fc.weight": torch.zeros(10, 3), "fc.bias": torch.zeros(10)}, ckpt)
    result = pytester.runpytest_inprocess(
        "--model",
        f"{user_module}:nan",
        "--checkpoint",
        str(ckpt),
        "-k",
        user_module,
        f"--claims-cache={model_store.settings.cache_dir}",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # checked when the session starts, before anything trains
    result.stderr.fnmatch_lines(["*model 'usermodels:nan' output has 20 non-finite values (NaN/inf) out of 20*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_missing_dataset_fails_in_one_line(inprocess: pytest.Pytester, tmp_path):
    pytester = inprocess
    pytester.makepyfile(test_it="def test_data(dataset):\n    assert dataset\n")
    result = pytester.runpytest(
        "--claims-profile", "paper", f"--claims-cache={tmp_path}", f"--claims-data-root={tmp_path / 'nowhere'}"
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*DatasetError: dataset='cifar100' not found under --claims-data-root=*offline*"])
    assert "Traceback" not in result.stdout.str()


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


def test_unknown_table_key_lists_the_valid_ones(suite):
    suite.makepyprojecttoml('[tool.model_props]\nmodles = ["vit"]\n')
    result = suite.runpytest("--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*[[]tool.model_props]: unknown keys [[]'modles']; valid: 'cache', 'checkpoints', 'data_root', 'device',*'models',*"
        ]
    )


def test_table_value_of_the_wrong_type_is_named(suite):
    suite.makepyprojecttoml('[tool.model_props]\nmodels = "vit"\n')
    result = suite.runpytest("--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*models='vit' must be a list (model specs under test)*"])


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
