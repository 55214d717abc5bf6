"""Device handling that the CPU can check (the CUDA layer, ``pytest -m cuda``, checks the rest on a GPU).

The anatomy's mapper builds its probe batch on the model's device (seeded on the CPU, so it is the same batch on every
device), and each measure of the functional core that computes on the model's device makes no CPU tensor inside; the
meta device stands in for a GPU here, since its tensors mix with no CPU tensor, as a CUDA model's would not. Every trace above the anatomy layer still goes through :func:`model_props.store.tested.anatomy_on_cpu`, which
traces a model on another device on the CPU and moves it back, and a mutant is made on the CPU and moved to its
base's device.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch
from tiny_models import mutants_of, tiny_input  # this folder is on sys.path (pytest's prepend mode)

import model_props
from model_props.anatomy import anatomy, device_of
from model_props.anatomy.mapper import Mapper
from model_props.store import tested
from model_props.zoo import build_model

PACKAGE = Path(model_props.__file__).parent
BELOW = ("anatomy", "measurements", "training", "data", "zoo", "claims", "cache")  # never see a session
# (module, function) that may call the tracer itself: the helper, an untrained build of a recipe (on the CPU) and
# make_mutant (on a CPU copy of its base)
TRACERS = {("store/tested.py", "anatomy_on_cpu"), ("store/model_store.py", "architecture"),
           ("mutation/mutants.py", "make_mutant")}  # fmt: skip


def _tracer_calls(path: Path) -> set[tuple[str, str]]:
    """(module, enclosing function) of every call of a name ``anatomy`` imported from model_props.anatomy."""
    tree = ast.parse(path.read_text())
    imported = any(
        isinstance(n, ast.ImportFrom) and (n.module or "").endswith("anatomy") and any(a.name == "anatomy" for a in n.names)
        for n in ast.walk(tree)
    )  # fmt: skip
    found = set()
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call)):
            if imported and isinstance(call.func, ast.Name) and call.func.id == "anatomy":
                found.add((path.relative_to(PACKAGE).as_posix(), fn.name))
    return found


def test_every_trace_above_the_anatomy_layer_is_made_on_the_cpu():
    calls = set()
    for path in PACKAGE.rglob("*.py"):
        if path.relative_to(PACKAGE).parts[0] not in BELOW:
            calls |= _tracer_calls(path)
    assert calls <= TRACERS, f"trace through model_props.store.tested.anatomy_on_cpu: {sorted(calls - TRACERS)}"
    assert ("store/tested.py", "anatomy_on_cpu") in calls  # the check sees calls


@pytest.mark.parametrize("spec", ["vit", "pit", "swin", "resnet", "alternet"])
def test_the_mappers_probe_follows_the_model_onto_another_device(spec):
    """Traced on the meta device, a reference makes the calls it makes on the CPU (a probe built on the CPU raised
    "Tensor on device meta is not on the expected device cpu!")."""
    on_cpu = Mapper(build_model(spec, num_classes=10), 32).trace.calls
    on_meta = Mapper(build_model(spec, num_classes=10).to("meta"), 32).trace.calls
    assert [c.path for c in on_meta] == [c.path for c in on_cpu] and len(on_cpu) > 10


def test_the_helper_traces_a_model_on_another_device_on_the_cpu_and_moves_it_back(monkeypatch):
    model = build_model("resnet", num_classes=10, arch_kwargs={"layers": [1, 1, 1, 1], "channels": [8, 8, 8, 8]})
    events: list[str] = []
    monkeypatch.setattr(tested, "device_of", lambda _m: torch.device("cuda", 1))  # as if it were on the second GPU
    monkeypatch.setattr(model, "cpu", lambda: events.append("cpu") or model)
    monkeypatch.setattr(model, "to", lambda device: events.append(f"to {device}") or model)
    monkeypatch.setattr(tested, "anatomy", lambda m: events.append("trace") or anatomy(m))
    assert tested.anatomy_on_cpu(model) == anatomy(model)
    assert events == ["cpu", "trace", "to cuda:1"]


def test_the_helper_leaves_a_cpu_model_where_it_is_with_the_same_parameters():
    model = build_model(
        "vit", num_classes=10, arch_kwargs={"patch_size": 8, "embed_dim": 16, "depth": 2, "num_heads": 2}
    )
    before = [(id(p), p.device) for p in model.parameters()]
    assert tested.anatomy_on_cpu(model) == anatomy(model)
    assert [(id(p), p.device) for p in model.parameters()] == before
    assert device_of(torch.nn.ReLU()) == torch.device("cpu")  # no parameters, no buffers


def test_a_mutant_is_on_its_bases_device_and_its_base_is_untouched(tiny, dataset):
    base = tiny_input(tiny, "vit", dataset)
    weights = {k: v.clone() for k, v in base.model.state_dict().items()}
    mutants = mutants_of(base)
    assert len(mutants) >= 10  # the ViT's mutations, e.g. highpass-attention, scrambled-mlps, checkerboard-positions
    for mutation, mutant in mutants.items():
        devices = {t.device for t in (*mutant.model.parameters(), *mutant.model.buffers())}
        assert devices == {torch.device("cpu")}, mutation
    assert all(torch.equal(v, base.model.state_dict()[k]) for k, v in weights.items())


def _probe_fit(maps: torch.Tensor) -> torch.Tensor:
    from model_props.measurements.functional.probe import ProbeFit, tokens_and_positions

    tokens, positions = tokens_and_positions(maps)
    probe = ProbeFit(maps.shape[1], maps.shape[2] * maps.shape[3], maps.device)
    probe.update(tokens, positions)
    return torch.cat([probe.gram, probe.cross], dim=1)


def _functional_measures() -> dict:
    """Each measure of the functional core that computes on the model's device, as (its inputs' shapes, the call)."""
    from model_props.measurements.functional import attention, cka, cross, fourier, occlusion, skip, variance

    return {
        "probe (normal equations)": ([(2, 3, 4, 4)], _probe_fit),
        "gram and HSIC (CKA)": ([(6, 3, 2), (6, 5)], lambda a, b: cka.hsic_matrix(torch.stack([cka.gram(a),
                                                                                                   cka.gram(b)]))),
        "joint HSIC (cross CKA)": ([(1, 6, 6), (2, 6, 6)], lambda a, b: cross.joint_hsic(a, b)[0]),
        "attention distance": ([(2, 3, 17, 17)], lambda a: attention.attention_distance(a, 32, prefix_tokens=1)),
        "high frequency (Fourier)": ([(2, 3, 8, 8)], fourier.high_frequency),
        "feature variance": ([(2, 3, 4, 4)], variance.feature_variance),
        "skip ratio": ([(2, 5, 4), (2, 5, 4)], skip.skip_norm_ratio),
        "occlusion": ([(2, 3, 8, 8), (2, 8, 8), (3,)], lambda x, m, f: occlusion.occlude(x, m > 0, f)),
    }  # fmt: skip


@pytest.mark.parametrize("measure", list(_functional_measures()))
def test_a_functional_measure_computes_on_the_device_of_its_inputs(measure):
    """The meta device mixes with no CPU tensor, as a CUDA tensor would not: a measure that builds a tensor on the CPU
    inside (a location probe did, until it fitted on the device: "Tensor on device meta is not on the expected device
    cpu!", issue 47) raises here."""
    shapes, call = _functional_measures()[measure]
    out = call(*(torch.zeros(shape, device="meta") for shape in shapes))
    assert out.device.type == "meta"
