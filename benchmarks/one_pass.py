"""Benchmark: every unit-level measure from one forward pass per batch against one pass per measure.

``measure_units`` captures each unit's state, branch, skip and attention weights once per batch and feeds
the Fourier, variance, skip-ratio, CKA and attention-distance measures from that single pass. The baseline
runs one capture pass per measure, as five separate measurements would. Both orders run on the same images
of the smoke references (weights do not change the cost), side by side in one process; the ratio is
baseline / one pass. Writes ``benchmarks/results/one_pass.json``.

    python benchmarks/one_pass.py [--images 512] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from provenance import record

from model_props.anatomy import anatomy, capture
from model_props.cache import default_cache_dir
from model_props.data import load_dataset
from model_props.measurements.functional import (
    MinibatchCKA,
    attention_distance,
    feature_variance,
    high_frequency,
    skip_norm_ratio,
)
from model_props.measurements.units import measure_units
from model_props.training.profiles import load_profile
from model_props.zoo import build_model

OUT = Path(__file__).resolve().parent / "results" / "one_pass.json"


@torch.no_grad()
def one_pass_per_measure(model, anat, split, n_images: int, batch_size: int) -> None:
    """The same five measures, each with its own capture pass over the images."""
    units = anat.spatial_units
    img = split.images.shape[-1]
    for measure in ("fourier", "variance", "skip", "cka", "attention"):
        cka = MinibatchCKA()
        for start in range(0, n_images, batch_size):
            x, _ = split.batch(slice(start, start + batch_size))
            cap = capture(model, anat, x, branches=measure == "skip", attention=measure == "attention")
            if measure == "fourier":
                [high_frequency(cap.states[u.name].float()) for u in units]
            elif measure == "variance":
                [feature_variance(cap.states[u.name].float()) for u in units]
            elif measure == "skip":
                [skip_norm_ratio(cap.skips[u.name], cap.branches[u.name]) for u in units if u.name in cap.branches]
            elif measure == "cka":
                cka.update([cap.states[u.name] for u in units])
            else:
                [attention_distance(w, img, 1) for w in cap.attention.values()]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--images", type=int, default=512)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--models", nargs="*", default=["vit", "resnet"])
    args = p.parse_args()
    profile = load_profile("smoke")
    data = load_dataset("deadleaves", cache_dir=default_cache_dir())
    batch = profile.measurement.batch_size
    rows = {}
    for name in args.models:
        model = build_model(name, num_classes=10, arch_kwargs=profile.recipes[name].arch).eval()
        anat = anatomy(model)
        times: dict[str, list[float]] = {"one_pass": [], "one_pass_per_measure": []}
        for _ in range(args.repeats):  # interleaved, so that both orders see the same machine state
            start = time.perf_counter()
            measure_units(model, anat, data.test, n_images=args.images, batch_size=batch)
            times["one_pass"].append(time.perf_counter() - start)
            start = time.perf_counter()
            one_pass_per_measure(model, anat, data.test, args.images, batch)
            times["one_pass_per_measure"].append(time.perf_counter() - start)
        best = {k: min(v) for k, v in times.items()}
        rows[name] = {**best, "ratio": best["one_pass_per_measure"] / best["one_pass"], "runs": times}
        print(
            f"{name}: one pass {best['one_pass']:.2f} s, one pass per measure {best['one_pass_per_measure']:.2f} s, "
            f"ratio {rows[name]['ratio']:.2f}",
            flush=True,
        )
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "images": args.images,
                "batch_size": batch,
                "repeats": args.repeats,
                "models": rows,
                "provenance": record(__file__),
                "threads": torch.get_num_threads(),
            },
            indent=1,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
