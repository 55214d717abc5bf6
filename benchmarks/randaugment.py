"""RandAugment on a training batch: torchvision's ``v2.RandAugment`` called once per image (the loop the training
batches used) against :func:`model_props.data.augment.randaugment`, which groups the images that drew the same
operation and sign (one call each); best of ``--repeats``, on the paper recipe's batch (96 images at 32 px) and on
a 224-px batch, the images on ``--device``. Writes ``benchmarks/results/randaugment.json`` (the CPU's; another
device's beside it, ``randaugment-cuda.json``); the docs print the ratios.

    python benchmarks/randaugment.py [--repeats 5] [--device cuda]
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections.abc import Callable
from pathlib import Path

import torch
from provenance import record
from torchvision.transforms import v2

from model_props.data.augment import randaugment

OUT = Path(__file__).resolve().parent / "results" / "randaugment.json"
BATCHES = {"paper recipe, 96 x 32 px": (96, 32), "224 px, 64 images": (64, 224)}


def _per_image(images: torch.Tensor) -> torch.Tensor:
    op = v2.RandAugment(num_ops=2, magnitude=9)
    return torch.stack([op(image) for image in images])


def _grouped(images: torch.Tensor) -> torch.Tensor:
    return randaugment(images, torch.Generator().manual_seed(0))


def best_of(fn: Callable[[], torch.Tensor], repeats: int, device: str) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--device", default="cpu")
    p.add_argument("--out", type=Path, help="default: benchmarks/results/randaugment.json, or -<device>.json")
    args = p.parse_args()
    rows = {}
    for label, (n, size) in BATCHES.items():
        gen = torch.Generator().manual_seed(0)
        images = torch.randint(0, 256, (n, 3, size, size), dtype=torch.uint8, generator=gen).to(args.device)
        per_image = best_of(functools.partial(_per_image, images), args.repeats, args.device)
        grouped = best_of(functools.partial(_grouped, images), args.repeats, args.device)
        rows[label] = {"images": n, "size": size, "per_image_s": round(per_image, 4), "grouped_s": round(grouped, 4),
                       "speed_up": round(per_image / grouped, 2)}  # fmt: skip
        print(f"{label}: {per_image * 1e3:.1f} ms one image at a time, {grouped * 1e3:.1f} ms grouped, "
              f"{per_image / grouped:.1f}x", flush=True)  # fmt: skip
    data = {"repeats": args.repeats, "threads": torch.get_num_threads(), "batches": rows,
            "provenance": record(__file__, device=args.device)}  # fmt: skip
    out = args.out or (OUT if args.device == "cpu" else OUT.with_name(f"randaugment-{args.device.split(':')[0]}.json"))
    out.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
