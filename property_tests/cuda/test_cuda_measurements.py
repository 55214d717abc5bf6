"""Every measurement kind on CUDA agrees with the CPU (``pytest -m cuda``; skipped without a CUDA device).

Each kind measures the tiny profile's seeded, untrained ViT (every kind; the ResNet too for the unit, fit, lesion
and spectrum kinds, whose convolution paths differ) once on the CPU and once on CUDA, TF32 off (conftest.py). The
images, noise, corruptions, masks and batches are drawn on the CPU by seeded generators, so both devices read the
same inputs; what may differ is float32 rounding (summation order of the kernels), decided by these tolerances:

- floats: ``|cuda - cpu| <= RTOL |cpu| + SCALE_ATOL max |cpu|`` elementwise (tiny_models.py; NaN where the CPU has NaN);
- booleans (a prediction correct or not): at most ``FLIP_FRACTION`` of the entries differ (a near-tie of two
  logits can break either way), ``PGD_FLIP_FRACTION`` for the PGD column, whose random start torchattacks draws
  from the device's own generator (docs/gpu.md, known CUDA limits);
- Hessian eigenvalues: within ``EIGEN_RTOL`` of the batch's largest magnitude (Lanczos stops at a relative
  residual of ``hessian_tol``, 1e-3, with float32 products), the products counted within ``HVP_SLACK``;
- integers and strings: equal. Wall-clock seconds are not compared.

The spectrum kind runs in a child process (:func:`in_child`): on an H200 (torch 2.11, cuDNN 9.19) the ResNet's
training-loss Hessian aborted the process in its first backward pass (docs/gpu.md, known CUDA limits), and a native
abort must fail its own test, not end the session.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import numpy as np
import pytest
import torch
from tiny_models import (  # this folder is on sys.path (pytest's prepend mode)
    EIGEN_RTOL,
    FLIP_FRACTION,
    assert_close,
    on_device,
    reason_lines,
    tiny_input,
)

from model_props.measurements.registry import REPORT_KINDS, measure

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the cuda layer compares CUDA with CPU"),
]

PGD_FLIP_FRACTION = 0.125  # 2 of the tiny profile's 16 attacked images
HVP_SLACK = 2
PGD_COLUMN = 2  # AttackReport.correct: clean, FGSM, PGD per eps
NOT_COMPARED = {"seconds"}
PAIRS = {"vit": "resnet", "resnet": "vit"}
CHILD = "MODEL_PROPS_CUDA_CHILD"  # set in the child process that runs one isolated case
ISOLATED = {"spectrum"}  # kinds measured in a child process (module docstring)
CASES = [("vit", kind) for kind in REPORT_KINDS] + [("resnet", k) for k in ("units", "fit", "lesion", "spectrum")]


def agree(key: str, cpu: np.ndarray, cuda: np.ndarray, kind: str) -> None:
    """Assert that one array of a report agrees across devices within the module's tolerances."""
    assert cpu.shape == cuda.shape, f"{key}: shape {cuda.shape} on CUDA, {cpu.shape} on the CPU"
    if cpu.dtype == bool:
        differ = cpu != cuda
        if kind.startswith("attack"):  # the PGD column on its own tolerance
            pgd = float(differ[:, PGD_COLUMN].mean())
            assert pgd <= PGD_FLIP_FRACTION, (
                f"{key}: {pgd:.3f} of the PGD entries differ, more than {PGD_FLIP_FRACTION}"
            )
            differ = np.delete(differ, PGD_COLUMN, axis=1)
        flips = float(differ.mean())
        assert flips <= FLIP_FRACTION, f"{key}: {flips:.3f} of the entries differ, more than {FLIP_FRACTION}"
    elif key == "eigenvalues":
        scale = np.abs(cpu).max(axis=-1, keepdims=True)
        assert np.all(np.abs(cuda - cpu) <= EIGEN_RTOL * scale), f"{key}: {cuda} on CUDA, {cpu} on the CPU"
    elif key == "hvps":
        assert np.all(np.abs(cuda - cpu) <= HVP_SLACK), f"{key}: {cuda} on CUDA, {cpu} on the CPU"
    elif np.issubdtype(cpu.dtype, np.floating):
        assert_close(key, cpu, cuda)
    else:
        assert np.array_equal(cpu, cuda), f"{key}: {cuda} on CUDA, {cpu} on the CPU"


def in_child(request: pytest.FixtureRequest, tmp_path) -> None:
    """Run this test again in a child pytest and fail with its output when it fails or is killed by a signal."""
    command = [sys.executable, "-m", "pytest", request.node.nodeid, "-q", "-p", "no:cacheprovider",
               f"--alluredir={tmp_path / 'allure'}"]  # fmt: skip
    proc = subprocess.run(command, cwd=request.config.rootpath, env={**os.environ, CHILD: "1"}, capture_output=True,
                          text=True)  # fmt: skip
    if proc.returncode != 0:
        how = f"killed by {signal.Signals(-proc.returncode).name}" if proc.returncode < 0 else f"exit {proc.returncode}"
        tail = "\n".join(reason_lines(proc.stdout + proc.stderr)[-40:])
        pytest.fail(f"in a child process: {how}\n{tail}", pytrace=False)


@pytest.mark.parametrize(("model", "kind"), CASES, ids=[f"{m}-{k}" for m, k in CASES])
def test_a_kind_measured_on_cuda_agrees_with_the_cpu(tiny, dataset, model, kind, request, tmp_path):
    if kind in ISOLATED and not os.environ.get(CHILD):
        in_child(request, tmp_path)
        return
    inp = tiny_input(tiny, model, dataset)
    other = tiny_input(tiny, PAIRS[model], dataset) if REPORT_KINDS[kind].pair else None
    settings = tiny.measurement
    on_cpu = measure(kind, inp, settings, seed=0, device="cpu", other=other).to_arrays()
    cuda_other = on_device(other, "cuda") if other is not None else None
    on_cuda = measure(kind, on_device(inp, "cuda"), settings, seed=0, device="cuda", other=cuda_other).to_arrays()
    assert on_cpu.keys() == on_cuda.keys()
    for key in sorted(on_cpu.keys() - NOT_COMPARED):
        agree(key, np.asarray(on_cpu[key]), np.asarray(on_cuda[key]), kind)
