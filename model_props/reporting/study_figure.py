"""The figure of a claim judged wholly from the committed seed study (no report measured in this run: every part
reads a variant or an independent run the session does not train): per part, each model's per-seed estimates, the
part's estimate with its interval, and the rule's threshold, dashed. PNG bytes for Allure."""

from __future__ import annotations

import io
import textwrap
from typing import Any

__all__ = ["study_figure_png"]


def study_figure_png(outcome: Any) -> bytes:
    """One panel per part of ``outcome`` (a :class:`~model_props.verdicts.outcome.ClaimOutcome`) that has an
    estimate: the per-seed values of every model it compares (``PartOutcome.seeds``), then the estimate and its
    interval at the right, the threshold of the part's rule dashed; a part without an estimate names its reason."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parts = list(outcome.parts) or [None]
    fig, grid = plt.subplots(1, len(parts), figsize=(4.5 * len(parts), 4), dpi=100, squeeze=False, layout="constrained")
    for ax, p in zip(grid[0], parts, strict=True):
        if p is None or p.estimate is None:
            ax.axis("off")
            reason = p.reason if p is not None else "no part"
            ax.text(0.5, 0.5, textwrap.fill(reason, 45), ha="center", va="center", fontsize=8)
            continue
        columns = [(name, [v for v in values if v is not None]) for name, values in (p.seeds or {}).items()]
        for x, (_, values) in enumerate(columns):
            ax.plot([x] * len(values), values, "o", color="0.45", alpha=0.8)
        e = p.estimate
        x = len(columns)
        ax.errorbar([x], [e.value], yerr=[[e.value - e.low], [e.high - e.value]], fmt="s", color="C3", capsize=4)
        ax.axhline(p.part.threshold, ls="--", color="0.3", lw=1)
        ax.set_xticks(range(x + 1), [name for name, _ in columns] + [f"estimate ({e.level:.0%})"], fontsize=8)
        ax.set_title(f"{p.part.name}: {p.verdict}", fontsize=9)
        ax.set_ylabel(textwrap.fill(p.part.statistic_name, 45), fontsize=8)
    title = f"{outcome.claim.id} — {outcome.model}: judged from the seed study, per seed"
    fig.suptitle(textwrap.fill(title, 60 * len(parts)), fontsize=9)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()
