"""Adversarial robustness with torchattacks (Park & Kim 2022, Sec. 3.4; docs/papers.md#adversarial-attacks; docs/measurements.md#definitions).

FGSM and PGD (``steps`` steps of size eps/4 from a uniform random start, projected on the L-infinity ball of
radius eps and on [0, 1]) on [0, 1] inputs; the model's normalisation lives inside it, so torchattacks'
``set_normalization_used`` is never called. Robust accuracy is the accuracy on the attacked images.

The test images are taken in one seeded order and attacked in chunks of :data:`CHUNK` images, each eps apart, with
the random starts seeded by (seed, eps, chunk): the report on the first n images is the first n rows of every longer
one, whichever eps set or image count asked for it. So claims 16 and 29 read one measurement (the same images, eps
and starts; 16 the first ``attack_images`` at every eps, 29 every test image at the smallest), a sequential verdict
(:mod:`model_props.verdicts.sequential`) measures look by look, and each chunk is its own cache entry
(:mod:`.chunks`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..data import Split
from ..errors import MeasurementError, NotApplicable
from .chunks import Chunks, computed, in_chunks
from .fit import batch_predictions
from .inputs import MeasureInput

if TYPE_CHECKING:
    from ..training.recipes import MeasurementSettings

__all__ = [
    "CHUNK", "AttackReport", "attack_report", "check_epsilon", "attack_kind_report", "attack_test_report",
]  # fmt: skip

CHUNK = 64  # images a chunk: the 512 images of claim 16 are its 8 looks


def check_epsilon(eps: float) -> float:
    if not 0.0 <= eps <= 1.0:
        raise MeasurementError(
            f"attack eps={eps} is outside [0, 1] (inputs are images in [0, 1]; e.g. 8/255 = {8 / 255:.4f})"
        )
    return eps


@dataclass
class AttackReport:
    """Per image, correctness on the clean image and under FGSM and PGD at each eps."""

    correct: np.ndarray  # (N, 1 + 2E) bool: clean, FGSM at each eps, PGD at each eps
    epsilons: np.ndarray  # (E,)

    def size(self, sampling: str) -> int:
        """Sampling unit: ``images``."""
        return {"images": len(self.correct)}[sampling]

    def _column(self, attack: str, eps: float) -> int:
        hits = np.flatnonzero(np.isclose(self.epsilons, eps))
        if not hits.size:
            measured = ", ".join(f"{e * 255:g}/255" for e in self.epsilons)
            raise NotApplicable(f"not attacked at eps {eps * 255:g}/255 in this profile (measured: {measured})")
        return 1 + int(hits[0]) + (len(self.epsilons) if attack == "pgd" else 0)

    def accuracy(self, attack: str | None = None, eps: float | None = None, idx: np.ndarray | None = None) -> Any:
        """Clean accuracy (``attack=None``), or robust accuracy under ``attack`` ('fgsm' | 'pgd') at ``eps``: on every
        image, on the images ``idx`` (n,), or per row of an index matrix (rows, n) -> (rows,)."""
        c = self.correct if idx is None else self.correct[idx]
        if attack is None:
            column = 0
        elif eps is None:  # what comparing the epsilons with None raised before
            raise TypeError(f"accuracy under attack {attack!r} needs an eps")
        else:
            column = self._column(attack, eps)
        return c[..., column].mean(axis=-1)

    def drop(self, attack: str, eps: float, idx: np.ndarray | None = None) -> Any:
        """Accuracy lost to the attack: clean - robust (0-1 scale)."""
        return self.accuracy(None, None, idx) - self.accuracy(attack, eps, idx)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"correct": self.correct, "epsilons": self.epsilons}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], units: object = None) -> AttackReport:
        return cls(arrays["correct"], arrays["epsilons"])


def _start_seed(seed: int, eps: float, chunk: int) -> int:
    """The seed of PGD's random start on one chunk at one eps (eps in 1/1000 of 1/255, so 1/255 and 2/255 differ)."""
    return int(np.random.SeedSequence([seed, round(eps * 255_000), chunk]).generate_state(1)[0])


def _attack_chunk(model: torch.nn.Module, test: Split, eps: float, pgd_steps: int, seed: int, device: str, name: str,
                  chunk: int, index: torch.Tensor) -> np.ndarray:  # fmt: skip
    """(n, 3) bool: correct on the clean images ``test[index]``, under FGSM and under PGD at ``eps``."""
    import torchattacks

    x, y = test.batch(index)
    columns = [batch_predictions(model, x, y, device)[0]]
    for attack in (torchattacks.FGSM(model, eps=eps),
                   torchattacks.PGD(model, eps=eps, alpha=eps / 4, steps=pgd_steps, random_start=True)):  # fmt: skip
        with torch.random.fork_rng(devices=[torch.device(device)] if device.startswith("cuda") else []):
            torch.manual_seed(_start_seed(seed, eps, chunk))  # PGD's random start (FGSM draws nothing)
            try:
                adv = attack(x.to(device), y.to(device))
            except RuntimeError as exc:
                raise MeasurementError(
                    f"{name}: cannot attack it, its output is not differentiable with respect to its input: "
                    f"{str(exc).splitlines()[0]}"
                ) from exc
        columns.append(batch_predictions(model, adv, y, device)[0])
    return torch.stack(columns, 1).numpy()


def attack_report(
    model: torch.nn.Module,
    test: Split,
    *,
    n_images: int,
    epsilons: tuple[float, ...],
    pgd_steps: int,
    seed: int = 0,
    device: str = "cpu",
    name: str = "model",
    chunks: Chunks = computed,
) -> AttackReport:
    """Clean, FGSM and PGD correctness of ``model`` on the first ``n_images`` test images of a seeded order,
    attacked chunk by chunk (module docstring); ``chunks`` keeps or recalls each chunk (by default none is kept)."""
    for eps in epsilons:
        check_epsilon(eps)
    gen = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(test), generator=gen)
    n = min(n_images, len(test))
    model.eval()
    per_eps = [
        in_chunks(
            order,
            n,
            CHUNK,
            {"eps_255": round(eps * 255, 6), "pgd_steps": pgd_steps},
            functools.partial(_attack_chunk, model, test, eps, pgd_steps, seed, device, name),
            chunks,
        )  # fmt: skip
        for eps in epsilons
    ]
    clean = per_eps[0][:, :1]
    correct = np.concatenate([clean, *(c[:, 1:2] for c in per_eps), *(c[:, 2:3] for c in per_eps)], axis=1)
    return AttackReport(correct, np.array(epsilons, dtype=np.float64))


def attack_kind_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str, *,
                       upto: int, chunks: Chunks = computed) -> AttackReport:  # fmt: skip
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` under the settings ``m``
    on its first ``upto`` images (the registry's look at the whole sample of ``attack_images``)."""
    return attack_report(inp.model, inp.test, n_images=upto, epsilons=m.attack_epsilons,
                         pgd_steps=m.pgd_steps, seed=seed, device=device, name=repr(inp.name), chunks=chunks)  # fmt: skip


def attack_test_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str, *,
                       upto: int, chunks: Chunks = computed) -> AttackReport:  # fmt: skip
    """FGSM and PGD at the profile's smallest eps only, on the first ``upto`` images of the test split (its whole
    sample is every test image: Bai et al.'s comparison, docs/design.md#decision-rules): the same chunks as
    ``attack`` at that eps, continued over the whole split."""
    return attack_report(inp.model, inp.test, n_images=upto, epsilons=(min(m.attack_epsilons),),
                         pgd_steps=m.pgd_steps, seed=seed, device=device, name=repr(inp.name), chunks=chunks)  # fmt: skip
