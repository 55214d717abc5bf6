"""A toy report for the verdict tests: one number per sampling unit (an image, a Hessian batch), read by a part's
statistic as ``report.values[indices]``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Scores:
    """A report of one number per sampling unit."""

    values: np.ndarray

    def size(self, sampling: str) -> int:
        return len(self.values)
