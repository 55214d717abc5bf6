"""Reports: Allure labels and attachments per claim test, the figures, and the session summary.

``summary.json`` is a stable contract for CI tools::

    {
      "schema_version": 1,
      "profile": "smoke", "seed": 0, "train_seed": null,
      "provenance": {"versions": {"model-props": "...", "torch": "...", "timm": "...", "numpy": "..."},
                     "machine": {"cpu": "...", "cpu_count": 2, "torch_threads": 2, ...}},
      "models": {"vit": {"accuracy": 0.8, "nll": 0.5, "parameters": 683242, "checkpoint_sha256": "...",
                         "recipe": "vit", "recipe_fingerprint": "<hash of the recipe but its seed>",
                         "train_seed": 0, "provenance": {"code_hash": "...", "recipe_key": "...", "versions": {...},
                                                         "machine": {...}}}},
      "results": [{"claim": "park2022.msa-lowpass", "model": "vit",
                   "verdict": "supported" | "contradicted" | "inconclusive" | "skipped" | "xfailed",
                   "expected": "pass" | "known-failure" | "seed-dependent",
                   "statistic": "...", "value": -0.12, "interval": [-0.2, -0.05], "reason": "...",
                   "parts": [{"part": "...", "verdict": "...", "value": ..., "interval": [...], ...}]}]
    }

``value``/``interval`` are null for skipped records. For ``xfailed`` records the measured verdict is kept
in ``measured_verdict``. The contract only grows: later claims add records, later versions add keys.
"""
from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .anatomy import Anatomy
from .claims import Claim
from .evaluation import ClaimOutcome
from .measures import UnitReport

__all__ = ["SCHEMA_VERSION", "allure_labels", "attach", "figure_png", "outcome_record", "skip_record",
           "model_facts", "write_summary", "verdict_table"]

SCHEMA_VERSION = 1
SHORT = {"supported": "ok", "contradicted": "CONTRA", "inconclusive": "incon", "skipped": "-", "xfailed": "xfail"}


def allure_labels(claim: Claim, model: str, expected: str | None = None) -> None:
    """Epic = paper, feature = section, story = claim id, the model as a parameter, a link to the paper, and
    the seed study's expectation (known failure / seed-dependent) as a tag."""
    import allure

    allure.dynamic.epic(f"{claim.paper.title} ({claim.paper.venue})")
    allure.dynamic.feature(claim.section)
    allure.dynamic.story(claim.id)
    allure.dynamic.title(f"{claim.id} [{model}]")
    allure.dynamic.parameter("model", str(model))
    allure.dynamic.link(claim.paper.url, name=f"arXiv:{claim.paper.arxiv}")
    allure.dynamic.severity(getattr(allure.severity_level, claim.severity.upper()))
    if expected is not None:
        allure.dynamic.tag(expected)
    rules = "\n".join(f"- **{p.name}**: {p.rule}" for p in claim.parts)
    allure.dynamic.description(f"{claim.statement}\n\n**Units:** {claim.units}\n\n**Decision rules** "
                               f"({claim.level:.0%} percentile bootstrap):\n{rules}")


def attach(outcome: ClaimOutcome, png: bytes) -> None:
    import allure

    numbers = {"claim": outcome.claim.id, "model": outcome.model, "verdict": outcome.verdict,
               "parts": [p.to_json() for p in outcome.parts]}
    allure.attach(png, name=f"{outcome.claim.measurement} - {outcome.model}", attachment_type=allure.attachment_type.PNG)
    allure.attach(json.dumps(numbers, indent=2), name="numbers", attachment_type=allure.attachment_type.JSON)


def _shade(ax, anat_units, depth_step: float) -> None:
    for u in anat_units:
        if u.kind == "msa":
            ax.axvspan(u.depth - depth_step / 2, u.depth + depth_step / 2, color="0.85", lw=0)
        elif u.subsamples:
            ax.axvspan(u.depth - depth_step / 2, u.depth + depth_step / 2, color="#cfe0ff", lw=0)


def figure_png(claim: Claim, report: UnitReport, anat: Anatomy, model: str) -> bytes:
    """The figure the paper would show for this claim and model (PNG bytes)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    units = report.units
    depth = np.array([u.depth for u in units])
    step = 1.0 / max(1, len(units) - 1)
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    m = claim.measurement
    if m in ("fourier", "variance"):
        values = (report.high_freq if m == "fourier" else report.variance).mean(axis=0)
        _shade(ax, units, step)
        ax.plot(depth, values, "o-", color="C3" if m == "fourier" else "C0")
        ax.set_xlabel("normalised depth (grey: MSA, blue: subsampling)")
        ax.set_ylabel("Δlog amplitude at highest frequency" if m == "fourier" else "feature-map variance")
    elif m == "cka":
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
    elif m == "skip":
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
    ax.set_title(f"{claim.id} — {model}", fontsize=9)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def outcome_record(outcome: ClaimOutcome) -> dict[str, Any]:
    d = outcome.decisive
    e = d.estimate
    return {"claim": outcome.claim.id, "model": outcome.model, "verdict": outcome.verdict,
            "statistic": f"{d.part.name}: {d.part.label}",
            "value": e.value, "interval": [e.low, e.high], "reason": outcome.message(),
            "parts": [p.to_json() for p in outcome.parts]}


def model_facts(mut: Any) -> dict[str, Any]:
    """What summary.json says of a model under test: fit, size, weights and where they came from."""
    recipe = mut.recipe
    return {"accuracy": mut.metrics["test_accuracy"], "nll": mut.metrics.get("test_nll"), "parameters": mut.parameters,
            "checkpoint_sha256": mut.checkpoint_sha256, "checkpoint": str(mut.checkpoint) if mut.checkpoint else None,
            "recipe": recipe.name if recipe else None, "recipe_fingerprint": recipe.fingerprint() if recipe else None,
            "train_seed": recipe.seed if recipe else None, "provenance": mut.provenance or None}


def skip_record(claim: Claim, model: str, reason: str) -> dict[str, Any]:
    return {"claim": claim.id, "model": model, "verdict": "skipped", "statistic": None, "value": None,
            "interval": None, "reason": reason, "parts": []}


def verdict_table(results: Iterable[Mapping[str, Any]]) -> list[str]:
    """Claims x models, each cell the verdict and the decisive value, as aligned text lines."""
    results = list(results)
    models = list(dict.fromkeys(r["model"] for r in results))
    claims = list(dict.fromkeys(r["claim"] for r in results))
    cell = {(r["claim"], r["model"]): r for r in results}

    def fmt(r):
        if r is None:
            return ""
        return SHORT[r["verdict"]] + (f" {r['value']:+.3g}" if r.get("value") is not None else "")

    width = max([len(c) for c in claims] + [5])
    cols = [max([len(m)] + [len(fmt(cell.get((c, m)))) for c in claims]) for m in models]
    lines = [f"{'claim':{width}s}  " + "  ".join(f"{m:{w}s}" for m, w in zip(models, cols))]
    for c in claims:
        lines.append(f"{c:{width}s}  " + "  ".join(f"{fmt(cell.get((c, m))):{w}s}" for m, w in zip(models, cols)))
    return lines


def write_summary(directory: Path, *, profile: str, seed: int, models: Mapping[str, Mapping[str, Any]],
                  results: list[Mapping[str, Any]], train_seed: int | None = None,
                  provenance: Mapping[str, Any] | None = None) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    ordered = sorted(results, key=lambda r: (r["claim"], r["model"]))
    summary = {"schema_version": SCHEMA_VERSION, "profile": profile, "seed": seed, "train_seed": train_seed,
               "provenance": dict(provenance or {}), "models": dict(models), "results": ordered}
    (directory / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    lines = [f"# model-props verdicts (profile `{profile}`, seed {seed})", "", "```", *verdict_table(ordered), "```", "",
             "| claim | model | verdict | statistic | value | interval |", "|---|---|---|---|---|---|"]
    for r in ordered:
        val = "" if r["value"] is None else f"{r['value']:.4g}"
        ival = "" if r["interval"] is None else f"[{r['interval'][0]:.4g}, {r['interval'][1]:.4g}]"
        lines.append(f"| {r['claim']} | {r['model']} | {r['verdict']} | {r['statistic'] or r['reason']} | {val} | {ival} |")
    (directory / "summary.md").write_text("\n".join(lines) + "\n")
