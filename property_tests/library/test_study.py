"""The seed study: a study of tiny recipes run end to end, the verdicts and replications computed from it, stale or
foreign studies refused with the command that regenerates them, the live seed kept out, and the committed smoke
study."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

from model_props.claims import get_claim, list_claims
from model_props.config.settings import Settings
from model_props.errors import StudyError
from model_props.study.run import run_study
from model_props.training.profiles import RecipeSource, load_profile
from model_props.verdicts.study import SCHEMA_VERSION, SeedStudy, load_study

TINY = (Path(__file__).parent / "tiny.toml").read_text()


def test_a_study_writes_per_seed_estimates_and_fingerprints_not_verdicts(tiny):
    _, folder = tiny
    data = json.loads((folder / "tiny-seeds.json").read_text())
    assert data["schema_version"] == SCHEMA_VERSION and data["seeds"] == [0, 1, 2, 3]
    assert (data["set_seeds"], data["confirm_seeds"]) == ([0, 1, 2], [3])
    entry = data["claims"]["park2022.msa-lowpass"]
    assert entry["evaluated_on"] == ["vit"] and entry["not_applicable"]["resnet"] == "resnet has no msa units"
    values = entry["parts"]["msa-later-half"]["values"]["vit"]
    assert len(values) == 4 and all(isinstance(v, float) for v in values)
    assert "verdict" not in json.dumps(data)  # verdicts are computed at test time, never stored
    assert set(entry["fingerprint"]) == {"rules", "statistics", "measurement", "settings"}
    assert data["recipes"]["vit"]["checkpoints"]["warmup"]["step"] == [4, 4, 4, 4]
    assert "Held-out confirmation" in (folder / "tiny-seeds.md").read_text()
    canaries = json.loads((folder / "tiny-canaries.json").read_text())  # recorded by the code that built the study
    assert canaries["seeds"] == [0, 1, 2] and canaries["study"] == {"date": data["date"], "seeds": [0, 1, 2, 3]}
    assert len(canaries["claims"]["park2022.msa-lowpass"]["msa-later-half"]["vit"]) == 3


def test_seed_study_canaries_records_the_canaries_of_the_existing_study(tiny, capsys):
    """``model-props seed-study --canaries``: the canaries of the study in the recipes folder, written beside it, the
    same as the study run recorded (one machine, one torch thread: bit for bit)."""
    from model_props.cli import main

    settings, folder = tiny
    recorded = json.loads((folder / "tiny-canaries.json").read_text())
    (folder / "tiny-canaries.json").unlink()
    argv = [
        "seed-study",
        "--profile",
        "tiny",
        "--recipes",
        str(folder),
        "--cache",
        str(settings.cache_dir),
        "--canaries",
    ]
    assert main(argv) == 0
    assert f"recorded {folder / 'tiny-canaries.json'}" in capsys.readouterr().out
    again = json.loads((folder / "tiny-canaries.json").read_text())
    assert again["claims"] == recorded["claims"] and again["training"] == recorded["training"]


def learned(folder: Path) -> SeedStudy:
    """The tiny study as if its models had learned (16 steps leave them at chance, which skips every part)."""
    data = json.loads((folder / "tiny-seeds.json").read_text())
    for recipe in data["recipes"].values():
        for checkpoint in recipe["checkpoints"].values():
            checkpoint["test_accuracy"] = [0.6] * len(checkpoint["test_accuracy"])
    return SeedStudy.from_json(data, str(folder / "tiny-seeds.json"))


def test_verdicts_and_replications_come_from_the_estimates(tiny):
    settings, folder = tiny
    assert load_study("tiny", folder).evaluate(get_claim("park2022.msa-lowpass"), "vit").skip_reason  # at chance
    study = learned(folder)
    claim = get_claim("park2022.msa-lowpass")
    study.check(claim, settings.profile_data)
    outcome = study.evaluate(claim, "vit")
    assert outcome.scope == "architecture" and outcome.seeds == (0, 1, 2, 3)
    (part,) = outcome.parts
    assert part.estimate.method == "t over seeds" and part.estimate.n == 4
    assert study.set_seeds == (0, 1, 2) and study.confirm_seeds == (3,)
    replication = study.replication(claim, "vit")["msa-later-half"]
    assert replication.verdict == part.verdict and replication.total == 1 and replication.inside in (0, 1)
    assert replication.category in ("confirmed", "decided with more seeds", "undecided with more seeds",
                                    "did not replicate")  # fmt: skip
    found = study.confirmation(list_claims())
    assert found.total >= 10 and 0 <= found.inside <= found.total and len(found.outside) == found.total - found.inside
    versus = study.evaluate(get_claim("park2022.msa-flattens-loss"), "vit").parts[0]
    assert versus.verdict == "skipped" or versus.estimate.method == "paired t over seeds"


def test_a_replication_tells_more_seeds_deciding_a_part_from_a_failed_replication():
    from model_props.verdicts.study import Replication

    assert Replication("supported", "supported", 2, 2).category == "confirmed"
    assert Replication("inconclusive", "supported", 2, 2).category == "decided with more seeds"
    assert Replication("supported", "inconclusive", 2, 2).category == "undecided with more seeds"
    assert Replication("inconclusive", "supported", 1, 2).category == "did not replicate"
    assert Replication("supported", "supported", 1, 2).category == "did not replicate"
    assert Replication("supported", "contradicted", 2, 2).category == "did not replicate"


def test_a_study_whose_held_out_seeds_do_not_confirm_it_is_not_written(tiny, tmp_path, capsys):
    """Every held-out estimate moved far outside the setting seeds' prediction intervals: the study is refused,
    naming the estimates, and nothing is written."""
    from model_props.study.checks import confirm

    settings, folder = tiny
    data = json.loads((folder / "tiny-seeds.json").read_text())
    for recipe in data["recipes"].values():  # as if the models had learned, so that the parts are judged
        for checkpoint in recipe["checkpoints"].values():
            checkpoint["test_accuracy"] = [0.6] * len(checkpoint["test_accuracy"])
    for entry in data["claims"].values():
        for record in entry["parts"].values():
            for values in record["values"].values():
                if values[3] is not None:
                    values[3] = 1e6 + abs(values[3])
    with pytest.raises(StudyError, match=r"confirm only .*% .* no study is written .* outside: .* seed 3: "):
        confirm(data, tmp_path / "tiny-seeds.json")
    assert not (tmp_path / "tiny-seeds.json").exists()
    assert "did not replicate" in capsys.readouterr().out


def test_a_study_refuses_the_live_seed_and_its_independent_runs(tiny):
    settings, _ = tiny
    assert settings.profile_data.live_seed == 100
    for seeds, bad in (([0, 1, 100], "seed 100 is the live seed"), ([1100, 1], "seed 1100 is the seed of the live"),
                       ([0, -900], "seed -900 is its independent runs would train with the live seed")):  # fmt: skip
        with pytest.raises(StudyError, match=bad):
            run_study(settings, seeds=seeds)


def test_a_stale_entry_names_the_command_that_regenerates_it(tiny):
    settings, folder = tiny
    data = json.loads((folder / "tiny-seeds.json").read_text())
    claim = get_claim("park2022.msa-lowpass")
    changed = copy.deepcopy(data)
    changed["claims"][claim.id]["fingerprint"]["settings"]["units"]["n_images"] = 1
    with pytest.raises(StudyError, match=r"stale \(the units measurement settings changed\).*model-props seed-study"):
        SeedStudy.from_json(changed).check(claim, settings.profile_data)
    changed = copy.deepcopy(data)
    changed["claims"][claim.id]["fingerprint"]["rules"] = "older rules"
    with pytest.raises(StudyError, match=r"stale \(the claim's rules changed\)"):
        SeedStudy.from_json(changed).check(claim, settings.profile_data)
    changed = copy.deepcopy(data)  # the code that built an entry is judged by its canaries, not its recorded hashes
    changed["claims"][claim.id]["fingerprint"]["measurement"]["units"] = "other code"
    changed["recipes"]["vit"]["fingerprint"] = "an older recipe"
    SeedStudy.from_json(changed).check(claim, settings.profile_data)
    moved = SeedStudy.from_json(data).judged({claim.id: ["the units canary moved: msa-later-half on vit 1 -> 2"]})
    with pytest.raises(StudyError, match=r"stale \(the units canary moved: msa-later-half.*model-props seed-study"):
        moved.check(claim, settings.profile_data)
    with pytest.raises(StudyError, match="is of profile 'tiny', not 'smoke'"):
        SeedStudy.from_json(data, "x.json").check(claim, load_profile("smoke"))
    with pytest.raises(StudyError, match="no entry"):
        SeedStudy.from_json({**data, "claims": {}}).check(claim, settings.profile_data)


def test_an_added_claim_equals_the_whole_studys_entry_and_keeps_every_other(tiny, tmp_path):
    """``seed-study --add``: with one claim's entry removed from the tiny study, adding it back measures the same
    per-seed values the whole study did (one machine: deterministic) with the study's own seeds when none are given,
    records when and where, and leaves every other entry byte-equal; other seeds, an unknown claim or a missing study are one-line errors."""
    import shutil

    settings, folder = tiny
    whole = json.loads((folder / "tiny-seeds.json").read_text())
    added_id = "dosovitskiy2021.position-embedding-2d"
    assert whole["claims"][added_id]["parts"]["near-minus-far"]["values"]["vit"][0] is not None
    assert "lacks global_msa" in whole["claims"][added_id]["not_applicable"]["resnet"]
    mine = tmp_path / "recipes"
    shutil.copytree(folder, mine)
    without = copy.deepcopy(whole)
    del without["claims"][added_id]
    (mine / "tiny-seeds.json").write_text(json.dumps(without))
    user = Settings(profile="tiny", recipes=RecipeSource(mine), cache_dir=settings.cache_dir, progress=False)
    run_study(user, add=["dosovitskiy2021.*"])  # no seeds given: the study's own, [0, 1, 2, 3]
    data = json.loads((mine / "tiny-seeds.json").read_text())
    entry = data["claims"].pop(added_id)
    assert entry.pop("added")["provenance"]["machine"]["cpu_count"] >= 1
    assert entry == whole["claims"][added_id]
    del whole["claims"][added_id]
    assert data == whole
    assert "Added later with `model-props seed-study --add`" in (mine / "tiny-seeds.md").read_text()
    with pytest.raises(StudyError, match=r"seeds \[0, 1, 2, 3\].*--seeds 0 1 2 3"):
        run_study(user, seeds=[0, 1, 2], add=[added_id])
    with pytest.raises(
        StudyError, match="'nobody.*' matches no claim; valid: 'bai2021.same-recipe-adversarial', 'dosovitskiy2021"
    ):
        run_study(user, seeds=[0, 1, 2, 3], add=["nobody.*"])
    (mine / "tiny-seeds.json").unlink()
    with pytest.raises(StudyError, match="there is none at .*tiny-seeds.json; run the whole study first"):
        run_study(user, add=[added_id])


def test_a_study_of_another_schema_is_refused(tmp_path):
    (tmp_path / "smoke-seeds.json").write_text(json.dumps({"schema_version": 1, "profile": "smoke"}))
    with pytest.raises(StudyError, match=r"schema version 1.*model-props seed-study --profile smoke"):
        load_study("smoke", tmp_path)


def test_a_part_that_reads_a_model_below_twice_chance_is_skipped(tiny):
    settings, folder = tiny
    data = json.loads((folder / "tiny-seeds.json").read_text())
    for checkpoint in data["recipes"]["vit"]["checkpoints"].values():
        checkpoint["test_accuracy"] = [0.6, 0.11, 0.6, 0.6]  # seed 1 at chance
    study = SeedStudy.from_json(data)
    (part,) = study.evaluate(get_claim("park2022.msa-lowpass"), "vit").parts
    assert part.verdict == "skipped" and "0.110 (seed 1) is below twice chance (0.20)" in part.reason


def test_the_committed_smoke_study_covers_the_current_recipes_and_claims():
    """Rerun ``model-props seed-study`` when a claim's rules or measurement settings change (the code and the recipes
    are judged by the canaries: test_canaries.py)."""
    committed = load_study("smoke")
    assert committed is not None, "fixtures/smoke-seeds.json is missing"
    assert committed.seeds == tuple(range(len(committed.seeds))) and committed.set_seeds == (0, 1, 2)
    assert len(committed.seeds) >= 10, "the live checks' power needs at least ten seeds (docs/verdicts.md)"
    assert committed.confirmation(list_claims()).enough
    profile = load_profile("smoke")
    stale = {c.id: r for c in list_claims() if (r := committed.stale(c, profile))}
    assert not stale, f"rerun the seed study: {stale}"
    size = Path(committed.source).stat().st_size
    assert size < 10_000_000, f"the study ships in the wheel: {size} bytes"


def test_two_groups_of_seeds_of_one_recipe_are_neither_supported_nor_contradicted_against_each_other():
    """Negative control: on every between-model part, split each recipe's seeds in two groups (every 2-vs-3 split of
    a block of five: seeds 0-4, 5-9 and 10-14, each block built on one machine kind) and compare the groups as if
    they were two models (Welch: the groups share no seed). They are the same architecture, so a contradiction is a
    false alarm and so is a support: each at its nominal one-sided 2.5 %, up to the 99th percentile of
    Bin(n, 2.5 %) over the n comparisons."""
    import itertools

    from scipy import stats

    from model_props.verdicts.stats import decide, welch_interval

    committed = load_study("smoke")
    assert committed is not None
    found = {"supported": 0, "contradicted": 0}
    comparisons = 0
    for claim in list_claims():
        for part in (p for p in claim.parts if p.versus):
            for values in committed.claims[claim.id]["parts"].get(part.name, {}).get("values", {}).values():
                for block in (range(i, i + 5) for i in range(0, len(values) - 4, 5)):
                    if any(values[i] is None for i in block):
                        continue
                    for first in itertools.combinations(block, 2):
                        a = [values[i] for i in first]
                        b = [values[i] for i in block if i not in first]
                        comparisons += 1
                        verdict = decide(welch_interval(a, b), part.direction, part.threshold)
                        found[verdict] = found.get(verdict, 0) + 1
    bound = stats.binom.ppf(0.99, comparisons, 0.025)
    assert comparisons >= 20
    assert found["contradicted"] <= bound and found["supported"] <= bound, f"{found} in {comparisons} (bound {bound})"


def test_the_reproduction_rule_rarely_fails_a_seed_of_the_study_itself():
    """Each reference's seeds in turn held out and predicted from the others: draws that reproduce the recipe by
    construction, judged by the live run's own procedure. The rule fails a reference at a nominal 1 % (5 % over the
    run's five references); more failures in the n trials (references x seeds) than the 99th percentile of
    Bin(n, 5 %) (five times the nominal rate) would mean its prediction intervals are too narrow for the study's
    seed-to-seed spread."""
    from scipy import stats

    from model_props.training.profiles import load_profile
    from model_props.verdicts.reproduction import held_out

    committed, profile = load_study("smoke"), load_profile("smoke")
    assert committed is not None
    trials = [held_out(committed, profile, name, i) for name in profile.references for i in range(len(committed.seeds))]
    failed = [t.message() for t in trials if t.failed]
    assert len(trials) == len(profile.references) * len(committed.seeds) and all(len(t.checks) >= 10 for t in trials)
    assert len(failed) <= stats.binom.ppf(0.99, len(trials), 0.05), "\n\n".join(failed)


def test_the_live_seed_is_in_no_study():
    """The committed study holds neither the smoke profile's live seed nor the seed of its independent runs."""
    from model_props.store.pairs import CONTROL_SEED_OFFSET

    committed, profile = load_study("smoke"), load_profile("smoke")
    live = {r.seed for r in profile.recipes.values()}
    assert live == {profile.live_seed}
    assert not (live | {s + CONTROL_SEED_OFFSET for s in live}) & set(committed.seeds)
    assert not {s + CONTROL_SEED_OFFSET for s in committed.seeds} & live


def test_the_verdict_table_tells_a_mismatch_from_a_known_failure():
    from model_props.reporting.summary import verdict_table

    row = {"claim": "c", "scope": "architecture", "k": 5, "verdict": "xfailed"}
    lines = verdict_table(
        [
            {**row, "model": "m", "verdict": "inconclusive", "mismatches": ["p"], "value": 0.1},
            {**row, "model": "n", "expected": "known-failure", "value": -0.2},
        ]
    )
    assert "differs +0.1 a5" in lines[1] and "xfail -0.2 a5" in lines[1], lines


def test_each_training_seed_draws_its_own_measurement_sample_shared_by_every_recipe_of_that_seed(tiny, monkeypatch):
    """The two-stage design: two seeds of one recipe are measured on different samples (the tiny ViT's test images
    differ), two recipes of one seed index on the same one (every report of a seed store is drawn with that seed's
    sample seed), and a user's model on --claims-seed's sample as before."""
    import model_props.store.pairs as pairs
    from model_props.store.model_store import ModelStore, sample_seed
    from model_props.store.tasks import seed_store

    settings, _ = tiny
    drawn: dict[tuple[int, str], int] = {}
    measure = pairs.measure

    def recording(kind, inp, m, *, seed, **kw):
        drawn[(seed_index, inp.name)] = seed
        return measure(kind, inp, m, seed=seed, **kw)

    monkeypatch.setattr(pairs, "measure", recording)
    fits = {}
    for seed_index in (0, 1):
        store = seed_store(settings, seed_index)
        assert store.sample_seed == sample_seed(settings.seed, seed_index)
        fits[seed_index] = store.report("vit", "fit")
        store.report("resnet", "fit")
    assert drawn[(0, "vit")] == drawn[(0, "resnet")] != drawn[(1, "vit")] == drawn[(1, "resnet")]
    assert not np.array_equal(fits[0].test_nll, fits[1].test_nll)  # other images (and weights)
    user = ModelStore(dataclasses.replace(settings, models=("timm:resnet18",)))
    assert user.sample_seed == settings.seed


def test_a_killed_study_continues_from_its_cache(tiny, tmp_path):
    """``model-props seed-study`` (two seeds of the tiny ViT: one trained before the kill, one after) killed after its
    first trained model, then run again on the same cache: it trains only what is missing (the first model comes from
    the cache) and writes the study an uninterrupted run writes."""
    import os
    import shutil
    import signal
    import subprocess
    import sys
    import time

    settings, _ = tiny
    folder = tmp_path / "recipes"  # the tiny ViT alone: resuming does not depend on how many recipes there are
    folder.mkdir()
    (folder / "tiny.toml").write_text(re.sub(r"\[recipes\.resnet\]\n(.+\n)+\n", "", TINY))
    assert "resnet" not in load_profile("tiny", RecipeSource(folder)).recipes
    cache, out = tmp_path / "cache", tmp_path / "out"
    for fresh in (cache, tmp_path / "cache2"):  # the generated dataset only: every model is trained afresh
        shutil.copytree(settings.cache_dir / "data", fresh / "data")
    args = [sys.executable, "-m", "model_props.cli", "seed-study", "--profile", "tiny", f"--recipes={folder}",
            f"--cache={cache}", f"--out={out}", "--seeds", "0", "1", "--workers", "1"]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # the uninterrupted run, as the killed one runs: a subprocess with one worker on a fresh cache (training in
    # another process or thread count gives other float rounding, so the fixture's in-process study is no
    # reference), started now to run beside the killed and the resumed one (it mostly waits on its imports)
    uninterrupted = subprocess.Popen(
        [a.replace(str(cache), str(tmp_path / "cache2")).replace(str(out), str(tmp_path / "out2")) for a in args],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)  # fmt: skip
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                             start_new_session=True)  # fmt: skip
    assert first.stdout is not None
    lines = []
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and not any(line.startswith("trained ") for line in lines):
        lines.append(first.stdout.readline())
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    trained = next(line for line in lines if line.startswith("trained "))
    assert not (out / "tiny-seeds.json").exists()
    again = subprocess.run(args, capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert f"{trained.split(':')[0]}:" in again.stdout and "(cache)" in again.stdout.split(trained.split(":")[0])[1]
    assert uninterrupted.wait(timeout=600) == 0
    whole = json.loads((tmp_path / "out2" / "tiny-seeds.json").read_text())
    resumed = json.loads((out / "tiny-seeds.json").read_text())
    for data in (whole, resumed):
        data.pop("date"), data.pop("provenance")
    assert resumed == whole


def test_a_cold_session_measures_what_its_reproduction_tests_read_on_its_workers(tiny, tmp_path):
    """Training ahead on two workers goes on to measure, there, every report that the reproduction tests read of the
    models it trained, the longest kind first (the spectra and attacks only in the full live run): the reproduction
    then reads them all from the cache and measures nothing in the test process."""
    import shutil

    from model_props.session.pretraining import pretrain, reproduction_reads
    from model_props.session.reproduction import reproduction
    from model_props.store.model_store import ModelStore
    from model_props.study.canaries import judged_study
    from model_props.verdicts.family import RELEASE_KINDS

    settings, _ = tiny
    cache = tmp_path / "cache"
    shutil.copytree(settings.cache_dir / "data", cache / "data")  # the generated dataset only: a cold cache
    store = ModelStore(dataclasses.replace(settings, cache_dir=cache, workers=2))
    reads = reproduction_reads(store, ["vit", "vit"])
    kinds = [kind for _, _, kind, _ in reads]
    assert kinds[0] == "fit" and {"fit", "noise", "units"} <= set(kinds) and not RELEASE_KINDS & set(kinds)
    full = ModelStore(dataclasses.replace(store.settings, live="all"))
    everything = [kind for _, _, kind, _ in reproduction_reads(full, ["vit"])]
    assert everything[0] == "spectrum" and "attack" in everything
    assert {seed for seed, *_ in reads} == {store.profile.live_seed} and len(set(reads)) == len(reads)
    # the ViT's family is itself in the tiny profile; its comparisons with the ResNet are checked on their paired
    # differences, which read the ResNet's live weights too
    assert {name for _, name, _, _ in reads} == {"vit", "resnet"}
    checkpoint_scope = ModelStore(dataclasses.replace(store.settings, scope="checkpoint"))
    assert reproduction_reads(checkpoint_scope, ["vit"]) == []  # judged about the live weights: no reproduction

    judged_study(store)  # the study's canaries, run in this process (once per process)
    assert "vit" in pretrain(store, ["vit", "resnet"], ["vit"])  # two runs: the only ones a default session trains
    measured = sorted(cache.glob("measurements/**/manifest.json"))
    assert measured, "nothing was measured ahead"
    reproduction(store, "vit")
    assert sorted(cache.glob("measurements/**/manifest.json")) == measured, "the reproduction measured again"


def test_a_warm_session_reads_ahead_only_the_reports_of_the_models_its_cache_holds(tiny, tmp_path):
    """What a warm run measures ahead (:func:`~model_props.session.pretraining.cache_lacks`): of the reports the
    reproduction tests read, those of a model the cache holds that the measurement cache lacks; each other report of
    such a model is read from the cache now and kept for its test. A report of a model the cache lacks (the ResNet's
    here, and every paired difference read beside it) is left out, measuring nothing and training nothing: reading
    it here would train that model in the session's process. So is one of a model the user gives weights of."""
    import shutil

    import torch

    from model_props.session.pretraining import cache_lacks, reproduction_reads
    from model_props.store.model_store import ModelStore

    settings, _ = tiny
    cache = tmp_path / "cache"
    shutil.copytree(settings.cache_dir / "data", cache / "data")  # the generated dataset only: a cold cache
    store = ModelStore(dataclasses.replace(settings, cache_dir=cache, workers=2))
    reads = reproduction_reads(store, ["vit"])
    assert cache_lacks(store, reads) == []  # no model is cached: none is trained and nothing is measured here
    assert not (cache / "models").exists() and not (cache / "measurements").exists()

    store.get("vit")  # the ViT's live run only, as a run that trained it and not the ResNet leaves the cache
    own = [r for r in reads if r[1] == "vit" and "@" not in r[2]]
    assert own and len(own) < len(reads)
    warm = ModelStore(store.settings)
    assert cache_lacks(warm, reads) == own  # the ViT's own reports, each missing; the rest reads the ResNet
    assert [run.name.split("-")[0] for run in cache.glob("models/tiny/*.final")] == ["vit"], "a model was trained"
    assert not [f for f in cache.glob("measurements/*/*") if f.suffix != ".lock"], "a report was measured"
    first = own[0]
    store.report(first[1], first[2], first[3])  # measured and cached, as a run that lost only the others leaves it
    warm = ModelStore(store.settings)
    assert cache_lacks(warm, reads) == own[1:]  # the cached one is read now, for its test to find
    assert any(key[1:] == (first[2], None) for key in warm._reports)

    weights = tmp_path / "vit.pt"
    torch.save(store.get("vit").model.state_dict(), weights)
    given = ModelStore(dataclasses.replace(store.settings, checkpoints={"vit": (weights,)}))
    assert cache_lacks(given, reads) == []  # the user's weights are measured by the tests that read them
