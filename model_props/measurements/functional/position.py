"""Similarity structure of learned position embeddings (Dosovitskiy et al. 2021, Sec. 4.5 and Fig. 7 centre).

ViT adds a learned vector ``e_p`` to the token at grid position ``p``; nothing in the architecture says that
positions form a grid, yet the learned vectors of nearby patches come out similar. For a ``h x w`` grid of
embeddings, the cosine similarity ``cos(e_p, e_q)`` is read against the Chebyshev distance
``d(p, q) = max(|row_p - row_q|, |col_p - col_q|)``. Per query position ``q``:

    contrast(q) = mean_{p: d(p, q) = 1} cos(e_p, e_q) - mean_{p: d(p, q) >= far} cos(e_p, e_q),

with ``far = max(2, max(h, w) / 2)`` (docs/design.md#decision-rules, claim 28). A query with no position at distance ``far``
or more (the centre of an odd grid) has no contrast and is left out. A grid-aware embedding has a positive
contrast; an embedding that ignores the grid (i.i.d. random vectors) has a contrast near 0.
"""

from __future__ import annotations

import numpy as np

__all__ = ["chebyshev_distances", "cosine_similarity", "far_distance", "near_far_contrast"]


def chebyshev_distances(h: int, w: int) -> np.ndarray:
    """(h*w, h*w) Chebyshev distance between the row-major positions of an ``h x w`` grid.

    >>> chebyshev_distances(1, 3)
    array([[0, 1, 2],
           [1, 0, 1],
           [2, 1, 0]])
    """
    rows, cols = np.divmod(np.arange(h * w), w)
    return np.maximum(np.abs(rows[:, None] - rows[None, :]), np.abs(cols[:, None] - cols[None, :]))


def cosine_similarity(embeddings: np.ndarray) -> np.ndarray:
    """(N, C) -> (N, N) cosine similarity of every pair of rows (a zero row has similarity 0 to every row)."""
    e = np.asarray(embeddings, dtype=np.float64)
    norms = np.linalg.norm(e, axis=1, keepdims=True)
    unit = e / np.where(norms > 0, norms, 1.0)
    return unit @ unit.T


def far_distance(h: int, w: int) -> float:
    """The distance from which a pair counts as far: ``max(2, max(h, w) / 2)``."""
    return max(2.0, max(h, w) / 2.0)


def near_far_contrast(embeddings: np.ndarray, h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """(queries, contrast): the row-major positions with both near and far pairs, and each one's
    ``contrast(q)`` (module docstring) for the (h*w, C) ``embeddings`` in row-major grid order."""
    if embeddings.ndim != 2 or embeddings.shape[0] != h * w:
        raise ValueError(f"expected ({h * w}, C) embeddings of a {h}x{w} grid, got shape {embeddings.shape}")
    cos = cosine_similarity(embeddings)
    dist = chebyshev_distances(h, w)
    near, far = dist == 1, dist >= far_distance(h, w)
    queries = np.flatnonzero(near.any(axis=1) & far.any(axis=1))
    near_mean = (cos * near).sum(axis=1)[queries] / near.sum(axis=1)[queries]
    far_mean = (cos * far).sum(axis=1)[queries] / far.sum(axis=1)[queries]
    return queries, near_mean - far_mean
