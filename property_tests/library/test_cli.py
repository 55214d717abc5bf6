"""The ``model-props`` command."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from model_props.cli import main


def test_recipes_lists_the_profile(capsys):
    assert main(["recipes"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out] == [
        "vit",
        "pit",
        "swin",
        "resnet",
        "alternet",
        "custom",
        "vit_gap",
        "vit_1head",
        "vit_small",
        "vit_p8",
        "vit_noaug",
        "resnet_smooth",
        "vit_quarter",
        "vit_local3",
        "vit_local5",
        "resnet_msa",
        "alternet_early_msa",
    ]
    local = next(line for line in out if line.startswith("vit_local5 "))
    assert "model_props.zoo.local_vit:build_local_vit" in local and "lr 0.001" in local


def test_anatomy_prints_units(capsys, model_store):
    assert main(["anatomy", "alternet", "--cache", str(model_store.settings.cache_dir)]) == 0
    out = capsys.readouterr().out
    assert "traits ['conv', 'local_msa', 'multi_stage']" in out
    assert "msa       stage 3 depth 1.00" in out


@pytest.mark.bad_input
@pytest.mark.parametrize("spec, message", [("nope", "unknown --model 'nope'"),
                                           ("timm:NOT_A_MODEL", "unknown timm model 'NOT_A_MODEL'")])  # fmt: skip
def test_bad_model_is_one_line_and_exit_2_before_any_estimate(capsys, model_store, spec, message):
    """An unknown timm name announced "about 9 min" of training before it was checked (issue 61)."""
    assert main(["train", "--model", spec, "--cache", str(model_store.settings.cache_dir)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"model-props: error: {message}") and captured.err.count("\n") == 1
    assert "about" not in captured.out + captured.err and "training" not in captured.out + captured.err


@pytest.fixture
def tiny(tmp_path, fresh_cache) -> tuple[Path, Path]:
    """(a recipes folder with the tests' tiny profile: a ViT and a ResNet reference, a cache without models)."""
    folder = tmp_path / "recipes"
    folder.mkdir()
    (folder / "tiny.toml").write_text((Path(__file__).parent / "tiny.toml").read_text())
    return folder, fresh_cache("cache")


class Started(Exception):
    """The executor would start training now: the tests stop there, and read what was said before it."""


@pytest.fixture
def executor_started(monkeypatch) -> dict:
    """The keyword arguments a session starts its executor with, filled in when it does; starting it raises
    :class:`Started`."""
    import model_props.execution as execution

    started: dict = {}

    def start(**kwargs):
        started.update(kwargs)
        raise Started

    monkeypatch.setattr(execution, "executor", start)
    return started


def test_train_says_how_long_it_will_take_before_it_trains_two_at_a_time(capsys, executor_started, tiny):
    folder, cache = tiny
    with pytest.raises(Started):
        main(["train", "--profile", "tiny", f"--recipes={folder}", f"--cache={cache}", "--workers", "2"])
    err = capsys.readouterr().err
    said = (r"model-props: training 2 models, 2 at a time, about \d+ (s|min) on this machine: "
            r"(\w+) \(final\), (\w+) \(final\)\n")  # fmt: skip
    assert (match := re.fullmatch(said, err)) and {match[2], match[3]} == {"vit", "resnet"}, err


def test_the_training_estimate_hands_each_run_to_the_first_free_worker(monkeypatch, tiny):
    """Step times measured on all cores of 30 s (the ViT's whole run) and 20 s (the ResNet's): a worker with half
    the cores takes twice as long, and a run trained to its warm-up checkpoint only its warm-up steps (4 of 16)."""
    import model_props.session.pretraining as pretraining
    from model_props.config.settings import Settings
    from model_props.session.pretraining import estimated_seconds
    from model_props.store.model_store import ModelStore
    from model_props.training.profiles import RecipeSource

    folder, cache = tiny
    store = ModelStore(Settings(profile="tiny", recipes=RecipeSource(folder), cache_dir=cache))
    measured = {"vit": 30.0, "resnet": 20.0}
    monkeypatch.setattr(pretraining, "estimate_training_seconds", lambda r, data, device: (measured[r.name], 16))
    vit, resnet = store.recipe("vit"), store.recipe("resnet")
    final = {"vit": "final", "resnet": "final"}
    assert estimated_seconds(store, [vit, resnet], final, workers=2) == 2 * 30.0
    third = estimated_seconds(store, [vit, resnet, vit], final, workers=2)
    assert third == 2 * (20.0 + 30.0)  # the third run goes to the worker that finished the ResNet
    assert estimated_seconds(store, [vit, resnet], {"vit": "final", "resnet": "warmup"}, workers=1) == 30.0 + 20.0 / 4


@pytest.mark.parametrize(("device", "ahead"), [("cpu", 2), ("cuda", 2), ("cuda:1", 2), ("mps", 0)])
def test_the_models_to_train_go_to_workers_that_share_the_device(capsys, executor_started, tiny, device, ahead):
    """Two models to train go to two local workers on the CPU and on a CUDA device (several processes keep a GPU
    busy that one tiny model leaves idle: issue 47), and train in the session on another device. On a GPU the
    workers' share of it is not modelled, so no duration is promised there."""
    from model_props.config.options import OPTIONS
    from model_props.config.settings import Settings
    from model_props.session.pretraining import CUDA_WORKERS, pretrain
    from model_props.store.model_store import ModelStore
    from model_props.training.profiles import RecipeSource

    folder, cache = tiny
    store = ModelStore(Settings(profile="tiny", recipes=RecipeSource(folder), cache_dir=cache, device=device))
    if not ahead:
        assert pretrain(store, ["vit", "resnet"], estimate=True) == [] and not executor_started
        return
    with pytest.raises(Started):
        pretrain(store, ["vit", "resnet"], estimate=True)
    assert executor_started["workers"] == ahead and executor_started["device"] == device
    said = capsys.readouterr().err
    assert "training 2 models, 2 at a time" in said and ("about" in said) == (device == "cpu"), said
    help_text = next(o for o in OPTIONS if o.name == "workers").help
    assert f"{CUDA_WORKERS} sharing a CUDA device" in help_text


def test_a_gpu_is_shared_by_a_few_workers_and_the_cpu_by_one_per_core(monkeypatch):
    import os

    from model_props.session.pretraining import CUDA_WORKERS, default_workers

    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert (default_workers("cpu"), default_workers("cuda"), default_workers("cuda:3"), default_workers("mps")) == (
        16, CUDA_WORKERS, CUDA_WORKERS, 1)  # fmt: skip
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert default_workers("cuda") == 2  # never more workers than cores
