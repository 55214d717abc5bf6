"""The corruption report: accuracy and NLL under common corruptions (CIFAR-10-C style; Park & Kim 2022,
Fig. 12c); the corruptions themselves are :mod:`model_props.measures.corruptions`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..data import Split
from ..measures.corruptions import CORRUPTIONS, SEVERITIES, corrupt
from .fit import batch_predictions, predictions
from .inputs import MeasureInput

if TYPE_CHECKING:
    from ..training.recipes import MeasurementSettings

__all__ = ["CorruptionReport", "corruption_report", "corruption_kind_report"]


@dataclass
class CorruptionReport:
    """Per image, correctness and NLL on the clean image and under every corruption x severity."""

    correct: np.ndarray  # (N, 1 + C * 5) bool: clean, then corruption-major, severity-minor
    nll: np.ndarray  # (N, 1 + C * 5)
    names: tuple[str, ...]

    def size(self, sampling: str) -> int:
        """Sampling unit: ``images``."""
        return {"images": len(self.correct)}[sampling]

    def mean_accuracy(self, idx: np.ndarray | None = None) -> Any:
        """Mean corruption accuracy over every corruption and severity, on every image, the images ``idx`` (n,), or
        each row of an index matrix (rows, n) -> (rows,)."""
        c = self.correct if idx is None else self.correct[idx]
        return c[..., 1:].mean(axis=(-2, -1))

    def accuracy(self, name: str, severity: int | None = None) -> float:
        i = self.names.index(name)
        cols = slice(1 + SEVERITIES * i, 1 + SEVERITIES * (i + 1))
        acc = self.correct[:, cols].mean(axis=0)
        return float(acc.mean() if severity is None else acc[severity - 1])

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"correct": self.correct, "nll": self.nll, "names": np.array(self.names)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], units: object = None) -> CorruptionReport:
        return cls(arrays["correct"], arrays["nll"], tuple(str(n) for n in arrays["names"]))


@torch.no_grad()
def corruption_report(
    model: torch.nn.Module, test: Split, *, n_images: int, seed: int = 0, batch_size: int = 500, device: str = "cpu"
) -> CorruptionReport:
    """Correctness and NLL of ``model`` on ``n_images`` test images (seeded), clean and corrupted."""
    gen = torch.Generator().manual_seed(seed)
    index = torch.randperm(len(test), generator=gen)[: min(n_images, len(test))]
    clean_correct, clean_nll, _ = predictions(model, test, index, batch_size=batch_size, device=device)
    correct, nll = [clean_correct], [clean_nll]
    for c, name in enumerate(CORRUPTIONS):
        for severity in range(1, SEVERITIES + 1):
            noise_gen = torch.Generator().manual_seed(seed * 1000 + c * 10 + severity)
            cols_c, cols_n = [], []
            for start in range(0, len(index), batch_size):
                x, y = test.batch(index[start : start + batch_size])
                ok, loss, _ = batch_predictions(model, corrupt(x, name, severity, noise_gen), y, device)
                cols_c.append(ok)
                cols_n.append(loss)
            correct.append(torch.cat(cols_c).numpy())
            nll.append(torch.cat(cols_n).double().numpy())
    return CorruptionReport(np.stack(correct, 1), np.stack(nll, 1), tuple(CORRUPTIONS))


def corruption_kind_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str) -> CorruptionReport:
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` under the settings ``m``."""
    return corruption_report(inp.model, inp.test, n_images=m.corruption_images, seed=seed, device=device)
