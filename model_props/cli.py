"""``model-props``: train or load the reference models, show anatomies and recipes, run the seed study.

model-props train [--profile smoke] [--cache DIR] [--model SPEC ...] [--train-seed N] [--workers N | --scheduler ADDRESS]
model-props anatomy NAME [--profile smoke]
model-props recipes [--profile smoke]
model-props seed-study [--profile smoke] [--seeds 0 1 2 ... 9] [--workers N | --scheduler ADDRESS] [--add CLAIM ... | --canaries]
model-props seed-study --plan NAME --seeds 0 1 ... 9 | --seed K [K ...] | --assemble  [--generation NAME]
model-props expectations [--profile smoke] [--recipes DIR] [--update]
model-props report [--results reports/allure-results] [--reports reports]
model-props coverage [--library timm|torchvision] [--img-size N] [--out benchmarks/results]
model-props claims
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from .errors import ConfigError, ModelPropsError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="model-props", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    _add_options(common, "common")
    t = sub.add_parser("train", parents=[common], help="train (or load from the cache) the reference models")
    _add_options(t, "train")
    a = sub.add_parser("anatomy", parents=[common], help="print a model's units")
    a.add_argument("name")
    sub.add_parser("recipes", parents=[common], help="list the profile's recipes")
    s = sub.add_parser(
        "seed-study",
        parents=[common],
        help="train every recipe with several seeds, measure every claim part on each, write <profile>-seeds.json/.md",
    )
    s.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        help="the first three set expectations, the rest confirm them (default: 0 to 9; with --add, the study's own)",
    )
    s.add_argument(
        "--out", type=Path, default=None, help="folder for the study files (default: the recipes folder or ./fixtures)"
    )
    s.add_argument(
        "--add",
        nargs="+",
        metavar="CLAIM",
        default=None,
        help="measure only these claims (ids or globs) with the study's own seeds and merge them into the existing "
        "study, training only the recipes they read; every other entry is kept",
    )
    g = s.add_mutually_exclusive_group()
    g.add_argument(
        "--plan",
        metavar="NAME",
        default=None,
        help="plan a study generation NAME of --seeds, to be built in shards (studies/<profile>/NAME/generation.json)",
    )
    g.add_argument(
        "--seed",
        type=int,
        nargs="+",
        metavar="K",
        default=None,
        help="build these seeds of the planned generation, each written as its shard seed-K.json when it finishes; "
        "a shard that exists is kept",
    )
    g.add_argument(
        "--assemble",
        action="store_true",
        help="check the generation's shards and merge them into <profile>-seeds.json; the canary record and the "
        "expectation snapshot follow (review the printed diff)",
    )
    s.add_argument("--generation", metavar="NAME", default=None, help="the generation --seed and --assemble work on "
                   "(default: the only one not yet assembled)")  # fmt: skip
    g.add_argument(
        "--canaries-here",
        action="store_true",
        help="add this machine kind's reference to the study's canary record (the first canary seed run here, for "
        "the claims whose code is the recording code's), so that later code is judged on this kind too",
    )
    g.add_argument(
        "--canaries-confirm",
        action="store_true",
        help="run here the canaries of the claims whose code changed since the record, and record the code of those "
        "that did not move as confirmed on this machine kind (later runs of it here run no canary)",
    )
    g.add_argument(
        "--canaries",
        action="store_true",
        help="only record the canaries of the existing study (<profile>-canaries.json beside it), with this code: "
        "run it with the code that built the study",
    )
    e = sub.add_parser(
        "expectations",
        parents=[common],
        help="compare the expectation snapshot (<profile>-expectations.json) with the seed study's verdicts and print "
        "the diff; --update rewrites it",
    )
    e.add_argument(
        "--update",
        action="store_true",
        help="rewrite the snapshot from the current study (review the printed diff before committing it): the one in "
        "--recipes DIR where given, never the installed package's",
    )
    c = sub.add_parser(
        "coverage", help="map the smallest model of every timm or torchvision architecture module, check each anatomy"
    )
    c.add_argument("--library", choices=("timm", "torchvision"), default="timm")
    c.add_argument("--img-size", type=int, default=None, help="default: 32 px for timm, 224 px for torchvision")
    c.add_argument("--modules", nargs="*", default=None, help="default: every architecture module of the library")
    c.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    sub.add_parser("claims", help="print the claim catalogue (Markdown): id, paper section, statement, decision rules")
    r = sub.add_parser("report", help="generate the Allure HTML report (reports/allure-report/index.html) offline")
    r.add_argument("--results", type=Path, default=Path("reports/allure-results"))
    r.add_argument("--reports", type=Path, default=Path("reports"), help="where allure-report/ and the history go")
    return p


def _add_options(parser: argparse.ArgumentParser, where: str) -> None:
    """The flags of the declared session options that ``where`` ('common' or 'train') takes."""
    from .config.options import OPTIONS

    for o in OPTIONS:
        flag = o.flag  # None only for an option that is no CLI flag (o.cli is None)
        if o.cli == where and flag is not None:
            kwargs: dict[str, Any] = {"type": o.arg_type} if o.arg_type is not None else {}
            parser.add_argument(
                flag,
                dest=o.name,
                action=o.action,
                default=[] if o.action == "append" else None,
                metavar=o.metavar,
                help=o.cli_help or o.help,
                **kwargs,
            )


def _settings(args: argparse.Namespace):
    from .config.options import OPTIONS, read_table
    from .config.settings import Settings

    pyproject = Path.cwd() / "pyproject.toml"
    cli = {o.name: getattr(args, o.name, None) for o in OPTIONS if o.cli == "common" or o.name == "train_seed"}
    return Settings.resolve(read_table(pyproject), pyproject.parent, {**cli, "progress": sys.stderr.isatty()})


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "report":
            from .reporting.html import generate_html

            print(generate_html(args.results, args.reports))
            return 0
        if args.command == "claims":
            from .claims import catalogue_markdown

            print(catalogue_markdown(), end="")
            return 0
        if args.command == "coverage":
            from .anatomy.coverage import coverage, write_coverage
            from .anatomy.libraries import LIBRARIES

            size = args.img_size or LIBRARIES[args.library].img_size
            rows = coverage(size, args.modules, library=args.library)
            print(write_coverage(rows, size, args.out, library=args.library))
            return 0
        settings = _settings(args)
        if args.command == "recipes":
            recipes = settings.profile_data.recipes
            wide = max(map(len, recipes)), max(len(r.model or "(user model)") for r in recipes.values())
            for name, r in recipes.items():
                budget = f"{r.steps} steps" if r.steps is not None else f"{r.epochs:g} epochs"
                print(
                    f"{name:{wide[0]}s} {r.model or '(user model)':{wide[1]}s} {r.dataset:10s} {budget:>12s}  "
                    f"lr {r.lr:<8g} {r.description}"
                )
        elif args.command == "anatomy":
            from .store.model_store import ModelStore

            print(ModelStore(settings).architecture(args.name))
        elif args.command == "seed-study":
            from .study.canaries import record_canaries
            from .study.run import run_study
            from .verdicts.study import STUDY_SEEDS, SeedStudy, load_study

            if args.plan or args.seed or args.assemble:
                from .study import generation as shards

                if args.plan:
                    print(shards.plan_generation(settings, args.plan, args.seeds or list(STUDY_SEEDS)).status())
                for seed in args.seed or ():
                    print(f"built {shards.build_shard(settings, seed, args.generation)}", flush=True)
                if args.assemble:
                    print(f"assembled {shards.assemble(settings, args.generation)}")
                return 0
            if args.canaries_here:
                from .study.canaries import record_machine

                print(f"recorded {record_machine(settings)}")
                return 0
            if args.canaries_confirm:
                from .study.canaries import confirm_code

                moved = confirm_code(settings)
                for cid, why in moved.items():
                    print(f"not confirmed, its canaries moved: {cid} ({'; '.join(why)})", file=sys.stderr)
                return 1 if moved else 0
            if args.canaries:  # the existing study's, with this code
                found = load_study(settings.profile, settings.recipes.user_dir)
                if found is None:
                    raise ConfigError(f"profile {settings.profile!r} has no seed study whose canaries to record")
                study, out = found, args.out or Path(found.source).parent
            else:  # the study, then its canaries by the same code: what later code must reproduce
                path = run_study(settings, seeds=args.seeds, out=args.out, add=args.add)
                study, out = SeedStudy.from_json(json.loads(path.read_text()), str(path)), path.parent
            print(f"recorded {record_canaries(settings, study, out)}")
        elif args.command == "expectations":
            from .study.expectations import compare_snapshot

            return compare_snapshot(settings, update=args.update)
        else:
            from .session.pretraining import pretrain
            from .store.model_store import ModelStore
            from .zoo.pretrained import parse_pretrained

            store = ModelStore(settings)
            for spec in args.models:
                if parse_pretrained(spec) is not None:
                    raise ConfigError(f"--model {spec!r} names pretrained weights, which are not trained here; test "
                                      f"them with: pytest --pyargs model_props.suite --model '{spec}' "
                                      "--claims-data-root=DIR")  # fmt: skip
                if spec not in store.profile.recipes:
                    store.architecture(spec)  # an unknown name or a model that cannot be built: now, before training
            start = time.perf_counter()
            names = store.profile.references + args.models
            pretrain(store, names, estimate=True)  # several at once, saying how long first; the loop reads the cache
            print(
                f"{'model':24s} {'params':>9s} {'val acc':>8s} {'test acc':>9s} {'test NLL':>9s} {'train s':>8s}  source"
            )
            for name in names:
                m = store.get(name)
                print(
                    f"{name:24s} {m.parameters:9d} {m.metrics.get('val_accuracy', float('nan')):8.3f} "
                    f"{m.metrics['test_accuracy']:9.3f} {m.metrics['test_nll']:9.3f} "
                    f"{m.metrics.get('train_seconds', float('nan')):8.1f}  {'cache' if m.from_cache else 'trained now'}",
                    flush=True,
                )
            print(f"done in {time.perf_counter() - start:.1f} s (cache: {settings.cache_dir})")
    except ModelPropsError as exc:
        print(f"model-props: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
