"""Recipes, training, and the checkpoint cache (reuse, determinism, corruption, locking)."""
from __future__ import annotations

import dataclasses
import multiprocessing as mp
from pathlib import Path

import pytest
import torch

from model_props.data import ImageDataset, class_balanced_subset
from model_props.errors import RecipeError
from model_props.recipes import Recipe, get_recipe, list_recipes, load_profile
from model_props.training import entry_paths, get_trained, train

REFERENCES = ["alternet", "pit", "resnet", "swin", "vit"]


@pytest.fixture(scope="module")
def tiny_data(dataset) -> ImageDataset:
    """A 2 % class-balanced slice of the default data: enough to exercise training in seconds."""
    return dataclasses.replace(dataset, train=class_balanced_subset(dataset.train, 0.02, seed=0),
                               test=class_balanced_subset(dataset.test, 0.1, seed=0))


TINY = Recipe(name="tiny", profile="test", model="resnet", epochs=1, batch_size=32,
              arch={"layers": [1, 1, 1, 1], "channels": [8, 16, 32, 64]})


def test_recipe_trains_to_its_accuracy_floor(model_under_test):
    recipe = model_under_test.recipe
    if recipe is None:
        pytest.skip(f"{model_under_test.name} comes from a checkpoint: no recipe floor")
    acc = model_under_test.metrics["test_accuracy"]
    assert acc >= recipe.min_test_accuracy, (
        f"{model_under_test.name}: test accuracy {acc:.3f} below the recipe floor {recipe.min_test_accuracy}"
    )


def test_smoke_profile_has_the_five_references():
    assert list_recipes("smoke") == sorted(REFERENCES + ["custom"])
    assert list_recipes("smoke", "vit*") == ["vit"]
    assert sorted(set(load_profile("paper")) - {"custom"}) == REFERENCES


def test_paper_profile_records_the_paper_recipe():
    vit = get_recipe("paper", "vit")
    assert (vit.optimizer, vit.lr, vit.weight_decay, vit.batch_size) == ("adamw", 1.25e-4, 0.05, 96)
    assert (vit.warmup_epochs, vit.epochs, vit.label_smoothing, vit.dataset) == (5, 305, 0.1, "cifar100")
    assert {"mixup", "cutmix", "randaugment"} <= set(vit.augment)
    assert vit.arch["patch_size"] == 2 and vit.arch["embed_dim"] == 192 and vit.arch["depth"] == 12


def test_unknown_profile_and_recipe_list_choices():
    with pytest.raises(RecipeError, match=r"unknown profile='huge'; valid: 'paper', 'smoke'"):
        load_profile("huge")
    with pytest.raises(RecipeError, match=r"profile 'smoke' has no recipe 'vgg'; valid: .*'alternet'"):
        get_recipe("smoke", "vgg")


def test_malformed_recipe_is_rejected(tmp_path):
    (tmp_path / "bad.toml").write_text('[recipes.x]\nmodel = "vit"\nepochs = 1\nlearning_rate = 3\n')
    with pytest.raises(RecipeError, match=r"recipe 'x' in profile 'bad': unknown fields \['learning_rate'\]"):
        load_profile("bad", fixtures_dir=tmp_path)
    with pytest.raises(RecipeError, match=r"augment=\['cutout'\]"):
        Recipe(name="y", profile="p", model="vit", epochs=1, augment=("cutout",))


def test_training_is_deterministic(tiny_data):
    a = train(TINY, tiny_data, progress=False)
    b = train(TINY, tiny_data, progress=False)
    for (k, va), vb in zip(a.model.state_dict().items(), b.model.state_dict().values()):
        assert torch.equal(va, vb), k
    assert a.metrics["test_accuracy"] == b.metrics["test_accuracy"]


def test_second_request_is_served_from_the_cache(tmp_path, tiny_data):
    first = get_trained(TINY, cache_dir=tmp_path, data=tiny_data, progress=False)
    second = get_trained(TINY, cache_dir=tmp_path, data=tiny_data, progress=False)
    assert (first.from_cache, second.from_cache) == (False, True)
    assert second.metrics == first.metrics
    x = torch.rand(4, 3, 32, 32)
    with torch.no_grad():
        assert torch.equal(first.model(x), second.model(x))
    weights, sidecar = entry_paths(TINY, tmp_path)
    assert weights.is_file() and sidecar.is_file()
    assert not list(weights.parent.glob("*.tmp")), "temporary files left behind"


def test_data_of_another_dataset_is_refused(tmp_path, tiny_data):
    cifar = dataclasses.replace(TINY, dataset="cifar10")
    with pytest.raises(RecipeError, match=r"recipe 'tiny' trains on dataset='cifar10', got data 'deadleaves'"):
        get_trained(cifar, cache_dir=tmp_path, data=tiny_data, progress=False)
    assert not list(tmp_path.rglob("*.safetensors")), "nothing may be cached under the wrong key"


def test_a_different_recipe_is_a_different_entry(tmp_path):
    other = dataclasses.replace(TINY, lr=TINY.lr / 2)
    assert entry_paths(TINY, tmp_path)[0] != entry_paths(other, tmp_path)[0]
    floor_only = dataclasses.replace(TINY, min_test_accuracy=0.5, description="x")
    assert entry_paths(TINY, tmp_path)[0] == entry_paths(floor_only, tmp_path)[0]


@pytest.mark.parametrize("damage", ["truncate weights", "garbage sidecar", "missing sidecar", "flip a byte"])
def test_damaged_entry_is_rebuilt_not_loaded(tmp_path, tiny_data, damage):
    get_trained(TINY, cache_dir=tmp_path, data=tiny_data, progress=False)
    weights, sidecar = entry_paths(TINY, tmp_path)
    good = weights.read_bytes()
    if damage == "truncate weights":
        weights.write_bytes(good[: len(good) // 2])
    elif damage == "garbage sidecar":
        sidecar.write_text("{ not json")
    elif damage == "missing sidecar":  # the state a crash between the two writes leaves
        sidecar.unlink()
    else:
        weights.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    again = get_trained(TINY, cache_dir=tmp_path, data=tiny_data, progress=False)
    assert again.from_cache is False
    assert weights.read_bytes() == good  # deterministic retraining restores the same entry
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
