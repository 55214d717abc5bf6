"""``--claims-live``: a default run trains the five references live and judges every variant from the committed seed
study; ``--claims-live=all`` trains every variant and independent run too."""

from __future__ import annotations

import dataclasses

import pytest

from model_props.claims import get_claim
from model_props.session.evidence import _Live
from model_props.session.store import ModelStore, ModelUnderTest

REFERENCES = ["vit", "pit", "swin", "resnet", "alternet"]
SUITE = "from model_props.suite.test_claims import *\nfrom model_props.suite.test_reproduction import *\n"


def training_list(inprocess: pytest.Pytester, monkeypatch, cache, *options: str) -> list[tuple[str, int]]:
    """The runs (name, seed) that the session of the packaged suite trains ahead on the empty model cache ``cache``,
    read where it would start training them; the session is then interrupted (the hook reports any ``Exception``
    from training ahead and goes on to the tests, which would train), so nothing is trained."""
    import model_props.session.pretraining as pretraining

    seen: list[tuple[str, int]] = []

    def recorded(store, names, reproduced=(), **kwargs):
        seen.extend((r.name, r.seed) for r in pretraining.runs_ahead(store, names)[0])
        raise KeyboardInterrupt

    monkeypatch.setattr(pretraining, "pretrain", recorded)
    inprocess.makepyfile(test_suite=SUITE)
    result = inprocess.runpytest("-p", "no:cacheprovider", f"--claims-cache={cache}", *options, no_reraise_ctrlc=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()[-2000:]
    return seen


def test_a_default_run_trains_ahead_the_references_and_claims_live_all_every_run(
    inprocess, monkeypatch, fresh_cache, model_store
):
    live_seed = model_store.profile.live_seed
    default = training_list(inprocess, monkeypatch, fresh_cache("default"))
    assert sorted(default) == sorted((name, live_seed) for name in REFERENCES)
    every = training_list(inprocess, monkeypatch, fresh_cache("all"), "--claims-live=all")
    recipes = [n for n in model_store.profile.recipes if n != "custom"]  # the references and every variant
    assert sorted(n for n, seed in every if seed == live_seed) == sorted(recipes)
    independent = [(n, seed) for n, seed in every if seed != live_seed]
    assert independent and {seed for _, seed in independent} == {live_seed + 1000}, every  # the pair parts' runs


def live(model_store: ModelStore, **settings) -> _Live:
    """The live judgement of the reference ViT in a session with ``settings``; nothing is trained to build it."""
    store = ModelStore(dataclasses.replace(model_store.settings, **settings))
    return _Live(store, ModelUnderTest("vit", None, model_store.architecture("vit"), {}, None, None), {})


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
    evidence = live(model_store).part_evidence(read)
    assert evidence.reason == (  # type: ignore[union-attr]  (Skipped)
        f"it reads {reads}, which this run does not train: the part is judged from the committed seed study; its "
        "live run needs --claims-live=all"
    )
    assert live(model_store, live="all").not_trained_here(read) is None
    assert live(model_store, scope="checkpoint").not_trained_here(read) is None  # these weights: read as ever
    only_references = get_claim("park2022.vit-nonconvex").parts[0]  # the ViT against the ResNet
    assert live(model_store).not_trained_here(only_references) is None
