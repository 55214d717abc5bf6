"""Benchmark: the claim tests' statistics, every bootstrap resample in one vectorised call against the loop over
resamples the verdicts used before (one statistic call per resample), side by side in one run on the same reports.

For every claim on every reference it applies to, the live evidence is gathered once (the session's reports, from a
warm cache), then judged twice: by the judge as it is, and with each bootstrap replaced by the per-resample loop
(the old ``bootstrap``: ``[statistic(report, row) for row in resamples]``). Both give the same estimates (checked to
1e-9 here, to 1e-12 per statistic in ``property_tests/claims/test_statistics.py``). Writes
``benchmarks/results/claim_statistics.json``.

    MODEL_PROPS_CACHE=... python benchmarks/claim_statistics.py     # a cache the default pytest run has filled
"""

from __future__ import annotations

import contextlib
import importlib
import json
import time
from pathlib import Path
from unittest import mock

import numpy as np
from provenance import record

from model_props.claims import list_claims
from model_props.config.settings import Settings
from model_props.errors import NotApplicable
from model_props.session.judging import _Live
from model_props.session.routes import route_of
from model_props.store.model_store import ModelStore
from model_props.verdicts import judge
from model_props.verdicts import stats as stats_module

OUT = Path(__file__).resolve().parent / "results" / "claim_statistics.json"


def _looped(original):
    """A bootstrap whose statistic sees one resample per call, as before (the same index matrix, row by row)."""

    def bootstrap(n, statistic, **kw):
        return original(n, lambda idx: np.array([float(statistic(row[None, :])[0]) for row in idx]), **kw)

    return bootstrap


def _looped_two(original):
    def bootstrap_two_sample(n_a, n_b, statistic, **kw):
        def rows(i, j):
            return np.array([float(statistic(a[None, :], b[None, :])[0]) for a, b in zip(i, j)])

        return original(n_a, n_b, rows, **kw)

    return bootstrap_two_sample


def main() -> None:
    store = ModelStore(Settings(profile="smoke", progress=False))
    n_boot, seed = store.profile.measurement.n_boot, store.settings.seed
    evidence = []
    for claim in list_claims():
        for name in store.profile.references:
            tested = store.get(name)
            if claim.skip_reason(tested.anatomy, name, store.profile.recipes) is None:
                try:
                    evidence.append(_Live(store, tested, {}, route_of(store, tested)).evidence(claim))
                except NotApplicable:
                    continue
    intervals = importlib.import_module("model_props.verdicts.small_sample")  # where the judge's intervals bootstrap

    times, values = {}, {}
    for label, patches in (("vectorised", {}), ("per-resample loop", {
        "bootstrap": _looped(stats_module.bootstrap),
        "bootstrap_two_sample": _looped_two(stats_module.bootstrap_two_sample),
    })):  # fmt: skip
        with mock.patch.multiple(intervals, **patches) if patches else contextlib.nullcontext():
            start = time.perf_counter()
            outcomes = [judge(e, seed=seed, n_boot=n_boot) for e in evidence]
            times[label] = time.perf_counter() - start
        values[label] = [(p.estimate.low, p.estimate.high) for o in outcomes for p in o.parts if p.estimate]
        print(f"{label}: {times[label]:.2f} s for {len(evidence)} claim x reference evidences", flush=True)
    assert np.allclose(values["vectorised"], values["per-resample loop"], atol=1e-9)
    data = {"claims_x_references": len(evidence), "n_boot": n_boot, "seconds": times,
            "speed_up": times["per-resample loop"] / times["vectorised"], "provenance": record(__file__)}  # fmt: skip
    OUT.write_text(json.dumps(data, indent=2) + "\n")
    print(f"speed-up {data['speed_up']:.1f}x; wrote {OUT}")


if __name__ == "__main__":
    main()
