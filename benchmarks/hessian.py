"""Benchmark: the top-5 Hessian eigenvalues of the same batches by the PyHessian power-iteration protocol and by
our Lanczos solver, side by side in one run, each checked against a tightly converged solution.

For the smoke ViT and ResNet at the end of warm-up (the checkpoint the claims read), on the first ``--batches``
batches of the spectrum protocol (the profile's Hessian batch size): products (HVPs) and wall time of each
solver, and each solver's largest error against Lanczos run to a residual of 1e-10 (eigenvalues sorted by
magnitude, relative to that batch's |lambda_max|). Writes ``benchmarks/results/hessian.json``.

    python benchmarks/hessian.py [--batches 4] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from provenance import record

from model_props.config.settings import Settings
from model_props.measurements.functional.spectrum import (
    hessian_operator,
    lanczos_top_k,
    power_iteration_top_k,
    trainable_size,
)
from model_props.measurements.spectrum import spectrum_batches
from model_props.store.model_store import ModelStore
from model_props.training.loop import training_split
from model_props.training.loss import TrainingLoss

OUT = Path(__file__).resolve().parent / "results" / "hessian.json"


def relative_error(values: np.ndarray, reference: np.ndarray) -> float:
    order = np.argsort(-np.abs(values), kind="stable")
    ref = reference[np.argsort(-np.abs(reference), kind="stable")]
    return float(np.max(np.abs(values[order] - ref)) / np.abs(ref).max())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batches", type=int, default=4)
    p.add_argument("--models", nargs="*", default=["vit", "resnet"])
    p.add_argument("--cache", type=Path, default=None)
    args = p.parse_args()
    settings = Settings(cache_dir=args.cache) if args.cache else Settings()
    store = ModelStore(settings)
    m = store.profile.measurement
    rows = []
    for name in args.models:
        tested = store.get(name, "warmup")
        recipe = tested.recipe
        assert recipe is not None  # a reference, trained here by its recipe
        data = store.dataset(recipe.dataset)
        batches = spectrum_batches(
            training_split(recipe, data),
            TrainingLoss.of(recipe),
            args.batches,
            m.hessian_batch_size,
            data.num_classes,
            seed=0,
        )
        dim = trainable_size(tested.model)
        for b, (x, target) in enumerate(batches):
            with hessian_operator(
                tested.model, x, target, nll=TrainingLoss.nll, weight_decay=recipe.weight_decay, name=name
            ) as hvp:
                timings = {}
                solvers: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
                    "power": (power_iteration_top_k, {"seed": b}),
                    "fast": (lanczos_top_k, {"tol": m.hessian_tol, "seed": b}),
                    "reference": (lanczos_top_k, {"tol": 1e-10, "max_iter": 400, "seed": b + 1}),
                }
                for solver, (solve, options) in solvers.items():
                    start = time.perf_counter()
                    result = solve(hvp, dim, m.hessian_top_k, **options)
                    timings[solver] = (result, time.perf_counter() - start)
            ref = timings["reference"][0].eigenvalues
            row = {
                "model": name,
                "batch": b,
                "reference": ref.tolist(),
                "reference_converged": timings["reference"][0].converged,
            }
            for solver in ("power", "fast"):
                result, seconds = timings[solver]
                row[solver] = {
                    "hvps": result.hvps,
                    "seconds": round(seconds, 3),
                    "converged": result.converged,
                    "eigenvalues": result.eigenvalues.tolist(),
                    "max_rel_diff": relative_error(result.eigenvalues, ref),
                }
            rows.append(row)
            print(
                f"{name} batch {b}: power {row['power']['hvps']} HVPs {row['power']['seconds']:.1f} s "
                f"err {row['power']['max_rel_diff']:.2e} | fast {row['fast']['hvps']} HVPs {row['fast']['seconds']:.1f} s "
                f"err {row['fast']['max_rel_diff']:.2e}",
                flush=True,
            )
    power_hvps = sum(r["power"]["hvps"] for r in rows)
    fast_hvps = sum(r["fast"]["hvps"] for r in rows)
    power_s = sum(r["power"]["seconds"] for r in rows)
    fast_s = sum(r["fast"]["seconds"] for r in rows)
    summary = {
        "hvp_ratio": power_hvps / fast_hvps,
        "time_ratio": power_s / fast_s,
        "max_rel_diff": max(r["fast"]["max_rel_diff"] for r in rows),
        "power_max_rel_diff": max(r["power"]["max_rel_diff"] for r in rows),
        "per_model": {
            n: {
                f"{s}_{f}": sum(r[s][f] for r in rows if r["model"] == n)
                for s in ("power", "fast")
                for f in ("hvps", "seconds")
            }
            for n in args.models
        },
        "settings": {
            "batches": args.batches,
            "batch_size": m.hessian_batch_size,
            "k": m.hessian_top_k,
            "fast_tol": m.hessian_tol,
            "power_tol": 1e-3,
            "power_max_iter": 100,
            "reference_tol": 1e-10,
            "checkpoint": "warmup",
            "dtype": "float32 HVPs, float64 Lanczos vectors",
        },
        "provenance": record(__file__),
        "torch_threads": torch.get_num_threads(),
        "rows": rows,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(summary, indent=1) + "\n")
    print(
        json.dumps(
            {k: summary[k] for k in ("hvp_ratio", "time_ratio", "max_rel_diff", "power_max_rel_diff", "per_model")},
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
