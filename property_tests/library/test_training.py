"""Recipes, training, and the checkpoint cache (reuse, determinism, corruption, locking)."""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import shutil
from pathlib import Path

import pytest
import torch
from tiny_resnet import TINY_RESNET_ARCH  # this folder is on sys.path (pytest's "prepend" import mode)

from model_props.data import ImageDataset, class_balanced_subset
from model_props.errors import RecipeError
from model_props.training.checkpoints import get_trained, model_entry
from model_props.training.loop import train
from model_props.training.profiles import RecipeSource, get_recipe, list_recipes, load_profile
from model_props.training.recipes import Recipe

REFERENCES = ["alternet", "pit", "resnet", "swin", "vit"]


@pytest.fixture(scope="module")
def tiny_data(dataset) -> ImageDataset:
    """A 2 % class-balanced slice of the default data: enough to exercise training in seconds."""
    return dataclasses.replace(
        dataset,
        train=class_balanced_subset(dataset.train, 0.02, seed=0),
        val=class_balanced_subset(dataset.val, 0.1, seed=0),
        test=class_balanced_subset(dataset.test, 0.1, seed=0),
    )


TINY = Recipe(
    name="tiny",
    profile="test",
    model="resnet",
    steps=24,
    warmup_steps=8,
    batch_size=32,
    arch=TINY_RESNET_ARCH,
)


def test_smoke_profile_has_the_five_references():
    assert load_profile("smoke").references == ["vit", "pit", "swin", "resnet", "alternet"]
    assert "custom" in list_recipes("smoke")
    assert list_recipes("smoke", "vit") == ["vit"]
    assert sorted(load_profile("paper").references) == REFERENCES


def test_smoke_references_get_the_same_budget_and_schedule():
    """Fair recipes: one step budget, batch, optimizer and augmentation for every reference."""
    profile = load_profile("smoke")
    fields = (
        "steps",
        "epochs",
        "batch_size",
        "optimizer",
        "weight_decay",
        "augment",
        "label_smoothing",
        "dataset",
        "subset",
    )
    shared = {tuple(getattr(profile.recipes[n], f) for f in fields) for n in profile.references}
    assert len(shared) == 1, shared


@pytest.mark.parametrize("profile", ["smoke", "cpu", "paper"])
def test_every_reference_warms_up_for_the_same_number_of_steps(profile):
    """Claims compare warm-up checkpoints across references: they must sit at the same optimizer step."""
    p = load_profile(profile)
    n_train = 45_000 if p.recipes["vit"].dataset.startswith("cifar") else 12_000
    warmups = {name: p.recipes[name].schedule(n_train)[1] for name in p.references}
    assert len(set(warmups.values())) == 1, warmups


def test_smoke_hyperparameters_are_the_grid_search_selection():
    """Each reference's lr and warm-up are the ones the committed grid search selected on validation data, inside
    the learning rates it tried (not on an edge); the cpu profile takes them too, except where its own search
    (``cpu-grid.json``, run for a reference that did not train with the smoke values) selected others."""
    import json
    from importlib import resources

    fixtures = resources.files("model_props.fixtures")
    grid = json.loads(fixtures.joinpath("smoke-grid.json").read_text())
    cpu_grid = json.loads(fixtures.joinpath("cpu-grid.json").read_text())
    profile = load_profile("smoke")
    cpu = load_profile("cpu")
    assert {grid["selected"][n]["warmup_steps"] for n in profile.references} == {grid["common_warmup"]["steps"]}
    for name in profile.references:
        chosen = grid["selected"][name]
        recipe = profile.recipes[name]
        assert (recipe.lr, recipe.warmup_steps) == (chosen["lr"], chosen["warmup_steps"]), name
        tried = sorted({r["lr"] for r in grid["runs"] if r["model"] == name})
        assert tried[0] < chosen["lr"] < tried[-1], (
            f"{name}: the selected lr {chosen['lr']} is on the grid's edge {tried}"
        )
        assert chosen["warmup_steps"] in grid["grid"]["warmup_steps"]
        cpu_chosen = cpu_grid["selected"].get(name, chosen)
        assert (cpu.recipes[name].lr, cpu.recipes[name].warmup_steps) == (
            cpu_chosen["lr"],
            cpu_chosen["warmup_steps"],
        ), name
    for name, chosen in cpu_grid["selected"].items():
        tried = sorted({r["lr"] for r in cpu_grid["runs"] if r["model"] == name})
        assert tried[0] < chosen["lr"] < tried[-1], (
            f"cpu {name}: the selected lr {chosen['lr']} is on the grid's edge {tried}"
        )


def test_variants_keep_their_references_recipe_unless_its_lr_leaves_them_at_chance():
    """A variant trains by its reference's recipe; one that sat at chance on the validation split at the reference's
    learning rate takes the one a grid search selected for it (``smoke-variant-grid.json``: the references' grid,
    the common warm-up, scored on validation), inside the learning rates it tried."""
    import json
    from importlib import resources

    grid = json.loads(resources.files("model_props.fixtures").joinpath("smoke-variant-grid.json").read_text())
    references = json.loads(resources.files("model_props.fixtures").joinpath("smoke-grid.json").read_text())
    profile = load_profile("smoke")
    assert set(grid["selected"]) == {"resnet_msa"}
    for name in profile.variants:
        recipe, base = profile.recipes[name], profile.recipes[profile.bases[name]]
        chosen = grid["selected"].get(name, {"lr": base.lr, "warmup_steps": base.warmup_steps})
        assert (recipe.lr, recipe.warmup_steps) == (chosen["lr"], chosen["warmup_steps"]), name
    for name, chosen in grid["selected"].items():
        tried = sorted({r["lr"] for r in grid["runs"] if r["model"] == name})
        assert tried[0] < chosen["lr"] < tried[-1] and chosen["warmup_steps"] == references["common_warmup"]["steps"]


def test_paper_profile_records_the_paper_recipe():
    vit = get_recipe("paper", "vit")
    assert (vit.optimizer, vit.lr, vit.weight_decay, vit.batch_size) == ("adamw", 1.25e-4, 0.05, 96)
    assert (vit.warmup_epochs, vit.epochs, vit.label_smoothing, vit.dataset) == (5, 305, 0.1, "cifar100")
    assert vit.schedule(45_000) == (round(305 * 45_000 / 96), round(5 * 45_000 / 96))
    assert {"mixup", "cutmix", "randaugment"} <= set(vit.augment)
    assert vit.arch["patch_size"] == 2 and vit.arch["embed_dim"] == 192 and vit.arch["depth"] == 12


def test_unknown_profile_and_recipe_list_choices(tmp_path):
    with pytest.raises(RecipeError, match=r"unknown profile='huge'; valid: 'cpu', 'paper', 'smoke'$"):
        load_profile("huge")
    (tmp_path / "mine.toml").write_text("")
    with pytest.raises(
        RecipeError, match=r"unknown profile='huge'; valid: 'cpu', 'mine', 'paper', 'smoke' \(built-in, and the user's"
    ):
        load_profile("huge", RecipeSource(tmp_path))
    with pytest.raises(RecipeError, match=r"profile 'smoke' has no recipe 'vgg'; valid: .*'alternet'"):
        get_recipe("smoke", "vgg")


def test_malformed_recipe_is_rejected(tmp_path):
    (tmp_path / "bad.toml").write_text('[recipes.x]\nmodel = "vit"\nsteps = 1\nlearning_rate = 3\n')
    with pytest.raises(RecipeError, match=r"recipe 'x' in profile 'bad': unknown fields \['learning_rate'\]"):
        load_profile("bad", RecipeSource(tmp_path))
    with pytest.raises(RecipeError, match=r"augment=\['cutout'\]"):
        Recipe(name="y", profile="p", model="vit", steps=1, augment=("cutout",))
    with pytest.raises(RecipeError, match=r"give exactly one budget, steps or epochs"):
        Recipe(name="y", profile="p", model="vit", steps=10, epochs=1)
    with pytest.raises(RecipeError, match=r"warm-up of 10 steps must be shorter than the 10-step budget"):
        Recipe(name="y", profile="p", model="vit", steps=10, warmup_steps=10).schedule(100)


def test_user_profiles_extend_and_override(tmp_path):
    """A user's folder adds profiles and extends built-in ones; pyproject overrides edit single fields."""
    (tmp_path / "smoke.toml").write_text('[recipes.custom]\nsteps = 2000\n[recipes.mine]\nmodel = "vit"\n')
    (tmp_path / "big.toml").write_text('[defaults]\nsteps = 5\n[recipes.custom]\nmodel = ""\n')
    smoke = load_profile("smoke", RecipeSource(tmp_path))
    assert smoke.recipes["custom"].steps == 2000 and smoke.recipes["custom"].lr == get_recipe("smoke", "custom").lr
    assert smoke.recipes["mine"].steps == get_recipe("smoke", "vit").steps and "mine" in smoke.variants
    assert load_profile("big", RecipeSource(tmp_path)).recipes["custom"].steps == 5
    over = load_profile("smoke", RecipeSource(None, {"custom": {"steps": 99, "lr": 0.1}}))
    assert (over.recipes["custom"].steps, over.recipes["custom"].lr) == (99, 0.1)
    with pytest.raises(RecipeError, match=r"recipe overrides name \['nope'\], not recipes of profile 'smoke'; valid:"):
        load_profile("smoke", RecipeSource(None, {"nope": {"steps": 1}}))


@pytest.fixture(scope="module")
def full_run(tiny_data):
    """One run of TINY to its end, shared by the tests that compare another run with it."""
    return train(TINY, tiny_data, progress=False)


@pytest.fixture(scope="module")
def trained_cache(tmp_path_factory, tiny_data) -> Path:
    """A cache holding TINY, trained once here; tests get their own copy (:func:`cache_with_tiny`)."""
    cache = tmp_path_factory.mktemp("trained")
    assert get_trained(TINY, cache_dir=cache, data=tiny_data, progress=False).from_cache is False
    return cache


@pytest.fixture
def cache_with_tiny(tmp_path, trained_cache) -> Path:
    shutil.copytree(trained_cache, tmp_path / "cache")
    return tmp_path / "cache"


def test_training_is_deterministic(tiny_data, full_run):
    a = full_run
    b = train(TINY, tiny_data, progress=False)
    for (k, va), vb in zip(a.model.state_dict().items(), b.model.state_dict().values()):
        assert torch.equal(va, vb), k

    def timeless(metrics):
        return {c: {k: v for k, v in m.items() if k != "train_seconds"} for c, m in metrics.items()}

    assert timeless(a.metrics) == timeless(b.metrics)


def test_warmup_checkpoint_is_the_state_at_the_end_of_warmup(tiny_data, full_run):
    """A run stopped at the warm-up equals the full run's warm-up checkpoint, step for step."""
    full = full_run
    short = train(TINY, tiny_data, progress=False, until="warmup")
    assert set(full.states) == {"warmup", "final"} and set(short.states) == {"warmup"}
    for k, v in full.states["warmup"].items():
        assert torch.equal(v, short.states["warmup"][k]), k
    assert full.metrics["warmup"]["step"] == 8 and full.metrics["final"]["step"] == 24
    assert not all(torch.equal(v, full.states["final"][k]) for k, v in full.states["warmup"].items())


def test_second_request_is_served_from_the_cache(tmp_path, tiny_data, full_run):
    first = get_trained(TINY, cache_dir=tmp_path, data=tiny_data, progress=False)
    second = get_trained(TINY, cache_dir=tmp_path, data=tiny_data, progress=False)
    assert (first.from_cache, second.from_cache) == (False, True)
    assert second.metrics == first.metrics
    x = torch.rand(4, 3, 32, 32)
    with torch.no_grad():
        assert torch.equal(first.model(x), second.model(x))
        assert torch.equal(second.model(x), full_run.model.eval()(x)), "the cache serves the weights it was given"
    entry = model_entry(TINY, tmp_path)
    assert entry.path("final").is_file() and entry.path("warmup").is_file() and entry.manifest.is_file()
    assert not list(entry.folder.glob(".*.tmp")), "temporary files left behind"
    warm = get_trained(TINY, cache_dir=tmp_path, data=tiny_data, progress=False, checkpoint="warmup")
    assert warm.from_cache and warm.metrics["step"] == 8 and warm.sha256 != second.sha256


def test_manifest_records_provenance_and_producer(cache_with_tiny, tiny_data):
    import json

    tmp_path = cache_with_tiny
    trained = get_trained(TINY, cache_dir=tmp_path, data=tiny_data, progress=False)
    meta = json.loads(model_entry(TINY, tmp_path).manifest.read_text())
    assert set(meta["provenance"]["versions"]) == {"model-props", "torch", "timm", "numpy"}
    assert {"cpu", "cpu_count", "torch_threads", "platform"} <= set(meta["provenance"]["machine"])
    assert (
        meta["recipe"]["seed"] == TINY.seed and meta["code_hash"] and meta["recipe_fingerprint"] == TINY.fingerprint()
    )
    assert model_entry(TINY, tmp_path).name == trained.provenance["recipe_key"] + ".final"
    assert meta["produced_by"]["host"] and meta["produced_by"]["device"] == "cpu"


def test_data_of_another_dataset_is_refused(tmp_path, tiny_data):
    cifar = dataclasses.replace(TINY, dataset="cifar10")
    with pytest.raises(RecipeError, match=r"recipe 'tiny' trains on dataset='cifar10', got data 'deadleaves'"):
        get_trained(cifar, cache_dir=tmp_path, data=tiny_data, progress=False)
    assert not list(tmp_path.rglob("*.safetensors")), "nothing may be cached under the wrong key"


def test_a_different_recipe_is_a_different_entry(tmp_path):
    other = dataclasses.replace(TINY, lr=TINY.lr / 2)
    assert model_entry(TINY, tmp_path) != model_entry(other, tmp_path)
    described = dataclasses.replace(TINY, description="x")
    assert model_entry(TINY, tmp_path) == model_entry(described, tmp_path)
    reseeded = dataclasses.replace(TINY, seed=1)
    assert model_entry(TINY, tmp_path) != model_entry(reseeded, tmp_path)
    assert TINY.fingerprint() == reseeded.fingerprint() != other.fingerprint()


@pytest.mark.parametrize("damage", ["truncate weights", "garbage manifest", "missing manifest", "flip a byte"])
def test_damaged_entry_is_rebuilt_not_loaded(cache_with_tiny, tiny_data, damage, capsys):
    """... and says so in one line (it was retrained for minutes with no message: issue 61)."""
    tmp_path = cache_with_tiny
    entry = model_entry(TINY, tmp_path)
    weights = entry.path("final")
    good = weights.read_bytes()
    if damage == "truncate weights":
        weights.write_bytes(good[: len(good) // 2])
    elif damage == "garbage manifest":
        entry.manifest.write_text("{ not json")
    elif damage == "missing manifest":
        entry.manifest.unlink()
    else:
        weights.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    capsys.readouterr()
    again = get_trained(TINY, cache_dir=tmp_path, data=tiny_data, progress=False)
    assert again.from_cache is False
    said = [line for line in capsys.readouterr().err.splitlines() if "is damaged" in line]
    if damage != "missing manifest":  # an entry without a manifest is one never published: absent, not damaged
        assert len(said) == 1 and said[0].endswith("; rebuilding it") and str(entry.directory) in said[0], said
    assert weights.read_bytes() == good  # deterministic retraining restores the same entry, in the damaged one's place
    assert not list(entry.folder.glob(".*.tmp")), "the damaged entry moved aside is gone"
    assert get_trained(TINY, cache_dir=tmp_path, data=tiny_data, progress=False).from_cache is True


def _worker(cache_dir: str, data: ImageDataset, queue) -> None:
    torch.set_num_threads(1)
    queue.put(get_trained(TINY, cache_dir=Path(cache_dir), data=data, progress=False).from_cache)


def test_two_processes_train_a_model_once(tmp_path, tiny_data):
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(str(tmp_path), tiny_data, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    assert [p.exitcode for p in procs] == [0, 0]
    assert sorted([queue.get(), queue.get()]) == [False, True], "exactly one process trains, the other loads"
