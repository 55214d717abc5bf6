"""The figure a paper would show for a claim, drawn from the reports its parts read (PNG bytes for Allure).

- unit maps: Δlog-amplitude or variance against normalised depth with MSA (grey) and subsampling (blue)
  units shaded (Park & Kim Fig. 8/9), the CKA matrix with stage boundaries, the skip-norm ratio per depth
  (Raghu et al. Fig. 10), attention distance per head (Raghu et al. Fig. 3);
- Hessian spectra: densities of the pooled top eigenvalues, a negative and a positive panel, every model of
  the comparison on one figure (Park & Kim Fig. 4);
- fit: accuracy, NLL, ECE and train NLL of every model of the comparison;
- band-limited noise: accuracy drop against the band's frequency, white noise dashed (Park & Kim Fig. 2b);
- corruptions: accuracy per corruption (mean over severities); attacks: robust accuracy against eps, PGD
  solid and FGSM dashed; lesions: accuracy drop per removed unit against depth, by kind, stage boundaries
  dotted (Park & Kim Fig. 10);
- position embeddings: mean cosine similarity against grid (Chebyshev) distance, near/far contrast of the
  learned and of a random embedding in the legend, and the similarity map of one query position in an inset
  (Dosovitskiy et al. Fig. 7 centre);
- occlusion: clean and occluded accuracy of every model of the comparison, the relative drop in the labels
  (Naseer et al. Fig. 3);
- location probes: per unit, the fraction of tokens whose grid position a linear probe reads right, against
  normalised depth, every model of the comparison, chance dotted (Raghu et al. Sec. 6);
- cross-model CKA: three heatmaps side by side, the model against the other model, against a second seed of
  its own recipe (the seed control) and against the other model untrained (the null), each part's statistic
  and its value on the null in the titles (Raghu et al. Fig. 1-2).
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["figure_png", "raw_measurements"]


def _shade(ax, units, depth_step: float) -> None:
    for u in units:
        if u.kind == "msa":
            ax.axvspan(u.depth - depth_step / 2, u.depth + depth_step / 2, color="0.85", lw=0)
        elif u.subsamples:
            ax.axvspan(u.depth - depth_step / 2, u.depth + depth_step / 2, color="#cfe0ff", lw=0)


def _units(fig, ax, measurement: str, report: Any) -> None:
    units = report.units
    depth = np.array([u.depth for u in units])
    step = 1.0 / max(1, len(units) - 1)
    if measurement in ("fourier", "variance"):
        values = (report.high_freq if measurement == "fourier" else report.variance).mean(axis=0)
        _shade(ax, units, step)
        ax.plot(depth, values, "o-", color="C3" if measurement == "fourier" else "C0")
        ax.set_xlabel("normalised depth (grey: MSA, blue: subsampling)")
        ax.set_ylabel("Δlog amplitude at highest frequency" if measurement == "fourier" else "feature-map variance")
    elif measurement == "cka":
        from matplotlib.ticker import MaxNLocator

        im = ax.imshow(report.cka.compute().numpy(), vmin=0, vmax=1, cmap="magma", origin="lower")
        fig.colorbar(im, ax=ax, label="minibatch linear CKA")
        for i in range(1, len(units)):
            if units[i].stage != units[i - 1].stage:  # stage boundaries
                ax.axhline(i - 0.5, color="cyan", lw=0.8)
                ax.axvline(i - 0.5, color="cyan", lw=0.8)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("unit index (cyan: stage boundaries)")
        ax.set_ylabel("unit index")
    elif measurement == "skip":
        residual = ~np.isnan(report.skip_ratio).all(axis=0)
        ax.plot(depth[residual], report.skip_ratio[:, residual].mean(axis=0), "o-", label="spatial tokens")
        cls = ~np.isnan(report.skip_ratio_cls).all(axis=0)
        if cls.any():
            ax.plot(depth[cls], report.skip_ratio_cls[:, cls].mean(axis=0), "s--", label="CLS token")
        ax.set_yscale("log")
        ax.set_xlabel("normalised depth")
        ax.set_ylabel("||x|| / ||f(x)||")
        ax.legend()
    else:
        dmap = {u.name: u.depth for u in units}
        for name, dist in report.attention.items():
            heads = dist.mean(axis=0)
            ax.scatter(np.full_like(heads, dmap[name]), heads, s=18, color="C2")
        ax.set_xlabel("normalised depth")
        ax.set_ylabel("mean attention distance per head (px)")


def _density(ax, values: np.ndarray, color: str, label: str) -> None:
    """A Gaussian kernel density (Scott's bandwidth) of ``values``, or a rug when there are too few."""
    if len(values) < 2 or np.ptp(values) == 0:
        ax.plot(values, np.zeros_like(values), "|", color=color, ms=20, label=label)
        return
    from scipy.stats import gaussian_kde

    grid = np.linspace(values.min() - 0.1 * np.ptp(values), values.max() + 0.1 * np.ptp(values), 200)
    ax.plot(grid, gaussian_kde(values)(grid) * len(values), color=color, label=f"{label} ({len(values)})")


def _spectra(axes, spectra: Mapping[str, Any]) -> None:
    neg, pos = axes
    for i, (label, report) in enumerate(spectra.items()):
        values = report.pooled()
        _density(neg, values[values < 0], f"C{i}", label)
        _density(pos, values[values > 0], f"C{i}", label)
    neg.set_title("negative eigenvalues", fontsize=9)
    pos.set_title("positive eigenvalues", fontsize=9)
    for ax in axes:
        ax.set_xlabel("top Hessian eigenvalues per batch")
        ax.legend(fontsize=7)
    neg.set_ylabel("density x count")


def _fit(ax, fits: Mapping[str, Any]) -> None:
    stats = {
        "test error": lambda r: 1 - r.accuracy(),
        "test NLL": lambda r: r.nll(),
        "ECE": lambda r: r.ece(),
        "train NLL": lambda r: r.train_nll_mean(),
    }
    width = 0.8 / max(1, len(fits))
    for i, (label, report) in enumerate(fits.items()):
        ax.bar(
            np.arange(len(stats)) + i * width, [f(report) for f in stats.values()], width, label=label, color=f"C{i}"
        )
    ax.set_xticks(np.arange(len(stats)) + width * (len(fits) - 1) / 2, list(stats))
    ax.legend(fontsize=7)


def _noise(ax, reports: Mapping[str, Any]) -> None:
    for i, (label, r) in enumerate(reports.items()):
        drops = [100 * r.drop(2 + j) for j in range(len(r.frequencies))]
        ax.plot(r.frequencies, drops, "o-", color=f"C{i}", label=label)
        ax.axhline(100 * r.drop(1), color=f"C{i}", ls="--", lw=0.8)
    ax.set_xlabel("noise frequency (×π); dashed: white noise of the same norm")
    ax.set_ylabel("accuracy drop (points)")
    ax.legend(fontsize=7)


def _corruption(ax, reports: Mapping[str, Any]) -> None:
    width = 0.8 / max(1, len(reports))
    for i, (label, r) in enumerate(reports.items()):
        values = [100 * r.correct[:, 0].mean()] + [100 * r.accuracy(n) for n in r.names]
        ax.bar(np.arange(len(values)) + i * width, values, width, label=label, color=f"C{i}")
    names = ["clean", *next(iter(reports.values())).names]
    ax.set_xticks(np.arange(len(names)) + width * (len(reports) - 1) / 2, names, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("accuracy (%), mean over 5 severities")
    ax.legend(fontsize=7)


def _attack(ax, reports: Mapping[str, Any]) -> None:
    for i, (label, r) in enumerate(reports.items()):
        eps = np.concatenate([[0.0], r.epsilons * 255])
        clean = 100 * r.accuracy()
        for attack, style in (("pgd", "o-"), ("fgsm", "s--")):
            acc = [clean] + [100 * r.accuracy(attack, e) for e in r.epsilons]
            ax.plot(eps, acc, style, color=f"C{i}", label=f"{label} {attack.upper()}")
    ax.set_xlabel("eps (×1/255)")
    ax.set_ylabel("robust accuracy (%)")
    ax.legend(fontsize=7)


def _lesion(ax, reports: Mapping[str, Any]) -> None:
    markers = {"msa": "o", "mlp": "s", "conv": "^"}
    label, r = next(iter(reports.items()))
    drops = 100 * r.drops()
    for kind, marker in markers.items():
        mask = np.asarray(r.kinds) == kind
        if mask.any():
            ax.scatter(r.depths[mask], drops[mask], marker=marker, label=kind, s=30)
    for i in range(1, len(r.stages)):
        if r.stages[i] != r.stages[i - 1]:
            ax.axvline((r.depths[i] + r.depths[i - 1]) / 2, color="0.6", ls=":")
    ax.set_xlabel("normalised depth of the removed unit (dotted: stage boundaries)")
    ax.set_ylabel(f"accuracy drop (points), {label}")
    ax.legend(fontsize=7)


def _position(ax, reports: Mapping[str, Any]) -> None:
    from ..measurements.functional.position import chebyshev_distances, far_distance

    label, r = next(iter(reports.items()))
    h, w = (int(v) for v in r.grid)
    dist = chebyshev_distances(h, w)
    off = ~np.eye(h * w, dtype=bool)
    ds = np.unique(dist[off])
    means = [r.cosine[off & (dist == d)].mean() for d in ds]
    contrast = f"contrast {r.contrast.mean():+.3f}, random embedding {r.random_contrast.mean():+.3f}"
    ax.plot(ds, means, "o-", label=f"{label}: {contrast}")
    ax.axvline(far_distance(h, w), color="0.6", ls=":")
    ax.set_xlabel("grid (Chebyshev) distance between positions (dotted: far)")
    ax.set_ylabel("mean cosine similarity of position embeddings")
    ax.legend(fontsize=7, loc="upper center")
    query = (h // 4) * w + w // 4
    inset = ax.inset_axes((0.64, 0.45, 0.32, 0.32))
    inset.imshow(r.cosine[query].reshape(h, w), cmap="viridis")
    inset.set_xticks([])
    inset.set_yticks([])
    inset.set_title(f"cosine to position {divmod(query, w)}", fontsize=6)


def _occlusion(ax, reports: Mapping[str, Any]) -> None:
    labels = [f"{name}\nrelative drop {r.relative_drop():.2f}" for name, r in reports.items()]
    x = np.arange(len(reports))
    ax.bar(x - 0.2, [100 * r.clean_correct.mean() for r in reports.values()], 0.4, label="clean")
    ax.bar(
        x + 0.2, [100 * r.occluded_correct.mean() for r in reports.values()], 0.4, label="half of the cells occluded"
    )
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylabel("accuracy (%)")
    ax.legend(fontsize=7)


def _probe(ax, reports: Mapping[str, Any]) -> None:
    for i, (name, r) in enumerate(reports.items()):
        accuracy = r.accuracy.mean(axis=1)
        ax.plot(r.depth, accuracy, "o-", color=f"C{i}", label=f"{name}: last unit {accuracy[-1]:.3f}")
        ax.plot(r.depth, 1.0 / r.tokens, ":", color=f"C{i}")
    ax.set_xlabel("normalised depth (dotted: chance, one over the grid positions)")
    ax.set_ylabel("location-probe accuracy on held-out images")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7)


def _cross_heatmaps(fig, axes, claim: Any, model: str, partner: str, reports: Any) -> None:
    """The pair reports' CKA matrices (rows: the model's units, columns: the other's) on one colour scale."""
    every = np.arange(reports.size("batches"))
    parts = [p for p in claim.parts if p.partner == partner]
    null = dataclasses.replace(reports, against=reports.null)  # each statistic with the null in place of the other
    stats = "; ".join(f"{p.name} {p.statistic(reports, every):+.3f} (null {p.statistic(null, every):+.3f})"
                      for p in parts)  # fmt: skip
    titles = {"against": partner, "control": f"a second seed of {model} (seed control)",
              "null": f"{partner}, untrained (null)"}  # fmt: skip
    for ax, (which, title) in zip(axes, titles.items(), strict=True):
        pair = getattr(reports, which)
        im = ax.imshow(pair.cka.compute().numpy(), vmin=0, vmax=1, cmap="magma", origin="lower", aspect="auto",
                       extent=(-0.5, len(pair.depth_b) - 0.5, -0.5, len(pair.depth_a) - 0.5))  # fmt: skip
        ax.set_title(f"{model} against {title}", fontsize=8)
        ax.set_xlabel(f"unit of {title.split(' (')[0]}")
        ax.set_ylabel(f"unit of {model}")
    fig.colorbar(im, ax=axes[-1], label="minibatch CKA (unbiased HSIC)")
    axes[1].text(0.5, -0.22, stats, transform=axes[1].transAxes, ha="center", va="top", fontsize=7, wrap=True)


_PANELS = {"fit": _fit, "noise": _noise, "corruption": _corruption, "attack": _attack, "attack_test": _attack,
           "lesion": _lesion, "position": _position, "occlusion": _occlusion, "probe": _probe}  # fmt: skip


def figure_png(claim: Any, model: str, reports: Mapping[tuple[str, str, str], Any]) -> bytes:
    """The claim's figure from ``reports``: (model label, kind, checkpoint) -> the report a part read."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    by_kind: dict[str, dict[str, Any]] = {}
    for (name, kind, checkpoint), report in reports.items():
        by_kind.setdefault(kind, {})[name if checkpoint == "final" else f"{name} ({checkpoint})"] = report
    units = by_kind.pop("units", {}).get(model)
    spectra = by_kind.pop("spectrum", {})
    pairs = {kind: by_kind.pop(kind) for kind in list(by_kind) if "@" in kind}  # cross@partner: 3 heatmaps each
    panels = (
        (1 if units is not None or not reports else 0)
        + (2 if spectra else 0)
        + len(by_kind)
        + 3 * sum(map(len, pairs.values()))
    )
    fig, grid = plt.subplots(1, panels, figsize=(5.5 * panels, 4), dpi=100, squeeze=False)
    axes = list(grid[0])
    if units is not None or not reports:
        if units is not None:
            _units(fig, axes[0], claim.measurement, units)
        axes.pop(0)
    if spectra:
        _spectra((axes.pop(0), axes.pop(0)), spectra)
    for kind, kind_reports in by_kind.items():
        _PANELS[kind](axes.pop(0), kind_reports)
    for kind, kind_reports in pairs.items():
        for name, pair_reports in kind_reports.items():
            _cross_heatmaps(fig, [axes.pop(0) for _ in range(3)], claim, name, kind.split("@")[1], pair_reports)
    fig.suptitle(f"{claim.id} — {model}", fontsize=9)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def raw_measurements(reports: Mapping[tuple[str, str, str], Any]) -> dict[str, Any]:
    """The raw samples behind a figure that are small enough to attach: the eigenvalues of every spectrum."""
    return {f"{n} ({c}) eigenvalues": r.eigenvalues.tolist() for (n, k, c), r in reports.items() if k == "spectrum"}
