"""A study generation built in shards: planned once, one seed per command written as a shard, a shard kept once
built, every shard checked (the plan's data, canaries that reproduce the study's record) before the shards and the
base seeds are merged into the study; and the generation committed on main named, never failing the default run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from model_props.config.settings import Settings
from model_props.errors import StudyError
from model_props.study import generation as shards
from model_props.training.profiles import RecipeSource
from model_props.verdicts.study import load_study

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def built(tiny, tmp_path_factory):
    """The tiny study (seeds 0-3) copied to a folder of its own, a generation of seeds 0-5 planned on it and seeds 4
    and 5 built as shards."""
    base, source = tiny
    folder = tmp_path_factory.mktemp("generation")
    for name in ("tiny.toml", "tiny-seeds.json", "tiny-seeds.md", "tiny-canaries.json"):
        shutil.copy(source / name, folder / name)
    settings = Settings(profile="tiny", recipes=RecipeSource(folder), cache_dir=base.cache_dir, progress=False)
    planned = shards.plan_generation(settings, "next", [0, 1, 2, 3, 4, 5])
    paths = [shards.build_shard(settings, seed) for seed in (4, 5)]
    return settings, folder, planned, paths


def test_a_generation_takes_the_seeds_of_a_study_of_its_own_data_and_builds_the_others(built):
    settings, folder, planned, paths = built
    assert planned.base_seeds == [0, 1, 2, 3] and planned.missing == [4, 5]
    assert planned.status() == ("study generation 'next' of tiny: 4 of 6 seeds (4 from the study of "
                                f"{planned.plan['base']['date']}); to build: seeds 4, 5")  # fmt: skip
    assert paths == [folder / "studies" / "tiny" / "next" / f"seed-{s}.json" for s in (4, 5)]
    shard = json.loads(paths[0].read_text())
    assert shard["seed"] == 4 and shard["generation"] == "next" and shard["data"] == planned.plan["data"]
    assert set(shard["estimates"]) == {"claims", "recipes", "num_classes"}  # the seed's estimates, no verdict
    assert shard["provenance"]["machine"]["cpu_capability"] and shard["code"]  # where and by what code it was built
    assert shard["seconds"]["estimates"] > 0 and shard["seconds"]["workers"] == 1  # what a seed cost
    assert "park2022.msa-lowpass" in shard["canaries"]["claims"]  # the first canary seed, as that code computes it
    assert shards.Generation.load(planned.path).status().endswith("ready to assemble")
    assert shards.Generation.load(planned.path).status(planned.name).endswith("assembled, the committed seed study")


def test_a_built_shard_is_kept_and_a_seed_outside_the_plan_refused(built, capsys):
    settings, _, planned, paths = built
    before = paths[0].stat().st_mtime_ns
    assert shards.build_shard(settings, 4) == paths[0] and paths[0].stat().st_mtime_ns == before
    assert "is built already" in capsys.readouterr().out
    for seed in (3, 9):  # a base seed, and one the plan does not hold
        with pytest.raises(StudyError, match=f"seed {seed} is not one to build"):
            shards.build_shard(settings, seed)
    with pytest.raises(StudyError, match="a generation is planned once"):
        shards.plan_generation(settings, "next", [0, 1, 2, 3, 4, 5])


def _copy(built, tmp_path: Path) -> tuple[Settings, Path]:
    settings, folder, _, _ = built
    shutil.copytree(folder, tmp_path / "recipes")
    return Settings(profile="tiny", recipes=RecipeSource(tmp_path / "recipes"), cache_dir=settings.cache_dir,
                    progress=False), tmp_path / "recipes" / "studies" / "tiny" / "next"  # fmt: skip


def test_a_shard_of_other_data_or_whose_canaries_moved_is_not_assembled(built, tmp_path):
    settings, generation = _copy(built, tmp_path)
    shard = json.loads((generation / "seed-5.json").read_text())
    canaries = shard["canaries"]["claims"]["park2022.msa-lowpass"]["parts"]["msa-later-half"]["values"]
    canaries["vit"] += 1.0  # as if another code had built it
    shard["data"]["recipes"]["vit"] = "0" * 12  # ... from another recipe
    (generation / "seed-5.json").write_text(json.dumps(shard))
    with pytest.raises(StudyError) as found:
        shards.assemble(settings)
    assert "seed-5.json was built with other recipe vit" in str(found.value)
    assert "seed-5.json's canaries moved for park2022.msa-lowpass: the units canary moved" in str(found.value)
    assert load_study("tiny", generation.parents[2]).seeds == (0, 1, 2, 3)  # nothing written


def test_a_generation_with_a_missing_shard_names_the_seeds_to_build(built, tmp_path):
    settings, generation = _copy(built, tmp_path)
    (generation / "seed-4.json").unlink()
    with pytest.raises(StudyError, match=r"to build: seeds 4: build them first \(model-props seed-study --seed K\)"):
        shards.assemble(settings)


def test_assembling_merges_base_and_shards_and_moves_the_record_and_the_snapshot(built, tmp_path, capsys):
    settings, generation = _copy(built, tmp_path)
    folder = generation.parents[2]
    before = json.loads((folder / "tiny-seeds.json").read_text())
    shard = json.loads((generation / "seed-5.json").read_text())
    shard["provenance"]["machine"]["cpu"] = "Another CPU"  # as if built on another machine (its canaries did not move)
    (generation / "seed-5.json").write_text(json.dumps(shard))
    assert shards.assemble(settings) == folder / "tiny-seeds.json"
    study = load_study("tiny", folder)
    assert study.seeds == (0, 1, 2, 3, 4, 5) and study.generation == "next" and study.confirm_seeds == (3, 4, 5)
    data = json.loads((folder / "tiny-seeds.json").read_text())
    values = data["claims"]["park2022.msa-lowpass"]["parts"]["msa-later-half"]["values"]["vit"]
    assert values[:4] == before["claims"]["park2022.msa-lowpass"]["parts"]["msa-later-half"]["values"]["vit"]
    assert values[5] == shard["estimates"]["claims"]["park2022.msa-lowpass"]["parts"]["msa-later-half"]["values"]["vit"]
    assert data["provenance"]["seeds"]["5"]["machine"] == shard["provenance"]["machine"]  # where each seed was built
    assert "; seeds 5 on Another CPU (" in (folder / "tiny-seeds.md").read_text()
    record = json.loads((folder / "tiny-canaries.json").read_text())
    assert record["study"] == study.identity  # the record speaks for the assembled study
    another = next(k for k in record["machines"] if k.startswith("Another CPU ("))  # seed 5's canaries: its reference
    assert record["machines"][another]["claims"]["park2022.msa-lowpass"]["msa-later-half"]["vit"] == (
        shard["canaries"]["claims"]["park2022.msa-lowpass"]["parts"]["msa-later-half"]["values"]["vit"])  # fmt: skip
    assert (folder / "tiny-expectations.json").is_file() and "review the diff" in capsys.readouterr().out
    with pytest.raises(StudyError, match="0 unassembled study generations"):  # it is the active study's now
        shards.build_shard(settings, 4)


def test_the_generations_committed_on_main_are_consistent_or_named():
    """Each generation planned in the repository: its shards are of its seeds and profile; one not yet assembled (nor
    superseded by the committed study's) is named (skipped with its status) without failing the default run."""
    settings = Settings(profile="smoke", progress=False)
    found = shards.generations(settings, REPOSITORY / "fixtures")
    active = load_study("smoke").generation
    for generation in found:
        assert all(s["seed"] == k and s["generation"] == generation.name for k, s in generation.shards.items())
    pending = [g for g in found if g.pending(active)]
    if pending:
        pytest.skip("; ".join(g.status() + "".join(f"; {p}" for p in g.problems(settings)) for g in pending))


def test_a_generation_planned_before_the_committed_studys_is_superseded_not_ready_to_assemble():
    """A complete generation older than the active study's (generations are named by the date they were planned)
    says it is superseded; a newer one is still ready to assemble."""
    plan = {"generation": "2026-11-29", "profile": "smoke", "seeds": [0, 1, 2, 3, 4], "base": None}
    old, new = (shards.Generation(Path(name), {**plan, "generation": name}, {s: {} for s in plan["seeds"]})
                for name in ("2026-11-29", "2026-12-07"))  # fmt: skip
    assert old.superseded("2026-12-05") and "superseded by generation '2026-12-05'" in old.status("2026-12-05")
    assert not new.superseded("2026-12-05") and new.status("2026-12-05").endswith("ready to assemble")
    assert not old.superseded(None) and old.status().endswith("ready to assemble")


def test_canaries_here_adds_this_machine_kinds_reference_to_the_record(built, tmp_path, monkeypatch):
    """``model-props seed-study --canaries-here`` on a machine kind the record lacks: the first canary seed run there
    becomes that kind's reference; on the record's own kind it is refused."""
    import model_props.study.canaries as canaries

    settings, generation = _copy(built, tmp_path)
    with pytest.raises(StudyError, match="was recorded on this machine kind"):
        canaries.record_machine(settings)
    monkeypatch.setattr(canaries, "machine_kind", lambda machine: "Another CPU (AVX2)")
    path = canaries.record_machine(settings)
    record = json.loads(path.read_text())
    reference = record["machines"]["Another CPU (AVX2)"]
    assert set(reference["claims"]) == set(record["claims"]) and reference["training"].keys() == {"vit", "resnet"}
    assert reference["provenance"]["machine"]["torch_threads"] == 1
    assert canaries.load_canaries("tiny", path.parent).moved(canaries.run_canaries(settings, 0), settings.profile_data,
                                                             record["study"], canaries.CANARY, "Another CPU (AVX2)") == {}  # fmt: skip
