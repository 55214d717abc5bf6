"""Grid search of each reference's learning rate and warm-up length, scored on the validation split.

Every reference of a profile keeps the profile's step budget and schedule (linear warm-up, cosine decay);
only ``lr`` and ``warmup_steps`` vary over the stated grid. A configuration is scored by its accuracy on
the validation split carved from the training data (ties: lower validation NLL); the test split is never
read. Writes ``fixtures/<profile>-grid.json`` and ``.md``; the profile's recipes then take the selected
values, which a library test checks.

    python benchmarks/grid_search.py --profile smoke --workers 2 --threads 1
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import time
from datetime import date
from pathlib import Path

from model_props.cache import default_cache_dir
from model_props.parallel import map_recipes
from model_props.provenance import provenance
from model_props.recipes import Recipe, load_profile
from model_props.training import get_trained

ROOT = Path(__file__).resolve().parent.parent
LRS = (5e-4, 1e-3, 2e-3, 4e-3)
WARMUPS = (100, 200)


def _score(cache: Path, recipe: Recipe) -> dict:
    start = time.perf_counter()
    trained = get_trained(recipe, cache_dir=cache, progress=False)
    m = trained.metrics
    return {"val_accuracy": m["val_accuracy"], "val_nll": m["val_nll"], "train_seconds": m["train_seconds"],
            "wall_seconds": round(time.perf_counter() - start, 1), "from_cache": trained.from_cache}


def grid(profile: str, models: list[str], lrs: tuple[float, ...], warmups: tuple[int, ...]) -> list[Recipe]:
    base = load_profile(profile).recipes
    return [dataclasses.replace(base[m], name=f"{m}-grid-lr{lr:g}-w{w}", lr=lr, warmup_steps=w, warmup_epochs=None)
            for m in models for lr in lrs for w in warmups]


def select(rows: list[dict]) -> dict[str, dict]:
    """Per model, the row with the highest validation accuracy (ties: the lower validation NLL)."""
    best: dict[str, dict] = {}
    for r in rows:
        b = best.get(r["model"])
        if b is None or (r["val_accuracy"], -r["val_nll"]) > (b["val_accuracy"], -b["val_nll"]):
            best[r["model"]] = r
    return best


def write(profile: str, rows: list[dict], lrs, warmups, out: Path) -> None:
    rows = sorted(rows, key=lambda r: (r["model"], r["lr"], r["warmup_steps"]))
    best = select(rows)
    prov = provenance()
    data = {"profile": profile, "date": date.today().isoformat(), "grid": {"lr": list(lrs), "warmup_steps": list(warmups)},
            "score": "validation accuracy (ties: lower validation NLL)", "provenance": prov,
            "selected": {m: {"lr": r["lr"], "warmup_steps": r["warmup_steps"]} for m, r in sorted(best.items())},
            "runs": rows}
    (out / f"{profile}-grid.json").write_text(json.dumps(data, indent=2) + "\n")
    m = prov["machine"]
    lines = [f"# Grid search, profile `{profile}`", "",
             f"Learning rate in {list(lrs)} x warm-up steps in {list(warmups)}; every other field of the recipe as in "
             f"`fixtures/{profile}.toml` (same step budget and schedule for every reference). Scored on the validation "
             "split (2,000 images carved from the training data); the test split is not read. Seed 0.", "",
             f"Machine: {m['cpu']}, {m['cpu_count']} cores, torch threads per run {m['torch_threads']}; "
             f"versions {prov['versions']}; {data['date']}. Regenerate: `python benchmarks/grid_search.py --profile {profile}`.", "",
             "| model | lr | warm-up steps | val accuracy | val NLL | train s | selected |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        chosen = "**yes**" if best[r["model"]] is r else ""
        lines.append(f"| {r['model']} | {r['lr']:g} | {r['warmup_steps']} | {r['val_accuracy']:.4f} | {r['val_nll']:.4f} | "
                     f"{r['train_seconds']:.0f} | {chosen} |")
    (out / f"{profile}-grid.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--profile", default="smoke")
    p.add_argument("--models", nargs="*", default=None, help="default: the profile's references")
    p.add_argument("--lr", type=float, nargs="*", default=list(LRS))
    p.add_argument("--warmup-steps", type=int, nargs="*", default=list(WARMUPS))
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--cache", type=Path, default=None)
    p.add_argument("--out", type=Path, default=ROOT / "fixtures")
    args = p.parse_args()
    models = args.models or load_profile(args.profile).references
    rows = []
    score = functools.partial(_score, args.cache or default_cache_dir())
    for recipe, result in map_recipes(score, grid(args.profile, models, tuple(args.lr), tuple(args.warmup_steps)),
                                      workers=args.workers, threads=args.threads):
        row = {"model": recipe.model, "lr": recipe.lr, "warmup_steps": recipe.warmup_steps, **result}
        rows.append(row)
        print(json.dumps(row), flush=True)
    write(args.profile, rows, args.lr, args.warmup_steps, args.out)


if __name__ == "__main__":
    main()
