"""Model specs, checkpoints and the one-line errors for bad models."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import save_file

from model_props.errors import CheckpointError, InputSizeError, ModelBuildError, ModelOutputError, UnknownModelError
from model_props.zoo import REFERENCE_MODELS, build_model, check_model, load_checkpoint

SMOKE_PARAMS = (0.3e6, 1.0e6)  # docs/design.md#models-recipes-and-profiles: smoke references have ~0.3-1 M parameters


@pytest.mark.parametrize("name", sorted(REFERENCE_MODELS))
def test_reference_takes_unit_images_and_returns_logits(name):
    model = build_model(name, num_classes=10, img_size=32).eval()
    check_model(model)
    with torch.no_grad():
        assert model(torch.rand(3, 3, 32, 32)).shape == (3, 10)
    params = sum(p.numel() for p in model.parameters())
    assert SMOKE_PARAMS[0] <= params <= SMOKE_PARAMS[1], f"{name}: {params} parameters"


def test_normalisation_lives_inside_the_wrapper():
    model = build_model("resnet", num_classes=10, mean=(0.2, 0.3, 0.4), std=(0.5, 0.5, 0.5)).eval()
    x = torch.rand(2, 3, 32, 32)
    with torch.no_grad():
        expected = model.net((x - torch.tensor([0.2, 0.3, 0.4]).view(1, 3, 1, 1)) / 0.5)
        assert torch.allclose(model(x), expected)
    assert all(k.startswith("net.") for k in model.state_dict()), "mean/std must not be saved with the weights"


def test_unknown_model_lists_the_valid_forms():
    with pytest.raises(UnknownModelError) as info:
        build_model("vitt", num_classes=10)
    msg = str(info.value)
    for part in ("'vitt'", "'alternet'", "'pit'", "'resnet'", "'swin'", "'vit'", "timm:NAME", "package.module:factory"):
        assert part in msg


def test_unknown_timm_model_suggests_close_names():
    with pytest.raises(UnknownModelError, match=r"unknown timm model 'resnet18x'.*similar: .*'resnet18'"):
        build_model("timm:resnet18x", num_classes=10)


def test_timm_model_by_name():
    model = build_model("timm:resnet10t", num_classes=10)
    check_model(model)


def test_user_factory(user_module):
    model = build_model(f"{user_module}:good", num_classes=5)
    check_model(model)
    assert model.num_classes == 5


@pytest.mark.parametrize(
    ("factory", "error", "pattern"),
    [
        ("raises", ModelBuildError, r"usermodels:raises'?: the factory raised RuntimeError: out of coffee"),
        ("not_a_module", ModelBuildError, r"returned str, expected a torch.nn.Module"),
        ("missing", UnknownModelError, r"cannot import 'missing' from 'usermodels'"),
    ],
)
def test_bad_factory(user_module, factory, error, pattern):
    with pytest.raises(error, match=pattern):
        build_model(f"{user_module}:{factory}", num_classes=10)


@pytest.mark.parametrize(
    ("factory", "error", "pattern"),
    [
        ("fixed_64px", InputSizeError, r"cannot take images of size 3x32x32: RuntimeError"),
        ("wrong_classes", ModelOutputError, r"returned \(2, 7\) for a batch of 2; expected \(2, 10\) logits"),
        ("nan", ModelOutputError, r"output has 20 non-finite values \(NaN/inf\) out of 20"),
    ],
)
def test_bad_model_is_caught_by_the_probe(user_module, factory, error, pattern):
    model = build_model(f"{user_module}:{factory}", num_classes=10)
    with pytest.raises(error, match=pattern):
        check_model(model)


@pytest.mark.parametrize("fmt", ["safetensors", "torch", "torch-wrapped"])
def test_checkpoint_round_trip(tmp_path, fmt):
    src = build_model("resnet", num_classes=10).eval()
    with torch.no_grad():
        for p in src.parameters():
            p.add_(torch.randn_like(p) * 0.01)
    state = src.net.state_dict()
    path = tmp_path / ("w.safetensors" if fmt == "safetensors" else "w.pt")
    if fmt == "safetensors":
        save_file({k: v.contiguous() for k, v in state.items()}, str(path))
    else:
        torch.save(
            {"state_dict": {f"module.{k}": v for k, v in state.items()}} if fmt == "torch-wrapped" else state, path
        )
    dst = build_model("resnet", num_classes=10).eval()
    load_checkpoint(dst, path)
    x = torch.rand(2, 3, 32, 32)
    with torch.no_grad():
        assert torch.equal(src(x), dst(x))


def test_missing_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match=r"--checkpoint '.*nope.safetensors' does not exist"):
        load_checkpoint(build_model("vit", num_classes=10), tmp_path / "nope.safetensors")


@pytest.mark.parametrize("suffix", [".safetensors", ".pt"])
def test_corrupt_checkpoint(tmp_path, suffix):
    path = tmp_path / f"bad{suffix}"
    path.write_bytes(b"\x00\x01 definitely not weights")
    with pytest.raises(CheckpointError, match=r"cannot be read \(corrupt or not a checkpoint\)"):
        load_checkpoint(build_model("vit", num_classes=10), path)


def test_checkpoint_for_another_architecture(tmp_path):
    path = tmp_path / "resnet.safetensors"
    save_file({k: v.contiguous() for k, v in build_model("resnet", num_classes=10).net.state_dict().items()}, str(path))
    with pytest.raises(
        CheckpointError,
        match=r"does not fit 'vit' \(made for another architecture\?\): missing keys: blocks.0.attn.proj.bias.*unexpected keys: bn1.bias",
    ):
        load_checkpoint(build_model("vit", num_classes=10), path)


def test_checkpoint_with_other_class_count(tmp_path):
    path = tmp_path / "r100.safetensors"
    save_file(
        {k: v.contiguous() for k, v in build_model("resnet", num_classes=100).net.state_dict().items()}, str(path)
    )
    with pytest.raises(CheckpointError, match=r"shape mismatch: fc.weight \(100, 128\) vs \(10, 128\)"):
        load_checkpoint(build_model("resnet", num_classes=10), path)
