"""Training, attacking, the Hessian and the anatomy on CUDA (``pytest -m cuda``; skipped without a CUDA device).

A training step's loss and gradients, a PGD attack, a Lanczos spectrum and every unit's captured state agree with the
CPU within the tolerances of tiny_models.py (TF32 off, conftest.py); the anatomy of a model on CUDA, traced on the
CPU by the session's helper, equals the CPU model's and leaves the model on CUDA.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from tiny_models import (  # this folder is on sys.path (prepend mode)
    EIGEN_RTOL,
    FLIP_FRACTION,
    LIBRARY,
    assert_close,
    mutants_of,
    on_device,
    tiny_input,
)

from model_props.anatomy import anatomy, capture, device_of
from model_props.measurements.functional.spectrum import hessian_operator, lanczos_top_k, trainable_size
from model_props.store.tested import anatomy_on_cpu
from model_props.training.loop import build_for, train
from model_props.training.loss import TrainingLoss
from model_props.zoo import build_model
from model_props.zoo.wrapper import Classifier

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the cuda layer compares CUDA with CPU"),
]

MOVED_PIXELS = 0.01  # PGD: at most this fraction of pixels apart by more than PIXEL_ATOL (a gradient sign that flips)
PIXEL_ATOL = 1e-5
CAPTURED = 2  # images a 224-px anatomy test captures


def _tiny(profile, dataset, name: str) -> torch.nn.Module:
    recipe = profile.recipe(name)
    torch.manual_seed(recipe.seed)
    return build_for(recipe, dataset)


@pytest.mark.parametrize("name", ["vit", "resnet"])
def test_a_training_step_on_cuda_agrees_with_the_cpu(tiny, dataset, name):
    model = _tiny(tiny, dataset, name).train()
    models = {"cpu": model, "cuda": copy.deepcopy(model).cuda()}
    x, y = dataset.train.batch(torch.arange(tiny.recipe(name).batch_size))
    losses = {}
    for device, net in models.items():
        loss = F.cross_entropy(net(x.to(device)), y.to(device))
        loss.backward()
        losses[device] = loss.detach()
    assert_close("loss", losses["cpu"], losses["cuda"])
    for (key, p), q in zip(models["cpu"].named_parameters(), models["cuda"].parameters(), strict=True):
        assert q.device.type == "cuda"
        assert_close(f"gradient of {key}", p.grad, q.grad)


def test_the_training_loop_runs_on_cuda_and_keeps_its_checkpoints_on_the_cpu(tiny, dataset):
    run = train(tiny.recipe("vit"), dataset, device="cuda", progress=False, until="warmup")
    assert device_of(run.model).type == "cuda"
    state = run.states["warmup"]
    assert all(t.device.type == "cpu" and bool(torch.isfinite(t.float()).all()) for t in state.values())
    assert np.isfinite(run.metrics["warmup"]["test_nll"])


def test_a_pgd_attack_on_cuda_agrees_with_the_cpu(tiny, dataset):
    import torchattacks

    model = _tiny(tiny, dataset, "vit").eval()
    x, y = dataset.test.batch(torch.arange(32))
    adversarial, correct = {}, {}
    for device, net in {"cpu": model, "cuda": copy.deepcopy(model).cuda()}.items():
        attack = torchattacks.PGD(net, eps=8 / 255, alpha=2 / 255, steps=5, random_start=False)  # nothing drawn
        adv = attack(x.to(device), y.to(device))
        adversarial[device] = adv.cpu()
        with torch.no_grad():
            correct[device] = (net(adv).argmax(1) == y.to(device)).cpu()
    moved = float(((adversarial["cpu"] - adversarial["cuda"]).abs() > PIXEL_ATOL).float().mean())
    assert moved <= MOVED_PIXELS, f"{moved:.4f} of the pixels differ"
    assert float((correct["cpu"] != correct["cuda"]).float().mean()) <= FLIP_FRACTION


@pytest.mark.parametrize("name", ["vit", "resnet"])
def test_a_lanczos_spectrum_on_cuda_agrees_with_the_cpu(tiny, dataset, name):
    model = _tiny(tiny, dataset, name).eval()
    x, y = dataset.train.batch(torch.arange(16))
    top = {}
    for device, net in {"cpu": model, "cuda": copy.deepcopy(model).cuda()}.items():
        with hessian_operator(net, x.to(device), y.to(device), nll=TrainingLoss.nll) as hvp:
            top[device] = lanczos_top_k(hvp, trainable_size(net), 5, tol=1e-3, max_iter=100, seed=0, device=device)
    cpu, cuda = top["cpu"].eigenvalues, top["cuda"].eigenvalues
    assert top["cuda"].converged
    assert np.all(np.abs(cuda - cpu) <= EIGEN_RTOL * np.abs(cpu).max()), f"{cuda} on CUDA, {cpu} on the CPU"


def _references(model_store, dataset) -> dict[str, torch.nn.Module]:
    return {name: build_for(model_store.profile.recipe(name), dataset) for name in model_store.profile.references}


def _torchvision_resnet18() -> Classifier:
    import torchvision

    return Classifier(torchvision.models.resnet18(weights=None), name="torchvision:resnet18", num_classes=1000,
                      img_size=224)  # fmt: skip


BUILDS = {
    "timm:vit_tiny_patch16_224": lambda: build_model("timm:vit_tiny_patch16_224", num_classes=1000, img_size=224),
    "torchvision:resnet18": _torchvision_resnet18,
}


def _check_anatomy_on_cuda(model: torch.nn.Module) -> None:
    model = model.eval()
    on_cuda = copy.deepcopy(model).cuda()
    expected = anatomy(model)
    assert anatomy_on_cpu(on_cuda) == expected
    assert all(t.device.type == "cuda" for t in (*on_cuda.parameters(), *on_cuda.buffers()))
    x = torch.rand(CAPTURED, 3, model.img_size, model.img_size, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        cpu, cuda = capture(model, expected, x), capture(on_cuda, expected, x.cuda())
    for unit in expected.spatial_units:
        assert_close(unit.name, cpu.states[unit.name], cuda.states[unit.name])
    assert_close("logits", cpu.logits, cuda.logits)


def test_the_references_anatomies_on_cuda_equal_the_cpus(model_store, dataset):
    for model in _references(model_store, dataset).values():
        _check_anatomy_on_cuda(model)


@pytest.mark.parametrize("spec", list(BUILDS))
def test_a_timm_and_a_torchvision_model_map_on_cuda(spec):
    _check_anatomy_on_cuda(BUILDS[spec]())


@pytest.mark.parametrize("name", ["vit", "resnet"])
def test_every_mutant_of_a_model_on_cuda_is_on_cuda_and_runs_there(tiny, dataset, name):
    cpu = tiny_input(tiny, name, dataset)
    mutants = mutants_of(on_device(cpu, "cuda"))
    assert mutants.keys() == mutants_of(cpu).keys()
    x = dataset.test.batch(torch.arange(4))[0].cuda()
    for mutation, mutant in mutants.items():
        assert {t.device.type for t in (*mutant.model.parameters(), *mutant.model.buffers())} == {"cuda"}, mutation
        assert mutant.anatomy == mutants_of(cpu)[mutation].anatomy, mutation
        with torch.no_grad():
            assert mutant.model(x).device.type == "cuda", mutation


def _trained_ahead_on(device: str, cache_dir) -> dict[str, dict]:
    """Train the tiny profile's two references ahead on ``device`` as a cold session does (two local Dask workers
    sharing it: :func:`~model_props.session.pretraining.pretrain`); each model entry's producer, by recipe."""
    import json
    from dataclasses import replace

    from model_props.config.settings import Settings
    from model_props.session.pretraining import pretrain
    from model_props.store.model_store import ModelStore
    from model_props.training.profiles import RecipeSource

    store = ModelStore(replace(Settings(profile="tiny", recipes=RecipeSource(LIBRARY)), cache_dir=cache_dir,
                               device=device, workers=2))  # fmt: skip
    assert sorted(pretrain(store, ["vit", "resnet"])) == ["resnet", "vit"]
    return {
        path.parent.name.split("-")[0]: json.loads(path.read_text())["produced_by"]
        for path in sorted((cache_dir / "models").glob("tiny/*/manifest.json"))
    }


def test_two_models_train_at_once_in_two_workers_that_share_the_gpu(tmp_path):
    """Issue 47: the references train several at a time on one GPU (each worker queues its own kernels)."""
    import os

    producers = _trained_ahead_on("cuda", tmp_path)
    assert sorted(producers) == ["resnet", "vit"]
    assert all(p["device"] == "cuda" for p in producers.values()), producers
    pids = {p["pid"] for p in producers.values()}
    assert len(pids) == 2 and os.getpid() not in pids, f"trained in {pids}, not two workers"


def test_randaugment_on_cuda_draws_and_applies_what_it_does_on_the_cpu(dataset):
    """The draws come from a CPU generator, so the same images get the same operations on either device; the
    operations themselves may round a pixel apart (interpolation on another device)."""
    from model_props.data.augment import randaugment

    images = dataset.train.images[:64]
    cpu = randaugment(images, torch.Generator().manual_seed(3))
    cuda = randaugment(images.cuda(), torch.Generator().manual_seed(3))
    assert cuda.device.type == "cuda"
    moved = float(((cpu.int() - cuda.cpu().int()).abs() > 1).float().mean())
    assert moved <= MOVED_PIXELS, f"{moved:.4f} of the pixels differ by more than 1"
