"""The tiny profile's models as the CUDA layer measures them: seeded and untrained, built on the CPU, and copies of
them on a device; and what a child process that measured one printed before it died (:func:`reason_lines`)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import torch

from model_props.anatomy import anatomy
from model_props.data import ImageDataset, class_balanced_subset
from model_props.errors import ModelPropsError
from model_props.measurements.registry import MeasureInput
from model_props.mutation.mutants import ANATOMY_MUTANTS, INPUT_MUTANTS, MUTANTS, make_mutant
from model_props.store.tested import ModelUnderTest
from model_props.training.loop import build_for, training_split
from model_props.training.loss import TrainingLoss
from model_props.training.profiles import Profile

__all__ = ["LIBRARY", "TEST_FRACTION", "RTOL", "SCALE_ATOL", "FLIP_FRACTION", "EIGEN_RTOL", "tiny_input", "on_device", "reason_lines",
           "assert_close", "mutants_of"]  # fmt: skip

LIBRARY = Path(__file__).parents[1] / "library"  # the folder of tiny.toml, the tiny profile
TEST_FRACTION = 0.05  # of the dead-leaves test split: 100 images, every kind's sample of the tiny profile and more

# How far CUDA may be from the CPU, TF32 off (float32 kernels that sum in another order):
RTOL = 1e-3  # floats: |cuda - cpu| <= RTOL |cpu| + SCALE_ATOL max |cpu|
SCALE_ATOL = 1e-4
FLIP_FRACTION = 0.05  # booleans (a prediction correct or not): a near-tie of two logits may break either way
EIGEN_RTOL = 1e-2  # Hessian eigenvalues, of the largest magnitude: Lanczos stops at a relative residual of 1e-3


def tiny_input(profile: Profile, name: str, data: ImageDataset) -> MeasureInput:
    """The tiny recipe ``name``'s model, initialised with its seed (untrained), on the CPU, as a measurement reads it."""
    recipe = profile.recipe(name)
    torch.manual_seed(recipe.seed)
    model = build_for(recipe, data).eval()
    identity = f"{name}-seed{recipe.seed}"
    test = class_balanced_subset(data.test, TEST_FRACTION, seed=0)
    train = training_split(recipe, data)
    return MeasureInput(name, model, anatomy(model), identity, test, train, TrainingLoss.of(recipe), data.name)


def on_device(inp: MeasureInput, device: str) -> MeasureInput:
    """``inp`` with a copy of its model on ``device`` (the anatomy, the images and the loss are the same)."""
    return MeasureInput(inp.name, copy.deepcopy(inp.model).to(device).eval(), inp.anatomy, inp.identity, inp.test,
                        inp.train, inp.loss, inp.dataset)  # fmt: skip


def assert_close(name: str, cpu: np.ndarray | torch.Tensor, cuda: np.ndarray | torch.Tensor) -> None:
    """``|cuda - cpu| <= RTOL |cpu| + SCALE_ATOL max |cpu|`` wherever the CPU's value is finite, non-finite in the
    same places."""
    a = cpu.detach().cpu().double().numpy() if isinstance(cpu, torch.Tensor) else np.asarray(cpu, dtype=np.float64)
    b = cuda.detach().cpu().double().numpy() if isinstance(cuda, torch.Tensor) else np.asarray(cuda, dtype=np.float64)
    assert a.shape == b.shape, f"{name}: shape {b.shape} on CUDA, {a.shape} on the CPU"
    finite = np.isfinite(a)
    assert np.array_equal(finite, np.isfinite(b)), f"{name}: NaN or inf in other places on CUDA"
    atol = SCALE_ATOL * float(np.abs(a[finite]).max(initial=0.0))
    worst = float(np.max(np.abs(b[finite] - a[finite]) - RTOL * np.abs(a[finite]), initial=0.0))
    assert worst <= atol, f"{name}: off by {worst:.3g} beyond RTOL={RTOL}, more than {atol:.3g}"


def mutants_of(inp: MeasureInput) -> dict[str, ModelUnderTest]:
    """Every mutant that applies to ``inp``'s model (one that changes modules or weights; the loss mutants change
    neither), by mutation."""
    base = ModelUnderTest(inp.name, inp.model, inp.anatomy, {}, None, None, inp.identity, dataset=inp.dataset)
    found = {}
    for mutation in (*MUTANTS, *ANATOMY_MUTANTS, *INPUT_MUTANTS):
        try:
            found[mutation] = make_mutant(base, mutation)
        except (ModelPropsError, AttributeError):  # it does not apply to this architecture (e.g. no patch_embed)
            continue
    return found


def reason_lines(output: str) -> list[str]:
    """A child's output without the Python frames and the extension-module list that a native abort prints after
    its reason (``Fatal Python error: Aborted``, a C++ ``what()``), so that the reason is what is left to read."""
    return [line for line in output.strip().splitlines() if not line.startswith(("  File ", "Extension modules:"))]
