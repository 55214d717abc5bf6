"""Linear location probes: how well a layer's tokens still say where on the grid they are (Raghu et al. 2021,
Sec. 6).

Each spatial token of a ``h x w`` grid is labelled with its row-major position ``p in {0, ..., hw-1}``. A linear
probe ``p_hat(x) = argmax_p (W^T [x, 1])_p`` is fitted by ridge regression onto the one-hot position,

    W = argmin ||[X, 1] W - Y||^2 + lambda ||W_x||^2 = (A^T A + lambda D)^{-1} A^T Y,   A = [X, 1],

with ``D`` the identity except at the intercept (left unpenalised) and ``lambda = RIDGE * tr(X_c^T X_c) / C`` a
fixed fraction of the centred features' mean eigenvalue, so the probe does not depend on the features' scale.
A least-squares classifier rather than Raghu et al.'s trained logistic probe: it is a closed form over
sufficient statistics (``A^T A``, ``A^T Y``), accumulated batch by batch, with no optimiser, learning rate or
number of steps to choose; what it measures is the same (linear decodability of the position). A token's probe
is right when ``p_hat = p``; an image's accuracy is the fraction of its ``hw`` tokens placed right. Chance is
``1 / hw``.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["RIDGE", "ProbeFit", "image_accuracy", "tokens_and_positions"]

RIDGE = 1e-3  # lambda as a fraction of the centred features' mean eigenvalue (fixed before measuring)


def tokens_and_positions(maps: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(B, C, h, w) maps -> (B*h*w, C) tokens in row-major order per image, and their positions (B*h*w,).

    >>> x, p = tokens_and_positions(torch.zeros(2, 3, 2, 2))
    >>> tuple(x.shape), p.tolist()
    ((8, 3), [0, 1, 2, 3, 0, 1, 2, 3])
    """
    b, c, h, w = maps.shape
    return maps.flatten(2).transpose(1, 2).reshape(b * h * w, c), torch.arange(h * w, device=maps.device).repeat(b)


class ProbeFit:
    """The ridge location probe of one layer, fitted from batches of tokens (module docstring), its sufficient
    statistics accumulated and solved on the tokens' ``device`` (no host round trip per batch on a GPU)."""

    def __init__(self, channels: int, positions: int, device: torch.device | str = "cpu"):
        self.positions = positions
        self.gram = torch.zeros(channels + 1, channels + 1, dtype=torch.float64, device=device)  # A^T A
        self.cross = torch.zeros(channels + 1, positions, dtype=torch.float64, device=device)  # A^T Y
        self.weights: torch.Tensor | None = None

    def update(self, tokens: torch.Tensor, positions: torch.Tensor) -> None:
        """Accumulate ``A^T A`` and ``A^T Y`` of a batch of (N, C) tokens labelled with their positions (N,)."""
        a = torch.cat([tokens.double(), tokens.new_ones(len(tokens), 1, dtype=torch.float64)], dim=1)
        self.gram += a.T @ a
        self.cross.index_add_(1, positions, a.T)  # A^T Y with Y one-hot: column p sums the rows labelled p

    def solve(self) -> None:
        """W = (A^T A + lambda D)^{-1} A^T Y, lambda from the centred features' trace (module docstring)."""
        n = self.gram[-1, -1]
        mean = self.gram[-1, :-1] / n
        centred = self.gram[:-1, :-1] - n * torch.outer(mean, mean)
        lam = RIDGE * float(torch.trace(centred)) / centred.shape[0]
        penalty = torch.full((len(self.gram),), max(lam, 1e-12), dtype=torch.float64, device=self.gram.device)
        penalty[-1] = 0.0  # the intercept
        self.weights = torch.linalg.solve(self.gram + torch.diag(penalty), self.cross)

    def predict(self, tokens: torch.Tensor) -> torch.Tensor:
        """The probe's position for each of (N, C) tokens."""
        if self.weights is None:
            raise RuntimeError("the probe is not fitted: call solve() after the fitting batches")
        return (tokens.double() @ self.weights[:-1] + self.weights[-1]).argmax(dim=1)


def image_accuracy(predicted: torch.Tensor, tokens_per_image: int) -> np.ndarray:
    """Per image, the fraction of its tokens whose predicted position is their own (row-major order), on the host.

    >>> image_accuracy(torch.tensor([0, 1, 1, 1]), 2).tolist()
    [1.0, 0.5]
    """
    truth = torch.arange(tokens_per_image, device=predicted.device).repeat(len(predicted) // tokens_per_image)
    return (predicted == truth).reshape(-1, tokens_per_image).double().mean(dim=1).cpu().numpy()
