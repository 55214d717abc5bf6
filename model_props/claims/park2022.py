"""Park & Kim, "How Do Vision Transformers Work?" (ICLR 2022): the paper, and what its topic modules share:
the part read at the final checkpoint and the fit statistics (test error, training NLL).

Its claims, one module per topic: :mod:`.park2022_fitting` (Sec. 2.1, underfitting), :mod:`.park2022_frequency`
(Sec. 3.1-3.2, low- and high-pass filters, feature-map variance), :mod:`.park2022_landscape` (Sec. 3.3-3.4 and
App. C, the loss landscape; spatial smoothing from "Blurs Behave like Ensembles"), :mod:`.park2022_robustness`
(Sec. 3.1 noise, adversarial attacks) and :mod:`.park2022_stages` (Sec. 4 and App. D: multi-stage models, lesions,
AlterNet and the build-up rule).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..measurements.registry import ReportKind
from .base import Paper, Part

PAPER = Paper(
    key="park2022",
    title="How Do Vision Transformers Work?",
    authors="Namuk Park, Songkuk Kim",
    venue="ICLR 2022",
    arxiv="2202.06709",
)


def final_part(name: str, statistic_name: str, statistic, direction, report: ReportKind, **kw) -> Part:
    """A part read from ``report`` of the final checkpoint."""
    return Part(
        name=name,
        statistic_name=statistic_name,
        statistic=statistic,
        direction=direction,
        report=report,
        checkpoint="final",
        **kw,
    )


def error_of(r: Any, i: np.ndarray) -> np.ndarray:
    """Test error, 1 - accuracy, of a fit report on images ``i``."""
    return 1.0 - r.accuracy(i)


def train_nll_of(r: Any, i: np.ndarray) -> np.ndarray:
    """Mean train NLL of a fit report on training images ``i``."""
    return r.train_nll_mean(i)
