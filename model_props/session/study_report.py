"""The readable ``<profile>-seeds.md`` of a seed study: accuracy per recipe and seed, and per claim x reference x
part the expectation the setting seeds give, its confirmation by the held-out seeds and the verdict over all
seeds, all computed by the current statistics code from the study's per-seed estimates."""

from __future__ import annotations

import statistics
from typing import Any

from ..claims import list_claims
from ..claims.expectations import SeedStudy, regenerate
from ..training.profiles import Profile

__all__ = ["study_markdown", "verdict_rows"]

SHORT = {"supported": "ok", "contradicted": "no", "inconclusive": "?", "skipped": "-"}


def _seeds(values: Any) -> str:
    return ", ".join("undef." if v is None else f"{v:.3g}" for v in values)


def verdict_rows(study: SeedStudy) -> list[dict[str, Any]]:
    """Per claim x reference x measured part: the expectation, its confirmation, the verdict over every seed."""
    rows = []
    for claim in list_claims():
        for model in study.evaluated_on(claim):
            expected = study.expectation(claim, model)
            final = study.evaluate(claim, model)
            for part in final.parts:
                rows.append({"claim": claim.id, "model": model, "part": part.part.name,
                             "expected": expected.parts.get(part.part.name, "skipped"), "verdict": part.verdict,
                             "confirmed": expected.confirmed.get(part.part.name), "outcome": part})  # fmt: skip
    return rows


def _added(study: SeedStudy) -> list[str]:
    """A paragraph on the entries added later (``seed-study --add``): when, and on what machine, each was measured."""
    added = {cid: e["added"] for cid, e in study.claims.items() if "added" in e}
    if not added:
        return []
    where = "; ".join(
        f"`{cid}` on {a['date']} ({a['provenance']['machine'].get('cpu')}, {a['provenance']['machine'].get('cpu_count')} "
        f"cores)"
        for cid, a in added.items()
    )
    return [
        f"Added later with `model-props seed-study --add`, with the same seeds, each recipe it reads trained again "
        f"where that machine's cache lacked it (training is deterministic on one machine, not across machines; the "
        f"accuracies above are the original study's): {where}.",
        "",
    ]


def study_markdown(study: SeedStudy, profile: Profile) -> str:
    m = study.provenance.get("machine", {})
    inside, total = study.confirmation(list_claims())
    lines = [
        f"# Seed study, profile `{study.profile}`",
        "",
        f"Seeds {list(study.seeds)}: every recipe trained once per seed, every claim part measured on each seed's "
        f"models. Seeds {list(study.set_seeds)} set each part's expectation (its verdict over those seeds); seeds "
        f"{list(study.confirm_seeds)} are held out and confirm it when their estimates fall inside the setting "
        f"seeds' 95 % prediction interval. Verdicts use every seed. Machine: {m.get('cpu')}, {m.get('cpu_count')} "
        f"cores; versions {study.provenance.get('versions')}. Regenerate: `{regenerate(study.profile)}`.",
        "",
        f"**Held-out confirmation: {inside} of {total} held-out estimates "
        f"({inside / max(total, 1):.1%}) fall inside their prediction interval** (target: 90 %).",
        "",
        *_added(study),
        "## Accuracy per recipe",
        "",
        "| recipe | checkpoint | step | test accuracy mean ± sd | per seed |",
        "|---|---|---|---|---|",
    ]
    for name, entry in study.recipes.items():
        for checkpoint, c in entry["checkpoints"].items():
            acc = c["test_accuracy"]
            sd = statistics.stdev(acc) if len(acc) > 1 else 0.0
            lines.append(f"| {name} | {checkpoint} | {c['step'][0]} | {statistics.mean(acc):.3f} ± {sd:.3f} | "
                         f"{', '.join(f'{a:.3f}' for a in acc)} |")  # fmt: skip
    lines += [
        "",
        "## Claims",
        "",
        "Per part: the expectation set by the setting seeds, the verdict over every seed (architecture scope: a t "
        "interval over seeds, Welch's for two recipes; Holm across a claim's parts), the held-out estimates inside "
        "their prediction interval, and the per-seed estimates of each model the part reads.",
        "",
        "| claim | model | part | expected | verdict (all seeds) | value [95 % CI] | held out inside | per seed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in verdict_rows(study):
        p = r["outcome"]
        ci = f"{p.estimate.value:+.3g} [{p.estimate.low:+.3g}, {p.estimate.high:+.3g}]" if p.estimate else p.reason
        seeds = "; ".join(f"{n}: {_seeds(v)}" for n, v in (p.seeds or {}).items())
        held = f"{r['confirmed'][0]}/{r['confirmed'][1]}" if r["confirmed"] else "-"
        lines.append(f"| {r['claim']} | {r['model']} | {r['part']} | {r['expected']} | {r['verdict']} | {ci} | "
                     f"{held} | {seeds} |")  # fmt: skip
    return "\n".join(lines) + "\n"
