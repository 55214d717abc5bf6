"""Robustness measurements checked against references: the band filter keeps exactly its frequencies
(numpy.fft), perturbations have the requested norm, FGSM equals a hand-written sign-gradient step, PGD stays in
the eps-ball and in [0, 1], lesioning a unit whose branch is already zero changes nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_resnet import tiny_resnet  # this folder is on sys.path (pytest's "prepend" import mode)
from torch import nn

from model_props.anatomy import anatomy
from model_props.data import Split
from model_props.errors import MeasurementError, NotApplicable
from model_props.measurements.attack import AttackReport, attack_report
from model_props.measurements.corruption import CorruptionReport, corruption_report
from model_props.measurements.functional.corruption import CORRUPTIONS, SEVERITIES, corrupt
from model_props.measurements.functional.noise import band_mask, band_noise
from model_props.measurements.lesion import LesionReport, key_units, lesion_report, lesioned, removable_units
from model_props.measurements.noise import NoiseReport, noise_report
from model_props.training.profiles import get_recipe
from model_props.zoo import build_model


def linf_radius(size: int) -> np.ndarray:
    """L-infinity radius (units of pi) of every frequency of a size x size FFT, by numpy's own frequency grid."""
    k = np.abs(np.fft.fftfreq(size)) * 2
    return np.maximum(k[:, None], k[None, :])


@settings(max_examples=40, deadline=None)
@given(size=st.sampled_from([16, 32, 33, 64]), band=st.integers(1, 9), seed=st.integers(0, 1000))
def test_band_noise_keeps_exactly_its_ring_and_has_the_requested_norm(size, band, seed):
    f = band / 10
    noise = band_noise((2, 3, size, size), f, rms=0.05, generator=torch.Generator().manual_seed(seed)).double().numpy()
    spectrum = np.abs(np.fft.fft2(noise)) ** 2
    radius = linf_radius(size)
    inside = (radius > f - 0.1 + 1e-9) & (radius <= f + 0.1 + 1e-9)
    assert inside.any()
    assert spectrum[..., ~inside].sum() <= 1e-10 * spectrum.sum(), "energy outside the ring"
    assert np.allclose(np.linalg.norm(noise.reshape(2, -1), axis=1), 0.05 * math.sqrt(3 * size * size), rtol=1e-5)


def test_white_noise_has_the_same_norm_and_the_mask_matches_numpy():
    noise = band_noise((4, 3, 32, 32), None, rms=0.05, generator=torch.Generator().manual_seed(0))
    assert torch.allclose(noise.flatten(1).norm(dim=1), torch.full((4,), 0.05 * math.sqrt(3 * 32 * 32)), rtol=1e-5)
    for f in (0.1, 0.5, 0.9):
        expected = (linf_radius(32) > f - 0.1 + 1e-9) & (linf_radius(32) <= f + 0.1 + 1e-9)
        assert np.array_equal(band_mask(32, f).numpy(), expected)


@pytest.mark.parametrize("f", [0.0, -0.1, 1.2])
def test_a_band_outside_the_spectrum_is_refused(f):
    with pytest.raises(MeasurementError, match=r"noise band frequency=.*π must be in \(0, π\]"):
        band_mask(32, f)


def test_a_band_between_the_frequencies_of_a_small_image_is_refused():
    """At 8 px the frequencies are 0.25π apart: the band (0, 0.2π] holds none of them."""
    with pytest.raises(MeasurementError, match=r"no frequency of a 8x8 image lies in the band 0.1π ± 0.1π"):
        band_noise((1, 3, 8, 8), 0.1, generator=torch.Generator())


class Tiny(nn.Module):
    """A small differentiable classifier of 3x16x16 images in [0, 1]."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.fc = nn.Linear(6, 4)
        self.num_classes = 4

    def forward(self, x):
        return self.fc(F.relu(self.conv(x)).mean(dim=(2, 3)))


@pytest.fixture
def tiny_split() -> Split:
    gen = torch.Generator().manual_seed(0)
    images = torch.randint(0, 256, (40, 3, 16, 16), generator=gen, dtype=torch.uint8)
    return Split(images, torch.randint(0, 4, (40,), generator=gen))


def test_fgsm_equals_a_hand_written_sign_gradient_step_and_pgd_stays_in_the_ball(tiny_split):
    import torchattacks

    model = Tiny().eval()
    x, y = tiny_split.batch(slice(0, 40))
    eps = 4 / 255
    x_req = x.clone().requires_grad_(True)
    grad = torch.autograd.grad(F.cross_entropy(model(x_req), y), x_req)[0]
    hand = (x + eps * grad.sign()).clamp(0, 1)
    assert torch.allclose(torchattacks.FGSM(model, eps=eps)(x, y), hand, atol=1e-6)
    torch.manual_seed(0)
    adv = torchattacks.PGD(model, eps=eps, alpha=eps / 4, steps=10, random_start=True)(x, y)
    assert (adv - x).abs().max() <= eps + 1e-6 and adv.min() >= 0 and adv.max() <= 1
    report = attack_report(model, tiny_split, n_images=40, epsilons=(1 / 255, eps), pgd_steps=10, seed=0)
    assert report.correct.shape == (40, 5)
    assert report.accuracy("pgd", eps) <= report.accuracy("fgsm", eps) + 0.1  # PGD is the stronger attack
    assert report.drop("pgd", eps) == pytest.approx(report.accuracy() - report.accuracy("pgd", eps))
    again = attack_report(model, tiny_split, n_images=40, epsilons=(1 / 255, eps), pgd_steps=10, seed=0)
    assert np.array_equal(report.correct, again.correct), "seeded"
    with pytest.raises(NotApplicable, match=r"not attacked at eps 8/255 in this profile \(measured: 1/255, 4/255\)"):
        report.drop("pgd", 8 / 255)


def test_attack_inputs_are_checked(tiny_split):
    with pytest.raises(MeasurementError, match=r"attack eps=2 is outside \[0, 1\]"):
        attack_report(Tiny(), tiny_split, n_images=4, epsilons=(2,), pgd_steps=1)

    class Detached(Tiny):
        def forward(self, x):
            return super().forward(x.detach())

    with pytest.raises(
        MeasurementError, match=r"cannot attack it, its output is not differentiable with respect to its input"
    ):
        attack_report(Detached(), tiny_split, n_images=4, epsilons=(1 / 255,), pgd_steps=1, name="'detached'")


def test_lesioning_a_unit_whose_branch_is_already_zero_changes_nothing(dataset):
    model = build_model("vit", num_classes=10, arch_kwargs={"depth": 2, "embed_dim": 24, "num_heads": 2}).eval()
    anat = anatomy(model)
    with torch.no_grad():
        model.net.blocks[0].attn.proj.weight.zero_()
        model.net.blocks[0].attn.proj.bias.zero_()  # the first MSA branch outputs zeros
        x, _ = dataset.test.batch(slice(0, 16))
        intact = model(x)
        with lesioned(model, anat, "blocks.0.msa"):
            assert torch.equal(model(x), intact)
        with lesioned(model, anat, "blocks.1.mlp"):
            assert not torch.allclose(model(x), intact)
    assert torch.equal(model(x), intact), "the hook is removed afterwards"
    with pytest.raises(MeasurementError, match=r"no removable unit 'embed'; valid: 'blocks.0.mlp', 'blocks.0.msa'"):
        with lesioned(model, anat, "embed"):
            pass


def test_lesions_skip_embedding_subsampling_and_head():
    anat = anatomy(build_model("resnet", num_classes=10))
    names = [u.name for u in removable_units(anat)]
    assert names == ["layer1.0", "layer1.1", "layer2.1", "layer3.1", "layer4.1"]


@pytest.mark.parametrize(
    ("recipe", "keys"),
    [
        ("resnet", ["layer2.1", "layer3.1", "layer4.1"]),  # the block after each stride-2 block; not the stem's
        ("alternet", ["stages.1.1", "stages.2.1", "stages.3.2", "stages.3.3"]),
    ],
)
def test_claim_13_key_units_start_stages_after_subsampling_and_end_them_with_msas(recipe, keys):
    r = get_recipe("smoke", recipe)
    units = removable_units(anatomy(build_model(r.model, num_classes=10, arch_kwargs=r.arch)))
    key = key_units(tuple(u.kind for u in units), [u.stage for u in units])
    assert [u.name for u, k in zip(units, key) if k] == keys
    assert units[0].name not in keys  # the block next to the stem is compared, never a key by accident


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_corruptions_keep_images_in_range_and_grow_with_severity(name, dataset):
    x, _ = dataset.test.batch(slice(0, 32))
    distances = []
    for severity in range(1, SEVERITIES + 1):
        out = corrupt(x, name, severity, torch.Generator().manual_seed(0))
        assert out.shape == x.shape and out.min() >= 0 and out.max() <= 1
        distances.append(float((out - x).pow(2).mean()))
    assert distances[-1] > distances[0] > 0, distances


def test_unknown_corruption_and_severity_are_named(dataset):
    x, _ = dataset.test.batch(slice(0, 2))
    with pytest.raises(MeasurementError, match=r"unknown corruption 'fog'; valid: 'box_blur', 'brightness'"):
        corrupt(x, "fog", 1, torch.Generator())
    with pytest.raises(MeasurementError, match=r"corruption severity=6; valid: 1..5"):
        corrupt(x, "jpeg", 6, torch.Generator())


def test_reports_round_trip_and_compute_their_statistics(tiny_split):
    model = Tiny().eval()
    noise = noise_report(model, tiny_split, n_images=40, seed=0)
    assert noise.correct.shape == (40, 11)
    assert noise.band_drop(0.1) == pytest.approx(noise.correct[:, 0].mean() - noise.correct[:, 2].mean())
    with pytest.raises(NotApplicable, match=r"no noise band at 0.15π"):
        noise.band_drop(0.15)
    corruption = corruption_report(model, tiny_split, n_images=40, seed=0)
    assert corruption.correct.shape == (40, 1 + 5 * len(CORRUPTIONS))
    for report, cls in ((noise, NoiseReport), (corruption, CorruptionReport)):
        back = cls.from_arrays(report.to_arrays())
        assert all(np.array_equal(a, b) for a, b in zip(report.to_arrays().values(), back.to_arrays().values()))
    anat_model = tiny_resnet()
    images = torch.randint(0, 256, (20, 3, 32, 32), dtype=torch.uint8)
    lesion = lesion_report(anat_model.eval(), anatomy(anat_model), Split(images, torch.arange(20) % 10), n_images=20)
    assert lesion.units == ("layer1.0",) and lesion.kinds == ("conv",) and lesion.correct.shape == (20, 2)
    back = LesionReport.from_arrays(lesion.to_arrays())
    assert back.units == lesion.units and back.kinds == lesion.kinds and np.array_equal(back.stages, lesion.stages)
    attack = AttackReport(np.ones((3, 3), dtype=bool), np.array([1 / 255]))
    assert AttackReport.from_arrays(attack.to_arrays()).accuracy("pgd", 1 / 255) == 1.0
