"""The readable ``<profile>-seeds.md`` of a seed study: accuracy per recipe and seed, and per claim x reference x
part the verdict over all seeds, the verdict the setting seeds alone give, how the held-out seeds replicate it,
all computed by the current statistics code from the study's per-seed estimates."""

from __future__ import annotations

import statistics
from typing import Any

from ..claims import list_claims
from ..training.profiles import Profile
from ..verdicts.study import CONFIRMATION_TARGET, SeedStudy, regenerate

__all__ = ["study_markdown", "verdict_rows"]

SHORT = {"supported": "ok", "contradicted": "no", "inconclusive": "?", "skipped": "-"}


def _seeds(values: Any) -> str:
    return ", ".join("undef." if v is None else f"{v:.3g}" for v in values)


def verdict_rows(study: SeedStudy) -> list[dict[str, Any]]:
    """Per claim x reference x part: the verdict over every seed, the setting seeds' verdict and the replication."""
    rows = []
    for claim in list_claims():
        for model in study.evaluated_on(claim):
            replication = study.replication(claim, model)
            for part in study.evaluate(claim, model).parts:
                rows.append({"claim": claim.id, "model": model, "part": part.part.name, "verdict": part.verdict,
                             "replication": replication.get(part.part.name), "outcome": part})  # fmt: skip
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


def _machines(study: SeedStudy) -> str:
    """Where the seeds were built: one machine, or per seed for a study assembled from shards."""
    per_seed = study.provenance.get("seeds") or {str(s): study.provenance for s in study.seeds}
    kinds: dict[str, list[str]] = {}
    for seed, made in per_seed.items():
        m = made.get("machine", {})
        kind = f"{m.get('cpu')} ({m.get('cpu_capability') or 'instruction set unrecorded'}), {m.get('cpu_count')} cores"
        kinds.setdefault(f"{kind}; versions {made.get('versions')}", []).append(seed)
    if len(per_seed) == len(study.seeds) and len(kinds) == 1:
        return f"Machine: {next(iter(kinds))}."
    return "Machines: " + "; ".join(f"seeds {', '.join(s)} on {k}" for k, s in kinds.items()) + "."


def study_markdown(study: SeedStudy, profile: Profile) -> str:
    found = study.confirmation(list_claims())
    lines = [
        f"# Seed study, profile `{study.profile}`",
        "",
        f"Seeds {list(study.seeds)}: every recipe trained once per seed, every claim part measured on each seed's "
        "models, each seed on a measurement sample of its own (test images, noise, attack starts, Hessian batches) "
        f"shared by every recipe of that seed. Verdicts use every seed, each comparison paired by seed index. Seeds "
        f"{list(study.set_seeds)} predict seeds {list(study.confirm_seeds)}, held out: each held-out estimate should "
        f"fall inside the setting seeds' 95 % prediction interval. {_machines(study)} Regenerate: "
        f"`{regenerate(study.profile, study.seeds)}`.",
        "",
        f"**Held-out confirmation: {found.inside} of {found.total} held-out estimates ({found.share:.1%}) fall inside "
        f"their prediction interval** (at least {CONFIRMATION_TARGET:.0%} needed to write the study).",
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
        "Per part: the verdict over every seed (architecture scope: a t interval over seeds, paired by seed index "
        "for two recipes; Holm across a claim's parts), the verdict over the setting seeds alone, how the held-out "
        "seeds replicate it (*confirmed*; *decided with more seeds*: inconclusive over the setting seeds, decided "
        "over all, every held-out estimate inside its interval; *did not replicate*: a held-out estimate outside), "
        "the held-out estimates inside their prediction interval, and the per-seed estimates of each model the part "
        "reads.",
        "",
        "| claim | model | part | verdict (all seeds) | value [95 % CI] | setting seeds | held-out seeds | inside | "
        "per seed |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in verdict_rows(study):
        p, rep = r["outcome"], r["replication"]
        ci = f"{p.estimate.value:+.3g} [{p.estimate.low:+.3g}, {p.estimate.high:+.3g}]" if p.estimate else p.reason
        seeds = "; ".join(f"{n}: {_seeds(v)}" for n, v in (p.seeds or {}).items())
        early, category = (rep.set_verdict, rep.category) if rep else ("-", "-")
        held = f"{rep.inside}/{rep.total}" if rep else "-"
        lines.append(f"| {r['claim']} | {r['model']} | {r['part']} | {r['verdict']} | {ci} | {early} | {category} | "
                     f"{held} | {seeds} |")  # fmt: skip
    return "\n".join(lines) + "\n"
