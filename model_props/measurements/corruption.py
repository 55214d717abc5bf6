"""The corruption report: accuracy and NLL under common corruptions (CIFAR-10-C style; Park & Kim 2022,
Fig. 12c); the corruptions themselves are :mod:`model_props.measurements.functional.corruption`.

The test images are taken in one seeded order and measured in chunks of an eighth of the whole sample (125 of the
1,000 corruption images: :func:`~.chunks.chunk_size`, a look's worth), each corruption's random draws seeded by
(sample, corruption, severity, chunk), so that the report on the first n images is a prefix of the whole one: the
looks of a sequential verdict, each chunk its own cache entry (:mod:`.chunks`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..data import Split
from .chunks import Chunks, chunk_size, computed, in_chunks
from .fit import batch_predictions
from .functional.corruption import CORRUPTIONS, SEVERITIES, corrupt
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


def _draws(seed: int, corruption: int, severity: int, chunk: int) -> int:
    """The seed of one chunk's draws for one corruption at one severity (the same for every model: paired)."""
    return int(np.random.SeedSequence([seed, corruption, severity, chunk]).generate_state(1)[0])


@torch.no_grad()
def _corruption_chunk(model: torch.nn.Module, test: Split, seed: int, device: str, chunk: int,
                      index: torch.Tensor) -> np.ndarray:  # fmt: skip
    """(n, 2 (1 + C x S)) float: correctness (0/1), then NLL, on the clean images ``test[index]`` and under every
    corruption and severity."""
    x, y = test.batch(index)
    ok, loss, _ = batch_predictions(model, x, y, device)
    correct, nll = [ok], [loss.double()]
    for c, name in enumerate(CORRUPTIONS):
        for severity in range(1, SEVERITIES + 1):
            noise_gen = torch.Generator().manual_seed(_draws(seed, c, severity, chunk))
            ok, loss, _ = batch_predictions(model, corrupt(x, name, severity, noise_gen), y, device)
            correct.append(ok)
            nll.append(loss.double())
    return torch.cat([torch.stack(correct, 1).double(), torch.stack(nll, 1)], 1).numpy()


def corruption_report(model: torch.nn.Module, test: Split, *, n_images: int, sample: int | None = None, seed: int = 0,
                      device: str = "cpu", chunks: Chunks = computed) -> CorruptionReport:  # fmt: skip
    """Correctness and NLL of ``model`` on the first ``n_images`` of a seeded order of a ``sample`` of test images
    (default ``n_images``), clean and corrupted, chunk by chunk (module docstring); ``chunks`` keeps or recalls each
    chunk (by default none is kept)."""
    order = torch.randperm(len(test), generator=torch.Generator().manual_seed(seed))
    n = min(n_images, len(test))
    model.eval()
    rows = in_chunks(order, n, chunk_size(min(sample or n, len(test))), {"corruptions": list(CORRUPTIONS)},
                     functools.partial(_corruption_chunk, model, test, seed, device), chunks)  # fmt: skip
    columns = rows.shape[1] // 2
    return CorruptionReport(rows[:, :columns] > 0.5, rows[:, columns:], tuple(CORRUPTIONS))


def corruption_kind_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str, *,
                           upto: int, chunks: Chunks = computed) -> CorruptionReport:  # fmt: skip
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` on its first ``upto``
    images (the registry's look at the whole sample of ``corruption_images``)."""
    return corruption_report(inp.model, inp.test, n_images=upto, sample=m.corruption_images, seed=seed, device=device,
                             chunks=chunks)  # fmt: skip
