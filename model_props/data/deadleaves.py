"""Procedural "dead leaves" classification: the offline default dataset (design Sec. 5).

An image is a stack of occluding leaves painted back to front on a random background. Leaf radii follow
the power law p(r) ~ r^-3 on [r_min, r_max], the scale-invariant law of the dead-leaves model (Lee, Mumford
& Huang 2001), which gives natural-image-like 1/f^a power spectra. All leaves of an image share one shape;
that shape is the label (10 classes). Colours and positions are uniform. Leaves are painted at 2x the
output size and box-filtered down (anti-aliasing). With ``distractors = p`` each leaf takes, with probability
p, one of the other shapes instead (the ``deadleaves-hard`` dataset): the label is then the majority shape,
a subtler task.

Generation is vectorised over images: for each class, each leaf step paints all images of that class at
once. Everything is drawn from ``numpy.random.Generator(seed)``, so a seed fixes every pixel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["SHAPES", "DeadLeavesConfig", "render_dead_leaves", "shape_mask"]

SHAPES: tuple[str, ...] = (
    "disc",
    "square",
    "diamond",
    "triangle_up",
    "triangle_down",
    "plus",
    "cross",
    "ring",
    "hbar",
    "vbar",
)


@dataclass(frozen=True)
class DeadLeavesConfig:
    """Parameters of the generator; part of the cache key."""

    size: int = 32
    leaves: int = 20
    r_min: float = 4.0  # in output pixels
    r_max: float = 16.0
    supersample: int = 2
    distractors: float = 0.0  # probability that a leaf takes another shape than the image's class
    version: int = 1  # bump when the generator changes what it draws


def shape_mask(shape: str, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Boolean mask of a unit-radius shape at normalised offsets ``u = dx/r``, ``v = dy/r`` (y down)."""
    au, av = u.abs(), v.abs()
    if shape == "disc":
        return u * u + v * v <= 1.0
    if shape == "square":
        return torch.maximum(au, av) <= 0.8
    if shape == "diamond":
        return au + av <= 1.1
    if shape == "triangle_up":
        return (v <= 0.5) & (v >= 2.0 * au - 1.0)
    if shape == "triangle_down":
        return (-v <= 0.5) & (-v >= 2.0 * au - 1.0)
    if shape == "plus":
        return ((au <= 0.3) & (av <= 1.0)) | ((av <= 0.3) & (au <= 1.0))
    if shape == "cross":
        p, q = (u + v) / np.sqrt(2.0), (u - v) / np.sqrt(2.0)
        return shape_mask("plus", p, q)
    if shape == "ring":
        rr = u * u + v * v
        return (rr <= 1.0) & (rr >= 0.55**2)
    if shape == "hbar":
        return (au <= 1.0) & (av <= 0.35)
    if shape == "vbar":
        return (av <= 1.0) & (au <= 0.35)
    raise ValueError(f"shape={shape!r} is not one of {SHAPES}")


def _leaf_masks(shapes: np.ndarray, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """(m, s, s) masks of leaves whose shapes (indices into SHAPES) may differ from image to image."""
    present = np.unique(shapes)
    if len(present) == 1:
        return shape_mask(SHAPES[present[0]], u, v)
    mask = torch.zeros(u.shape[0], v.shape[1], u.shape[2], dtype=torch.bool)
    for index in present:
        sel = torch.from_numpy(shapes == index)
        mask[sel] = shape_mask(SHAPES[index], u[sel], v[sel])
    return mask


def _power_law_radii(rng: np.random.Generator, n: int, r_min: float, r_max: float) -> np.ndarray:
    """Inverse-CDF sample of p(r) ~ r^-3 on [r_min, r_max]."""
    a, b = r_min**-2, r_max**-2
    return (a - rng.random(n) * (a - b)) ** -0.5


def render_dead_leaves(
    labels: np.ndarray, seed: int, config: DeadLeavesConfig = DeadLeavesConfig(), chunk: int = 1024
) -> np.ndarray:
    """Render one image per label: uint8 array (N, size, size, 3)."""
    rng = np.random.default_rng(seed)
    n = len(labels)
    s = config.size * config.supersample
    k = config.leaves
    # Draw every random number up front, in a fixed order, so the result does not depend on `chunk`.
    background = rng.random((n, 3)).astype(np.float32)
    colours = rng.random((n, k, 3)).astype(np.float32)
    centres = (rng.random((n, k, 2)) * s).astype(np.float32)
    radii = _power_law_radii(rng, n * k, config.r_min, config.r_max) * config.supersample
    radii = radii.reshape(n, k).astype(np.float32)
    leaf_shapes = np.repeat(np.asarray(labels)[:, None], k, axis=1)
    if config.distractors:  # drawn after everything else, so that distractors=0 draws the same images as before
        swap = rng.random((n, k)) < config.distractors
        other = (leaf_shapes + rng.integers(1, len(SHAPES), (n, k))) % len(SHAPES)
        leaf_shapes = np.where(swap, other, leaf_shapes)
    # Leaves are painted in the order drawn (no sorting by size), as in the dead-leaves model.
    coords = torch.arange(s, dtype=torch.float32) + 0.5
    out = np.empty((n, config.size, config.size, 3), dtype=np.uint8)
    for cls in range(len(SHAPES)):
        idx_all = np.flatnonzero(labels == cls)
        for start in range(0, len(idx_all), chunk):
            idx = idx_all[start : start + chunk]
            m = len(idx)
            canvas = torch.from_numpy(background[idx]).view(m, 3, 1, 1).expand(m, 3, s, s).clone()
            for leaf in range(k):
                cx = torch.from_numpy(centres[idx, leaf, 0]).view(m, 1, 1)
                cy = torch.from_numpy(centres[idx, leaf, 1]).view(m, 1, 1)
                r = torch.from_numpy(radii[idx, leaf]).view(m, 1, 1)
                u = (coords.view(1, 1, s) - cx) / r
                v = (coords.view(1, s, 1) - cy) / r
                mask = _leaf_masks(leaf_shapes[idx, leaf], u, v).unsqueeze(1)  # (m, 1, s, s)
                colour = torch.from_numpy(colours[idx, leaf]).view(m, 3, 1, 1)
                canvas = torch.where(mask, colour, canvas)
            small = F.avg_pool2d(canvas, config.supersample)
            out[idx] = (small.permute(0, 2, 3, 1).numpy() * 255.0 + 0.5).astype(np.uint8)
    return out
