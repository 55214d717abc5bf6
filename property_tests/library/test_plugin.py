"""The pytest plugin, driven through pytester: options, parametrization and one-line errors."""
from __future__ import annotations

import textwrap

import pytest
import torch

REFERENCES = ["vit", "pit", "swin", "resnet", "alternet"]


@pytest.fixture
def suite(pytester: pytest.Pytester, tmp_path_factory):
    pytester.makepyfile(test_models="def test_model(model_name):\n    assert model_name\n")
    return pytester


def test_collect_shows_references_and_user_models(suite):
    result = suite.runpytest("--collect-only", "-q", "--model", "timm:resnet10t", "--model", "mypkg.nets:build")
    result.assert_outcomes()
    result.stdout.fnmatch_lines([f"test_models.py::test_model[[]{n}[]]" for n in REFERENCES + ["timm:resnet10t", "mypkg.nets:build"]])


def test_options_are_grouped_with_one_prefix(suite):
    result = suite.runpytest("--help")
    result.stdout.fnmatch_lines(["model-props: published findings*", "*--claims-profile=*", "*--claims-cache=DIR*",
                                 "*--claims-data-root=DIR*", "*--claims-device=DEVICE*", "*--claims-seed=N*",
                                 "*--model=SPEC*", "*--checkpoint=PATH*"])


def test_unknown_model_is_a_usage_error(suite):
    result = suite.runpytest("--model", "vitt")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown --model 'vitt'; expected a reference name ('alternet', 'pit', 'resnet', 'swin', 'vit'), 'timm:NAME'*'package.module:factory'*"])
    assert "Traceback" not in result.stderr.str()


def test_checkpoints_must_pair_with_models(suite):
    result = suite.runpytest("--model", "timm:resnet10t", "--checkpoint", "a.pt", "--checkpoint", "b.pt")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*got 2 --checkpoint for 1 --model; give one --checkpoint per --model, in order*"])


def test_bad_device_is_a_usage_error(suite):
    result = suite.runpytest("--claims-device", "tpu")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--claims-device='tpu'; valid: 'cpu', 'cuda', 'cuda:N', 'mps'*"])


def test_nan_model_fails_in_one_line(pytester: pytest.Pytester, tmp_path, model_store):
    pytester.makepyfile(nanmodels=textwrap.dedent("""
        from torch import nn

        class NaNNet(nn.Module):
            def __init__(self, num_classes=10):
                super().__init__()
                self.fc = nn.Linear(3, num_classes)
            def forward(self, x):
                return self.fc(x.mean(dim=(2, 3))) * float("nan")

        def build(num_classes=10):
            return NaNNet(num_classes)
    """))
    pytester.makepyfile(test_it="def test_model(model_under_test):\n    assert model_under_test\n")
    ckpt = tmp_path / "nan.pt"
    torch.save({"fc.weight": torch.zeros(10, 3), "fc.bias": torch.zeros(10)}, ckpt)
    pytester.syspathinsert()
    result = pytester.runpytest("--model", "nanmodels:build", "--checkpoint", str(ckpt), "-k", "nanmodels",
                                "--claims-cache", str(model_store.settings.cache_dir))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ModelOutputError: model 'nanmodels:build' output has 20 non-finite values (NaN/inf) out of 20*"])
    assert "Traceback" not in result.stdout.str()


def test_missing_dataset_fails_in_one_line(pytester: pytest.Pytester, tmp_path):
    pytester.makepyfile(test_it="def test_data(dataset):\n    assert dataset\n")
    result = pytester.runpytest("--claims-profile", "paper", "--claims-cache", str(tmp_path),
                                "--claims-data-root", str(tmp_path / "nowhere"))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*DatasetError: dataset='cifar100' not found under --claims-data-root=*offline*"])
    assert "Traceback" not in result.stdout.str()
