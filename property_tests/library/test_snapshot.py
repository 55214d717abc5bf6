"""The expectation snapshot: reviewed, committed, asserted. The committed snapshot matches the committed study; a
study whose verdict on one part moves (one per-seed estimate changed in a copy, fingerprints kept) fails that claim
test with the command that updates the snapshot, and ``model-props expectations --update`` shows exactly that part in
its diff; marks come from the snapshot alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from model_props.claims import get_claim, list_claims
from model_props.config.settings import Settings
from model_props.study.expectations import compare_snapshot
from model_props.training.profiles import RecipeSource, load_profile
from model_props.verdicts.snapshot import load_snapshot, snapshot_of_study
from model_props.verdicts.study import SeedStudy, load_study

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def test_the_committed_snapshot_holds_the_committed_studys_verdicts(capsys):
    study, snapshot = load_study("smoke"), load_snapshot("smoke")
    assert study is not None and snapshot is not None
    assert snapshot.entries == snapshot_of_study(study, [c for c in list_claims() if c.id in study.claims]).entries
    assert compare_snapshot(Settings(profile="smoke", progress=False)) == 0
    assert "matches the study's verdicts" in capsys.readouterr().out
    lines = (FIXTURES / "smoke-expectations.json").read_text().splitlines()
    entries = [line for line in lines if line.startswith('  {"claim"')]
    assert len(entries) == sum(len(parts) for parts in snapshot.entries.values())  # one entry per line


def _moved(folder: Path) -> tuple[str, str, str]:
    """Copies the study and snapshot into ``folder``, with one per-seed estimate of a supported part changed so that
    the part's verdict moves; the (claim, model, part) it moved."""
    data = json.loads((FIXTURES / "smoke-seeds.json").read_text())
    study = SeedStudy.from_json(data)
    for claim in list_claims():
        for model in study.evaluated_on(claim):
            for outcome in study.evaluate(claim, model).parts:
                if outcome.verdict != "supported" or outcome.part.versus or outcome.part.subject:
                    continue
                values = data["claims"][claim.id]["parts"][outcome.part.name]["values"][model]
                spread = max(abs(v - outcome.part.threshold) for v in values if v is not None)
                sign = 1 if outcome.part.direction == "greater" else -1
                values[0] = outcome.part.threshold - sign * 10 * spread  # one seed far on the other side
                moved = SeedStudy.from_json(data).evaluate(claim, model).parts
                if next(p for p in moved if p.part.name == outcome.part.name).verdict != "supported":
                    (folder / "smoke-seeds.json").write_text(json.dumps(data))
                    shutil.copy(FIXTURES / "smoke-expectations.json", folder)
                    return claim.id, model, outcome.part.name
    raise AssertionError("no single-model supported part to move in the committed study")


def test_a_moved_verdict_fails_its_claim_test_and_the_update_shows_exactly_that_part(inprocess, model_store, tmp_path,
                                                                                     capsys):  # fmt: skip
    folder = tmp_path / "recipes"
    folder.mkdir()
    claim_id, model, part = _moved(folder)
    inprocess.makepyfile(test_moved_claims="from model_props.suite.test_claims import *\n")
    result = inprocess.runpytest("-p", "no:cacheprovider", f"--claims-cache={model_store.settings.cache_dir}",
                                 f"--claims-recipes={folder}", "-k", f"{claim_id} and {model}")  # fmt: skip
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"*ExpectationMismatch: {claim_id} on {model}: 1 part(s) differ*",
                                 f"*[[]{part}[]] expected supported, now *",
                                 "*model-props expectations --update --profile smoke*"])  # fmt: skip
    settings = Settings(profile="smoke", recipes=RecipeSource(folder), progress=False)
    assert compare_snapshot(settings) == 1  # the check reports it out of date, and writes nothing
    capsys.readouterr()  # the run's and the check's output: the diff read below is the update's alone
    assert compare_snapshot(settings, update=True) == 0
    diff = [
        line
        for line in capsys.readouterr().out.splitlines()
        if line[:1] in ("+", "-") and not line.startswith(("+++", "---"))
    ]
    assert len(diff) == 2 and all(f'"claim": "{claim_id}", "model": "{model}", "part": "{part}"' in d for d in diff)
    assert diff[0].startswith("-") and '"expected": "supported"' in diff[0] and '"expected": "supported"' not in diff[1]
    assert load_snapshot("smoke", folder).expected(get_claim(claim_id), model).parts[part] != "supported"
    assert compare_snapshot(settings) == 0


def test_an_update_from_a_recipes_folder_without_a_snapshot_writes_it_there_never_into_the_package(
    tmp_path, monkeypatch, capsys
):
    """A user's folder holding a study (one verdict moved) but no snapshot: the check compares against no snapshot
    and names --recipes in its command; the update writes the snapshot into the folder, and the built-in snapshot,
    the one the installed package holds, is neither written nor changed."""
    folder = tmp_path / "recipes"
    folder.mkdir()
    claim_id, model, part = _moved(folder)
    (folder / "smoke-expectations.json").unlink()
    builtin = (FIXTURES / "smoke-expectations.json").resolve()
    before = builtin.read_bytes()
    write_text = Path.write_text

    def guarded(path: Path, *args, **kwargs):
        if path.resolve() == builtin:
            raise AssertionError(f"wrote into the built-in snapshot {builtin}")
        return write_text(path, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", guarded)
    settings = Settings(profile="smoke", recipes=RecipeSource(folder), progress=False)
    assert compare_snapshot(settings) == 1
    assert f"--recipes {folder}" in capsys.readouterr().out
    assert compare_snapshot(settings, update=True) == 0
    written = load_snapshot("smoke", folder)
    assert written is not None and Path(written.source) == folder / "smoke-expectations.json"
    assert written.expected(get_claim(claim_id), model).parts[part] != "supported"
    assert builtin.read_bytes() == before


def test_a_known_failure_is_marked_from_the_snapshot_alone(inprocess, model_store, tmp_path):
    """Collection reads the snapshot, not the study: a snapshot that holds a supported part contradicted marks its
    test a strict xfail(raises=ClaimContradicted), which then fails (the study says supported)."""
    folder = tmp_path / "recipes"
    folder.mkdir()
    shutil.copy(FIXTURES / "smoke-seeds.json", folder)
    text = (FIXTURES / "smoke-expectations.json").read_text()
    snapshot = load_snapshot("smoke")
    assert snapshot is not None
    (claim_id, model), parts = next((k, v) for k, v in snapshot.entries.items() if set(v.values()) == {"supported"})
    part = next(iter(parts))
    line = json.dumps({"claim": claim_id, "model": model, "part": part, "expected": "supported"})
    assert line in text
    (folder / "smoke-expectations.json").write_text(text.replace(line, line.replace("supported", "contradicted")))
    inprocess.makepyfile(test_marked_claims="from model_props.suite.test_claims import *\n")
    result = inprocess.runpytest("-p", "no:cacheprovider", f"--claims-cache={model_store.settings.cache_dir}",
                                 f"--claims-recipes={folder}", "-k", f"{claim_id} and {model}", "-rX", "-rf")  # fmt: skip
    result.assert_outcomes(failed=1)  # the strict xfail expected ClaimContradicted; the mismatch is another failure
    result.stdout.fnmatch_lines([f"*[[]{part}[]] expected contradicted, now supported*"])


@pytest.mark.parametrize("profile", ["smoke"])
def test_the_snapshot_names_where_its_verdicts_came_from(profile):
    snapshot = load_snapshot(profile)
    study = load_study(profile)
    assert snapshot is not None and study is not None
    assert snapshot.study == {"file": f"{profile}-seeds.json", "seeds": list(study.seeds), "date": study.date}
    assert load_profile(profile).live_seed not in study.seeds
