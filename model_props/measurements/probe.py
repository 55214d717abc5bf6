"""The location-probe report: per spatial unit, how well a linear probe reads each token's grid position from
its representation (Raghu et al. 2021, Sec. 6; docs/design.md#decision-rules, claim 24).

The images are the seeded sample of ``n_images`` test images that :func:`~.units.measure_units` draws (the same
permutation of the split), in mini-batches of ``batch_size``. The first half of the sample fits one
:class:`~model_props.measurements.functional.probe.ProbeFit` per unit; the second half is scored, image by image, so the
scored images are the sampling unit and two models measured on one dataset are paired by them. Units whose maps
are a single token (no grid to place a token on) and models with no spatial tokens at all are
:class:`~model_props.errors.NotApplicable` with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..anatomy.capture import capture
from ..anatomy.model import Anatomy
from ..data import Split
from ..errors import NotApplicable
from .functional.probe import ProbeFit, image_accuracy, tokens_and_positions
from .inputs import MeasureInput

if TYPE_CHECKING:
    from ..training.recipes import MeasurementSettings

__all__ = ["ProbeReport", "probe_report", "probe_kind_report"]


@dataclass
class ProbeReport:
    """Per spatial unit (rows, in depth order) and scored image (columns), the location-probe accuracy."""

    depth: np.ndarray  # (U,) normalised depth of the units
    tokens: np.ndarray  # (U,) grid positions per image (h*w) of each unit: chance is 1 / tokens
    accuracy: np.ndarray  # (U, N) fraction of an image's tokens the unit's probe places right

    def size(self, sampling: str) -> int:
        """Sampling unit: ``images`` (the scored half of the sample)."""
        return {"images": self.accuracy.shape[1]}[sampling]

    def to_arrays(self) -> dict[str, np.ndarray]:
        return dict(vars(self))

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], units: object = None) -> ProbeReport:
        return cls(arrays["depth"], arrays["tokens"], arrays["accuracy"])


@torch.no_grad()
def probe_report(
    model: torch.nn.Module, anat: Anatomy, split: Split, *, n_images: int = 1024, batch_size: int = 64,
    seed: int = 0, device: str = "cpu",
) -> ProbeReport:  # fmt: skip
    """Fit a location probe per spatial unit on the first half of ``n_images`` seeded test images and score it
    on the second half (module docstring)."""
    if n_images > len(split):
        raise ValueError(f"n_images={n_images} exceeds the split's {len(split)} images")
    if n_images < 2 * batch_size:
        raise ValueError(f"n_images={n_images} gives no batch of {batch_size} to score: give 2 x batch_size or more")
    order = torch.randperm(len(split), generator=torch.Generator().manual_seed(seed))[:n_images]
    units = anat.spatial_units
    if not units:
        raise NotApplicable(f"{anat.family} has no spatial units: it has no tokens on a grid to locate")
    model.eval()
    fit_images = (n_images // batch_size) // 2 * batch_size  # whole batches fit, the rest is scored
    probes: list[ProbeFit] = []
    scored: list[list[np.ndarray]] = [[] for _ in units]
    sides: list[int] = []
    for start in range(0, n_images, batch_size):
        x = split.batch(order[start : start + batch_size])[0].to(device)
        states = capture(model, anat, x, branches=False).states
        maps = [states[u.name].float() for u in units]  # on the model's device: each probe fits there
        if not probes:
            sides = [m.shape[2] * m.shape[3] for m in maps]
            if max(sides) < 2:
                raise NotApplicable(f"every unit of {anat.family} is a single token: there is no position to probe")
            probes = [ProbeFit(m.shape[1], side, m.device) for m, side in zip(maps, sides, strict=True)]
        for i, m in enumerate(maps):
            tokens, positions = tokens_and_positions(m)
            if start < fit_images:
                probes[i].update(tokens, positions)
                continue
            if probes[i].weights is None:
                probes[i].solve()
            scored[i].append(image_accuracy(probes[i].predict(tokens), sides[i]))
    keep = [i for i, s in enumerate(sides) if s >= 2]  # a 1x1 map has one position: nothing to locate
    return ProbeReport(
        np.array([units[i].depth for i in keep]),
        np.array([sides[i] for i in keep]),
        np.stack([np.concatenate(scored[i]) for i in keep]).astype(np.float32),
    )


def probe_kind_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str) -> ProbeReport:
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` under the settings ``m``."""
    return probe_report(inp.model, inp.anatomy, inp.test, n_images=m.n_images, batch_size=m.batch_size, seed=seed,
                        device=device)  # fmt: skip
