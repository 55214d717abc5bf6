"""Pretrained weights through timm's and torchvision's own loaders, and a real image folder streamed from disk.

Nothing can be downloaded here, so the tests save seeded-init weights to files (and lay out a Hugging Face cache
as huggingface_hub does), write small JPEG folders, and load both through the user's path.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from PIL import Image
from safetensors.torch import save_file

from model_props.data.folder import _Decoded, read_folder
from model_props.errors import CheckpointError, DatasetError, UnknownModelError
from model_props.zoo.pretrained import label_indices, load_pretrained, parse_pretrained

CLASSES = ("n01440764", "goldfish", "N01484850")  # a synset id, a class name, a synset id in other case


def _jpegs(folder, classes=CLASSES, per_class=4, size=(96, 80), seed=0):
    rng = np.random.default_rng(seed)
    for c in classes:
        (folder / c).mkdir(parents=True, exist_ok=True)
        for i in range(per_class):
            pixels = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
            Image.fromarray(pixels).save(folder / c / f"{i}.jpg", quality=90)


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    """val/ and train/, three ImageNet classes of four 96x80 JPEGs (smaller than test_vit's 160 px), plus a corrupt
    JPEG and a text file among the images."""
    root = tmp_path_factory.mktemp("images")
    _jpegs(root / "val")
    _jpegs(root / "train", seed=1)
    (root / "val" / "goldfish" / "truncated.jpg").write_bytes(b"\xff\xd8\xff not a jpeg")
    (root / "val" / "goldfish" / "notes.txt").write_text("not an image")
    return root


def _timm_net(bias_class: int | None = None):
    import timm

    torch.manual_seed(0)
    net = timm.create_model("test_vit", pretrained=False).eval()
    if bias_class is not None:  # every image is predicted as this class: accuracy is its share of the images
        with torch.no_grad():
            net.head.bias[bias_class] += 50.0
    return net


@pytest.fixture(scope="module")
def weights(tmp_path_factory):
    """test_vit's seeded-init weights, head biased to output 0 (n01440764), as a safetensors file."""
    path = tmp_path_factory.mktemp("weights") / "test_vit.safetensors"
    save_file(_timm_net(bias_class=0).state_dict(), str(path))
    return path


def test_specs_name_pretrained_weights_or_nothing():
    assert parse_pretrained("timm:resnet18") is None and parse_pretrained("vit") is None
    assert parse_pretrained("mypkg.models:build") is None
    spec = parse_pretrained("timm:hf-hub:timm/test_vit.r160_in1k@pretrained=~/w.safetensors")
    assert spec is not None and spec.name == "hf-hub:timm/test_vit.r160_in1k" and spec.file is not None
    assert "~" not in str(spec.file)
    for bad, says in [
        ("timm:test_vit@latest", "'pretrained' or 'pretrained=FILE'"),
        ("torchvision:resnet18", "name the weights"),
        ("timm:test_vit@pretrained=", "give the weights file"),
    ]:
        with pytest.raises(UnknownModelError, match=says):
            parse_pretrained(bad)


def test_timm_weights_from_a_file_are_the_models_own(weights):
    """Outputs equal the source network's on its own normalisation; the head, labels and input size are timm's."""
    loaded = load_pretrained(f"timm:test_vit@pretrained={weights}")
    source = _timm_net(bias_class=0)
    x = torch.rand(3, 3, 160, 160, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        torch.testing.assert_close(loaded.model(x), source((x - 0.5) / 0.5), rtol=0, atol=1e-5)
    assert loaded.model.img_size == 160 and loaded.model.num_classes == 1000
    assert loaded.labels[0][:2] == ("n01440764", "tench")
    assert loaded.notes == ()
    steps = [type(t).__name__ for t in loaded.transform.transforms]
    assert steps[:2] == ["Resize", "CenterCrop"] and "Normalize" not in steps[:-1]


def test_timm_weights_from_an_offline_hugging_face_cache(tmp_path, monkeypatch, weights):
    """timm:NAME@pretrained and timm:hf-hub:REPO@pretrained read the hub cache as huggingface_hub lays it out,
    offline; without it, one line naming the cache."""
    import huggingface_hub.constants as hf

    snapshot = tmp_path / "hub" / "models--timm--test_vit.r160_in1k" / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "model.safetensors").write_bytes(weights.read_bytes())
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("0" * 40)
    config = {"architecture": "test_vit", "num_classes": 1000, "pretrained_cfg": _timm_net().pretrained_cfg}
    (snapshot / "config.json").write_text(json.dumps(config))  # as timm writes it to the hub
    monkeypatch.setattr(hf, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(hf, "HF_HUB_CACHE", str(tmp_path / "hub"))
    loaded = load_pretrained("timm:test_vit@pretrained")
    assert loaded.sha256 == load_pretrained(f"timm:test_vit@pretrained={weights}").sha256  # the same weights
    assert load_pretrained("timm:hf-hub:timm/test_vit.r160_in1k@pretrained").sha256 == loaded.sha256
    monkeypatch.setattr(hf, "HF_HUB_CACHE", str(tmp_path / "empty"))
    with pytest.raises(CheckpointError) as err:
        load_pretrained("timm:test_vit@pretrained")
    assert str(tmp_path / "empty") in str(err.value) and "\n" not in str(err.value)


def test_weights_for_another_architecture_name_the_keys(weights, tmp_path):
    with pytest.raises(CheckpointError) as err:
        load_pretrained(f"timm:test_resnet@pretrained={weights}")
    message = str(err.value)
    assert "\n" not in message and "missing keys: conv1" in message and "unexpected keys: blocks.0" in message
    with pytest.raises(CheckpointError, match="does not exist"):
        load_pretrained(f"timm:test_vit@pretrained={tmp_path / 'absent.safetensors'}")
    with pytest.raises(UnknownModelError, match="similar: .*test_vit"):
        load_pretrained(f"timm:test_vitt@pretrained={weights}")


def test_a_configuration_without_mean_and_std_says_which_default_it_used(weights, monkeypatch):
    import timm
    from timm.data import IMAGENET_DEFAULT_MEAN

    create = timm.create_model

    def without_stats(*args, **kwargs):
        net = create(*args, **kwargs)
        net.pretrained_cfg = {k: v for k, v in net.pretrained_cfg.items() if k not in ("mean", "std")}
        return net

    monkeypatch.setattr(timm, "create_model", without_stats)
    loaded = load_pretrained(f"timm:test_vit@pretrained={weights}")
    assert [n.split(": ")[1] for n in loaded.notes] == [
        "its pretrained configuration gives no mean; timm's default (ImageNet's) is used",
        "its pretrained configuration gives no std; timm's default (ImageNet's) is used",
    ]
    assert loaded.model.mean.flatten().tolist() == pytest.approx(IMAGENET_DEFAULT_MEAN)


def test_torchvision_weights_from_a_file(tmp_path):
    from torchvision import models

    torch.manual_seed(0)
    net = models.resnet18().eval()
    path = tmp_path / "resnet18.pth"
    torch.save(net.state_dict(), path)
    loaded = load_pretrained(f"torchvision:resnet18@IMAGENET1K_V1={path}")
    x = torch.rand(2, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    mean, std = torch.tensor([0.485, 0.456, 0.406]), torch.tensor([0.229, 0.224, 0.225])
    with torch.no_grad():
        torch.testing.assert_close(loaded.model(x), net((x - mean[:, None, None]) / std[:, None, None]))
    assert loaded.model.img_size == 224  # ImageNet-1k weights answer to the synset ids of their order, too
    assert loaded.labels[:2] == (("tench", "n01440764", "tench", "Tinca tinca"),
                                 ("goldfish", "n01443537", "goldfish", "Carassius auratus"))  # fmt: skip
    with pytest.raises(UnknownModelError, match="valid: .*IMAGENET1K_V1"):
        load_pretrained("torchvision:resnet18@IMAGENET9K")
    with pytest.raises(UnknownModelError, match="similar: .*resnet18"):
        load_pretrained("torchvision:resnet19@DEFAULT")
    with pytest.raises(CheckpointError, match="missing keys"):
        load_pretrained(f"torchvision:resnet34@IMAGENET1K_V1={path}")


def test_torchvision_vit_attention_is_read_through_an_equivalent_explicit_module(tmp_path, monkeypatch):
    """torchvision's ViT attends through nn.MultiheadAttention (one fused call); the pretrained path replaces each
    by a module with the same parameters computing softmax(QK^T/sqrt(d))V explicitly: same state dict, same
    outputs, msa units the anatomy maps, and captured weights equal to the naive softmax (a small ViT stands in
    for vit_b_16)."""
    from torchvision import models

    from model_props.anatomy import anatomy, capture
    from model_props.anatomy.attention import global_attention_units
    from model_props.anatomy.coverage import check_anatomy

    torch.manual_seed(0)
    kwargs = dict(image_size=224, patch_size=56, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=32, num_classes=1000)
    source = models.VisionTransformer(**kwargs).eval()
    path = tmp_path / "vit.pth"
    torch.save(source.state_dict(), path)
    monkeypatch.setattr(models, "get_model", lambda name, **kw: models.VisionTransformer(**kwargs))
    loaded = load_pretrained(f"torchvision:vit_b_16@IMAGENET1K_V1={path}")
    net = loaded.model.net
    assert list(net.state_dict()) == list(source.state_dict())
    x = torch.rand(3, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    mean, std = loaded.model.mean, loaded.model.std
    with torch.no_grad():
        torch.testing.assert_close(net(x), source(x), rtol=0, atol=1e-5)
    anat = anatomy(loaded.model)
    assert [u.kind for u in anat.units] == ["embed", "msa", "mlp", "msa", "mlp", "head"]
    assert all(check_anatomy(loaded.model, 224).checks.values())
    unit = next(iter(global_attention_units(loaded.model, anat)))
    attention = net.encoder.layers[0].self_attention
    with torch.no_grad():
        tokens = net._process_input((x - mean) / std)
        tokens = torch.cat([net.class_token.expand(3, -1, -1), tokens], dim=1) + net.encoder.pos_embedding
        h = net.encoder.layers[0].ln_1(tokens)
        q, k, _ = torch.nn.functional.linear(h, attention.in_proj_weight, attention.in_proj_bias).chunk(3, dim=-1)
        q, k = (t.reshape(3, -1, 2, 8).transpose(1, 2) for t in (q, k))
        naive = (q @ k.transpose(-2, -1) / 8**0.5).softmax(-1)
        captured = capture(loaded.model, anat, x, attention=True)
    torch.testing.assert_close(captured.attention[unit], naive, rtol=0, atol=1e-5)


def test_folder_classes_map_to_labels_by_synset_or_name():
    labels = (("n01440764", "tench", "Tinca tinca"), ("n01443537", "goldfish"), ("n01484850", "great white shark"))
    assert label_indices(CLASSES, labels, "m") == {"n01440764": 0, "goldfish": 1, "N01484850": 2}
    with pytest.raises(DatasetError, match=r"\['dogs'\] name none of the 3 labels of 'm'"):
        label_indices(["tench", "dogs"], labels, "m")


def _identity(image):
    from torchvision.transforms import functional as F

    return F.to_tensor(F.center_crop(F.resize(image, 64), 64))


def test_a_folder_is_read_balanced_and_bad_files_are_counted(images):
    label_of = {c: i for i, c in enumerate(sorted(CLASSES))}
    sample = read_folder(images / "val", label_of, 100, _identity, 64, workers=0)
    assert len(sample.split) == 12 and sample.files == 14 and sample.unreadable == 2 and sample.upsampled == 0
    assert sorted(torch.bincount(sample.split.labels).tolist()) == [4, 4, 4]
    assert sample.split.images.dtype == torch.uint8 and sample.split.images.shape[1:] == (3, 64, 64)
    first = read_folder(images / "val", label_of, 6, _identity, 64, workers=0)
    assert torch.bincount(first.split.labels).tolist() == [2, 2, 2]  # any prefix is balanced
    small = read_folder(images / "val", label_of, 3, _identity, 128, workers=0)
    assert small.upsampled == 3


def test_bad_folders_are_one_line_errors(tmp_path):
    _jpegs(tmp_path / "one", classes=("tench",))
    with pytest.raises(DatasetError, match="has 1 class folder; give two or more"):
        read_folder(tmp_path / "one", {"tench": 0}, 4, _identity, 64, workers=0)
    for c in ("a", "b"):
        (tmp_path / "broken" / c).mkdir(parents=True)
        (tmp_path / "broken" / c / "x.jpg").write_bytes(b"garbage")
    with pytest.raises(DatasetError, match="none of its 2 files is a readable image"):
        read_folder(tmp_path / "broken", {"a": 0, "b": 1}, 4, _identity, 64, workers=0)


def test_decoding_is_bounded_by_the_requested_images(tmp_path, monkeypatch):
    """Streamed, not loaded: a folder ten times larger decodes no more images for the same request (memory holds
    the requested images and one loader batch, whatever the folder holds)."""
    decoded = []
    get = _Decoded.__getitem__
    monkeypatch.setattr(_Decoded, "__getitem__", lambda self, i: decoded.append(i) or get(self, i))
    label_of = {c: i for i, c in enumerate(sorted(CLASSES))}
    counts = []
    for per_class in (20, 200):
        _jpegs(tmp_path / str(per_class), per_class=per_class, size=(64, 64))
        decoded.clear()
        sample = read_folder(tmp_path / str(per_class), label_of, 8, _identity, 64, workers=0)
        assert len(sample.split) == 8 and sample.files == 3 * per_class
        counts.append(len(decoded))
    assert counts[1] == counts[0] == 16  # one loader batch


def test_the_claim_suite_judges_pretrained_weights_on_a_folder(inprocess, images, weights, tmp_path):
    """The whole user path: test_vit's weights at 160 px on a 3-class JPEG folder; accuracy exactly 1/3 (the head
    always answers n01440764); a claim judged about these weights; comparisons with the references skipped with
    the reason; no reference trained."""
    inprocess.makepyfile(test_pretrained_claims="from model_props.suite.test_claims import *\n")
    spec = f"timm:test_vit@pretrained={weights}"
    result = inprocess.runpytest(
        f"--claims-cache={tmp_path / 'cache'}", f"--claims-data-root={images}", "--claims-images=9",
        "-p", "no:cacheprovider", "--model", spec, "-k", "attention-distance-grows or msa-adversarial-robust",
    )  # fmt: skip
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 1 and outcomes["skipped"] == 1, outcomes
    assert "model-props: training" not in result.stdout.str() and not (tmp_path / "cache" / "models").exists()
    summary = json.loads((inprocess.path / "reports" / "summary.json").read_text())
    records = {r["claim"]: r for r in summary["results"]}
    assert records["raghu2021.attention-distance-grows"]["scope"] == "checkpoint"
    assert "--claims-versus resnet=SPEC" in records["park2022.msa-adversarial-robust"]["reason"]
    assert summary["models"][f"timm:test_vit@pretrained={weights}"]["accuracy"] == pytest.approx(1 / 3)


def _skip_dominates_versus(inprocess, root, weights, comparator: str, tmp_path) -> tuple[pytest.RunResult, dict]:
    """The packaged suite's skip-dominates test of the pretrained test ViT on 9 images of ``root``, with
    ``comparator`` in the reference ResNet's place: the run and its summary.json."""
    inprocess.makepyfile(test_versus_claims="from model_props.suite.test_claims import *\n")
    result = inprocess.runpytest(
        f"--claims-cache={tmp_path / 'cache'}", f"--claims-data-root={root}", "--claims-images=9",
        "-p", "no:cacheprovider", "--model", f"timm:test_vit@pretrained={weights}",
        f"--claims-versus=resnet={comparator}", "-k", "skip-dominates",
    )  # fmt: skip
    return result, json.loads((inprocess.path / "reports" / "summary.json").read_text())


def test_a_comparator_of_your_own_stands_in_for_a_reference(inprocess, images, weights, tmp_path):
    """--claims-versus resnet=SPEC: a pretrained test_resnet on the same images takes the reference ResNet's place
    in the comparisons of the ViT; the comparison is judged about these weights, paired by image file."""
    import timm

    torch.manual_seed(1)
    # the last BatchNorm of each block not zeroed, as after training: a zero branch has no skip ratio, and the part
    # would be skipped
    net = timm.create_model("test_resnet", pretrained=False, zero_init_last=False)
    with torch.no_grad():
        net.get_classifier().bias[0] += 50.0  # above chance on the folder, as the ViT is
    resnet = tmp_path / "test_resnet.safetensors"
    save_file(net.state_dict(), str(resnet))
    result, summary = _skip_dominates_versus(inprocess, images, weights, f"timm:test_resnet@pretrained={resnet}",
                                             tmp_path)  # fmt: skip
    (record,) = summary["results"]
    assert record["scope"] == "checkpoint" and record["verdict"] != "skipped", record
    part = {p["part"]: p for p in record["parts"]}["vs-resnet"]
    assert part["verdict"] != "skipped" and part["paired"] and part["n"] == 9  # paired by image file
    assert "model-props: training" not in result.stdout.str() and not (tmp_path / "cache" / "models").exists()


def test_a_torchvision_comparator_on_imagenets_own_folder_layout(inprocess, weights, tmp_path):
    """ImageNet's layout (class folders named by synset ids) with a timm model and a torchvision ResNet-18 comparator,
    both from weights files: torchvision's weights carry class names only, and their 1,000 categories follow
    ImageNet-1k's order, so the synset folders map onto them; the comparison parts are judged."""
    from torchvision import models

    root = tmp_path / "imagenet"
    _jpegs(root / "val", classes=("n01440764", "n01443537", "n01484850"))
    torch.manual_seed(2)
    net = models.resnet18().eval()
    with torch.no_grad():
        net.fc.bias[0] += 50.0  # answers tench (n01440764): a third of the images right, above chance as the ViT is
    resnet = tmp_path / "resnet18.pth"
    torch.save(net.state_dict(), resnet)
    _, summary = _skip_dominates_versus(inprocess, root, weights, f"torchvision:resnet18@IMAGENET1K_V1={resnet}",
                                        tmp_path)  # fmt: skip
    (record,) = summary["results"]
    part = {p["part"]: p for p in record["parts"]}["vs-resnet"]
    assert part["verdict"] != "skipped" and part["paired"] and part["n"] == 9, record
    assert summary["models"][f"timm:test_vit@pretrained={weights}"]["accuracy"] == pytest.approx(1 / 3)


def test_too_few_images_for_a_statistic_skip_its_part_naming_the_value_that_would_run_it(inprocess, images, tmp_path,
                                                                                          capfd):  # fmt: skip
    """--claims-images 9 gives one CKA mini-batch of 64 images, and the bootstrap over mini-batches needs 2: the block
    structure part of claim 12 on a multi-stage model is skipped with the reason and --claims-images 128, and the
    session says so once before the first test, never a traceback."""
    import timm

    torch.manual_seed(3)
    net = timm.create_model("test_resnet", pretrained=False)
    with torch.no_grad():
        net.get_classifier().bias[0] += 50.0
    path = tmp_path / "test_resnet.safetensors"
    save_file(net.state_dict(), str(path))
    inprocess.makepyfile(test_few_claims="from model_props.suite.test_claims import *\n")
    result = inprocess.runpytest(f"--claims-cache={tmp_path / 'cache'}", f"--claims-data-root={images}",
                                 "--claims-images=9", "-p", "no:cacheprovider", "--model",
                                 f"timm:test_resnet@pretrained={path}", "-k", "multistage-block-cka", "-rs")  # fmt: skip
    said = capfd.readouterr().err  # the session's announcement, before the first test
    assert "skipped for too few images: park2022.multistage-block-cka [block-structure]" in said
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*needs at least 2 CKA mini-batches of 64 images*--claims-images 128 or more*"])
    assert "Traceback" not in result.stdout.str()


@pytest.mark.bad_input
def test_a_folder_that_names_no_label_is_one_usage_error_before_any_test(inprocess, weights, tmp_path):
    root = tmp_path / "images"
    _jpegs(root / "val", classes=("n01440764", "not-a-label"))
    inprocess.makepyfile(test_label_claims="from model_props.suite.test_claims import *\n")
    result = inprocess.runpytest(f"--claims-cache={tmp_path / 'cache'}", f"--claims-data-root={root}",
                                 "--claims-images=4", "-p", "no:cacheprovider", "--model",
                                 f"timm:test_vit@pretrained={weights}")  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-2000:]
    result.stderr.fnmatch_lines(["*folder classes [[]'not-a-label'[]] name none of the 1000 labels*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


@pytest.mark.bad_input
@pytest.mark.parametrize(
    ("versus", "says"),
    [("nonsense", "give REF=SPEC"), ("resnext=timm:test_resnet@pretrained", "not recipes of profile 'smoke'")],
)
def test_a_comparator_must_name_a_reference(inprocess, versus, says):
    result = inprocess.runpytest("--pyargs", "model_props.suite", "--model", "timm:test_vit@pretrained",
                                 f"--claims-versus={versus}")  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR and says in result.stderr.str()
