"""Fit: how well a model fits its test and training data (Park & Kim 2022, Fig. 1b; docs/papers.md#accuracy-and-calibration).

Per test image: correctness, NLL and max-softmax confidence (for accuracy, test error, NLL and ECE); per
image of a fixed subset of the model's own training split, without augmentation: NLL and correctness (the
training NLL that tells underfitting from overfitting). Images are the sampling unit of each set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F

from ..data import Split
from ..zoo.registry import check_finite
from .functional.fit import expected_calibration_error
from .inputs import MeasureInput

if TYPE_CHECKING:
    from ..training.recipes import MeasurementSettings

__all__ = ["FitReport", "fit_report", "predictions", "batch_predictions", "fit_kind_report"]


@dataclass
class FitReport:
    test_correct: np.ndarray  # (N,) bool
    test_nll: np.ndarray  # (N,)
    test_confidence: np.ndarray  # (N,)
    train_correct: np.ndarray  # (M,) bool
    train_nll: np.ndarray  # (M,)

    def size(self, sampling: str) -> int:
        """Sampling units: ``images`` (test) and ``train_images``."""
        return {"images": len(self.test_correct), "train_images": len(self.train_correct)}[sampling]

    def to_arrays(self) -> dict[str, np.ndarray]:
        return dict(vars(self))

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], units: object = None) -> FitReport:
        return cls(
            **{k: arrays[k] for k in ("test_correct", "test_nll", "test_confidence", "train_correct", "train_nll")}
        )

    # Each statistic is over every image, the images ``idx`` (n,), or each row of an index matrix (rows, n).
    def accuracy(self, idx: np.ndarray | None = None) -> Any:
        return self.test_correct[_all(idx)].mean(axis=-1)

    def nll(self, idx: np.ndarray | None = None) -> Any:
        return self.test_nll[_all(idx)].mean(axis=-1)

    def ece(self, idx: np.ndarray | None = None) -> Any:
        rows = _all(idx)
        return expected_calibration_error(self.test_confidence[rows], self.test_correct[rows])

    def train_nll_mean(self, idx: np.ndarray | None = None) -> Any:
        return self.train_nll[_all(idx)].mean(axis=-1)


def _all(idx: np.ndarray | None) -> np.ndarray | slice:
    return slice(None) if idx is None else idx


@torch.no_grad()
def batch_predictions(
    model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, device: str = "cpu"
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(correct, nll, confidence) per image of one batch of [0, 1] images, model in eval mode."""
    model.eval()
    logits = model(x.to(device)).float()
    check_finite(logits, f"model {getattr(model, 'name', '?')!r} logits")
    y = y.to(device)
    log_p = F.log_softmax(logits, dim=1)
    return (logits.argmax(1) == y).cpu(), -log_p.gather(1, y[:, None])[:, 0].cpu(), log_p.exp().max(1).values.cpu()


def predictions(
    model: torch.nn.Module, split: Split, index: torch.Tensor, *, batch_size: int = 500, device: str = "cpu"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(correct, nll, confidence) per image of ``split[index]``, model in eval mode."""
    parts = [
        batch_predictions(model, *split.batch(index[s : s + batch_size]), device)
        for s in range(0, len(index), batch_size)
    ]
    correct, nll, conf = (torch.cat(t) for t in zip(*parts))
    return correct.numpy(), nll.double().numpy(), conf.double().numpy()


def fit_report(
    model: torch.nn.Module, test: Split, train: Split, *, n_images: int, seed: int = 0, device: str = "cpu"
) -> FitReport:
    """Predictions on ``n_images`` test images and on as many (at most) images of the training split, each
    chosen by a permutation seeded with ``seed``."""
    gen = torch.Generator().manual_seed(seed)
    test_idx = torch.randperm(len(test), generator=gen)[: min(n_images, len(test))]
    train_idx = torch.randperm(len(train), generator=gen)[: min(n_images, len(train))]
    tc, tn, tconf = predictions(model, test, test_idx, device=device)
    rc, rn, _ = predictions(model, train, train_idx, device=device)
    return FitReport(tc, tn, tconf, rc, rn)


def fit_kind_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str) -> FitReport:
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` under the settings ``m``."""
    return fit_report(inp.model, inp.test, inp.train, n_images=m.fit_images, seed=seed, device=device)
