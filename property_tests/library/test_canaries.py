"""The seed study judged by behaviour: its canaries (model_props.verdicts.canaries, model_props.study.canaries).

The judge on the committed record (a canary within its margin keeps the study, one outside stales exactly the claims
that read it, naming the kind and the command that rebuilds), and the code itself in temporary copies of the tree: a
renamed measurement module and a reflowed docstring leave the study valid, a changed constant of one kind stales
exactly that kind's claims.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import model_props
from model_props.cache import default_cache_dir
from model_props.claims import get_claim
from model_props.errors import StudyError
from model_props.study.canaries import CANARY, load_canaries
from model_props.training.profiles import load_profile
from model_props.verdicts.canaries import ALL, FLOAT_FLOOR, MARGIN_SD, CanaryRecord, code_digest, libraries, margin
from model_props.verdicts.study import load_study

NOISE_CLAIM = "park2022.frequency-vulnerability"  # reads the noise kind only
POSITION_CLAIM = "dosovitskiy2021.position-embedding-2d"  # reads the position kind only


@pytest.fixture(scope="module")
def committed():
    record, study = load_canaries("smoke"), load_study("smoke")
    assert record is not None and study is not None, "fixtures/smoke-canaries.json or smoke-seeds.json is missing"
    return record, study, load_profile("smoke")


@pytest.fixture(scope="module")
def current(committed):
    """The committed record as if this code had recorded it (this code's digests, no confirmation): where a test is
    about running or excusing canaries, whatever code was confirmed since the record."""
    record, study, profile = committed
    code = {cid: code_digest(get_claim(cid), profile) for cid in record.claims}
    return dataclasses.replace(record, code=code, confirmed=()), study, profile


def replayed(record, seed_index: int = 0) -> dict:
    """A canary run that reproduces the record's seed ``seed_index`` exactly (what a run of the same code gives)."""
    claims = {cid: {"parts": {part: {"values": {m: v[seed_index] for m, v in models.items()}}
                              for part, models in parts.items()}}
              for cid, parts in record.claims.items()}  # fmt: skip
    recipes = {n: {c: {k: v[seed_index] for k, v in per.items()} for c, per in ckpts.items()}
               for n, ckpts in record.training.items()}  # fmt: skip
    return {"claims": claims, "recipes": recipes}


def test_the_margin_is_a_tenth_of_the_seed_sd_plus_a_float_floor():
    assert (MARGIN_SD, FLOAT_FLOOR) == (0.1, 1e-6)
    assert margin([1.0, 2.0, 3.0]) == pytest.approx(0.1 * 1.0 + 1e-6 * 3.0)
    assert margin([0.0, 0.0, 0.0]) == 0.0 and margin([None, None, None]) == 0.0
    assert margin([2.0, None, 4.0]) == pytest.approx(0.1 * 2**0.5 + 4e-6)


def test_the_record_speaks_for_the_committed_study_and_its_claims(committed):
    record, study, profile = committed
    assert dict(record.study) == study.identity and record.overlay == CANARY and len(record.seeds) == 3
    assert set(record.claims) == set(study.claims)
    assert set(record.recipes) == set(profile.references + profile.variants)
    assert record.moved(replayed(record), profile, study.identity, CANARY) == {}


def test_a_canary_outside_its_margin_stales_exactly_the_claims_that_read_it_and_names_its_kind(committed):
    record, study, profile = committed
    now = replayed(record)
    values = now["claims"][NOISE_CLAIM]["parts"]["high-frequency"]["values"]
    recorded = record.claims[NOISE_CLAIM]["high-frequency"]["vit"]
    values["vit"] = recorded[0] + 0.9 * margin(recorded)  # inside: nothing moved
    assert record.moved(now, profile, study.identity, CANARY) == {}
    values["vit"] = recorded[0] + 1.1 * margin(recorded) + 1e-12
    moved = record.moved(now, profile, study.identity, CANARY)
    assert list(moved) == [NOISE_CLAIM] and moved[NOISE_CLAIM][0].startswith("the noise canary moved: high-frequency")
    with pytest.raises(StudyError, match=r"park2022.frequency-vulnerability is stale \(the noise canary moved.*"
                                         r"model-props seed-study --profile smoke"):  # fmt: skip
        study.judged(moved).check(get_claim(NOISE_CLAIM), profile)
    study.judged(moved).check(get_claim(POSITION_CLAIM), profile)  # another kind's claim keeps its entry


def test_on_another_machine_kind_a_move_stales_only_where_the_code_changed_too(current):
    """Another CPU sums floats in another order, which training amplifies (AdamW on a gradient that is zero in exact
    arithmetic): there a move with the recording code is the machine's; with other code it cannot be told apart."""
    record, study, profile = current
    moved = {NOISE_CLAIM: ["the noise canary moved: ..."], POSITION_CLAIM: ["the position canary moved: ..."]}
    assert record.machine_excused(moved, profile, record.machine) == (moved, [])
    kept, excused = record.machine_excused(moved, profile, "Another CPU (AVX2)")
    assert kept == {} and excused == [NOISE_CLAIM, POSITION_CLAIM]
    changed = dataclasses.replace(record, code={**record.code, NOISE_CLAIM: "other code"})
    kept, excused = changed.machine_excused(moved, profile, "Another CPU (AVX2)")
    assert excused == [POSITION_CLAIM] and kept[NOISE_CLAIM][-1].startswith("(on Another CPU (AVX2), not the record's")


def test_a_machine_kinds_own_reference_judges_its_claims_there_even_where_the_code_changed(committed):
    """A reference of another machine kind (its first canary seed, run there by the recording code) replaces the
    excuse: there the canaries are compared with it, so changed code is judged on that kind as on the record's."""
    record, study, profile = committed
    there, now = "Another CPU (AVX2)", replayed(record)
    recorded = record.claims[NOISE_CLAIM]["high-frequency"]["vit"]
    now["claims"][NOISE_CLAIM]["parts"]["high-frequency"]["values"]["vit"] = recorded[0] + 5 * margin(recorded) + 1e-9
    assert list(record.moved(now, profile, study.identity, CANARY, there)) == [NOISE_CLAIM]  # the record's own seed
    partial = record.reference(there, now, {**record.code, POSITION_CLAIM: "other code"})
    assert NOISE_CLAIM in partial["claims"] and POSITION_CLAIM not in partial["claims"]  # only the recording code's
    referenced = dataclasses.replace(record, machines={there: record.reference(there, now, dict(record.code))})
    assert referenced.moved(now, profile, study.identity, CANARY, there) == {}  # that kind reproduces its reference
    later = copy.deepcopy(now)
    later["claims"][NOISE_CLAIM]["parts"]["high-frequency"]["values"]["vit"] += 1.1 * margin(recorded) + 1e-9
    moved = referenced.moved(later, profile, study.identity, CANARY, there)
    assert list(moved) == [NOISE_CLAIM]
    for code in (dict(record.code), {**record.code, NOISE_CLAIM: "other code"}):  # no excuse where a reference is
        assert referenced.machine_excused(moved, profile, there, code) == (moved, [])


def test_a_canary_runs_only_where_running_could_change_the_outcome(current):
    """The recording code, recipes and versions fix the outcome without running: nothing moves on the kind of a
    reference (one torch thread reproduces it bit for bit), any move is excused on a kind without one. Changed code,
    a changed recipe or, on the kind of a reference, another torch make a claim's canaries run."""
    record, study, profile = current
    claims, versions, there = list(record.claims), dict(record.provenance["versions"]), "Another CPU (AVX2)"
    assert record.to_run(claims, profile, record.machine, versions) == []
    assert record.to_run(claims, profile, record.machine, {**versions, "model-props": "9.9"}) == []
    assert record.to_run(claims, profile, record.machine, {**versions, "torch": "9.9"}) == claims
    assert record.to_run(claims, profile, there, {**versions, "torch": "9.9"}) == []  # any move there is excused
    changed = dataclasses.replace(record, code={**record.code, NOISE_CLAIM: "other code"})
    for machine in (record.machine, there):
        assert changed.to_run(claims, profile, machine, versions) == [NOISE_CLAIM]
    reference = {**record.reference(there, replayed(record), dict(record.code)),
                 "provenance": {"versions": {**versions, "torch": "9.9"}}}  # fmt: skip
    referenced = dataclasses.replace(record, machines={there: reference})
    assert referenced.to_run(claims, profile, there, {**versions, "torch": "9.9"}) == []
    assert referenced.to_run(claims, profile, there, versions) == claims
    vit = dataclasses.replace(profile.recipes["vit"], lr=profile.recipes["vit"].lr * 2)
    run = record.to_run(claims, dataclasses.replace(profile, recipes={**profile.recipes, "vit": vit}), there, versions)
    assert NOISE_CLAIM in run and POSITION_CLAIM in run
    for cid in run:
        partners = {part.partner for part in get_claim(cid).parts}
        assert "vit" in partners or any("vit" in models for models in record.claims[cid].values()), cid


def test_a_session_with_the_recording_code_runs_no_canary(current, monkeypatch, tmp_path):
    from model_props.config.settings import Settings
    from model_props.study import canaries

    record, study, _ = current
    monkeypatch.setattr(canaries, "load_canaries", lambda profile, user_dir=None: record)
    monkeypatch.setattr(canaries, "provenance", lambda device: copy.deepcopy(dict(record.provenance)))
    monkeypatch.setattr(canaries, "run_canaries", lambda *args: pytest.fail(f"ran the canaries: {args}"))
    assert canaries.canary_moved(Settings(profile="smoke", cache_dir=tmp_path, progress=False), study) == {}


def test_confirmed_code_runs_no_canary_on_its_kind_and_is_the_recording_codes_where_a_move_is_the_machines(current):
    """Code confirmed on a kind with some versions (its canaries ran there and did not move) runs no canary on that
    kind with those versions; on another referenced kind, or with another torch, it runs them; on a kind without a
    reference it is as good as the recording code (a move there is the machine's)."""
    record, study, profile = current
    claims, versions = list(record.claims), dict(record.provenance["versions"])
    there, unreferenced = "Another CPU (AVX2)", "Third CPU (AVX)"
    reference = {**record.reference(there, replayed(record), dict(record.code)), "provenance": {"versions": versions}}
    older = dataclasses.replace(record, code={**record.code, NOISE_CLAIM: "older code"}, machines={there: reference})
    digest = code_digest(get_claim(NOISE_CLAIM), profile)
    for machine in (older.machine, there, unreferenced):
        assert older.to_run(claims, profile, machine, versions) == [NOISE_CLAIM]
    moved = {NOISE_CLAIM: ["the noise canary moved: ..."]}
    assert older.machine_excused(moved, profile, unreferenced)[1] == []
    confirmation = {"machine": older.machine, "versions": libraries(versions), "code": {NOISE_CLAIM: digest}}
    confirmed = dataclasses.replace(older, confirmed=(confirmation,))
    assert confirmed.to_run(claims, profile, older.machine, versions) == []
    assert confirmed.to_run(claims, profile, older.machine, {**versions, "model-props": "9.9"}) == []
    assert NOISE_CLAIM in confirmed.to_run(claims, profile, older.machine, {**versions, "torch": "9.9"})
    assert confirmed.to_run(claims, profile, there, versions) == [NOISE_CLAIM]  # confirmed on another kind only
    assert confirmed.to_run(claims, profile, unreferenced, versions) == []
    assert confirmed.machine_excused(moved, profile, unreferenced) == ({}, [NOISE_CLAIM])
    assert confirmed.machine_excused(moved, profile, there) == (moved, [])  # its reference judges it there


def test_confirming_code_records_the_claims_whose_canaries_did_not_move_and_only_those(current, monkeypatch,
                                                                                       tmp_path):  # fmt: skip
    from model_props.config.settings import Settings
    from model_props.study import canaries

    record, study, profile = current
    data = json.loads(Path(record.source).read_text())
    data["code"] = {**record.code, NOISE_CLAIM: "older code", POSITION_CLAIM: "older code"}
    data.pop("confirmed", None)
    path = tmp_path / "smoke-canaries.json"
    path.write_text(json.dumps(data))
    older = CanaryRecord.from_json(data, str(path))
    now = replayed(record)
    recorded = record.claims[POSITION_CLAIM]["near-minus-far"]["vit"]
    values = now["claims"][POSITION_CLAIM]["parts"]["near-minus-far"]["values"]
    values["vit"] = recorded[0] + 2 * margin(recorded) + 1e-9
    ran = []
    monkeypatch.setattr(canaries, "load_canaries", lambda profile, user_dir=None: older)
    monkeypatch.setattr(canaries, "provenance", lambda device: copy.deepcopy(dict(record.provenance)))
    monkeypatch.setattr(canaries, "run_canaries", lambda settings, seed, only: ran.append(only) or now)
    moved = canaries.confirm_code(Settings(profile="smoke", cache_dir=tmp_path, progress=False))
    assert ran == [[NOISE_CLAIM, POSITION_CLAIM]] and list(moved) == [POSITION_CLAIM]
    written = CanaryRecord.from_json(json.loads(path.read_text()), str(path))
    assert [c["code"] for c in written.confirmed] == [{NOISE_CLAIM: code_digest(get_claim(NOISE_CLAIM), profile)}]
    versions = dict(record.provenance["versions"])
    assert written.to_run(list(record.claims), profile, record.machine, versions) == [POSITION_CLAIM]
    monkeypatch.setattr(canaries, "provenance", lambda device: {**record.provenance, "machine": {"cpu": "Third CPU"}})
    with pytest.raises(StudyError, match=r"no reference of this machine kind \(Third CPU \(\?\)\).*--canaries-here"):
        canaries.confirm_code(Settings(profile="smoke", cache_dir=tmp_path, progress=False))


def test_an_undefined_canary_must_stay_undefined(committed):
    record, study, profile = committed
    now = replayed(record)
    cid, part, model = next((c, p, m) for c, parts in record.claims.items() for p, models in parts.items()
                            for m, v in models.items() if v[0] is not None)  # fmt: skip
    now["claims"][cid]["parts"][part]["values"][model] = None
    assert list(record.moved(now, profile, study.identity, CANARY)) == [cid]


def test_a_moved_training_canary_or_a_changed_recipe_stales_every_claim_that_reads_the_recipe(committed):
    """Claim 27 reads ResNet inside its pair reports (as the partner, not as a model of its own): a change to the
    resnet recipe, or to how it trains, stales its entry too."""
    record, study, profile = committed
    now = replayed(record)
    now["recipes"]["resnet"]["final"]["test_nll"] += 1.0
    moved = record.moved(now, profile, study.identity, CANARY)
    assert "raghu2021.vit-lower-like-resnet-mid" in moved and "park2022.msa-lowpass" not in moved  # reads no resnet
    assert "the training canary of resnet moved (final test nll" in moved["raghu2021.vit-lower-like-resnet-mid"][0]
    recipes = {**profile.recipes, "resnet": dataclasses.replace(profile.recipes["resnet"], lr=0.1)}
    moved = record.moved(replayed(record), dataclasses.replace(profile, recipes=recipes), study.identity, CANARY)
    assert moved["raghu2021.vit-lower-like-resnet-mid"] == ["recipe 'resnet' changed"]


def test_a_record_of_another_study_or_size_stales_every_claim(committed):
    record, study, profile = committed
    other = {**study.identity, "date": "2020-01-01"}
    assert list(record.moved(replayed(record), profile, other, CANARY)) == [ALL]
    smaller = copy.deepcopy(CANARY)
    smaller["defaults"]["steps"] = 6
    assert "canaries of another size" in record.moved(replayed(record), profile, study.identity, smaller)[ALL][0]


def test_a_study_without_canaries_is_stale_for_every_claim(committed, monkeypatch, tmp_path):
    import model_props.study.canaries as canaries
    from model_props.config.settings import Settings

    _, study, _ = committed
    monkeypatch.setattr(canaries, "load_canaries", lambda profile, user_dir=None: None)
    moved = canaries.canary_moved(Settings(profile="smoke", cache_dir=tmp_path), study)
    assert moved == {ALL: ["it has no canary record (smoke-canaries.json) to judge the code by"]}


def test_a_canary_record_of_another_schema_names_the_command_that_records_it(tmp_path):
    (tmp_path / "smoke-canaries.json").write_text(json.dumps({"schema_version": 0}))
    with pytest.raises(StudyError, match="schema version 0.*record them with the code that built the study"):
        load_canaries("smoke", tmp_path)


# --- the code itself, in temporary copies of the tree --------------------------------------------------------------

_RUN = """
import json, sys
from pathlib import Path
from model_props.claims import get_claim
from model_props.errors import StudyError
from model_props.study.canaries import canary_moved
from model_props.config.settings import Settings
from model_props.verdicts.study import load_study
settings = Settings(profile="smoke", cache_dir=Path(sys.argv[1]), progress=False)
study = load_study("smoke")
claims = sys.argv[2:]
judged = study.judged(canary_moved(settings, study, claims))
found = {}
for cid in claims:
    try:
        judged.check(get_claim(cid), settings.profile_data)
        found[cid] = None
    except StudyError as exc:
        found[cid] = str(exc)
print("RESULT " + json.dumps(found))
"""


def copied_tree(tmp_path: Path) -> Path:
    """A copy of the installed package, its built-in fixtures inside it (as a wheel installs them)."""
    root = tmp_path / "tree"
    package = Path(model_props.__file__).parent
    shutil.copytree(package, root / "model_props", ignore=shutil.ignore_patterns("__pycache__"))
    fixtures = Path(load_study("smoke").source).parent
    if not (root / "model_props" / "fixtures").is_dir():
        shutil.copytree(fixtures, root / "model_props" / "fixtures", ignore=shutil.ignore_patterns("__pycache__"))
    return root


_CONFIRM = """
import json, sys
from pathlib import Path
from model_props.config.settings import Settings
from model_props.study import canaries
settings = Settings(profile="smoke", cache_dir=Path(sys.argv[1]), progress=False)
claims = sys.argv[2:]
moved = canaries.confirm_code(settings, claims)
canaries.run_canaries = lambda *args: sys.exit(f"ran the canaries again: {args}")
again = canaries.canary_moved(settings, canaries.load_study("smoke"), claims)
print("RESULT " + json.dumps({"moved": moved, "again": again}))
"""


def judge_in(root: Path, claims: list[str], script: str = _RUN) -> dict:
    """Each claim's stale message (None: valid) under the code of ``root``, its canaries run with that code (or what
    another ``script`` prints)."""
    run = subprocess.run([sys.executable, "-c", script, str(default_cache_dir()), *claims], capture_output=True,
                         text=True, cwd=root, env={**__import__("os").environ, "PYTHONPATH": str(root)}, timeout=900)  # fmt: skip
    line = next((x for x in run.stdout.splitlines() if x.startswith("RESULT ")), None)
    assert run.returncode == 0 and line is not None, run.stderr[-3000:]
    return json.loads(line.removeprefix("RESULT "))


def test_a_renamed_measurement_module_and_a_reflowed_docstring_leave_the_study_valid(tmp_path):
    root = copied_tree(tmp_path)
    measurements = root / "model_props" / "measurements"
    (measurements / "noise.py").rename(measurements / "band_noise.py")
    registry = measurements / "registry.py"
    text = registry.read_text().replace("from .noise import", "from .band_noise import")
    registry.write_text(text.replace('_M + "noise"', '_M + "band_noise"'))  # the kind's code module, by name
    fourier = root / "model_props" / "measurements" / "functional" / "fourier.py"
    text = fourier.read_text()
    first = text.index('"""', 3)
    fourier.write_text(" ".join(text[3:first].split()).join(['"""', text[first:]]))  # the module docstring reflowed
    assert judge_in(root, [NOISE_CLAIM, POSITION_CLAIM]) == {NOISE_CLAIM: None, POSITION_CLAIM: None}
    # confirmed once on this kind, the renamed code runs no canary here again (model-props seed-study
    # --canaries-confirm; on a kind the record has no reference of, it is refused)
    assert judge_in(root, [NOISE_CLAIM, POSITION_CLAIM], _CONFIRM) == {"moved": {}, "again": {}}


def test_a_changed_constant_of_one_kind_stales_exactly_that_kinds_claims(tmp_path):
    """The position kind's far distance (``max(h, w) / 2``) moved to ``/ 4``: the claim that reads it is stale,
    with a message naming the kind and the command that rebuilds the study; a claim of another kind is not. (An
    accuracy-based kind would not do here: the canary's barely trained models drop no accuracy under noise, so a
    doubled noise amplitude leaves the noise canary at 0: docs/verdicts.md, what a canary cannot see.)"""
    root = copied_tree(tmp_path)
    position = root / "model_props" / "measurements" / "functional" / "position.py"
    text = position.read_text()
    assert text.count("max(h, w) / 2.0") == 1
    position.write_text(text.replace("max(h, w) / 2.0", "max(h, w) / 4.0"))
    found = judge_in(root, [NOISE_CLAIM, POSITION_CLAIM])
    assert found[NOISE_CLAIM] is None
    message = found[POSITION_CLAIM]
    assert message is not None and "the position canary moved: near-minus-far on" in message, message
    assert "model-props seed-study --profile smoke" in message
