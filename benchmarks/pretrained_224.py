"""Budgets at 224 px: the claim suite on pretrained-size models (ViT-Tiny, ResNet-18) on a folder of 500 images.

No weights or images can be downloaded here, so the benchmark makes its own: a JPEG folder of 10 ImageNet synsets
(``val/`` and ``train/``, 50 images a class each, 256 px, low-pass noise) and each model's seeded-init timm weights
saved to a file, with the head biased towards the first synset so that its accuracy (1/10) is above chance. The
times do not depend on the weights' values.

Per model, from an empty folder and a fresh cache, as a user runs it:

1. ``pytest --pyargs model_props.suite --model timm:NAME@pretrained=FILE --claims-data-root=DIR
   --claims-images=500``: wall time, the outcome counts, and the seconds of each measurement the suite made
   (from the cache's manifests). Today that is the fit, the unit measurements and, on a staged model, the lesions:
   every other kind is read only by parts that compare with another model, which a pretrained model skips
   without a comparator of its own (``--claims-versus``).
2. The other kinds (noise, corruptions, attacks, the Hessian spectrum; lesions on a model without stages): what
   a comparator adds, per model (each
   model of a comparison is measured once). Measured in
   full they take hours on 2 cores, so each is timed on a sample (``--sample-images`` of the images; 1 of the
   profile's 16 Hessian batches) and scaled to the profile's sample linearly (each image, each batch costs the
   same passes); the JSON records both numbers and the factor.

    python benchmarks/pretrained_224.py                  # both models; writes benchmarks/results/pretrained_224.json
    python benchmarks/pretrained_224.py --models vit_tiny_patch16_224 --images 100
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "pretrained_224.json"
MODELS = ("vit_tiny_patch16_224", "resnet18")
CLASSES = 10


def make_folder(root: Path, per_class: int, size: int = 256) -> list[str]:
    """val/ and train/ of ``CLASSES`` ImageNet synsets, ``per_class`` JPEGs each: smooth noise (16 px upsampled)."""
    from PIL import Image
    from timm.data import ImageNetInfo

    synsets = ImageNetInfo("imagenet-1k").label_names()[:CLASSES]
    rng = np.random.default_rng(0)
    for split in ("val", "train"):
        for synset in synsets:
            folder = root / split / synset
            folder.mkdir(parents=True, exist_ok=True)
            for i in range(per_class):
                small = rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)
                Image.fromarray(small).resize((size, size), Image.Resampling.BICUBIC).save(
                    folder / f"{i}.jpg", quality=90
                )
    return synsets


def make_weights(name: str, path: Path) -> None:
    import timm
    import torch
    from safetensors.torch import save_file

    torch.manual_seed(0)
    net: Any = timm.create_model(name, pretrained=False)  # timm's models are nn.Modules with get_classifier()
    with torch.no_grad():
        net.get_classifier().bias[0] += 50.0  # always the first synset: accuracy 1/10, above chance
    save_file({k: v.contiguous() for k, v in net.state_dict().items()}, str(path))


def kind_seconds(cache: Path) -> dict[str, float]:
    seconds: dict[str, float] = {}
    for manifest in (cache / "measurements").glob("*/*/manifest.json"):
        meta = json.loads(manifest.read_text())
        seconds[meta["kind"]] = seconds.get(meta["kind"], 0.0) + float(meta["seconds"])
    return seconds


def run_suite(spec: str, data: Path, images: int, cache: Path, cwd: Path) -> dict:
    env = {**os.environ, "MODEL_PROPS_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    command = [sys.executable, "-m", "pytest", "--pyargs", "model_props.suite", "--model", spec,
               f"--claims-data-root={data}", f"--claims-images={images}", "-p", "no:cacheprovider", "-q"]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]
    return {"wall_s": round(wall, 1), "exit": done.returncode, "outcome": last.strip("= ")}


def time_other_kinds(spec: str, data: Path, images: int, cache: Path, done: set[str], sample: int) -> dict:
    """Time, in this process and without caching, each kind the suite did not measure, on a sample of its
    profile sample; scale to the profile's sample (capped at ``images``)."""
    import dataclasses

    from model_props.config.settings import Settings
    from model_props.measurements.registry import REPORT_KINDS, measure
    from model_props.store.model_store import ModelStore

    store = ModelStore(Settings(cache_dir=cache, data_root=data, images=images, models=(spec,)))
    tested = store.get(spec)
    full = store.measurement_settings(tested)
    fields = {
        "noise": "noise_images",
        "corruption": "corruption_images",
        "attack": "attack_images",
        "lesion": "lesion_images",
        "fit": "fit_images",
        "units": "n_images",
    }
    timed = {}
    for kind in REPORT_KINDS:
        if kind in done:
            continue
        if kind == "spectrum":
            field, n_full, n_sample = "hessian_batches", full.hessian_batches, 1
        else:
            field = fields[kind]
            n_full, n_sample = min(getattr(full, field), images), sample
        changes: dict[str, Any] = {field: n_sample}
        settings = dataclasses.replace(full, **changes)
        start = time.perf_counter()
        measure(kind, store.measure_input(tested), settings, seed=0, cache_dir=None)
        seconds = time.perf_counter() - start
        timed[kind] = {"sampled": f"{n_sample} of {n_full} {field}", "seconds": round(seconds, 1),
                       "scaled_s": round(seconds * n_full / n_sample, 1)}  # fmt: skip
        print(f"  {kind}: {seconds:.0f} s on {n_sample} of {n_full} -> {seconds * n_full / n_sample:.0f} s", flush=True)
    return timed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", nargs="*", default=list(MODELS))
    p.add_argument("--images", type=int, default=500)
    p.add_argument("--sample-images", type=int, default=20, help="images the other kinds are timed on")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args()
    import torch
    from provenance import PYTEST_RUNS, record

    stamp = record(__file__, runs=PYTEST_RUNS)  # the tree as the runs start: they take hours
    results = {}
    with tempfile.TemporaryDirectory(prefix="pretrained224-") as tmp:
        work = Path(tmp)
        make_folder(work / "images", per_class=-(-args.images // CLASSES))
        for name in args.models:
            weights, cache, cwd = work / f"{name}.safetensors", work / f"cache-{name}", work / f"run-{name}"
            cwd.mkdir()
            make_weights(name, weights)
            spec = f"timm:{name}@pretrained={weights}"
            print(f"{name}: the claim suite ...", flush=True)
            suite = run_suite(spec, work / "images", args.images, cache, cwd)
            by_suite = kind_seconds(cache)
            print(f"  {suite['wall_s']} s: {suite['outcome']}; measured {by_suite}", flush=True)
            others = time_other_kinds(spec, work / "images", args.images, cache, set(by_suite), args.sample_images)
            results[name] = {
                "suite": suite,
                "suite_kinds": {k: round(v, 1) for k, v in sorted(by_suite.items())},
                "other_kinds": others,
            }
    result = {
        "images": args.images,
        "img_size": 224,
        "cpu_threads": torch.get_num_threads(),
        "device": "cpu",
        "models": results,
        "provenance": stamp,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
