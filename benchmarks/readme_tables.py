"""The README's tables and figures, generated from data instead of typed by hand.

Each block of README.md between ``<!-- generated: NAME -->`` and ``<!-- end: NAME -->`` is rewritten from its
source: the claim catalogue (the code), the committed seed study (``fixtures/smoke-seeds.json``: accuracies,
architecture verdicts at k = 5, expectations, the held-out confirmation rate), the coverage simulation
(``benchmarks/results/coverage.json``). ``property_tests/library/test_readme.py`` fails when a block is stale.

    python benchmarks/readme_tables.py          # rewrite the blocks
    python benchmarks/readme_tables.py --check  # exit 1 if a block is stale
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

from model_props.claims import catalogue_markdown, list_claims
from model_props.claims.expectations import load_study
from model_props.claims.stats import N_BOOT
from model_props.reporting.disputes import disagreement_table
from model_props.reporting.disputes import disagreements as disputes
from model_props.reporting.summary import outcome_record, training_facts
from model_props.training.profiles import load_profile

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SHORT = {"supported": "ok", "contradicted": "no", "inconclusive": "?", "skipped": "-"}


def _study():
    study = load_study("smoke")
    if study is None:
        raise SystemExit("fixtures/smoke-seeds.json is missing: run model-props seed-study")
    return study


def accuracy() -> str:
    study = _study()
    lines = ["| recipe | checkpoint (step) | test accuracy, mean ± sd over seeds | per seed |", "|---|---|---|---|"]
    for name, entry in study.recipes.items():
        for checkpoint, c in entry["checkpoints"].items():
            acc = c["test_accuracy"]
            per_seed = ", ".join(f"{a:.3f}" for a in acc)
            lines.append(f"| {name} | {checkpoint} ({c['step'][0]}) | {statistics.mean(acc):.3f} ± "
                         f"{statistics.stdev(acc):.3f} | {per_seed} |")  # fmt: skip
    return "\n".join(lines)


def verdicts() -> str:
    """Per claim x reference: the architecture verdict over every seed, and per part the expectation of the
    setting seeds where it differs."""
    study = _study()
    references = ["vit", "pit", "swin", "resnet", "alternet"]
    lines = ["| claim | " + " | ".join(references) + " |", "|---|" + "---|" * len(references)]
    for claim in list_claims():
        cells = []
        for model in references:
            if model not in study.evaluated_on(claim):
                cells.append("-")
                continue
            outcome = study.evaluate(claim, model)
            expected = study.expectation(claim, model)
            parts = []
            for p in outcome.parts:
                if p.verdict == "skipped":
                    continue
                e = p.estimate
                note = (
                    "" if expected.parts.get(p.part.name) == p.verdict else f" (exp. {expected.parts.get(p.part.name)})"
                )
                parts.append(f"{p.part.name} {SHORT[p.verdict]} {e.value:+.3g}{note}")
            if outcome.skip_reason or not parts:
                cells.append("skipped")
                continue
            cells.append(f"**{outcome.verdict}**: " + "; ".join(parts))
        lines.append(f"| `{claim.id}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def disagreements() -> str:
    """Each disagreement between papers on the references, from the study's architecture verdicts of both claims
    (the records the suite writes, set side by side as in summary.md)."""
    study = _study()
    profile = load_profile("smoke")
    involved = {c.id for c in list_claims() if c.contradicts} | {d for c in list_claims() for d in c.contradicts}
    outcomes = [study.evaluate(claim, model) for claim in list_claims() if claim.id in involved
                for model in study.evaluated_on(claim)]  # fmt: skip
    records = [outcome_record(o) for o in outcomes if not o.skip_reason]
    models = {n: {"training": training_facts(profile.recipe(n))} for n in profile.references}
    return "\n".join(disagreement_table(disputes(records, models)))


def confirmation() -> str:
    study = _study()
    inside, total = study.confirmation(list_claims())
    return (f"**{inside} of {total} held-out estimates ({inside / total:.1%}) fall inside the 95 % prediction "
            f"interval of seeds {list(study.set_seeds)}** (target: at least 90 %).")  # fmt: skip


def coverage() -> str:
    data = json.loads((ROOT / "benchmarks" / "results" / "coverage.json").read_text())
    lines = [f"| seeds k | architecture interval (t over seeds) | one seed's interval over {data['n']} images |",
             "|---|---|---|"]  # fmt: skip
    lines += [f"| {r['k']} | {r['architecture']:.1%} | {r['one_seed']:.1%} |" for r in data["rows"]]
    return "\n".join(lines) + (
        f"\n\n({data['reps']:,} simulated studies per row; between-seed sd {data['tau']}, within-seed sd "
        f"{data['sigma']}; nominal 95 %.)"
    )


def false_contradictions() -> str:
    study = _study()
    tests = sum(len(study.evaluated_on(c)) for c in list_claims())
    alpha = (1 - 0.95) / 2
    return (f"Each claim's contradiction is tested at a one-sided {alpha:.1%} family-wise level (Holm's procedure "
            f"across its parts), so if no finding were false at all, the {tests} claim x reference tests of the smoke "
            f"suite would show at most {alpha * tests:.1f} false contradictions on average ({alpha:.1%} x {tests}); "
            f"checkpoint-scope intervals use {N_BOOT:,} bootstrap resamples.")  # fmt: skip


def grid() -> str:
    data = json.loads((ROOT / "fixtures" / "smoke-grid.json").read_text())
    w = data["common_warmup"]
    lines = [f"Common warm-up: **{w['steps']} steps** (mean best validation accuracy "
             + ", ".join(f"{v:.4f} at {k}" for k, v in w["mean_best_val_accuracy"].items()) + ").", "",
             "| reference | lr | warm-up steps | validation accuracy | learning rates tried |", "|---|---|---|---|---|"]  # fmt: skip
    for model, chosen in data["selected"].items():
        run = next(r for r in data["runs"] if r["model"] == model and r["lr"] == chosen["lr"]
                   and r["warmup_steps"] == chosen["warmup_steps"])  # fmt: skip
        tried = ", ".join(f"{lr:g}" for lr in sorted({r["lr"] for r in data["runs"] if r["model"] == model}))
        lines.append(f"| {model} | {chosen['lr']:g} | {chosen['warmup_steps']} | {run['val_accuracy']:.4f} | {tried} |")
    variants = json.loads((ROOT / "fixtures" / "smoke-variant-grid.json").read_text())
    profile = load_profile("smoke")
    for model, chosen in variants["selected"].items():
        recipe, reference = profile.recipe(model), profile.bases[model]
        base = next(r for r in variants["runs"] if r["model"] == model and r["lr"] == profile.recipe(reference).lr)
        run = next(r for r in variants["runs"] if r["model"] == model and r["lr"] == chosen["lr"])
        lines += ["", f"Variants keep their reference's recipe unless its learning rate leaves them at chance on the "
                  f"validation split; then the same grid, at the common warm-up, picks theirs "
                  f"(`fixtures/smoke-variant-grid.md`): {model} ({recipe.description.split(' (claim')[0]}) reached "
                  f"{base['val_accuracy']:.3f} at {reference}'s lr {base['lr']:g} and takes **{chosen['lr']:g}** "
                  f"({run['val_accuracy']:.4f}; tried "
                  + ", ".join(f"{lr:g}" for lr in sorted({r['lr'] for r in variants['runs'] if r['model'] == model}))
                  + ")."]  # fmt: skip
    return "\n".join(lines)


COMPARED = ("noise", "corruption", "attack", "spectrum")  # the kinds only parts that compare two models read


def pretrained_224() -> str:
    """The 224-px budget: the suite per model as a user runs it, and each measurement kind's seconds ("-": no
    claim reads it of that model: the lesions of a model without stages)."""
    data = json.loads((ROOT / "benchmarks" / "results" / "pretrained_224.json").read_text())
    kinds = ("fit", "units", "lesion", "noise", "corruption", "attack", "spectrum")
    lines = [
        f"{data['images']} images at {data['img_size']} px, {data['cpu_threads']} CPU threads "
        f"({data['provenance']['machine']['cpu']}); seconds.",
        "",
        "| model | the suite (wall, cold cache) | outcome | " + " | ".join(kinds) + " |",
        "|---|---|---|" + "---|" * len(kinds),
    ]
    for model, r in data["models"].items():
        cells = [f"{r['suite_kinds'][k]:.0f}" if k in r["suite_kinds"]
                 else f"~{r['other_kinds'][k]['scaled_s']:.0f}*" if k in r["other_kinds"] and k in COMPARED
                 else "-" for k in kinds]  # fmt: skip
        lines.append(f"| {model} | {r['suite']['wall_s']:.0f} | {r['suite']['outcome']} | " + " | ".join(cells) + " |")
    sample = {k: v for k, v in next(iter(data["models"].values()))["other_kinds"].items() if k in COMPARED}
    lines += ["", "\\* what a comparator of your own (`--claims-versus`) adds, per model: only parts that compare with "
              "another model read it. Timed on a sample and scaled linearly: " + "; ".join(f"{k} {v['sampled']}"
                                                                          for k, v in sample.items()) + "."]  # fmt: skip
    return "\n".join(lines)


def _outcome(run: dict) -> str:
    """pytest's summary of a run, without its clock and warnings: "685 passed, 78 skipped, 19 xfailed"."""
    words = run["outcome"].split(" in ")[0].split(", ")
    return ", ".join(w for w in words if not w.endswith(("deselected", "warning", "warnings")))


def run_times() -> str:
    """The Test section's numbers, from the last ``run_times.py cold warm checkpoint study`` (run_times.json)."""
    data = json.loads((ROOT / "benchmarks" / "results" / "run_times.json").read_text())
    cold, warm = data["cold"], data["warm"]
    clock = warm["outcome"].split(" in ")[1].split("s")[0]
    return (f"On 2 CPU cores this tree, \"{_outcome(warm)}\", took **{cold['seconds'] / 60:.1f} minutes cold** "
            f"({cold['seconds']:,.0f} s from a fresh cache) and **{warm['seconds']:.0f} s warm** (pytest's clock "
            f"{float(clock):.0f} s), measured by `python benchmarks/run_times.py` (`benchmarks/RESULTS.md`).")  # fmt: skip


def new_checkpoint() -> str:
    """The In-your-own-project sentence on a new checkpoint's wait, from run_times.json."""
    run = json.loads((ROOT / "benchmarks" / "results" / "run_times.json").read_text())["new_checkpoint"]
    kinds = run["per_kind_seconds"]
    attacks = sum(kinds.get(k, 0.0) for k in ("attack", "attack_test")) / run["seconds"]
    return (f"With the references cached, it took {run['seconds']:.0f} s for new weights of the smoke ViT on 2 CPU "
            f"cores, {attacks:.0%} of it the adversarial attacks (`benchmarks/RESULTS.md`).")  # fmt: skip


BLOCKS: dict[str, Callable[[], str]] = {
    "run-times": run_times,
    "new-checkpoint": new_checkpoint,
    "grid": grid,
    "catalogue": lambda: catalogue_markdown().rstrip("\n"),
    "accuracy": accuracy,
    "verdicts": verdicts,
    "disagreements": disagreements,
    "confirmation": confirmation,
    "coverage": coverage,
    "false-contradictions": false_contradictions,
    "pretrained-224": pretrained_224,
}


def render(text: str) -> str:
    for name, make in BLOCKS.items():
        pattern = re.compile(rf"(<!-- generated: {name} -->\n)(?:.*?\n)?(<!-- end: {name} -->)", re.S)
        if not pattern.search(text):
            raise SystemExit(f"README.md has no block '{name}'")
        body = make()
        text = pattern.sub(lambda m, body=body: m.group(1) + body + "\n" + m.group(2), text)
    return text


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true")
    args = p.parse_args()
    current = README.read_text()
    fresh = render(current)
    if args.check:
        sys.exit(0 if fresh == current else 1)
    README.write_text(fresh)


if __name__ == "__main__":
    main()
