"""The bad-input layer (``pytest -m bad_input``): every bad option, ``[tool.model_props]`` value, recipe field, user
model, checkpoint file, device, cache and scheduler a user has given us gets one line that names what is wrong and
what is valid, exit status 4 (pytest's usage error) before the first test, and nothing is trained.

Each case runs a nested session on a cold cache whose training raises, with a test that needs a trained model; it
checks the exit status, that the error is the only line on stderr, that no traceback was printed and that the
cache holds no model. The cases come from issue 61, where 6 printed tracebacks, 6 went silently wrong and 7 started
training first. Other files mark their own bad-input tests ``bad_input`` (gate tables, checkpoint scopes,
pretrained folders, a read-only cache), so the layer is this marker, not this file alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn

pytestmark = pytest.mark.bad_input

NEEDS_A_TRAINED_MODEL = "def test_model(model_under_test):\n    assert model_under_test\n"
SAVE_WEIGHTS = "torch.save(model.state_dict(), PATH) or safetensors' save_file(model.state_dict(), PATH)"


@pytest.fixture
def bad(inprocess: pytest.Pytester, fresh_cache, monkeypatch):
    """``bad(*args)``: a nested session on a cold cache where training raises, run with ``args``; the result, once
    its output holds no traceback and its cache no model. The session's folder holds ``weights-folder/`` (a folder)
    and ``module.pt`` (a whole pickled ``nn.Module``)."""
    from model_props.training import checkpoints

    cache = fresh_cache("cache")

    def refuse(*args, **kwargs):
        raise AssertionError("a model was trained on bad input")

    monkeypatch.setattr(checkpoints, "train", refuse)
    inprocess.makepyfile(test_models=NEEDS_A_TRAINED_MODEL)
    (inprocess.path / "weights-folder").mkdir()
    torch.save(nn.Linear(3, 2), inprocess.path / "module.pt")

    def run(*args: str) -> pytest.RunResult:
        result = inprocess.runpytest(f"--claims-cache={cache}", "-p", "no:cacheprovider", *args)
        output = result.stdout.str() + result.stderr.str()
        assert "Traceback" not in output and "a model was trained" not in output, output[-3000:]
        assert not list((cache / "models").glob("*/*")), "a model entry was written on bad input"
        return result

    return run


def one_line_usage_error(result: pytest.RunResult, expected: str) -> None:
    """Exit status 4, and the error as the only line on stderr, matching the fnmatch pattern ``expected``."""
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-2000:]
    lines = [line for line in result.stderr.str().splitlines() if line.strip()]
    assert len(lines) == 1, lines
    result.stderr.fnmatch_lines([f"ERROR: *{expected}*"])


OPTIONS = {
    "unknown-reference": (["--model", "vitt"], "unknown --model 'vitt'; expected a reference name ('alternet', 'pit', "
                          "'resnet', 'swin', 'vit'), 'timm:NAME'*'package.module:factory'"),
    "unpaired-checkpoints": (["--model", "timm:resnet10t", "--checkpoint", "a.pt", "--checkpoint", "b.pt"],
                             "got 2 --checkpoint for 1 --model; give one --checkpoint per --model, in order"),
    "unknown-device": (["--claims-device", "tpu"],
                       "device='tpu' (--claims-device or [[]tool.model_props[]] device); valid: 'cpu', 'cuda', 'cuda:N', 'mps'"),
    "negative-seed": (["--claims-seed=-1"], "seed=-1 (--claims-seed or [[]tool.model_props[]] seed); valid: 0 or more"),
    "negative-train-seed": (["--claims-train-seed=-1"],
                            "train_seed=-1 (--claims-train-seed or [[]tool.model_props[]] train_seed); valid: 0 or more"),
    "zero-img-size": (["--claims-img-size=0"],
                      "img_size=0 (--claims-img-size or [[]tool.model_props[]] img_size); valid: 1 or more"),
    "negative-img-size-user-model": (["--model", "timm:resnet10t", "--claims-img-size=-32"],
                                     "img_size=-32 (--claims-img-size or [[]tool.model_props[]] img_size); valid: 1 or more"),
    "empty-cache": (["--claims-cache="], "cache='' is empty (--claims-cache or [[]tool.model_props[]] cache); valid: a "
                    "folder, or leave the option out"),
    "cache-a-file": (["--claims-cache=test_models.py"],
                     "cache='*test_models.py' (--claims-cache or [[]tool.model_props[]] cache) is a file; valid: a folder"),
    "unknown-timm-name": (["--model", "timm:NOT_A_MODEL"], "unknown timm model 'NOT_A_MODEL'"),
    "factory-not-importable": (["--model", "no_such_package.nets:build"],
                               "--model 'no_such_package.nets:build': cannot import 'build'"),
    "missing-checkpoint": (["--model", "vit", "--checkpoint", "missing.safetensors"],
                           "--checkpoint '*missing.safetensors' does not exist"),
    "checkpoint-a-folder": (["--model", "vit", "--checkpoint", "weights-folder"],
                            f"--checkpoint '*weights-folder' is a folder; give the weights file, saved with {SAVE_WEIGHTS}"),
    "checkpoint-a-pickled-module": (["--model", "vit", "--checkpoint", "module.pt"],
                                    "--checkpoint '*module.pt' holds pickled Python objects (a whole nn.Module?), which "
                                    f"are not loaded because unpickling runs code; save the weights with {SAVE_WEIGHTS}"),
}  # fmt: skip


@pytest.mark.parametrize("args, expected", OPTIONS.values(), ids=OPTIONS.keys())
def test_a_bad_option_is_one_line_before_anything_trains(bad, args, expected):
    """Before issue 61: --claims-train-seed=-1 and an unknown timm name started training, --claims-seed=-1 failed four
    claims with a numpy traceback, an empty --claims-cache made the working folder the cache, --claims-img-size=0 was
    ignored, a folder was "does not exist", and a pickled module got torch's allow-list advice three times."""
    one_line_usage_error(bad(*args), expected)


TABLES = {
    "unknown-key": ('[tool.model_props]\nmodles = ["vit"]\n', "[[]tool.model_props]: unknown keys [[]'modles']; valid: "
                    "'cache', 'checkpoints', 'data_root', 'device',*'models',"),
    "wrong-type": ('[tool.model_props]\nmodels = "vit"\n', "models='vit' must be a list (model specs under test)"),
    "negative-lr": ("[tool.model_props.recipes.vit]\nlr = -0.1\n",
                    "recipe 'vit' in profile 'smoke': lr=-0.1; valid: a learning rate above 0"),
    "model-not-a-string": ("[tool.model_props.recipes.vit]\nmodel = 3\n",
                           "recipe 'vit' in profile 'smoke': model=3; valid: a reference's name"),
    "recipe-of-no-profile": ("[tool.model_props.recipes.mynet]\nsteps = 10\n",
                             "recipe overrides name [[]'mynet'[]], not recipes of profile 'smoke'; valid: 'alternet',"),
}  # fmt: skip


@pytest.mark.parametrize("table, expected", TABLES.values(), ids=TABLES.keys())
def test_a_bad_table_value_is_one_line_before_anything_trains(bad, inprocess, table, expected):
    """lr = -0.1 gave an 87-line optimizer traceback, a recipe without ``model`` leaked a ``Recipe.__init__`` error."""
    inprocess.makepyprojecttoml(table)
    one_line_usage_error(bad(), expected)


def test_a_recipe_without_a_model_is_one_line_before_anything_trains(bad, tmp_path):
    """A recipe of the user's recipes folder without ``model`` leaked ``Recipe.__init__() missing 1 required
    positional argument``."""
    (tmp_path / "mine.toml").write_text("[defaults]\nsteps = 10\n[recipes.mynet]\nsteps = 5\n")
    one_line_usage_error(bad(f"--claims-recipes={tmp_path}", "--claims-profile=mine"),
                         "recipe 'mynet' in profile 'mine' names no model; valid: model = a reference ('alternet', "
                         "'pit', 'resnet', 'swin', 'vit'), 'timm:NAME' or 'package.module:factory', or extends = a recipe")  # fmt: skip


@pytest.mark.parametrize("device", ["cuda", "cuda:7", "mps"])
def test_a_device_this_machine_lacks_is_one_line(bad, device):
    """It printed one torch traceback per model (374 lines for --claims-device cuda on a CPU-only machine)."""
    available = {"cuda": torch.cuda.device_count() > 0, "cuda:7": torch.cuda.device_count() > 7,
                 "mps": torch.backends.mps.is_available()}  # fmt: skip
    if available[device]:
        pytest.skip(f"this machine has {device}")
    lacks = "has no usable MPS device" if device == "mps" else "CUDA device(s)"
    one_line_usage_error(bad("--claims-device", device), f"device={device!r} (--claims-device or [[]tool.model_props[]] "
                         f"device): this torch *{lacks}*; use 'cpu'")  # fmt: skip


def test_an_unreachable_scheduler_is_one_line_even_with_nothing_to_train(bad, monkeypatch):
    """It was ignored when nothing needed training, and fell back to training here after one line when something did:
    a scheduler given is reached at session start."""
    import model_props.execution.backends as backends

    monkeypatch.setattr(backends, "CONNECT_TIMEOUT_S", 1)
    one_line_usage_error(bad("--claims-scheduler", "tcp://127.0.0.1:9", "--collect-only"),
                         "cannot reach the Dask scheduler at 'tcp://127.0.0.1:9' within 1 s")  # fmt: skip


def test_a_model_with_non_finite_outputs_is_one_line(bad, tmp_path, user_module):
    ckpt = tmp_path / "nan.pt"
    torch.save({"fc.weight": torch.zeros(10, 3), "fc.bias": torch.zeros(10)}, ckpt)
    result = bad("--model", f"{user_module}:nan", "--checkpoint", str(ckpt))
    one_line_usage_error(result, "model 'usermodels:nan' output has 20 non-finite values (NaN/inf) out of 20")


def test_a_missing_dataset_is_one_line_per_test(bad, inprocess):
    """A setup error a whole session shares (here the paper profile's CIFAR-100, offline) was printed three times per
    test, as torchvision's cause, our error and pytest's failure: now once, without its chain."""
    inprocess.makepyfile(test_models="def test_a(dataset):\n    pass\ndef test_b(dataset):\n    pass\n")
    result = bad("--claims-profile", "paper", f"--claims-data-root={Path(inprocess.path) / 'nowhere'}")
    result.assert_outcomes(errors=2)
    said = [line for line in result.stdout.lines if "DatasetError" in line]
    assert len(said) == 4, said  # per test: its error section's one line, and the short summary's
    assert sum(line.startswith("DatasetError: dataset='cifar100' not found under") for line in said) == 2, said
    assert "The above exception" not in result.stdout.str()


def test_a_data_root_no_model_reads_is_said(bad, tmp_path):
    """--claims-data-root with models that read the generated dead leaves was ignored without a word."""
    result = bad(f"--claims-data-root={tmp_path}", "--collect-only", "-W", "default")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*model-props: --claims-data-root * is not read: every model of this session reads*"])
    assert "claims-data-root" not in bad("--collect-only", "-W", "default").stdout.str()
