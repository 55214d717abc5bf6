"""The zoo's variant builders (local-attention ViT, the build-up rule's ResNet and AlterNet), checked against
independent references, and the cache keys of recipes whose model is a ``package.module:factory``."""

from __future__ import annotations

import dataclasses
import itertools

import pytest
import torch

from model_props.anatomy import anatomy
from model_props.anatomy.attention import unfused_attention
from model_props.training.checkpoints import code_hash, model_entry
from model_props.training.profiles import load_profile
from model_props.training.recipes import model_source_hash
from model_props.zoo import build_model
from model_props.zoo.buildup import alternet_early_msa, resnet_with_msa
from model_props.zoo.local_vit import build_local_vit
from model_props.zoo.vit import build_vit

SMALL_VIT = {"patch_size": 4, "embed_dim": 48, "depth": 2, "num_heads": 3}


def naive_local_attention(attn, x, side: int, kernel: int) -> torch.Tensor:
    """Each query softmaxes over its own neighbourhood's keys, one query at a time (token 0 is CLS: all keys)."""
    b, n, c = x.shape
    q, k, v = attn.qkv(x).reshape(b, n, 3, attn.num_heads, attn.head_dim).permute(2, 0, 3, 1, 4)
    out = torch.zeros(b, attn.num_heads, n, attn.head_dim)
    for i in range(n):
        if i == 0:
            keys = list(range(n))
        else:
            r, col = divmod(i - 1, side)
            keys = [1 + rr * side + cc for rr, cc in itertools.product(range(side), range(side))
                    if max(abs(rr - r), abs(cc - col)) <= kernel // 2]  # fmt: skip
        scores = q[:, :, i : i + 1] @ k[:, :, keys].transpose(-1, -2) * attn.head_dim**-0.5
        out[:, :, i] = (scores.softmax(-1) @ v[:, :, keys])[:, :, 0]
    return attn.proj(out.transpose(1, 2).reshape(b, n, c))


@pytest.mark.parametrize("kernel", [3, 5])
def test_local_attention_equals_a_per_query_softmax_over_the_neighbourhood(kernel):
    torch.manual_seed(0)
    net = build_local_vit(10, kernel=kernel, **SMALL_VIT).eval()
    x = torch.randn(2, 65, 48)
    with torch.no_grad():
        expected = naive_local_attention(net.blocks[0].attn, x, side=8, kernel=kernel)
        assert torch.allclose(net.blocks[0].attn(x), expected, atol=1e-5)
        images = torch.rand(2, 3, 32, 32)
        fused = net(images)
        with unfused_attention(net):  # the path the anatomy's captures and the Hessian take
            assert torch.allclose(net(images), fused, atol=1e-5)


def test_local_vit_has_the_global_vits_parameters_and_initial_weights():
    torch.manual_seed(0)
    glob = build_vit(10, **SMALL_VIT)
    torch.manual_seed(0)
    local = build_local_vit(10, kernel=3, **SMALL_VIT)
    assert glob.state_dict().keys() == local.state_dict().keys()
    assert all(torch.equal(a, b) for a, b in zip(glob.state_dict().values(), local.state_dict().values()))
    images = torch.rand(1, 3, 32, 32)
    with torch.no_grad():  # and the mask matters: the outputs differ
        assert not torch.allclose(
            glob.eval().forward_features(images), local.eval().forward_features(images), atol=1e-3
        )
    assert [u.kind for u in anatomy(build_model("model_props.zoo.local_vit:build_local_vit", num_classes=10,
            arch_kwargs={"kernel": 5, **SMALL_VIT})).units] == [u.kind for u in anatomy(build_model(
            "vit", num_classes=10, arch_kwargs=SMALL_VIT)).units]  # fmt: skip


def test_local_attention_refuses_an_even_kernel_or_a_grid_that_is_not_square():
    with pytest.raises(ValueError, match="odd kernel; got 64 spatial tokens and kernel=4"):
        build_local_vit(10, kernel=4, **SMALL_VIT)(torch.rand(1, 3, 32, 32))


def test_resnet_with_msa_replaces_the_last_block_only():
    plain = anatomy(build_model("resnet", num_classes=10))
    hybrid = anatomy(build_model("model_props.zoo.buildup:resnet_with_msa", num_classes=10))
    assert [u.name for u in hybrid.units] == [u.name for u in plain.units]
    changed = [(u.name, u.kind) for u, p in zip(hybrid.units, plain.units) if u.kind != p.kind]
    assert changed == [("layer4.1", "msa")]
    assert type(resnet_with_msa(10).layer4[-1]).__name__ == "AttentionBlock"


def test_alternet_early_msa_moves_each_msa_after_its_stages_opening_block():
    def kinds(net):
        return ["".join("A" if type(b).__name__ == "AttentionBlock" else "C" for b in s) for s in net.stages]

    layout = {"depths": (3, 4, 6, 4), "msas": (0, 1, 1, 2)}
    assert kinds(alternet_early_msa(10, **layout)) == ["CCC", "CACC", "CACCCC", "CAAC"]
    assert kinds(alternet_early_msa(10)) == ["C", "CA", "CA", "CAAC"]  # the smoke layout: only the last stage moves
    net = alternet_early_msa(10).eval()
    with torch.no_grad():
        assert net(torch.rand(2, 3, 32, 32)).shape == (2, 10)


def test_a_factory_recipes_key_covers_its_module_and_a_references_key_does_not_need_to():
    smoke = load_profile("smoke")
    vit, local = smoke.recipe("vit"), smoke.recipe("vit_local5")
    assert model_source_hash("model_props.zoo.local_vit:build_local_vit") != ""
    assert model_source_hash("vit") == model_source_hash("timm:resnet18") == ""  # the training code's hash covers them
    moved = dataclasses.replace(local, model="model_props.zoo.buildup:resnet_with_msa")  # another factory's source
    assert moved.key(code_hash()) != local.key(code_hash()) and moved.fingerprint() != local.fingerprint()
    assert dataclasses.replace(local, seed=3).key(code_hash()) != local.key(code_hash())
    assert dataclasses.replace(vit, seed=3).fingerprint() == vit.fingerprint()  # a study's fingerprint: every seed


def test_a_users_factory_recipe_is_rekeyed_when_the_factory_changes(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "usernet.py").write_text("def net(num_classes=10):\n    return None\n")
    recipe = load_profile("smoke").custom("usernet:net")
    before = model_entry(recipe, tmp_path).name
    (tmp_path / "usernet.py").write_text("def net(num_classes=10):\n    return 1\n")
    assert model_entry(recipe, tmp_path).name != before
    assert model_source_hash("no_such_module_here:net") == ""  # fails later, when built, in one line
