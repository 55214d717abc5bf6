"""One claim's statistics of one recipe on training seeds beyond the seed study: where a live estimate fails the
reproduction test, is it an outlier of a well-predicted statistic, or is the study's prediction interval too narrow?

Trains the recipe with each extra seed (never one of the study's, nor the live seed), measures the claim's report on
each seed's own measurement sample exactly as the study does, and compares every part's values with the study's
95 % prediction interval and with the live seed's value.

    python benchmarks/extra_seeds.py --model pit --claim raghu2021.attention-distance-grows --seeds 5-12 --workers 2

writes ``benchmarks/results/extra-seeds-<model>-<claim>.json``; ``fixtures/<profile>-discrepancies.json`` cites it.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
from pathlib import Path

from provenance import record

from model_props.claims import get_claim
from model_props.config.settings import Settings
from model_props.execution import executor
from model_props.store.tasks import measure_report, seed_store
from model_props.verdicts.evidence import point_value
from model_props.verdicts.prediction import prediction_interval, prediction_p
from model_props.verdicts.study import load_study

OUT = Path(__file__).resolve().parent / "results"


def _seeds(text: str) -> list[int]:
    low, _, high = text.partition("-")
    return list(range(int(low), int(high or low) + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="smoke")
    parser.add_argument("--model", required=True, help="a recipe of the profile, e.g. pit")
    parser.add_argument("--claim", required=True, help="a claim id, e.g. raghu2021.attention-distance-grows")
    parser.add_argument("--seeds", type=_seeds, required=True, help="extra training seeds, e.g. 5-12")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    settings = Settings(profile=args.profile, progress=False)
    profile, study = settings.profile_data, load_study(args.profile)
    if study is None:
        parser.error(f"profile {args.profile} has no seed study to compare with")
    taken = set(study.seeds) | {profile.live_seed}
    if clash := sorted(taken & set(args.seeds)):
        parser.error(f"seeds {clash} are the study's or the live seed; extra seeds must be new draws")
    claim = get_claim(args.claim)
    kinds = sorted({(p.reads, p.checkpoint) for p in claim.parts})
    requests = [
        (s, args.model, kind, checkpoint) for s in [*args.seeds, profile.live_seed] for kind, checkpoint in kinds
    ]
    with executor(workers=args.workers, cache_dir=settings.cache_dir) as runner:
        for done, _ in enumerate(runner.map(functools.partial(measure_report, settings), requests), start=1):
            print(f"measured {done} of {len(requests)}", flush=True)
    stores = {seed: seed_store(settings, seed) for seed in [*args.seeds, profile.live_seed]}  # reads what was measured
    parts = {}
    for part in claim.parts:
        values = {seed: point_value(part, store.report(args.model, part.reads, part.checkpoint))
                  for seed, store in stores.items()}  # fmt: skip
        studied = study.values(claim, part, args.model)
        low, high = prediction_interval(studied)
        extra = [values[s] for s in args.seeds]
        parts[part.name] = {
            "statistic": part.statistic_name,
            "study": dict(zip(map(str, study.seeds), studied)),
            "prediction_interval": [low, high],
            "extra": {str(s): values[s] for s in args.seeds},
            "extra_outside": [s for s in args.seeds if not low <= values[s] <= high],
            "extra_p": {str(s): prediction_p(studied, values[s]) for s in args.seeds},
            "live": {"seed": profile.live_seed, "value": values[profile.live_seed],
                     "p": prediction_p(studied, values[profile.live_seed]),
                     "p_from_study_and_extra": prediction_p([*studied, *extra], values[profile.live_seed])},
        }  # fmt: skip
        print(f"{part.name}: study {low:+.4f}..{high:+.4f}; extra outside {parts[part.name]['extra_outside']}; "
              f"live {values[profile.live_seed]:+.4f}")  # fmt: skip
    out = OUT / f"extra-seeds-{args.model}-{args.claim}.json"
    result = {"profile": args.profile, "model": args.model, "claim": args.claim, "seeds": args.seeds, "parts": parts,
              "provenance": record(__file__)}  # fmt: skip
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
