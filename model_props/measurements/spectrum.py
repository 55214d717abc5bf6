"""The Hessian spectrum protocol (Park & Kim 2022, Sec. 3.3 / Fig. 4; docs/papers.md#hessian-spectra; docs/measurements.md#definitions).

For ``n_batches`` training mini-batches of ``batch_size`` images, drawn without replacement by a seeded
permutation of the model's own training split and made by the builder its training loop uses
(:meth:`~model_props.training.loss.TrainingLoss.batch`: RandAugment, crop/flip, mixup/cutmix with label
smoothing), the top-``k`` Hessian eigenvalues by magnitude of the training loss (NLL + the
recipe's weight-decay term), model in eval mode. The paper pools the eigenvalues of every batch of the
training set; we pool those of ``n_batches`` batches and bootstrap over batches (the sampling unit):

    NEP = #{lambda < 0} / #lambda            APE = mean{lambda | lambda > 0}

(the negative-eigenvalue proportion and the average positive eigenvalue; docs/papers.md#hessian-spectra).

The ``n_batches`` batches are drawn once, in one seeded order, and their spectra measured in chunks of
:data:`CHUNK` batches, each batch's solver seeded by the sample and the batch, so that the report on the first n
batches is a prefix of the whole one: the looks of a sequential verdict, each chunk its own cache entry
(:mod:`.chunks`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch

from ..data import Split
from ..errors import MeasurementError
from ..training.loss import TrainingLoss, mixing_seed
from .chunks import Chunks, computed, in_chunks
from .functional.spectrum import hessian_operator, lanczos_top_k, power_iteration_top_k, trainable_size
from .inputs import MeasureInput

if TYPE_CHECKING:
    from ..training.recipes import MeasurementSettings

__all__ = [
    "CHUNK", "SpectrumReport", "hessian_spectrum", "spectrum_batches", "spectrum_report",
]  # fmt: skip

CHUNK = 1  # batches a chunk: a Hessian batch is seconds (32 px) to minutes (224 px), so each is kept on its own


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


def _check_fills(split: Split, batch_size: int) -> None:
    if len(split) < batch_size:
        raise MeasurementError(
            f"a Hessian batch of {batch_size} images needs at least that many training images; "
            f"the split has {len(split)}"
        )


def spectrum_batches(
    split: Split, loss: TrainingLoss, n_batches: int, batch_size: int, num_classes: int, seed: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The ``n_batches`` training batches, made as the loop trains on them (:meth:`TrainingLoss.batch`: images in
    [0, 1], class or soft targets), seeded: the order and the crops by ``seed``, batch b's mixing by
    ``mixing_seed(seed, b)``."""
    _check_fills(split, batch_size)
    gen = torch.Generator().manual_seed(seed)
    order = torch.cat(
        [torch.randperm(len(split), generator=gen) for _ in range(-(-n_batches * batch_size // len(split)))]
    )
    batches = []
    for b in range(n_batches):
        idx = order[b * batch_size : (b + 1) * batch_size]
        batches.append(loss.batch(split.images[idx], split.labels[idx], num_classes=num_classes, gen=gen,
                                  seed=mixing_seed(seed, b)))  # fmt: skip
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
    upto: int | None = None,
    chunks: Chunks = computed,
) -> SpectrumReport:
    """Top-``k`` eigenvalues of the training-loss Hessian on each of the first ``upto`` (default: all) of the
    ``n_batches`` seeded training batches, batch by batch through ``chunks``."""
    num_classes = int(getattr(model, "num_classes", 0) or int(split.labels.max()) + 1)
    _check_fills(split, batch_size)  # before any chunk is recalled
    drawn = functools.cache(lambda: spectrum_batches(split, loss, n_batches, batch_size, num_classes, seed))
    dim = trainable_size(model)
    solve = lanczos_top_k if solver == "lanczos" else power_iteration_top_k

    def measure(j: int, batches: Sequence[int]) -> np.ndarray:
        """Per batch: its ``k`` eigenvalues, products, whether converged and seconds, as one row."""
        rows = []
        for b in batches:
            x, target = drawn()[b]
            start = time.perf_counter()
            with hessian_operator(
                model,
                x.to(device),
                target.to(device),
                nll=TrainingLoss.nll,
                weight_decay=loss.weight_decay + loss.shift,
                name=name,
            ) as hvp:
                result = solve(hvp, dim, k, tol=tol, max_iter=max_iter, seed=seed * 1000 + int(b), device=device)
            seconds = time.perf_counter() - start
            rows.append([*result.eigenvalues, result.hvps, result.converged, seconds])
        return np.array(rows, dtype=np.float64)

    n = n_batches if upto is None else min(upto, n_batches)
    label = {"n_batches": n_batches, "batch_size": batch_size, "k": k, "solver": solver, "tol": tol,
             "max_iter": max_iter}  # fmt: skip
    rows = in_chunks(np.arange(n_batches), n, CHUNK, label, measure, chunks)
    return SpectrumReport(
        rows[:, :k], rows[:, k].astype(np.int64), rows[:, k + 1].astype(bool), rows[:, k + 2], batch_size
    )


def spectrum_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str, *,
                    upto: int, chunks: Chunks = computed) -> SpectrumReport:  # fmt: skip
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` under the settings ``m``
    on its first ``upto`` batches (the registry's look at the whole sample of ``hessian_batches``)."""
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
        upto=upto,
        chunks=chunks,
    )
