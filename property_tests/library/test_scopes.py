"""What a verdict is about: a user's model given several checkpoints (its training seeds) is judged at
architecture scope, one checkpoint at checkpoint scope; requests that cannot be met are one-line errors."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import save_file

CLAIM = "park2022.multistage-block-cka"


@pytest.fixture
def seeds(tmp_path, model_store):
    """Three checkpoints of the reference ResNet (this machine's weights, slightly perturbed per 'seed')."""
    state = model_store.get("resnet").model.net.state_dict()
    folder = tmp_path / "runs"
    folder.mkdir()
    for seed in range(3):
        gen = torch.Generator().manual_seed(seed)
        noisy = {k: (v + 1e-3 * torch.randn(v.shape, generator=gen) if v.is_floating_point() else v).contiguous()
                 for k, v in state.items()}  # fmt: skip
        save_file(noisy, str(folder / f"seed{seed}.safetensors"))
    return folder


def _run(pytester, model_store, *args):
    # a basename of its own: the in-process run must not collide with property_tests/claims/test_suite.py
    pytester.makepyfile(test_scoped_claims="from model_props.suite.test_claims import *\n")
    return pytester.runpytest(f"--claims-cache={model_store.settings.cache_dir}", "-p", "no:cacheprovider", *args)


def test_three_checkpoints_of_a_model_get_an_architecture_verdict(inprocess, model_store, seeds):
    result = _run(inprocess, model_store, "--model", "resnet", f"--checkpoint={seeds}/seed*.safetensors", "-k", CLAIM)
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 1, result.stdout.str()
    (record,) = json.loads((inprocess.path / "reports" / "summary.json").read_text())["results"]
    assert record["scope"] == "architecture" and record["k"] == 3
    part = next(p for p in record["parts"] if p["part"] == "block-structure")
    assert part["method"] == "t over seeds" and len(part["per_seed"]["resnet"]) == 3
    assert record["expectation"] is None  # the study speaks for the references' own training, not for these weights


def test_one_checkpoint_gets_a_verdict_about_those_weights(inprocess, model_store, seeds):
    _run(inprocess, model_store, "--model", "resnet", f"--checkpoint={seeds}/seed0.safetensors", "-k", CLAIM)
    (record,) = json.loads((inprocess.path / "reports" / "summary.json").read_text())["results"]
    assert record["scope"] == "checkpoint" and record["k"] is None
    assert "about these weights" in record["about"]


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("pattern", "scope", "message"),
    [
        ("seed[01].safetensors", "auto", "*resnet: an architecture verdict needs at least 3 checkpoints*got 2*"),
        ("seed0.safetensors", "architecture", "*resnet: an architecture verdict needs at least 3 checkpoints*got 1*"),
        ("none*.safetensors", "auto", "*checkpoint pattern '*none*.safetensors' of resnet matches no file*"),
    ],
)
def test_a_scope_that_cannot_be_met_is_a_usage_error(inprocess, model_store, seeds, pattern, scope, message):
    result = _run(
        inprocess, model_store, "--model", "resnet", f"--checkpoint={seeds}/{pattern}", f"--claims-scope={scope}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert "Traceback" not in result.stderr.str()


@pytest.mark.bad_input
def test_a_seed_of_another_architecture_is_named(inprocess, model_store, seeds):
    save_file(dict(model_store.get("vit").model.net.state_dict()), str(seeds / "seed2.safetensors"))
    result = _run(inprocess, model_store, "--model", "resnet", f"--checkpoint={seeds}/seed*.safetensors", "-k", CLAIM)
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # every checkpoint is loaded before anything trains (issue 61)
    result.stderr.fnmatch_lines(["*--checkpoint '*seed2.safetensors' does not fit 'resnet'*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


def test_a_checkpoint_has_no_warm_up_weights_to_read(inprocess, model_store, tmp_path):
    path = tmp_path / "vit.safetensors"
    save_file(dict(model_store.get("vit").model.net.state_dict()), str(path))
    _run(inprocess, model_store, "--model", "vit", f"--checkpoint={path}", "-k", "park2022.msa-flattens-loss", "-rs")
    (record,) = json.loads((inprocess.path / "reports" / "summary.json").read_text())["results"]
    assert record["verdict"] == "skipped" and "needs the end-of-warm-up weights of vit" in record["reason"]
