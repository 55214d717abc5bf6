"""Anatomy (units per family) and capture (one forward pass, maps of the right shapes)."""

from __future__ import annotations

import pytest
import torch

from model_props.anatomy import Tap, anatomy, capture, to_map
from model_props.errors import AnatomyError
from model_props.training.profiles import get_recipe
from model_props.zoo import build_model


def smoke_model(name: str):
    return build_model(name, num_classes=10, arch_kwargs=get_recipe("smoke", name).arch).eval()


def kinds(anat) -> str:
    """Unit kinds as a string, one letter each: E, A (msa), M (mlp), C, S, H."""
    letters = {"embed": "E", "msa": "A", "mlp": "M", "conv": "C", "subsample": "S", "head": "H"}
    return "".join(letters[u.kind] for u in anat.units)


@pytest.mark.parametrize("depth", [1, 3, 6])
def test_vit_depth_d_gives_2d_alternating_units(depth):
    anat = anatomy(build_model("vit", num_classes=10, arch_kwargs={"depth": depth}))
    assert kinds(anat) == "E" + "AM" * depth + "H"
    assert anat.traits == {"global_msa"}


def test_pit_units():
    anat = anatomy(smoke_model("pit"))  # depths (2, 4, 2): pooling before stages 2 and 3
    assert kinds(anat) == "E" + "AM" * 2 + "S" + "AM" * 4 + "S" + "AM" * 2 + "H"
    assert [u.stage for u in anat.of_kind("subsample")] == [1, 2]
    assert anat.traits == {"global_msa", "multi_stage"}


def test_swin_units():
    anat = anatomy(smoke_model("swin"))  # depths (2, 2, 2): patch merging before stages 2 and 3
    assert kinds(anat) == "E" + "AM" * 2 + "S" + "AM" * 2 + "S" + "AM" * 2 + "H"
    assert anat.traits == {"local_msa", "multi_stage"}


def test_resnet_units():
    anat = anatomy(smoke_model("resnet"))  # ResNet-18 layout: 8 basic blocks, stride 2 at stages 2-4
    assert kinds(anat) == "E" + "C" * 8 + "H"
    assert [u.name for u in anat.units if u.subsamples] == ["layer2.0", "layer3.0", "layer4.0"]
    assert anat.traits == {"conv", "multi_stage"}


def test_alternet_follows_the_paper_layout():
    anat = anatomy(smoke_model("alternet"))  # blocks (1, 2, 2, 4), MSAs (0, 1, 1, 2)
    assert kinds(anat) == "E" + "C" + "CA" + "CA" + "CACA" + "H"
    units = anat.spatial_units
    for i, u in enumerate(units):
        if u.kind == "msa":  # every MSA follows a conv block; the last unit of a stage is an MSA (stages 2-4)
            assert units[i - 1].kind == "conv"
    last_of_stage = {u.stage: u for u in units if u.kind != "embed"}
    assert [last_of_stage[s].kind for s in (1, 2, 3)] == ["msa"] * 3
    assert anat.traits == {"conv", "local_msa", "multi_stage"}


@pytest.mark.parametrize("name", ["vit", "pit", "swin", "resnet", "alternet"])
def test_depth_is_normalised_and_increasing(name):
    depths = [u.depth for u in anatomy(smoke_model(name)).spatial_units]
    assert depths[0] == 0.0 and depths[-1] == 1.0
    assert all(a < b for a, b in zip(depths, depths[1:]))


# Expected (channels, side) of the state after the first and last spatial unit of each smoke reference.
EXPECTED_MAPS = {
    "vit": ((96, 8), (96, 8)),
    "pit": ((32, 15), (128, 4)),
    "swin": ((48, 16), (192, 4)),
    "resnet": ((16, 32), (128, 4)),
    "alternet": ((16, 32), (128, 4)),
}


@pytest.mark.parametrize("name", sorted(EXPECTED_MAPS))
def test_capture_returns_maps_for_every_unit(name):
    model = smoke_model(name)
    anat = anatomy(model)
    x = torch.rand(3, 3, 32, 32)
    cap = capture(model, anat, x)
    with torch.no_grad():
        assert torch.allclose(cap.logits, model(x))
    assert set(cap.states) == {u.name for u in anat.spatial_units}
    for u in anat.spatial_units:
        assert cap.states[u.name].ndim == 4 and cap.states[u.name].shape[0] == 3
    first, last = anat.spatial_units[0], anat.spatial_units[-1]
    (c0, s0), (c1, s1) = EXPECTED_MAPS[name]
    assert cap.states[first.name].shape == (3, c0, s0, s0)
    assert cap.states[last.name].shape == (3, c1, s1, s1)
    residual = [u for u in anat.spatial_units if u.branch is not None]
    assert residual and all(cap.branches[u.name].shape == cap.skips[u.name].shape for u in residual)


@pytest.mark.parametrize("name", ["vit", "pit", "swin", "alternet"])
def test_state_is_skip_plus_branch(name):
    """Pre-norm transformer and pre-activation blocks: state = x + f(x) exactly."""
    model = smoke_model(name)
    anat = anatomy(model)
    cap = capture(model, anat, torch.rand(2, 3, 32, 32))
    for u in anat.spatial_units:
        if u.branch is not None:
            torch.testing.assert_close(cap.states[u.name], cap.skips[u.name] + cap.branches[u.name])


def test_resnet_state_is_the_activated_sum_of_skip_and_branch():
    """Post-activation blocks: state = relu(x + f(x)). timm's ResNet adds the shortcut into its branch output in
    place and applies an in-place ReLU, so the capture must copy what each tap saw (it once read the branch
    after the addition: ||f(x)|| was ||relu(x + f(x))||)."""
    model = smoke_model("resnet")
    with torch.no_grad():
        for p in model.parameters():  # timm zero-initialises the last BN of each block: make every branch non-zero
            p.add_(0.1 * torch.randn_like(p))
    anat = anatomy(model)
    cap = capture(model, anat, torch.rand(2, 3, 32, 32))
    residual = [u for u in anat.spatial_units if u.branch is not None]
    assert len(residual) == 8
    for u in residual:
        torch.testing.assert_close(cap.states[u.name], torch.relu(cap.skips[u.name] + cap.branches[u.name]))
        assert not torch.allclose(cap.branches[u.name], cap.states[u.name])


def test_state_of_a_unit_is_the_input_of_the_next():
    model = smoke_model("vit")
    anat = anatomy(model)
    cap = capture(model, anat, torch.rand(2, 3, 32, 32))
    units = anat.spatial_units
    for prev, nxt in zip(units[1:], units[2:]):
        torch.testing.assert_close(cap.states[prev.name], cap.skips[nxt.name])


def test_cls_token_is_dropped_and_kept_apart():
    model = smoke_model("vit")
    anat = anatomy(model)
    cap = capture(model, anat, torch.rand(2, 3, 32, 32))
    msa = anat.of_kind("msa")[0]
    assert cap.branch_prefix[msa.name].shape == (2, 1, 96)
    assert cap.states[msa.name].shape == (2, 96, 8, 8)


def test_tokens_become_maps_row_major():
    b, c, h = 2, 5, 3
    grid = torch.arange(b * h * h * c, dtype=torch.float32).reshape(b, h * h, c)
    tokens = torch.cat([torch.full((b, 1, c), -1.0), grid], dim=1)  # a CLS token in front
    m, prefix = to_map(tokens, Tap("x", layout="tokens", prefix_tokens=1))
    assert m.shape == (b, c, h, h) and torch.equal(prefix, tokens[:, :1])
    for i in range(h):
        for j in range(h):
            assert torch.equal(m[:, :, i, j], grid[:, i * h + j])  # token k sits at row k // h, column k % h


def test_non_square_tokens_are_rejected():
    with pytest.raises(AnatomyError, match="7 spatial tokens do not form a square grid"):
        to_map(torch.zeros(1, 8, 4), Tap("x", layout="tokens", prefix_tokens=1))


def test_generic_fallback_maps_other_timm_transformers():
    model = build_model(
        "timm:deit_tiny_patch16_224", num_classes=10, img_size=32, arch_kwargs={"patch_size": 8, "depth": 2}
    )
    anat = anatomy(model)
    assert kinds(anat) == "EAMAMH"
    cap = capture(model, anat, torch.rand(1, 3, 32, 32))
    assert cap.states[anat.units[-2].name].shape == (1, 192, 4, 4)


def test_generic_fallback_maps_conv_blocks():
    anat = anatomy(build_model("timm:convnext_atto", num_classes=10))
    assert anat.family == "timm:convnext_atto" and anat.counts()["conv"] == 12 and "multi_stage" in anat.traits


def test_token_mixing_mlps_mix_positions():
    """MLP-Mixer's token-mixing MLP is a linear layer across positions: a spatial (conv) unit, then a channel MLP."""
    anat = anatomy(build_model("timm:mixer_s16_224", num_classes=10, img_size=32))  # 2x2 tokens
    assert kinds(anat) == "E" + "CM" * 8 + "H" and not anat.traits & {"global_msa", "local_msa"}


def test_unmappable_model_says_what_it_found(user_module):
    with pytest.raises(
        AnatomyError,
        match=r"cannot map Sequential into units: a traced forward pass found no residual "
        r"additions .*top-level modules are: 0: Flatten, 1: Linear",
    ):
        anatomy(build_model(f"{user_module}:wrong_classes", num_classes=10))
    with pytest.raises(
        AnatomyError, match=r"cannot map Sequential into units: its forward pass on 3x32x32 images raised RuntimeError"
    ):
        anatomy(build_model(f"{user_module}:fixed_64px", num_classes=10))
