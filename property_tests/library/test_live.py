"""``--claims-live``: a default run trains the five references live and judges every variant from the committed seed
study; ``--claims-live=all`` trains every variant and independent run too."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from model_props.claims import get_claim
from model_props.config.options import DEFAULTS
from model_props.session.judging import _Live, judge_claim
from model_props.session.routes import route_of
from model_props.store.model_store import ModelStore, ModelUnderTest
from model_props.study.canaries import judged_study
from model_props.verdicts import AgainstSeeds

REFERENCES = ["vit", "pit", "swin", "resnet", "alternet"]
SUITE = "from model_props.suite.test_claims import *\nfrom model_props.suite.test_reproduction import *\n"


RECORDER = """
import json
import model_props.session.pretraining as pretraining

def recorded(store, names, reproduced=(), **kwargs):
    runs = pretraining.runs_ahead(store, names)[0]
    print("TRAINS AHEAD " + json.dumps([[r.name, r.seed] for r in runs]), flush=True)
    raise KeyboardInterrupt

pretraining.pretrain = recorded
"""


def training_lists(pytester: pytest.Pytester, runs: dict[str, tuple[Path, tuple[str, ...]]]) -> dict[str, list]:
    """The runs (name, seed) that a session of the packaged suite trains ahead on an empty model cache, for each
    label of ``runs`` (its cache and options), read where it would start training them; each session is then
    interrupted, so nothing is trained. The sessions run side by side, each in a subprocess: an in-process nested
    session sees the modules this process has loaded, and a full run's claim tests left it with another list than a
    fresh process has."""
    pytester.makeconftest(RECORDER)
    pytester.makepyfile(test_suite=SUITE)
    started = {
        label: subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:allure_pytest",
                f"--claims-cache={cache}",
                *options,
            ],
            cwd=pytester.path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )  # fmt: skip
        for label, (cache, options) in runs.items()
    }
    found = {}
    for label, process in started.items():
        out = process.communicate(timeout=600)[0]
        assert process.returncode == pytest.ExitCode.INTERRUPTED, out[-2000:]
        line = next(x for x in out.splitlines() if x.startswith("TRAINS AHEAD "))
        found[label] = [(name, seed) for name, seed in json.loads(line.removeprefix("TRAINS AHEAD "))]
    return found


def test_a_default_run_trains_ahead_the_references_and_claims_live_all_every_run(pytester, fresh_cache, model_store):
    live_seed = model_store.profile.live_seed
    found = training_lists(pytester, {"default": (fresh_cache("default"), ()),
                                      "all": (fresh_cache("all"), ("--claims-live=all",))})  # fmt: skip
    assert sorted(found["default"]) == sorted((name, live_seed) for name in REFERENCES)
    every = found["all"]
    recipes = [n for n in model_store.profile.recipes if n != "custom"]  # the references and every variant
    assert sorted(n for n, seed in every if seed == live_seed) == sorted(recipes)
    independent = [(n, seed) for n, seed in every if seed != live_seed]
    assert independent and {seed for _, seed in independent} == {live_seed + 1000}, every  # the pair parts' runs


# What a plain ``pytest`` session judges by, whatever options this session was given (``--claims-live=all`` too)
DEFAULT_RUN = {"live": DEFAULTS["live"], "scope": DEFAULTS["scope"]}


def live(model_store: ModelStore, **settings) -> _Live:
    """The live judgement of the reference ViT in a default run's session, but for ``settings``; nothing is trained to
    build it."""
    store = ModelStore(dataclasses.replace(model_store.settings, **{**DEFAULT_RUN, **settings}))
    tested = ModelUnderTest("vit", None, model_store.architecture("vit"), {}, None, None)
    return _Live(store, tested, {}, route_of(store, tested))


@pytest.mark.parametrize(
    "claim, part, reads",
    [
        ("park2022.gap-convexifies", "nep-gap", "vit_gap"),  # a variant
        ("raghu2021.vit-lower-like-resnet-mid", "lower-like-resnet-mid",  # a pair part's independent runs
         "the independent run of vit and the independent run of resnet"),
    ],
)  # fmt: skip
def test_a_references_live_judgement_skips_a_part_that_reads_a_model_not_trained_here(model_store, claim, part, reads):
    read = {p.name: p for p in get_claim(claim).parts}[part]
    evidence = live(model_store).part_evidence(get_claim(claim), read)
    assert evidence.reason == (  # type: ignore[union-attr]  (Skipped)
        f"it reads {reads}, which this run does not train: the part is judged from the committed seed study; its "
        "live run needs --claims-live=all"
    )
    assert live(model_store, live="all").not_trained_here(read) is None
    assert live(model_store, scope="checkpoint").not_trained_here(read) == (  # weights judged alone: no test trains
        f"it reads {reads}, which this run does not train (no test trains a model); --claims-live=all trains "
        f"{'them' if ' and ' in reads else 'it'} ahead of the tests, on the workers"
    )
    assert live(model_store).not_trained_here(get_claim("park2022.msa-lowpass").parts[0]) is None  # the ViT alone


def test_a_references_live_judgement_leaves_the_costliest_reports_to_the_full_live_run(model_store):
    """A reference's part that reads a release kind (Hessian spectra, PGD attacks) on models the run trains is judged
    from the committed study alone by default, naming the switch; the full live run and weights judged alone (a
    user's checkpoint) measure it."""
    spectrum = get_claim("park2022.vit-nonconvex").parts[0]  # the ViT against the ResNet, both trained here
    assert live(model_store).not_trained_here(spectrum) == (
        "it reads its spectrum report, which only the full live run measures on the live weights: the part is judged "
        "from the committed seed study; its live run needs --claims-live=all"
    )
    assert live(model_store, live="all").not_trained_here(spectrum) is None
    assert live(model_store, scope="checkpoint").not_trained_here(spectrum) is None


def test_weights_judged_alone_read_a_variant_they_are_compared_with_from_the_committed_study(model_store, monkeypatch):
    """At checkpoint scope (a user's --checkpoint, --claims-scope checkpoint) a part that compares the weights with one
    variant, each measured alone, reads the variant's committed per-seed estimates and trains nothing; a pair part
    (two models on the same inputs) still needs the switch."""
    from model_props.training import checkpoints

    vit = model_store.get("vit")

    def refuse(*args, **kwargs):
        raise AssertionError("a model was trained in the test process")

    monkeypatch.setattr(checkpoints, "train", refuse)
    store = ModelStore(dataclasses.replace(model_store.settings, **{**DEFAULT_RUN, "scope": "checkpoint"}))
    judged = _Live(store, vit, {}, route_of(store, vit))
    claim = get_claim("park2022.data-specificity-local-msa")
    part = {p.name: p for p in claim.parts}["error-local5"]  # test error, ViT with 5x5 local attention - ViT
    found = judged.part_evidence(claim, part)
    study = judged_study(judged.store)
    assert study is not None
    assert isinstance(found, AgainstSeeds) and (found.recipe, found.weights_first) == ("vit_local5", False)
    assert found.seeds == tuple(study.values(claim, part, "vit_local5"))
    outcome = judge_claim(judged.store, claim, vit).verdict.outcome
    error = {o.part.name: o for o in outcome.parts}["error-local5"]
    assert error.estimate is not None and error.estimate.method == "Welch t: these weights against the recipe's seeds"
    assert f"against the mean of vit_local5's {len(study.seeds)} committed seeds" in error.note
    pair = get_claim("raghu2021.vit-lower-like-resnet-mid")
    assert judged.part_evidence(pair, pair.parts[0]).reason.endswith(  # type: ignore[union-attr]  (Skipped)
        "--claims-live=all trains them ahead of the tests, on the workers"
    )
