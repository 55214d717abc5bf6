"""``model-props``: train or load the reference models, show anatomies and recipes.

    model-props train [--profile smoke] [--cache DIR] [--model SPEC ...]
    model-props anatomy NAME [--profile smoke]
    model-props recipes [--profile smoke]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .errors import ModelPropsError


def _parser() -> argparse.ArgumentParser:
    from .recipes import PROFILES

    p = argparse.ArgumentParser(prog="model-props", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--profile", default="smoke", choices=PROFILES)
    common.add_argument("--cache", type=Path, default=None, help="default: $MODEL_PROPS_CACHE or ~/.cache/model-props")
    common.add_argument("--data-root", type=Path, default=None)
    common.add_argument("--device", default="cpu")
    t = sub.add_parser("train", parents=[common], help="train (or load from the cache) the reference models")
    t.add_argument("--model", action="append", default=[], help="also a user model spec (repeatable)")
    a = sub.add_parser("anatomy", parents=[common], help="print a model's units")
    a.add_argument("name")
    sub.add_parser("recipes", parents=[common], help="list the profile's recipes")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from .cache import default_cache_dir
    from .store import ModelStore, Settings
    from .zoo import parse_spec

    store = ModelStore(Settings(profile=args.profile, cache_dir=args.cache or default_cache_dir(),
                                data_root=args.data_root, device=args.device, progress=sys.stderr.isatty()))
    try:
        if args.command == "recipes":
            from .recipes import load_profile

            for name, r in load_profile(args.profile).items():
                print(f"{name:10s} {r.model or '(user model)':10s} {r.dataset:10s} {r.epochs:4d} epochs  {r.description}")
        elif args.command == "anatomy":
            from .anatomy import anatomy
            from .recipes import load_profile
            from .zoo import build_model

            recipes = load_profile(args.profile)
            arch = recipes[args.name].arch if args.name in recipes else {}
            data = store.dataset()
            print(anatomy(build_model(args.name, num_classes=data.num_classes, img_size=data.image_size, arch_kwargs=arch)))
        else:
            for spec in args.model:
                parse_spec(spec)
            start = time.perf_counter()
            names = store.reference_names() + args.model
            print(f"{'model':24s} {'params':>9s} {'test acc':>9s} {'test NLL':>9s} {'train s':>8s}  source")
            for name in names:
                m = store.get(name)
                print(f"{name:24s} {m.parameters:9d} {m.metrics['test_accuracy']:9.3f} {m.metrics['test_nll']:9.3f} "
                      f"{m.metrics.get('train_seconds', float('nan')):8.1f}  {'cache' if m.from_cache else 'trained now'}",
                      flush=True)
            print(f"done in {time.perf_counter() - start:.1f} s (cache: {store.settings.cache_dir})")
    except ModelPropsError as exc:
        print(f"model-props: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
