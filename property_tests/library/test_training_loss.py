"""The one training-loss builder (:mod:`model_props.training.loss`): the Hessian replays the loss the loop trains on.

Park & Kim (2022, Sec. 2.2) take the Hessian of the *training* loss. The spectrum report draws its batches with the
builder the loop trains with, so with the recipe's seed its first batch is the loop's first batch, augmentations,
mixing and targets included; and the loss of those targets is torch's cross-entropy."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F
from tiny_resnet import TINY_RESNET_ARCH  # this folder is on sys.path (pytest's "prepend" import mode)

import model_props.training.loop as loop
from model_props.data import class_balanced_subset
from model_props.measurements.spectrum import spectrum_batches
from model_props.training.loss import TrainingLoss, mixing_seed
from model_props.training.recipes import AUGMENTATIONS, Recipe

EVERY = Recipe(name="every", profile="test", model="resnet", steps=2, warmup_steps=1, batch_size=16,
               arch=TINY_RESNET_ARCH, augment=list(AUGMENTATIONS), label_smoothing=0.1)  # fmt: skip


@pytest.fixture(scope="module")
def small(dataset):
    return dataclasses.replace(dataset, train=class_balanced_subset(dataset.train, 0.01, seed=0),
                               val=class_balanced_subset(dataset.val, 0.05, seed=0),
                               test=class_balanced_subset(dataset.test, 0.05, seed=0))  # fmt: skip


def first_trained_batch(recipe: Recipe, data, monkeypatch) -> tuple[torch.Tensor, torch.Tensor]:
    """The inputs the loop's model saw at its first step and the targets its loss was taken of."""
    seen: list[tuple[torch.Tensor, torch.Tensor]] = []
    build, nll = loop.build_for, TrainingLoss.nll

    def recorded_build(*args, **kwargs):
        model = build(*args, **kwargs)
        model.register_forward_pre_hook(lambda m, a: seen.append((a[0].clone(), None)) if m.training else None)
        return model

    def recorded_nll(logits, target):
        seen[-1] = (seen[-1][0], target.clone())
        return nll(logits, target)

    monkeypatch.setattr(loop, "build_for", recorded_build)
    monkeypatch.setattr(TrainingLoss, "nll", staticmethod(recorded_nll))
    loop.train(recipe, data, progress=False, until="warmup")
    return seen[0]


@pytest.mark.parametrize("augment", [list(AUGMENTATIONS), ["crop", "flip"], []], ids=["every", "crop-flip", "none"])
def test_the_hessians_first_batch_is_the_loops_first_batch(small, monkeypatch, augment):
    recipe = dataclasses.replace(EVERY, augment=augment)
    x, target = first_trained_batch(recipe, small, monkeypatch)
    monkeypatch.undo()
    loss = TrainingLoss.of(recipe)
    ((hx, htarget),) = spectrum_batches(loop.training_split(recipe, small), loss, 1, recipe.batch_size,
                                        small.num_classes, seed=recipe.seed)  # fmt: skip
    assert torch.equal(hx, x)
    assert torch.equal(htarget, target)
    assert target.shape == (recipe.batch_size, small.num_classes)  # smoothed or mixed: soft targets
    if {"mixup", "cutmix"} & set(augment):
        assert (target.max(dim=1).values < 1 - recipe.label_smoothing).any()  # pairs were mixed


def test_a_hessian_batch_without_the_recipes_randaugment_is_not_the_loops(small, monkeypatch):
    """The check above can fail: a Hessian that dropped RandAugment (as one once did) sees other images."""
    x, _ = first_trained_batch(EVERY, small, monkeypatch)
    monkeypatch.undo()
    without = dataclasses.replace(TrainingLoss.of(EVERY), augment=tuple(a for a in EVERY.augment if a != "randaugment"))
    ((hx, _),) = spectrum_batches(loop.training_split(EVERY, small), without, 1, EVERY.batch_size, small.num_classes,
                                  seed=EVERY.seed)  # fmt: skip
    assert not torch.equal(hx, x)


def test_a_batch_is_drawn_again_from_its_seeds(small):
    loss = TrainingLoss.of(EVERY)
    images, labels = small.train.images[:16], small.train.labels[:16]

    def draw(seed):
        return loss.batch(images, labels, num_classes=small.num_classes, gen=torch.Generator().manual_seed(0),
                          seed=mixing_seed(EVERY.seed, seed))  # fmt: skip

    (x0, t0), (x1, t1), (x2, _) = draw(0), draw(0), draw(1)
    assert torch.equal(x0, x1) and torch.equal(t0, t1)
    assert not torch.equal(x0, x2)


@pytest.mark.parametrize("eps", [0.0, 0.1])
def test_the_loss_is_torchs_cross_entropy(eps):
    """Against torch's own label smoothing and probability targets (an independent implementation)."""
    gen = torch.Generator().manual_seed(0)
    logits, y = torch.randn(8, 10, generator=gen, dtype=torch.float64), torch.randint(0, 10, (8,), generator=gen)
    images = torch.randint(0, 256, (8, 3, 8, 8), dtype=torch.uint8, generator=gen)
    _, target = TrainingLoss(augment=(), label_smoothing=eps).batch(images, y, num_classes=10, gen=gen, seed=0)
    expected = F.cross_entropy(logits, y, label_smoothing=eps)
    target = target.double() if target.is_floating_point() else target  # built in float32: equal to 1e-6
    torch.testing.assert_close(TrainingLoss.nll(logits, target), expected, rtol=1e-6, atol=0.0)
    mixed = torch.softmax(torch.randn(8, 10, generator=gen, dtype=torch.float64), dim=1)
    torch.testing.assert_close(TrainingLoss.nll(logits, mixed), F.cross_entropy(logits, mixed), rtol=1e-12, atol=1e-12)


def _drawn_one_by_one(images: torch.Tensor, seed: int) -> torch.Tensor:
    """RandAugment's draws from ``seed`` (each step: every image's operation, then its sign), replayed image by image
    through torchvision's operation on one image: the reference the batched groups must match."""
    from torchvision.transforms import v2

    op = v2.RandAugment(num_ops=2, magnitude=9)
    space = list(op._AUGMENTATION_SPACE.items())
    gen = torch.Generator().manual_seed(seed)
    draws = [(torch.randint(len(space), (len(images),), generator=gen), torch.rand(len(images), generator=gen) <= 0.5)
             for _ in range(2)]  # fmt: skip
    out = []
    for i, image in enumerate(images):
        for which, negative in draws:
            name, (magnitudes_of, signed) = space[int(which[i])]
            magnitudes = magnitudes_of(op.num_magnitude_bins, *image.shape[-2:])
            value = 0.0 if magnitudes is None else float(magnitudes[9]) * (-1 if signed and negative[i] else 1)
            image = op._apply_image_or_video_transform(image, name, value, interpolation=op.interpolation,
                                                       fill=op._fill)  # fmt: skip
        out.append(image)
    return torch.stack(out)


def test_randaugment_in_groups_gives_each_image_the_operations_it_drew(small):
    """The batched RandAugment (one call per operation and sign) equals torchvision's operations applied image by
    image with the same draws, and the images of one batch draw their own: 64 copies of one image come out as many."""
    from model_props.data.augment import randaugment

    images = small.train.images[:64]
    assert torch.equal(randaugment(images, torch.Generator().manual_seed(5)), _drawn_one_by_one(images, 5))
    copies = randaugment(images[:1].expand(64, -1, -1, -1), torch.Generator().manual_seed(5))
    assert len(torch.unique(copies.flatten(1), dim=0)) > 20
    again = randaugment(images, torch.Generator().manual_seed(5))
    assert torch.equal(again, randaugment(images, torch.Generator().manual_seed(5)))
    assert not torch.equal(again, randaugment(images, torch.Generator().manual_seed(6)))
