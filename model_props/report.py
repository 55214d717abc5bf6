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

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .claims import Claim
from .evaluation import ClaimOutcome

__all__ = ["SCHEMA_VERSION", "allure_labels", "allure_title", "attach", "outcome_record", "skip_record", "model_facts",
           "write_summary", "verdict_table"]

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


def allure_title(claim: Claim, model: str, verdict: str) -> None:
    """The test's title in the report names the claim, the model and the verdict."""
    import allure

    allure.dynamic.title(f"{claim.id} [{model}]: {verdict}")


def attach(outcome: ClaimOutcome, png: bytes, raw: Mapping[str, Any] | None = None) -> None:
    """The figure, the numbers of every part, and the raw samples a figure shows (e.g. eigenvalues)."""
    import allure

    numbers = {"claim": outcome.claim.id, "model": outcome.model, "verdict": outcome.verdict,
               "parts": [p.to_json() for p in outcome.parts]}
    allure.attach(png, name=f"{outcome.claim.measurement} - {outcome.model}", attachment_type=allure.attachment_type.PNG)
    allure.attach(json.dumps(numbers, indent=2), name="numbers", attachment_type=allure.attachment_type.JSON)
    if raw:
        allure.attach(json.dumps(raw), name="raw measurements", attachment_type=allure.attachment_type.JSON)


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
                  provenance: Mapping[str, Any] | None = None, gate: list[Mapping[str, Any]] | None = None) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    ordered = sorted(results, key=lambda r: (r["claim"], r["model"]))
    summary = {"schema_version": SCHEMA_VERSION, "profile": profile, "seed": seed, "train_seed": train_seed,
               "provenance": dict(provenance or {}), "models": dict(models), "results": ordered,
               "gate": list(gate or [])}
    (directory / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    lines = [f"# model-props verdicts (profile `{profile}`, seed {seed})", "", "```", *verdict_table(ordered), "```", "",
             "| claim | model | verdict | statistic | value | interval |", "|---|---|---|---|---|---|"]
    for r in ordered:
        val = "" if r["value"] is None else f"{r['value']:.4g}"
        ival = "" if r["interval"] is None else f"[{r['interval'][0]:.4g}, {r['interval'][1]:.4g}]"
        lines.append(f"| {r['claim']} | {r['model']} | {r['verdict']} | {r['statistic'] or r['reason']} | {val} | {ival} |")
    (directory / "summary.md").write_text("\n".join(lines) + "\n")
