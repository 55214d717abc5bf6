"""The Hessian spectrum protocol (Park & Kim 2022, Sec. 3.3 / Fig. 4; docs/papers.md#hessian-spectra; docs/measurements.md#definitions).

For ``n_batches`` training mini-batches of ``batch_size`` images, drawn without replacement by a seeded
permutation of the model's own training split and augmented as its recipe trains (crop/flip, mixup/cutmix
with label smoothing), the top-``k`` Hessian eigenvalues by magnitude of the training loss (NLL + the
recipe's weight-decay term), model in eval mode. The paper pools the eigenvalues of every batch of the
training set; we pool those of ``n_batches`` batches and bootstrap over batches (the sampling unit):

    NEP = #{lambda < 0} / #lambda            APE = mean{lambda | lambda > 0}

(the negative-eigenvalue proportion and the average positive eigenvalue; docs/papers.md#hessian-spectra).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch

from ..data import Split
from ..data.augment import crop_flip
from ..errors import MeasurementError
from ..measures.hessian import hessian_operator, lanczos_top_k, power_iteration_top_k, trainable_size
from .inputs import MeasureInput, TrainingLoss

if TYPE_CHECKING:
    from ..training.recipes import MeasurementSettings

__all__ = ["TrainingLoss", "SpectrumReport", "hessian_spectrum", "spectrum_batches", "spectrum_report"]


@dataclass
class SpectrumReport:
    """Top-k eigenvalues per batch (sorted by magnitude), the products each batch took, and timings."""

    eigenvalues: np.ndarray  # (N, k)
    hvps: np.ndarray  # (N,)
    converged: np.ndarray  # (N,) bool
    seconds: np.ndarray  # (N,)
    batch_size: int

    @property
    def n_batches(self) -> int:
        return len(self.eigenvalues)

    def size(self, sampling: str) -> int:
        """Sampling unit: ``batches`` (Hessian mini-batches)."""
        return {"batches": self.n_batches}[sampling]

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {
            "eigenvalues": self.eigenvalues,
            "hvps": self.hvps,
            "converged": self.converged,
            "seconds": self.seconds,
            "batch_size": np.array(self.batch_size),
        }

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], units: object = None) -> SpectrumReport:
        return cls(
            arrays["eigenvalues"], arrays["hvps"], arrays["converged"], arrays["seconds"], int(arrays["batch_size"])
        )

    def pooled(self, batches: np.ndarray | None = None) -> np.ndarray:
        """The top eigenvalues of every batch, or of the batches ``batches`` (n,), pooled into one array; (rows,
        n x k) for an index matrix of batches (rows, n)."""
        if batches is None:
            return self.eigenvalues.ravel()
        chosen = self.eigenvalues[batches]
        return chosen.reshape(*chosen.shape[:-2], -1)


def spectrum_batches(
    split: Split, loss: TrainingLoss, n_batches: int, batch_size: int, num_classes: int, seed: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The ``n_batches`` augmented training batches (images in [0, 1], class or soft targets), seeded."""
    if len(split) < batch_size:
        raise MeasurementError(
            f"a Hessian batch of {batch_size} images needs at least that many training images; "
            f"the split has {len(split)}"
        )
    gen = torch.Generator().manual_seed(seed)
    order = torch.cat(
        [torch.randperm(len(split), generator=gen) for _ in range(-(-n_batches * batch_size // len(split)))]
    )
    batches = []
    mixup = None
    if {"mixup", "cutmix"} & set(loss.augment):
        from timm.data import Mixup

        mixup = Mixup(
            mixup_alpha=loss.mixup_alpha if "mixup" in loss.augment else 0.0,
            cutmix_alpha=loss.cutmix_alpha if "cutmix" in loss.augment else 0.0,
            label_smoothing=loss.label_smoothing,
            num_classes=num_classes,
        )
    for b in range(n_batches):
        idx = order[b * batch_size : (b + 1) * batch_size]
        x, y = split.batch(idx)
        x = crop_flip(x, loss.augment, gen)
        if mixup is not None:
            state = np.random.get_state()  # timm's Mixup draws from numpy's global generator
            np.random.seed(seed * 100_003 + b)
            try:
                x, target = mixup(x, y)
            finally:
                np.random.set_state(state)
        elif loss.label_smoothing:
            target = torch.full((len(y), num_classes), loss.label_smoothing / num_classes)
            target.scatter_(1, y[:, None], 1.0 - loss.label_smoothing + loss.label_smoothing / num_classes)
        else:
            target = y
        batches.append((x, target))
    return batches


def hessian_spectrum(
    model: torch.nn.Module,
    split: Split,
    loss: TrainingLoss,
    *,
    n_batches: int,
    batch_size: int,
    k: int = 5,
    seed: int = 0,
    device: str = "cpu",
    solver: Literal["lanczos", "power"] = "lanczos",
    tol: float = 1e-3,
    max_iter: int = 100,
    name: str = "model",
) -> SpectrumReport:
    """Top-``k`` eigenvalues of the training-loss Hessian on each of ``n_batches`` training batches."""
    num_classes = int(getattr(model, "num_classes", 0) or int(split.labels.max()) + 1)
    batches = spectrum_batches(split, loss, n_batches, batch_size, num_classes, seed)
    dim = trainable_size(model)
    eigen, hvps, converged, seconds = [], [], [], []
    solve = lanczos_top_k if solver == "lanczos" else power_iteration_top_k
    for b, (x, target) in enumerate(batches):
        start = time.perf_counter()
        with hessian_operator(
            model, x.to(device), target.to(device), weight_decay=loss.weight_decay + loss.shift, name=name
        ) as hvp:
            result = solve(hvp, dim, k, tol=tol, max_iter=max_iter, seed=seed * 1000 + b, device=device)
        seconds.append(time.perf_counter() - start)
        eigen.append(result.eigenvalues)
        hvps.append(result.hvps)
        converged.append(result.converged)
    return SpectrumReport(np.array(eigen), np.array(hvps), np.array(converged), np.array(seconds), batch_size)


def spectrum_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str) -> SpectrumReport:
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` under the settings ``m``."""
    return hessian_spectrum(
        inp.model,
        inp.train,
        inp.loss,
        n_batches=m.hessian_batches,
        batch_size=m.hessian_batch_size,
        k=m.hessian_top_k,
        tol=m.hessian_tol,
        seed=seed,
        device=device,
        name=repr(inp.name),
    )
