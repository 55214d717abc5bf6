"""Cache keys cover everything a cached thing was computed from: the source hash follows the import closure
(module-level and function-level imports, relative and absolute, package ``__init__`` files), so a change to
any module the anatomy imports invalidates the unit reports, while a change to the report writer, the entry
protocol, the error messages or the provenance invalidates neither the model cache nor the measurement cache.
The hand-kept file list it replaced fails the same check."""

from __future__ import annotations

import ast
import hashlib
import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from model_props.cache.source import ROOT, import_closure, not_in_cache_keys, package_modules, source_hash
from model_props.measurements.registry import ANATOMY_CODE, REPORT_KINDS, code_modules
from model_props.training.checkpoints import TRAINING_CODE

REPORT_WRITER = "reporting/summary.py"
STORAGE = ["cache/__init__.py", "cache/entry.py", "cache/files.py", "errors.py", "provenance.py"]
# The measurement code list the cache keyed by before (translated to the subpackage layout, the pure measures now
# inside measurements/): it missed the tracer and the evidence it records, which decide which units a model has.
OLD_MEASUREMENT_FILES = (
    "anatomy/capture.py",
    "anatomy/mapping.py",
    "anatomy/model.py",
    "mutation/mutants.py",
    "measurements",
    "data",
    "zoo",
)

Hash = Callable[[Path], str]


@pytest.fixture
def package(tmp_path) -> Path:
    """A copy of the package's sources that a test may edit."""
    return Path(shutil.copytree(ROOT, tmp_path / "model_props", ignore=shutil.ignore_patterns("__pycache__")))


def _touch(root: Path, relative: str) -> None:
    """A change to what a module runs (a comment or a docstring would change no hash: see below)."""
    path = root / relative
    path.write_text(path.read_text() + "\n_CHANGED = 1\n")


def test_comments_docstrings_and_formatting_change_no_hash_and_code_always_does(package):
    """The hash reads the syntax tree without docstrings: a reflowed docstring, a comment or a re-wrapped call keeps
    every cache (and a trained model); a changed constant does not."""
    before = _every_cache_key(package)
    noise = package / "measurements" / "functional" / "noise.py"
    text = noise.read_text()
    first = text.index('"""', 3)
    reflowed = '"""' + " ".join(text[3:first].split()) + text[first:]
    noise.write_text(reflowed.replace("NOISE_RMS = 0.05", "NOISE_RMS = (\n    0.05  # reflowed\n)", 1))
    source_hash.cache_clear()
    assert _every_cache_key(package) == before
    noise.write_text(text.replace("NOISE_RMS = 0.05", "NOISE_RMS = 0.06", 1))
    source_hash.cache_clear()
    assert _every_cache_key(package) != before


def _unit_report_hash(root: Path) -> str:
    return source_hash(*code_modules("units"), root=root)


def _old_list_hash(root: Path) -> str:
    h = hashlib.sha256()
    for name in OLD_MEASUREMENT_FILES:
        for f in sorted((root / name).rglob("*.py")) if (root / name).is_dir() else [root / name]:
            h.update(f.read_bytes())
    return h.hexdigest()


def _relative(module: str) -> str:
    """A module's file, relative to the package folder."""
    base = ROOT.joinpath(*module.split(".")[1:])
    return (
        (base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py")
        .relative_to(ROOT)
        .as_posix()
    )


def _anatomy_files() -> list[str]:
    """Every file the anatomy's mapping imports, directly or not."""
    return [_relative(m) for m in import_closure(ANATOMY_CODE)]


def _not_invalidated(hash_of: Hash, root: Path, files: list[str]) -> list[str]:
    """The files among ``files`` whose change leaves ``hash_of(root)`` as it was."""
    missed = []
    for relative in files:
        before = hash_of(root)
        _touch(root, relative)
        source_hash.cache_clear()
        import_closure.cache_clear()
        if hash_of(root) == before:
            missed.append(relative)
    return missed


def test_the_closure_holds_the_tracer_the_data_and_the_zoo():
    closure = import_closure(*code_modules("units"))
    for module in (
        "model_props.anatomy.tracer",
        "model_props.anatomy.records",
        "model_props.anatomy.mapping",
        "model_props.measurements.functional.cka",
        "model_props.data.deadleaves",
        "model_props.zoo.vit",
        "model_props.measurements.units",
        "model_props.measurements.cache",
    ):
        assert module in closure
    assert not {"model_props.errors", "model_props.cache.entry", "model_props.provenance"} & set(closure)
    assert not [
        m for m in closure if m.startswith(("model_props.reporting", "model_props.plugin", "model_props.claims"))
    ]


def test_a_change_to_any_module_the_anatomy_imports_invalidates_unit_reports(package):
    files = _anatomy_files()
    assert "anatomy/tracer.py" in files and "__init__.py" in files and len(files) >= 8
    assert _not_invalidated(_unit_report_hash, package, files) == []


def test_the_old_file_list_missed_the_tracer(package):
    """The same check fails on the hand-kept list the closure replaced: it can catch the bug it guards."""
    assert "anatomy/tracer.py" in _not_invalidated(_old_list_hash, package, _anatomy_files())


def _every_cache_key(root: Path) -> str:
    keys = [source_hash(TRAINING_CODE, root=root)]
    keys += [source_hash(*code_modules(kind, mutant), root=root) for kind in REPORT_KINDS for mutant in (False, True)]
    return "|".join(keys)


def test_a_change_to_the_report_writer_invalidates_no_cache(package):
    assert _not_invalidated(_every_cache_key, package, [REPORT_WRITER]) == [REPORT_WRITER]


def test_a_change_to_how_entries_are_stored_or_errors_read_invalidates_no_cache(package):
    """The modules that declare ``__not_in_cache_keys__`` change no key; the executor's whole-source hash sees them."""
    assert _not_invalidated(_every_cache_key, package, STORAGE) == STORAGE

    def whole(root: Path) -> str:
        return source_hash(TRAINING_CODE, root=root, whole=True)

    assert _not_invalidated(whole, package, STORAGE) == []


def test_a_module_out_of_cache_keys_imports_only_modules_out_of_them():
    """Leaving a module out also stops the walk at its imports: no computing module may hide behind one."""
    out = {m for m in package_modules() if not_in_cache_keys(ast.parse((ROOT / _relative(m)).read_text()))}
    storage = {_relative(m) for m in out}
    assert set(STORAGE) <= storage
    for module in out:
        imported = set(import_closure(module, whole=True)) - {module, "model_props"}
        assert imported <= out, f"{module} imports modules that compute cached values: {sorted(imported - out)}"


def test_a_change_to_the_training_loop_invalidates_trained_models_not_reports_of_other_kinds(package):
    assert _not_invalidated(lambda r: source_hash(TRAINING_CODE, root=r), package, ["training/loop.py"]) == []
    lesion = ["measurements/lesion.py"]
    assert _not_invalidated(lambda r: source_hash(*code_modules("fit"), root=r), package, lesion) == lesion


def test_function_level_relative_and_type_checking_imports(tmp_path):
    root = tmp_path / "model_props"
    (root / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "sub/__init__.py": "from .a import f\n",
        "sub/a.py": "def f():\n    from ..b import g\n    return g\n",
        "b.py": "import model_props.c as c\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import d\n",
        "c.py": "",
        "d.py": "",
        "e.py": "",
    }
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text))
    assert import_closure("model_props.sub.a", root=root) == (
        "model_props",
        "model_props.b",
        "model_props.c",
        "model_props.sub",
        "model_props.sub.a",
    )
    with pytest.raises(ValueError, match="no module"):
        import_closure("model_props.nowhere", root=root)
    # b leaves cache keys: it is left out with c, which only b imports; the whole closure keeps both
    (root / "b.py").write_text('__not_in_cache_keys__ = "formats words"\n' + (root / "b.py").read_text())
    import_closure.cache_clear()
    assert import_closure("model_props.sub.a", root=root) == ("model_props", "model_props.sub", "model_props.sub.a")
    assert "model_props.c" in import_closure("model_props.sub.a", root=root, whole=True)


# ---------------------------------------------------------------- the seed study's fingerprints
@pytest.mark.parametrize(("claim_id", "own", "helper"), [
    ("park2022.data-specificity-local-msa", "claims/park2022_landscape.py", "claims/park2022.py"),
    ("raghu2021.skip-dominates", "claims/raghu2021_skip.py", "claims/raghu2021.py"),
])  # fmt: skip
def test_a_claims_statistics_fingerprint_covers_the_catalogue_modules_it_takes_helpers_from(
    package, claim_id, own, helper
):
    """Claim 20 (park2022_landscape) reads its fit statistics through the helpers of the paper module park2022, and
    claim 17 (raghu2021_skip) its scope through raghu2021's: editing the helper's module changes the claim's
    statistics fingerprint. The old fingerprint, the claim's own module file and unit_statistics, misses it."""
    from model_props.claims import get_claim
    from model_props.verdicts.fingerprint import statistics_hash

    claim = get_claim(claim_id)

    def old(root: Path) -> str:
        return "".join(hashlib.sha256((root / f).read_bytes()).hexdigest()[:12]
                       for f in (own, "claims/unit_statistics.py"))  # fmt: skip

    assert _not_invalidated(lambda r: statistics_hash(claim, root=r), package, [helper]) == []
    assert _not_invalidated(old, package, [helper]) == [helper]
    unrelated = [
        "claims/raghu2021_similarity.py",
        "claims/park2022_stages.py",
        "claims/__init__.py",
        "verdicts/stats.py",
    ]
    assert _not_invalidated(lambda r: statistics_hash(claim, root=r), package, unrelated) == unrelated


def test_every_kinds_compute_function_is_in_its_kinds_code_hash(package):
    """A report kind's code hash covers the function the registry calls to compute it: it lives in the kind's own
    module, whose import closure keys the cache. The registry itself is in no kind's hash (editing it, where the
    compute wrappers used to live, re-keys nothing), so no wrapper may live there."""
    for name, kind in REPORT_KINDS.items():
        assert kind.compute.__module__ == kind.module, f"{name}: {kind.compute.__module__} is not {kind.module}"
    every_kind = lambda r: "|".join(source_hash(*code_modules(k), root=r) for k in REPORT_KINDS)  # noqa: E731
    assert _not_invalidated(every_kind, package, ["measurements/registry.py"]) == ["measurements/registry.py"]
    attack = package / "measurements" / "attack.py"
    before = source_hash(*code_modules("attack"), root=package)
    attack.write_text(attack.read_text().replace("pgd_steps=m.pgd_steps,", "pgd_steps=m.pgd_steps + 0,", 1))
    source_hash.cache_clear()
    import_closure.cache_clear()
    assert source_hash(*code_modules("attack"), root=package) != before


def test_a_factory_recipes_key_covers_its_factorys_source(package, monkeypatch):
    """``model = "model_props.zoo.local_vit:build_local_vit"``: the registry does not import the factory, so the
    training code's hash does not cover it; ``Recipe.key`` and the study fingerprint do. Without the factory's source
    in them (the key of fields and training code alone), an edit to it would re-key nothing."""
    import functools

    import model_props.training.recipes as recipes
    from model_props.training.profiles import load_profile

    monkeypatch.setattr(recipes, "source_hash", functools.partial(source_hash, root=package))
    local = load_profile("smoke").recipe("vit_local5")
    before = (local.key("training"), local.fingerprint())
    _touch(package, "zoo/local_vit.py")
    source_hash.cache_clear()
    import_closure.cache_clear()
    after = (local.key("training"), local.fingerprint())
    assert after[0] != before[0] and after[1] != before[1]
    monkeypatch.setattr(recipes, "model_source_hash", lambda spec: "")  # the key without the factory's source
    unkeyed = local.key("training")
    _touch(package, "zoo/local_vit.py")
    source_hash.cache_clear()
    import_closure.cache_clear()
    assert local.key("training") == unkeyed
