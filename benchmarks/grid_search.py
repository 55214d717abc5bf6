"""Grid search of each reference's learning rate and warm-up length, scored on the validation split.

Every reference of a profile keeps the profile's step budget and schedule (linear warm-up, cosine decay);
only ``lr`` and ``warmup_steps`` vary over the stated grid. A configuration is scored by its accuracy on
the validation split carved from the training data (ties: lower validation NLL); the test split is never
read. Every reference then takes the same warm-up (:func:`common_warmup`) and its best learning rate there. A model whose best learning rate lies on an edge of the grid gets the next one beyond it (x2 above,
/2 below, every warm-up), until its best is interior (at most ``--max-extensions`` times), so no selection
is an artefact of where the grid stopped. Writes ``fixtures/<profile>-grid.json`` and ``.md``; the profile's
recipes then take the selected values, which a library test checks.

    python benchmarks/grid_search.py --profile smoke --workers 2 --threads 1 --log /tmp/grid.jsonl

``--log`` appends every run as a JSON line and reuses the runs already there (same model, lr, warm-up), so
an interrupted search resumes where it stopped. Runs reused from an older training-code hash are vouched for
by retraining one of them per hash, and every selected one, under the current code: their validation accuracy
and NLL must come out identical (recorded as ``reproduced``), else the script stops. A configuration the cache
already holds trained under the current code under another name (a profile's reference, trained by the seed
study with the selected values) counts as retrained; the rest are retrained in a scratch cache.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import time
from datetime import date
from pathlib import Path
from typing import Any

from provenance import record

from model_props.cache import default_cache_dir
from model_props.execution import executor
from model_props.training.checkpoints import code_hash, get_trained
from model_props.training.profiles import load_profile
from model_props.training.recipes import Recipe

ROOT = Path(__file__).resolve().parent.parent
LRS = (5e-4, 1e-3, 2e-3, 4e-3)
WARMUPS = (100, 200)


def map_parallel(fn, items, workers: int, threads: int | None):
    """``(item, fn(item))`` as each finishes, on a local Dask cluster of ``workers`` (one: in this process)."""
    with executor(workers=workers, threads=threads) as runner:
        yield from runner.map(fn, items)


def _score(cache: Path, recipe: Recipe) -> dict:
    start = time.perf_counter()
    trained = get_trained(recipe, cache_dir=cache, progress=False)
    m = trained.metrics
    return {
        "val_accuracy": m["val_accuracy"],
        "val_nll": m["val_nll"],
        "train_seconds": m["train_seconds"],
        "wall_seconds": round(time.perf_counter() - start, 1),
        "from_cache": trained.from_cache,
        "code_hash": code_hash(),
    }


def grid(profile: str, configs: list[tuple[str, float, int]]) -> list[Recipe]:
    base = load_profile(profile).recipes
    return [
        dataclasses.replace(base[m], name=f"{m}-grid-lr{lr:g}-w{w}", lr=lr, warmup_steps=w, warmup_epochs=None)
        for m, lr, w in configs
    ]


def _profile_name(recipe: Recipe) -> str:
    """The profile's recipe a grid run varies (a variant's ``model`` is a factory spec, not its name)."""
    return recipe.name.rsplit("-grid-", 1)[0]


def common_warmup(rows: list[dict]) -> tuple[int, dict[int, float]]:
    """The warm-up every reference shares (so that warm-up checkpoints compared by a claim sit at the same step):
    of the grid's warm-ups, the one whose per-model best validation accuracies have the highest mean (ties: the
    shorter warm-up); and that mean for each warm-up."""
    scores = {}
    for w in sorted({r["warmup_steps"] for r in rows}):
        best = select([r for r in rows if r["warmup_steps"] == w])
        scores[w] = sum(b["val_accuracy"] for b in best.values()) / len(best)
    return max(scores, key=lambda w: (scores[w], -w)), scores


def selection(rows: list[dict]) -> dict[str, dict]:
    """Per model, its best configuration at the common warm-up (see :func:`common_warmup`)."""
    w, _ = common_warmup(rows)
    return select([r for r in rows if r["warmup_steps"] == w])


def edge_extensions(rows: list[dict]) -> dict[str, float]:
    """Per model: the learning rate beyond the grid's edge where its selected
    configuration lies (x2 above the highest tried, /2 below the lowest), or nothing when it is interior."""
    out = {}
    for model, r in selection(rows).items():
        tried = sorted({x["lr"] for x in rows if x["model"] == model})
        if r["lr"] == tried[-1]:
            out[model] = tried[-1] * 2
        elif r["lr"] == tried[0]:
            out[model] = tried[0] / 2
    return out


def select(rows: list[dict]) -> dict[str, dict]:
    """Per model, the row with the highest validation accuracy (ties: the lower validation NLL)."""
    best: dict[str, dict] = {}
    for r in rows:
        b = best.get(r["model"])
        if b is None or (r["val_accuracy"], -r["val_nll"]) > (b["val_accuracy"], -b["val_nll"]):
            best[r["model"]] = r
    return best


def _held(cache: Path, profile: str) -> list[dict]:
    """The recipes (as their manifests record them) that ``cache`` holds trained under the current training code."""
    metas = [json.loads(p.read_text()) for p in sorted((cache / "models" / profile).glob("*/manifest.json"))]
    return [m["recipe"] for m in metas if m.get("code_hash") == code_hash() and "recipe" in m]


def _trained_as(held: list[dict], recipe: Recipe) -> Recipe | None:
    """The recipe, renamed as the cache holds it, when ``held`` (:func:`_held`) has a run of the same training
    configuration (every field but name and description); None otherwise."""
    ignore = ("name", "description")
    want = json.loads(json.dumps({k: v for k, v in recipe.to_dict().items() if k not in ignore}))
    for h in held:
        if {k: v for k, v in h.items() if k not in ignore} == want:
            return dataclasses.replace(recipe, name=h["name"], description=h["description"])
    return None


def reproduce(
    profile: str, rows: list[dict], cache: Path, workers: int, threads: int | None, done_before: list[dict]
) -> list[dict]:
    """For every older training-code hash among the runs, retrain one of its runs (one ``cache`` already holds
    under the current code if any, else its cheapest) and every selected run with the current code, and check
    that the validation numbers are identical (else stop: rerun without ``--log``). A check the committed table
    already records under the current code (``done_before``) is kept, not retrained."""
    import tempfile

    held = _held(cache, profile)

    def cost(r: dict) -> tuple[bool, float]:
        recipe = grid(profile, [(r["model"], r["lr"], r["warmup_steps"])])[0]
        return _trained_as(held, recipe) is None, r["train_seconds"]

    stale: dict[str | None, dict] = {}
    for r in rows:
        h = r.get("code_hash")
        if h != code_hash() and (h not in stale or cost(r) < cost(stale[h])):
            stale[h] = r
    for model, r in selection(rows).items():  # and every selected configuration: the recipes rest on them
        if r.get("code_hash") != code_hash():
            stale[f"{r.get('code_hash')}:{model}"] = r

    def config(r: dict) -> tuple:
        return r["model"], r["lr"], r["warmup_steps"], r.get("code_hash")

    kept = {config(c): c for c in done_before if c["current_code_hash"] == code_hash() and c["identical"]}
    checks = [kept[config(r)] for r in stale.values() if config(r) in kept]
    stale = {k: r for k, r in stale.items() if config(r) not in kept}
    with tempfile.TemporaryDirectory() as tmp:
        configs = dict.fromkeys((r["model"], r["lr"], r["warmup_steps"]) for r in stale.values())
        found = [(r, _trained_as(held, r)) for r in grid(profile, list(configs))]
        done = [(r, {**_score(cache, same), "as": same.name}) for r, same in found if same is not None]
        todo = [r for r, same in found if same is None]
        retrained = map_parallel(functools.partial(_score, Path(tmp)), todo, workers, threads)
        for recipe, again in [*done, *retrained]:  # retrained ones in order of completion
            r = next(
                r
                for r in stale.values()
                if (r["model"], r["lr"], r["warmup_steps"]) == (_profile_name(recipe), recipe.lr, recipe.warmup_steps)
            )
            h = r.get("code_hash")
            checks.append(
                {
                    "model": r["model"],
                    "lr": r["lr"],
                    "warmup_steps": r["warmup_steps"],
                    "code_hash": h,
                    "current_code_hash": again["code_hash"],
                    "val_accuracy": [r["val_accuracy"], again["val_accuracy"]],
                    "val_nll": [r["val_nll"], again["val_nll"]],
                    "identical": (again["val_accuracy"], again["val_nll"]) == (r["val_accuracy"], r["val_nll"]),
                    "retrained_as": again.get("as", "a scratch run"),
                }
            )
            print(json.dumps(checks[-1]), flush=True)
    if not all(c["identical"] for c in checks):
        raise SystemExit("runs of an older training-code hash do not reproduce; rerun the search without --log")
    return checks


def write(
    profile: str,
    rows: list[dict],
    lrs,
    warmups,
    out: Path,
    reproduced: list[dict],
    *,
    workers: int,
    threads: int,
    stem: str = "",
) -> None:
    rows = sorted(rows, key=lambda r: (r["model"], r["lr"], r["warmup_steps"]))
    searched = sorted({r["model"] for r in rows})
    command = " ".join(
        [f"--profile {profile}"]
        + ([f"--models {' '.join(searched)}"] if searched != sorted(load_profile(profile).references) else [])
        + ([f"--lr {' '.join(f'{x:g}' for x in lrs)}"] if list(lrs) != list(LRS) else [])
        + ([f"--warmup-steps {' '.join(map(str, warmups))}"] if list(warmups) != list(WARMUPS) else [])
        + ([f"--stem {stem}"] if stem else [])
    )
    stem = stem or f"{profile}-grid"
    best = selection(rows)
    warmup, warmup_scores = common_warmup(rows)
    prov = record(__file__)
    prov["machine"]["torch_threads"] = threads  # per run, not this process's
    extended = {m: sorted({r["lr"] for r in rows if r["model"] == m} - set(lrs)) for m in best}
    data: dict[str, Any] = {
        "profile": profile,
        "date": date.today().isoformat(),
        "grid": {
            "lr": list(lrs),
            "warmup_steps": list(warmups),
            "edge_extensions": {m: e for m, e in sorted(extended.items()) if e},
        },
        "score": "validation accuracy (ties: lower validation NLL)",
        "common_warmup": {
            "steps": warmup,
            "rule": "the grid warm-up with the highest mean over references of each one's best validation accuracy",
            "mean_best_val_accuracy": {str(w): round(v, 5) for w, v in warmup_scores.items()},
        },
        "provenance": prov,
        "selected": {m: {"lr": r["lr"], "warmup_steps": r["warmup_steps"]} for m, r in sorted(best.items())},
        "reproduced": reproduced,
        "runs": rows,
    }
    (out / f"{stem}.json").write_text(json.dumps(data, indent=2) + "\n")
    m = prov["machine"]
    lines = [
        f"# Grid search, profile `{profile}`",
        "",
        f"Learning rate in {list(lrs)} x warm-up steps in {list(warmups)}; a model whose best learning rate was on an "
        f"edge got the next one beyond it (x2 or /2) until its best was interior: "
        f"{', '.join(f'{m} {e}' for m, e in data['grid']['edge_extensions'].items()) or 'none needed'}. "
        f"Every other field of the recipe as in "
        f"`fixtures/{profile}.toml` (same step budget and schedule for every reference). Scored on the validation "
        "split (2,000 images carved from the training data); the test split is not read. Seed 0.",
        "",
        f"Every reference warms up for the same number of steps, so that the warm-up checkpoints a claim compares "
        f"sit at the same step: of the grid's warm-ups, the one whose per-reference best validation accuracies "
        f"have the highest mean, **{warmup} steps** (mean "
        + ", ".join(f"{v:.4f} at {w}" for w, v in warmup_scores.items())
        + "); each reference takes its best learning rate at that warm-up.",
        "",
        f"Machine: {m['cpu']}, {m['cpu_count']} cores, {workers} runs at a time with {threads} torch thread(s) each; "
        f"versions {prov['versions']}; {data['date']}; training code hashes "
        f"{sorted({r.get('code_hash', '?') for r in rows})}. "
        f"Regenerate: `python benchmarks/grid_search.py {command}`.",
        "",
        *(
            [
                f"Runs made under older training-code hashes were reused; one run of each and every selected run, "
                f"retrained under the current code ({code_hash()}), gave identical validation numbers: "
                + "; ".join(
                    f"{c['model']} lr {c['lr']:g} w{c['warmup_steps']} ({c['code_hash']}; retrained as "
                    f"{c.get('retrained_as', 'a scratch run')}): accuracy {c['val_accuracy'][1]}, NLL {c['val_nll'][1]:.6f}"
                    for c in reproduced
                )
                + ".",
                "",
            ]
            if reproduced
            else []
        ),
        "| model | lr | warm-up steps | val accuracy | val NLL | train s | selected |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        chosen = "**yes**" if best[r["model"]] is r else ""
        lines.append(
            f"| {r['model']} | {r['lr']:g} | {r['warmup_steps']} | {r['val_accuracy']:.4f} | {r['val_nll']:.4f} | "
            f"{r['train_seconds']:.0f} | {chosen} |"
        )
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--profile", default="smoke")
    p.add_argument("--models", nargs="*", default=None, help="default: the profile's references")
    p.add_argument("--lr", type=float, nargs="*", default=list(LRS))
    p.add_argument("--warmup-steps", type=int, nargs="*", default=list(WARMUPS))
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--cache", type=Path, default=None)
    p.add_argument("--max-extensions", type=int, default=4, help="edge extensions per model (default 4)")
    p.add_argument("--log", type=Path, default=None, help="JSON lines of runs: appended to, and reused on a rerun")
    p.add_argument("--out", type=Path, default=ROOT / "fixtures")
    p.add_argument(
        "--stem",
        default="",
        help="file name of the tables (default PROFILE-grid; e.g. smoke-variant-grid for variants)",
    )
    args = p.parse_args()
    models = args.models or load_profile(args.profile).references
    logged = (
        [json.loads(line) for line in args.log.read_text().splitlines() if line.strip()]
        if args.log and args.log.is_file()
        else []
    )
    rows: list[dict] = []
    score = functools.partial(_score, args.cache or default_cache_dir())

    def run(configs: list[tuple[str, float, int]]) -> None:
        done = {(r["model"], r["lr"], r["warmup_steps"]): r for r in logged}
        todo = []
        for c in configs:
            if c in done:
                rows.append(done[c])
            else:
                todo.append(c)
        for recipe, result in map_parallel(score, grid(args.profile, todo), args.workers, args.threads):
            row = {"model": _profile_name(recipe), "lr": recipe.lr, "warmup_steps": recipe.warmup_steps, **result}
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.log:
                with args.log.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")

    run([(m, lr, w) for m in models for lr in args.lr for w in args.warmup_steps])
    for _ in range(args.max_extensions):
        beyond = {m: lr for m, lr in edge_extensions(rows).items() if m in models}
        if not beyond:
            break
        run([(m, lr, w) for m, lr in beyond.items() for w in args.warmup_steps])
    threads = args.threads or max(1, (os.cpu_count() or 1) // max(1, args.workers))
    table = args.out / f"{args.stem or args.profile + '-grid'}.json"
    done_before = json.loads(table.read_text()).get("reproduced", []) if table.is_file() else []
    write(
        args.profile,
        rows,
        args.lr,
        args.warmup_steps,
        args.out,
        reproduce(args.profile, rows, args.cache or default_cache_dir(), args.workers, args.threads, done_before),
        workers=args.workers,
        threads=threads,
        stem=args.stem,
    )


if __name__ == "__main__":
    main()
