"""Budgets at 224 px: the claim suite on pretrained-size models (ViT-Tiny, ResNet-18) on a folder of 500 images.

No weights or images can be downloaded here, so the benchmark makes its own: a JPEG folder of 10 ImageNet synsets
(``val/`` and ``train/``, 50 images a class each, 256 px, low-pass noise) and each model's seeded-init timm weights
saved to a file, with the head biased towards the first synset so that its accuracy (1/10) is above chance. The
times do not depend on the weights' values.

Per model, from an empty folder and a fresh cache, as a user runs it:

1. ``pytest --pyargs model_props.suite --model timm:NAME@pretrained=FILE --claims-data-root=DIR
   --claims-images=500``: wall time, the outcome counts, and the seconds of each measurement the suite made
   (from the cache's manifests). Today that is the fit, the unit measurements, the attention positions and, on a
   staged model, the lesions:
   every other kind is read only by parts that compare with another model, which a pretrained model skips
   without a comparator of its own (``--claims-versus``).
2. What a comparator (``--claims-versus``) adds: the kinds that parts comparing two models read (noise,
   corruptions, attacks, occlusion, the location probes, the Hessian spectrum), per model, and the cross CKA of
   the first two models, once for the pair. Measured in full they take hours on 2 cores, so each is timed on a part
   of its whole sample and scaled linearly (each image, each batch costs the same passes): a chunked kind on its
   first chunk (``--sample-images`` of its images, rounded up to the chunks a run measures it in; 1 of the
   profile's 16 Hessian batches), a kind measured whole with its sample-size setting at ``--sample-images`` (at
   least two CKA mini-batches). The JSON records both numbers.

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


# the sample-size setting of each kind measured whole (a chunked kind is timed on its first chunks instead)
SAMPLED_BY = {"fit": "fit_images", "units": "n_images", "lesion": "lesion_images", "probe": "n_images",
              "cross": "n_images", "position": None}  # fmt: skip


def _chunk_units(cache: Path, whole: int) -> int:
    """The units the chunks written to ``cache`` hold (chunk j of size s holds min(s, whole - j s)), each counted once
    however many settings it was measured at (the attacks' chunks, one per eps)."""
    chunks = set()
    for manifest in (cache / "measurements").glob("*/*/manifest.json"):
        label = json.loads(manifest.read_text())["chunk"]
        chunks.add((label["chunk"], label["chunk_images"]))
    return sum(min(size, whole - j * size) for j, size in chunks)


def _timed(kind: str, inputs: list, full: Any, images: int, sample: int) -> dict[str, Any]:
    """Seconds of ``kind`` on a part of its whole sample, in this process on a fresh cache, scaled to the whole: a
    chunked kind measured on its first ``sample`` units (1 Hessian batch) in the chunks a run measures it in (so
    the part is whole chunks), a kind measured whole with its sample-size setting at ``sample`` (at least the two
    mini-batches a probe needs)."""
    import dataclasses
    import tempfile

    from model_props.measurements.registry import REPORT_KINDS, measure

    inp, *other = inputs
    spec = REPORT_KINDS[kind]
    settings, upto = full, None
    if spec.size is not None:
        whole = spec.size(inp, full)
        upto = min(1 if kind == "spectrum" else sample, whole)
    elif (field := SAMPLED_BY[kind]) is not None:
        whole = min(getattr(full, field), images)
        part = min(max(sample, 2 * full.batch_size) if field == "n_images" else sample, whole)
        settings = dataclasses.replace(full, **{field: part})
    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        measure(kind, inp, settings, seed=0, cache_dir=Path(cache), other=other[0] if other else None, upto=upto)
        seconds = time.perf_counter() - start
        if spec.size is not None:
            part = _chunk_units(Path(cache), whole)
    if spec.size is None and SAMPLED_BY[kind] is None:
        whole = part = 1  # measured whole: no sample-size setting
    unit = "Hessian batches" if kind == "spectrum" else "images"
    scaled = seconds * whole / part
    print(f"  {kind}: {seconds:.0f} s on {part} of {whole} {unit} -> {scaled:.0f} s", flush=True)
    return {"measured": part, "whole": whole, "unit": unit, "seconds": round(seconds, 1), "scaled_s": round(scaled, 1)}


def compared_kinds() -> set[str]:
    """The report kinds that the parts reading another model read (``versus``, ``subject`` or ``partner``, as the
    session's skip rule tells them apart): what a comparator adds."""
    from model_props.claims import CLAIMS

    return {p.report for claim in CLAIMS.values() for p in claim.parts if p.versus or p.subject or p.partner}


def time_other_kinds(spec: str, data: Path, images: int, cache: Path, done: set[str], sample: int) -> dict:
    """Time each kind of one model that a comparator adds and the suite did not measure (:func:`_timed`). ``attack_test``
    continues ``attack``'s chunks at its smallest eps over the test split: it adds the images beyond attack's sample."""
    from model_props.config.settings import Settings
    from model_props.measurements.registry import REPORT_KINDS
    from model_props.store.model_store import ModelStore

    store = ModelStore(Settings(cache_dir=cache, data_root=data, images=images, models=(spec,)))
    tested = store.get(spec)
    full, inp = store.measurement_settings(tested), store.measure_input(tested)
    timed: dict[str, dict[str, Any]] = {}
    compared = compared_kinds()
    for kind, kind_spec in REPORT_KINDS.items():
        if kind in done or kind_spec.pair or kind not in compared:
            continue
        if kind == "attack_test" and "attack" in timed:
            attack, whole = timed["attack"], REPORT_KINDS[kind].size(inp, full)  # type: ignore[misc]
            beyond = max(0, whole - attack["whole"])
            per_image_eps = attack["seconds"] / attack["measured"] / len(full.attack_epsilons)
            timed[kind] = {"measured": 0, "whole": beyond, "unit": "images", "seconds": 0.0,
                           "scaled_s": round(per_image_eps * beyond, 1),
                           "note": "attack's chunks at the smallest eps, continued over the test split"}  # fmt: skip
            continue
        timed[kind] = _timed(kind, [inp], full, images, sample)
    return timed


def time_pair(specs: list[str], data: Path, images: int, cache: Path, sample: int) -> dict:
    """The pair kind (cross CKA of every unit of one model against every unit of the other) of the first two
    models, measured once for the pair (:func:`_timed`)."""
    from model_props.config.settings import Settings
    from model_props.store.model_store import ModelStore

    if len(specs) < 2:
        return {}
    store = ModelStore(Settings(cache_dir=cache, data_root=data, images=images, models=tuple(specs)))
    tested = [store.get(s) for s in specs[:2]]
    return {"cross": _timed("cross", [store.measure_input(t) for t in tested], store.measurement_settings(tested[0]),
                            images, sample)}  # fmt: skip


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
        specs: list[str] = []
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
            specs.append(spec)
        pair = time_pair(specs, work / "images", args.images, work / "cache-pair", args.sample_images)
    result = {
        "images": args.images,
        "img_size": 224,
        "cpu_threads": torch.get_num_threads(),
        "device": "cpu",
        "models": results,
        "pair": {"models": list(args.models[:2]), "kinds": pair} if pair else {},
        "provenance": stamp,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
