"""Every unit-level measurement of a model, from one forward pass per batch (docs/design.md#anatomy).

:func:`measure_units` runs a seeded sample of images through the model in mini-batches, captures every
unit's state, branch, skip and (global) attention weights once per batch, and feeds the Fourier, variance,
skip-ratio, CKA and attention-distance measures. Per-image values are kept (images are the bootstrap unit;
mini-batches are the unit for CKA).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..anatomy.capture import capture
from ..anatomy.model import Anatomy, Unit
from ..data import Split
from .functional.attention import attention_distance
from .functional.cka import MinibatchCKA
from .functional.fourier import high_frequency
from .functional.skip import skip_norm_ratio
from .functional.variance import feature_variance
from .inputs import MeasureInput

if TYPE_CHECKING:
    from ..training.recipes import MeasurementSettings

__all__ = ["UnitReport", "measure_units", "MIN_FOURIER_SIDE", "units_report"]

# A map smaller than 4x4 has no diagonal frequency between DC and its corner (patch 16 at 32 px gives 2x2):
# its high-frequency value is not measured (NaN), nor is the variance of a 1x1 map.
MIN_FOURIER_SIDE = 4


@dataclass
class UnitReport:
    """Per-image measurements; columns follow ``units`` (the spatial units, in order)."""

    units: tuple[Unit, ...]
    n_images: int
    batch_size: int
    high_freq: np.ndarray  # (N, U) Δlog-amplitude at the highest diagonal frequency; NaN on maps under 4x4
    variance: np.ndarray  # (N, U); NaN on 1x1 maps
    skip_ratio: np.ndarray  # (N, U) ||x|| / ||f(x)|| over spatial tokens; NaN for non-residual units
    skip_ratio_cls: np.ndarray  # (N, U) the same for the CLS token(s); NaN where there are none
    cka: MinibatchCKA
    attention: dict[str, np.ndarray] = field(default_factory=dict)  # msa unit -> (N, heads) distance (px)

    def size(self, sampling: str) -> int:
        """Sampling units: ``images``, or ``batches`` (CKA mini-batches)."""
        return {"images": self.n_images, "batches": len(self.cka.per_batch)}[sampling]

    def to_arrays(self) -> dict[str, np.ndarray]:
        arrays = {
            "high_freq": self.high_freq,
            "variance": self.variance,
            "skip_ratio": self.skip_ratio,
            "skip_ratio_cls": self.skip_ratio_cls,
            "cka_per_batch": torch.stack(self.cka.per_batch).numpy(),
            "shape": np.array([self.n_images, self.batch_size]),
        }
        arrays.update({f"attention/{k}": v for k, v in self.attention.items()})
        return arrays

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], units: tuple[Unit, ...]) -> UnitReport:
        if arrays["high_freq"].shape[1] != len(units):
            raise ValueError(f"a cached report of {arrays['high_freq'].shape[1]} units does not fit {len(units)} units")
        cka = MinibatchCKA()
        cka.per_batch = list(torch.from_numpy(arrays["cka_per_batch"]))
        n_images, batch_size = (int(v) for v in arrays["shape"])
        attention = {k.removeprefix("attention/"): v for k, v in arrays.items() if k.startswith("attention/")}
        return cls(
            units,
            n_images,
            batch_size,
            arrays["high_freq"],
            arrays["variance"],
            arrays["skip_ratio"],
            arrays["skip_ratio_cls"],
            cka,
            attention,
        )


@torch.no_grad()
def measure_units(
    model: torch.nn.Module,
    anat: Anatomy,
    split: Split,
    *,
    n_images: int = 1024,
    batch_size: int = 64,
    seed: int = 0,
    device: str = "cpu",
) -> UnitReport:
    """Measure ``n_images`` test images chosen by a seeded permutation, in batches of ``batch_size``."""
    if n_images > len(split):
        raise ValueError(f"n_images={n_images} exceeds the split's {len(split)} images")
    order = torch.randperm(len(split), generator=torch.Generator().manual_seed(seed))[:n_images]
    units = anat.spatial_units
    model.eval()
    hf, var, ratio, ratio_cls = [], [], [], []
    prefix = {u.name: u.output.prefix_tokens for u in units}
    attention: dict[str, list[np.ndarray]] = {}
    cka = MinibatchCKA()
    img_size = split.images.shape[-1]
    for start in range(0, n_images, batch_size):
        x, _ = split.batch(order[start : start + batch_size])
        cap = capture(model, anat, x.to(device), attention=True)
        nan = torch.full((len(x),), float("nan"))  # every column is on the CPU, whatever the model's device
        hf_cols, var_cols, r_cols, rc_cols = [], [], [], []
        for u in units:
            state = cap.states[u.name].float()
            hf_cols.append(high_frequency(state).cpu() if min(state.shape[-2:]) >= MIN_FOURIER_SIDE else nan)
            var_cols.append(feature_variance(state).cpu() if state.shape[-1] * state.shape[-2] > 1 else nan)
            r_cols.append(
                skip_norm_ratio(cap.skips[u.name], cap.branches[u.name]).cpu() if u.name in cap.branches else nan
            )
            rc_cols.append(
                skip_norm_ratio(cap.skip_prefix[u.name], cap.branch_prefix[u.name]).cpu()
                if u.name in cap.branch_prefix
                else nan
            )
        for name, weights in cap.attention.items():
            attention.setdefault(name, []).append(attention_distance(weights, img_size, prefix[name]).cpu().numpy())
        cka.update([cap.states[u.name] for u in units])  # on the model's device: (U, U) HSIC comes back
        hf.append(torch.stack(hf_cols, 1))
        var.append(torch.stack(var_cols, 1))
        ratio.append(torch.stack(r_cols, 1))
        ratio_cls.append(torch.stack(rc_cols, 1))
    return UnitReport(
        units=units,
        n_images=n_images,
        batch_size=batch_size,
        high_freq=torch.cat(hf).numpy().astype(np.float64),
        variance=torch.cat(var).numpy().astype(np.float64),
        skip_ratio=torch.cat(ratio).numpy().astype(np.float64),
        skip_ratio_cls=torch.cat(ratio_cls).numpy().astype(np.float64),
        cka=cka,
        attention={k: np.concatenate(v) for k, v in attention.items()},
    )


def units_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str) -> UnitReport:
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` under the settings ``m``."""
    return measure_units(
        inp.model, inp.anatomy, inp.test, n_images=m.n_images, batch_size=m.batch_size, seed=seed, device=device
    )
