"""Position-embedding report: how a model's learned position embedding lays out the token grid (Dosovitskiy
et al. 2021, Sec. 4.5, Fig. 7 centre; docs/design.md#decision-rules, claim 28).

The embedding is the model's parameter named like timm's and torchvision's (``pos_embed``,
``pos_embedding``, ``position_embedding(s)``, ``absolute_pos_embed``): ``(1, tokens, C)`` with the prefix
(CLS) tokens first where it has rows for them, laid row-major on a square grid (ViT, DeiT), or
``(1, C, h, w)`` (PiT). Per query position, :func:`~.functional.position.near_far_contrast`; the query
positions are the sampling unit. Beside it, the same statistic of an embedding drawn i.i.d. from a seeded
normal distribution (timm's initialisation is an i.i.d. truncated normal, and cosines do not see the scale):
what the statistic reads before any training. A model without such a parameter, or whose embedding lies on no
grid, is :class:`~model_props.errors.NotApplicable` with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..anatomy.model import Anatomy
from ..errors import NotApplicable
from ..zoo.wrapper import unwrap
from .functional.position import cosine_similarity, near_far_contrast
from .inputs import MeasureInput

if TYPE_CHECKING:
    from ..training.recipes import MeasurementSettings

__all__ = [
    "EMBEDDING_NAMES",
    "PositionReport",
    "embedding_parameter",
    "position_embedding",
    "position_report",
    "position_kind_report",
]

EMBEDDING_NAMES = ("pos_embed", "pos_embedding", "position_embedding", "position_embeddings", "absolute_pos_embed")


@dataclass
class PositionReport:
    queries: np.ndarray  # (Q,) row-major grid positions with near and far pairs
    contrast: np.ndarray  # (Q,) near minus far mean cosine, learned embedding
    random_contrast: np.ndarray  # (Q,) the same of an i.i.d. normal embedding of the same shape
    cosine: np.ndarray  # (h*w, h*w) cosine similarity of the learned embedding's rows
    grid: np.ndarray  # (h, w)

    def size(self, sampling: str) -> int:
        """Sampling unit: ``positions`` (the query positions)."""
        return {"positions": len(self.contrast)}[sampling]

    def to_arrays(self) -> dict[str, np.ndarray]:
        return dict(vars(self))

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], units: object = None) -> PositionReport:
        return cls(**{k: arrays[k] for k in ("queries", "contrast", "random_contrast", "cosine", "grid")})


def embedding_parameter(model: torch.nn.Module, family: str) -> tuple[str, torch.nn.Parameter]:
    """The model's one learned position embedding, by name (module docstring), and its name."""
    found = [(n, p) for n, p in unwrap(model).named_parameters() if n.rsplit(".", 1)[-1] in EMBEDDING_NAMES]
    if not found:
        raise NotApplicable(f"{family} has no learned position embedding (no parameter named {' or '.join(EMBEDDING_NAMES)})")  # fmt: skip
    if len(found) > 1:
        raise NotApplicable(f"{family} has several position embeddings ({', '.join(n for n, _ in found)}); one is read")
    return found[0]


def position_embedding(model: torch.nn.Module, anat: Anatomy) -> tuple[np.ndarray, int, int]:
    """The (h*w, C) learned embedding of the spatial tokens in row-major order, and the grid (h, w)."""
    name, param = embedding_parameter(model, anat.family)
    t = param.detach().float().cpu()
    if t.ndim == 4 and t.shape[0] == 1:  # (1, C, h, w)
        return t[0].flatten(1).T.numpy(), int(t.shape[2]), int(t.shape[3])
    if t.ndim == 3 and t.shape[0] == 1:  # (1, tokens, C), prefix tokens first if it has rows for them
        prefix = anat.units[0].output.prefix_tokens if anat.units else 0
        rows = int(t.shape[1])
        for spatial in (rows - prefix, rows):
            side = math.isqrt(max(spatial, 0))
            if spatial > 0 and side * side == spatial:
                return t[0, rows - spatial :].numpy(), side, side
        raise NotApplicable(f"the position embedding {name} has {rows} rows, which lie on no square grid of tokens "
                            f"(with or without the model's {prefix} prefix tokens)")  # fmt: skip
    raise NotApplicable(f"the position embedding {name} has shape {tuple(t.shape)}, neither (1, tokens, C) nor (1, C, h, w)")  # fmt: skip


def position_report(model: torch.nn.Module, anat: Anatomy, *, seed: int = 0) -> PositionReport:
    """The near/far contrast of the model's position embedding per query position, beside a random one's."""
    embedding, h, w = position_embedding(model, anat)
    queries, contrast = near_far_contrast(embedding, h, w)
    if len(queries) < 2:
        raise NotApplicable(f"a {h}x{w} grid of position embeddings has fewer than 2 positions with near and far pairs")  # fmt: skip
    random = np.random.default_rng(seed).standard_normal(embedding.shape)
    _, random_contrast = near_far_contrast(random, h, w)
    return PositionReport(queries, contrast, random_contrast, cosine_similarity(embedding).astype(np.float32),
                          np.array([h, w]))  # fmt: skip


def position_kind_report(inp: MeasureInput, m: MeasurementSettings, seed: int, device: str) -> PositionReport:
    """The kind's entry point for the registry (:mod:`.registry`): the report of ``inp`` under the settings ``m``."""
    return position_report(inp.model, inp.anatomy, seed=seed)
