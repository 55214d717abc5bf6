"""Running a seed study: every recipe of a profile trained with several seeds and the claim suite run on each.

Writes ``<profile>-seeds.json`` (read by :mod:`model_props.claims.expectations`) and a readable ``.md``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..claims.expectations import FLOOR_MARGIN, SCHEMA_VERSION, SeedStudy, decisive_part, format_part

__all__ = ["run_study", "study_markdown"]


def _suite_summary(settings: Any, seed: int, workdir: Path) -> dict[str, Any]:
    """Run the packaged claim suite on the references trained with ``seed``; its summary.json."""
    import subprocess
    import sys

    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "--pyargs",
        "model_props.suite",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--claims-profile={settings.profile}",
        f"--claims-cache={settings.cache_dir}",
        f"--claims-train-seed={seed}",
        f"--claims-seed={settings.seed}",
        f"--claims-device={settings.device}",
    ]
    if settings.recipes.user_dir is not None:
        cmd.append(f"--claims-recipes={settings.recipes.user_dir}")
    if settings.data_root is not None:
        cmd.append(f"--claims-data-root={settings.data_root}")
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    summary = workdir / "reports" / "summary.json"
    if not summary.is_file():
        raise RuntimeError(
            f"the claim suite wrote no summary for seed {seed}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return json.loads(summary.read_text())


def run_study(settings: Any, *, seeds: list[int], workers: int = 1, out: Path | None = None) -> Path:
    """Train every reference and variant of the profile with each seed, run the claim suite on each seed, and
    write ``<profile>-seeds.json`` and ``.md`` to ``out`` (default: the user's recipes folder, else ./fixtures)."""
    import dataclasses
    import functools
    import tempfile
    from datetime import date

    from ..claims import list_claims
    from ..provenance import provenance
    from ..training.parallel import map_recipes, train_until
    from .store import ModelStore

    profile = settings.profile_data
    names = profile.references + profile.variants
    store = ModelStore(settings)
    until = {n: store.last_checkpoint_needed(n) for n in names}
    runs = [dataclasses.replace(profile.recipes[n], seed=s) for s in seeds for n in names]
    metrics: dict[tuple[str, int], dict[str, Any]] = {}
    train = functools.partial(train_until, settings.cache_dir, settings.data_root, until)
    for recipe, result in map_recipes(train, runs, workers=workers):
        metrics[(recipe.name, recipe.seed)] = result
        print(
            f"trained {recipe.name} seed {recipe.seed}: test accuracy {result['test_accuracy']:.4f}"
            f"{' (cache)' if result['from_cache'] else ''}",
            flush=True,
        )
    claims: dict[str, Any] = {c.id: {"fingerprint": c.fingerprint(), "models": {}} for c in list_claims()}
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            summary = _suite_summary(settings, seed, Path(tmp))
        for r in summary["results"]:
            verdict = r.get("measured_verdict", r["verdict"])
            claims[r["claim"]]["models"].setdefault(r["model"], []).append(
                {"seed": seed, "verdict": verdict, "parts": r.get("parts", [])}
            )
        print(f"claim suite on seed {seed}: {len(summary['results'])} records", flush=True)
    data = {
        "schema_version": SCHEMA_VERSION,
        "profile": profile.name,
        "seeds": list(seeds),
        "floor_margin": FLOOR_MARGIN,
        "date": date.today().isoformat(),
        "provenance": provenance(settings.device),
        "recipes": {
            n: {
                "fingerprint": profile.recipes[n].fingerprint(),
                "checkpoint": until[n],
                **{k: [metrics[(n, s)][k] for s in seeds] for k in ("test_accuracy", "test_nll", "val_accuracy")},
            }
            for n in names
        },
        "claims": claims,
    }
    out = out or settings.recipes.user_dir or Path.cwd() / "fixtures"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{profile.name}-seeds.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    (out / f"{profile.name}-seeds.md").write_text(study_markdown(SeedStudy.from_json(data, str(path)), profile))
    return path


def study_markdown(study: SeedStudy, profile: Any) -> str:
    """The readable table of a study: accuracy per recipe and seed; per claim x model the tally and the
    expectation it sets."""
    import statistics

    from ..claims import get_claim

    m = study.provenance.get("machine", {})
    lines = [
        f"# Seed study, profile `{study.profile}`",
        "",
        f"Seeds {list(study.seeds)}; every recipe trained once per seed and the claim suite run on each seed's "
        f"references. Machine: {m.get('cpu')}, {m.get('cpu_count')} cores; versions "
        f"{study.provenance.get('versions')}. Regenerate: `model-props seed-study --profile {study.profile}`.",
        "",
        "## Accuracy per recipe",
        "",
        f"Floor = worst seed - {FLOOR_MARGIN:.2f}; the library's tests assert it.",
        "",
        "| recipe | checkpoint | test accuracy mean ± sd | per seed | test NLL mean | floor |",
        "|---|---|---|---|---|---|",
    ]
    for name, entry in study.recipes.items():
        acc = entry["test_accuracy"]
        sd = statistics.stdev(acc) if len(acc) > 1 else 0.0
        per_seed = ", ".join(f"{a:.3f}" for a in acc)
        lines.append(
            f"| {name} | {entry.get('checkpoint', 'final')} | {statistics.mean(acc):.3f} ± {sd:.3f} | {per_seed} | "
            f"{statistics.mean(entry['test_nll']):.3f} | {min(acc) - FLOOR_MARGIN:.3f} |"
        )
    lines += [
        "",
        "## Claims",
        "",
        "Expectation: **pass** (supported on every seed), **known failure** (contradicted on every seed: strict "
        "xfail), **seed-dependent** (anything else: non-strict xfail).",
        "",
        "| claim | model | supported | per seed (decisive part: value [95% CI]) | expectation |",
        "|---|---|---|---|---|",
    ]
    for claim_id, entry in study.claims.items():
        claim = get_claim(claim_id)
        for model, records in entry["models"].items():
            if all(r["verdict"] == "skipped" for r in records):
                continue
            exp = study.expectation(claim, model)
            cells = "; ".join(
                f"{r['seed']}: " + (format_part(d) if (d := decisive_part(r["parts"])) else r["verdict"])
                for r in records
            )
            k = sum(r["verdict"] == "supported" for r in records)
            lines.append(f"| {claim_id} | {model} | {k}/{len(records)} | {cells} | {exp.kind if exp else '-'} |")
    return "\n".join(lines) + "\n"
