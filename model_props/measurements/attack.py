"""Adversarial robustness with torchattacks (Park & Kim 2022, Sec. 3.4; docs/papers.md#adversarial-attacks; docs/measurements.md#definitions).

FGSM and PGD (``steps`` steps of size eps/4 from a uniform random start, projected on the L-infinity ball of
radius eps and on [0, 1]) on [0, 1] inputs; the model's normalisation lives inside it, so torchattacks'
``set_normalization_used`` is never called. Robust accuracy is the accuracy on the attacked images; the
random starts are seeded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ..data import Split
from ..errors import MeasurementError, NotApplicable
from .fit import batch_predictions, predictions
from .inputs import MeasureInput

if TYPE_CHECKING:
    from ..training.recipes import MeasurementSettings

__all__ = ["AttackReport", "attack_report", "check_epsilon", "attack_kind_report", "attack_test_report"]


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


def attack_report(
    model: torch.nn.Module,
    test: Split,
    *,
    n_images: int,
    epsilons: tuple[float, ...],
    pgd_steps: int,
    seed: int = 0,
    batch_size: int = 256,
    device: str = "cpu",
    name: str = "model",
) -> AttackReport:
    """Clean, FGSM and PGD correctness of ``model`` on ``n_images`` test images (a seeded permutation)."""
    import torchattacks

    for eps in epsilons:
        check_epsilon(eps)
    gen = torch.Generator().manual_seed(seed)
    index = torch.randperm(len(test), generator=gen)[: min(n_images, len(test))]
    model.eval()
    columns = [predictions(model, test, index, batch_size=batch_size, device=device)[0]]
    attacks = [torchattacks.FGSM(model, eps=eps) for eps in epsilons]
    attacks += [torchattacks.PGD(model, eps=eps, alpha=eps / 4, steps=pgd_steps, random_start=True) for eps in epsilons]
    for a, attack in enumerate(attacks):
        correct = []
        for b, start in enumerate(range(0, len(index), batch_size)):
            x, y = test.batch(index[start : start + batch_size])
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed * 10_000 + a * 100 + b)  # PGD's random start
                try:
                    adv = attack(x.to(device), y.to(device))
                except RuntimeError as exc:
                    raise MeasurementError(
                        f"{name}: cannot attack it, its output is not differentiable with respect to "
                        f"its input: {str(exc).splitlines()[0]}"
                    ) from exc
            correct.append(batch_predictions(model, adv, y, device)[0])
        columns.append(torch.cat(correct).numpy())
    return AttackReport(np.stack(columns, 1), np.array(epsilons, dtype=np.float64))


def attack_kind_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str) -> AttackReport:
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` under the settings ``m``."""
    return attack_report(
        inp.model,
        inp.test,
        n_images=m.attack_images,
        epsilons=m.attack_epsilons,
        pgd_steps=m.pgd_steps,
        seed=seed,
        device=device,
        name=repr(inp.name),
    )


def attack_test_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str) -> AttackReport:
    """FGSM and PGD at the profile's smallest eps only, on every image of the test split (Bai et al.'s comparison,
    docs/design.md#decision-rules)."""
    return attack_report(inp.model, inp.test, n_images=len(inp.test), epsilons=(min(m.attack_epsilons),),
                         pgd_steps=m.pgd_steps, seed=seed, device=device, name=repr(inp.name))  # fmt: skip
