"""The ``model-props`` command."""

from __future__ import annotations

from model_props.cli import main


def test_recipes_lists_the_profile(capsys):
    assert main(["recipes"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out] == [
        "vit",
        "pit",
        "swin",
        "resnet",
        "alternet",
        "custom",
        "vit_gap",
        "vit_1head",
        "vit_small",
        "vit_p8",
        "vit_noaug",
        "resnet_smooth",
        "vit_quarter",
        "vit_local3",
        "vit_local5",
        "resnet_msa",
        "alternet_early_msa",
    ]
    local = next(line for line in out if line.startswith("vit_local5 "))
    assert "model_props.zoo.local_vit:build_local_vit" in local and "lr 0.001" in local


def test_anatomy_prints_units(capsys, model_store):
    assert main(["anatomy", "alternet", "--cache", str(model_store.settings.cache_dir)]) == 0
    out = capsys.readouterr().out
    assert "traits ['conv', 'local_msa', 'multi_stage']" in out
    assert "msa       stage 3 depth 1.00" in out


def test_bad_model_is_one_line_and_exit_2(capsys, model_store):
    assert main(["train", "--model", "nope", "--cache", str(model_store.settings.cache_dir)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("model-props: error: unknown --model 'nope'") and err.count("\n") == 1
