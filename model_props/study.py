"""The seed study: what holds across training seeds, and the expectations derived from it (design Sec. 3).

Training is deterministic on one machine but not across machines, so no test may rest on one seed's
weights. The study trains every recipe of a profile with several seeds, runs the claim suite on each seed
and keeps, per recipe, the test accuracy and NLL of every seed, and per claim x model, every part's verdict
and value of every seed. It ships as ``<profile>-seeds.json`` (with a readable ``.md``) beside the profile.

From it, per claim x model (:meth:`SeedStudy.expectation`):

- supported on every seed -> **pass** (the test must pass);
- contradicted on every seed -> **known failure**, a strict xfail (an XPASS breaks the build);
- anything else (supported on some seeds, or inconclusive on any) -> **seed-dependent**, a non-strict xfail
  whose reason gives the per-seed tally. An inconclusive seed sits on the threshold, where another seed or
  machine may land on either side, so it never backs a strict mark.

and per recipe an accuracy floor (:meth:`SeedStudy.floor`): the worst seed's test accuracy less
:data:`FLOOR_MARGIN`. Entries whose recipe or claim changed since the study (their fingerprints differ)
are ignored; a library test fails until the study is rerun.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

__all__ = ["FLOOR_MARGIN", "Expectation", "SeedStudy", "load_study", "study_files"]

FLOOR_MARGIN = 0.05  # accuracy floors sit 5 points below the worst seed
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Expectation:
    kind: Literal["pass", "known-failure", "seed-dependent"]
    reason: str = ""
    tally: tuple[int, int] = (0, 0)  # (seeds supported, seeds studied)


def _fmt_part(part: Mapping[str, Any]) -> str:
    if part.get("value") is None:
        return f"[{part['part']}] {part['verdict']}"
    low, high = part["interval"]
    return f"[{part['part']}] {part['verdict']} {part['value']:+.3g} [{low:+.3g}, {high:+.3g}]"


def _decisive(parts: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    order = {"contradicted": 0, "inconclusive": 1, "supported": 2}
    decided = [p for p in parts if p["verdict"] in order]
    return min(decided, key=lambda p: order[p["verdict"]]) if decided else None


@dataclass(frozen=True)
class SeedStudy:
    """A profile's seed study as loaded from ``<profile>-seeds.json``."""

    profile: str
    seeds: tuple[int, ...]
    recipes: Mapping[str, Mapping[str, Any]]  # name -> {fingerprint, test_accuracy: [per seed], ...}
    claims: Mapping[str, Mapping[str, Any]]  # id -> {fingerprint, models: {model: [per-seed record]}}
    provenance: Mapping[str, Any] = field(default_factory=dict)
    source: str = ""

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "") -> SeedStudy:
        return cls(data["profile"], tuple(data["seeds"]), data["recipes"], data["claims"], data.get("provenance", {}),
                   source)

    def floor(self, recipe: Any) -> float | None:
        """The accuracy floor of a recipe (worst seed - margin), or None if the study does not cover it."""
        entry = self.recipes.get(recipe.name)
        if entry is None or entry.get("fingerprint") != recipe.fingerprint():
            return None
        return min(entry["test_accuracy"]) - FLOOR_MARGIN

    def never_replicates(self, claim: Any) -> bool:
        """The claim is a known failure on every model the study measured it on."""
        models = self.claims.get(claim.id, {}).get("models", {})
        kinds = [e.kind for m in models if (e := self.expectation(claim, m)) is not None]
        return bool(kinds) and all(k == "known-failure" for k in kinds)

    def expectation(self, claim: Any, model: str) -> Expectation | None:
        """What the study says of ``claim`` on ``model``; None if it did not study that pair (or it changed)."""
        entry = self.claims.get(claim.id)
        if entry is None or entry.get("fingerprint") != claim.fingerprint():
            return None
        records = entry["models"].get(model)
        if not records or all(r["verdict"] == "skipped" for r in records):
            return None
        verdicts = [r["verdict"] for r in records]
        n, k = len(verdicts), verdicts.count("supported")
        if k == n:
            return Expectation("pass", tally=(k, n))
        per_seed = "; ".join(
            f"seed {r['seed']} {r['verdict']}" + (f", {_fmt_part(d)}" if (d := _decisive(r["parts"])) else "")
            for r in records
        )
        study = f"{self.profile} seed study, {n} training seeds"
        if k == 0 and all(v == "contradicted" for v in verdicts):
            return Expectation("known-failure", f"{claim.evidence}. Not reproduced at this scale: contradicted on "
                                                f"every seed ({study}: {per_seed})", (k, n))
        return Expectation("seed-dependent", f"{claim.evidence}. Seed-dependent at this scale: supported on {k} of {n} "
                                             f"seeds ({study}: {per_seed})", (k, n))


def study_files(profile: str, user_dir: Path | None = None) -> list[Any]:
    """Where ``<profile>-seeds.json`` may live: the user's recipes folder first, then the built-in data."""
    from .recipes import BUILTIN_PACKAGE

    name = f"{profile}-seeds.json"
    candidates = [user_dir / name] if user_dir is not None else []
    candidates.append(resources.files(BUILTIN_PACKAGE).joinpath(name))
    return [c for c in candidates if c.is_file()]


def load_study(profile: str, user_dir: Path | None = None) -> SeedStudy | None:
    """The profile's seed study, or None where there is none (then nothing is marked and no floor is set)."""
    files = study_files(profile, user_dir)
    if not files:
        return None
    data = json.loads(files[0].read_text())
    if data.get("schema_version") != SCHEMA_VERSION:
        return None
    return SeedStudy.from_json(data, str(files[0]))


# --- running a study -------------------------------------------------------------------------------------

def _suite_summary(settings: Any, seed: int, workdir: Path) -> dict[str, Any]:
    """Run the packaged claim suite on the references trained with ``seed``; its summary.json."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "pytest", "--pyargs", "model_props.suite", "-q", "-p", "no:cacheprovider",
           f"--claims-profile={settings.profile}", f"--claims-cache={settings.cache_dir}",
           f"--claims-train-seed={seed}", f"--claims-seed={settings.seed}", f"--claims-device={settings.device}"]
    if settings.recipes.user_dir is not None:
        cmd.append(f"--claims-recipes={settings.recipes.user_dir}")
    if settings.data_root is not None:
        cmd.append(f"--claims-data-root={settings.data_root}")
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    summary = workdir / "reports" / "summary.json"
    if not summary.is_file():
        raise RuntimeError(f"the claim suite wrote no summary for seed {seed}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return json.loads(summary.read_text())


def run_study(settings: Any, *, seeds: list[int], workers: int = 1, out: Path | None = None) -> Path:
    """Train every reference and variant of the profile with each seed, run the claim suite on each seed, and
    write ``<profile>-seeds.json`` and ``.md`` to ``out`` (default: the user's recipes folder, else ./fixtures)."""
    import dataclasses
    import functools
    import tempfile
    from datetime import date

    from .claims import list_claims
    from .parallel import map_recipes, train_until
    from .provenance import provenance
    from .store import ModelStore

    profile = settings.profile_data
    names = profile.references + profile.variants
    store = ModelStore(settings)
    until = {n: store.last_checkpoint_needed(n) for n in names}
    runs = [dataclasses.replace(profile.recipes[n], seed=s) for s in seeds for n in names]
    metrics: dict[tuple[str, int], dict[str, Any]] = {}
    train = functools.partial(train_until, settings.cache_dir, settings.data_root, until)
    for recipe, result in map_recipes(train, runs, workers=workers):
        metrics[(recipe.name, recipe.seed)] = result
        print(f"trained {recipe.name} seed {recipe.seed}: test accuracy {result['test_accuracy']:.4f}"
              f"{' (cache)' if result['from_cache'] else ''}", flush=True)
    claims: dict[str, Any] = {c.id: {"fingerprint": c.fingerprint(), "models": {}} for c in list_claims()}
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            summary = _suite_summary(settings, seed, Path(tmp))
        for r in summary["results"]:
            verdict = r.get("measured_verdict", r["verdict"])
            claims[r["claim"]]["models"].setdefault(r["model"], []).append(
                {"seed": seed, "verdict": verdict, "parts": r.get("parts", [])})
        print(f"claim suite on seed {seed}: {len(summary['results'])} records", flush=True)
    data = {
        "schema_version": SCHEMA_VERSION, "profile": profile.name, "seeds": list(seeds), "floor_margin": FLOOR_MARGIN,
        "date": date.today().isoformat(), "provenance": provenance(settings.device),
        "recipes": {n: {"fingerprint": profile.recipes[n].fingerprint(), "checkpoint": until[n],
                        **{k: [metrics[(n, s)][k] for s in seeds] for k in ("test_accuracy", "test_nll", "val_accuracy")}}
                    for n in names},
        "claims": claims,
    }
    out = out or settings.recipes.user_dir or Path.cwd() / "fixtures"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{profile.name}-seeds.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    (out / f"{profile.name}-seeds.md").write_text(study_markdown(SeedStudy.from_json(data, str(path)), profile))
    return path


def study_markdown(study: SeedStudy, profile: Any) -> str:
    """The readable table of a study: accuracy per recipe and seed; per claim x model the tally and the
    expectation it sets."""
    import statistics

    from .claims import get_claim

    m = study.provenance.get("machine", {})
    lines = [f"# Seed study, profile `{study.profile}`", "",
             f"Seeds {list(study.seeds)}; every recipe trained once per seed and the claim suite run on each seed's "
             f"references. Machine: {m.get('cpu')}, {m.get('cpu_count')} cores; versions "
             f"{study.provenance.get('versions')}. Regenerate: `model-props seed-study --profile {study.profile}`.", "",
             "## Accuracy per recipe", "",
             f"Floor = worst seed - {FLOOR_MARGIN:.2f}; the library's tests assert it.", "",
             "| recipe | checkpoint | test accuracy mean ± sd | per seed | test NLL mean | floor |",
             "|---|---|---|---|---|---|"]
    for name, entry in study.recipes.items():
        acc = entry["test_accuracy"]
        sd = statistics.stdev(acc) if len(acc) > 1 else 0.0
        per_seed = ", ".join(f"{a:.3f}" for a in acc)
        lines.append(f"| {name} | {entry.get('checkpoint', 'final')} | {statistics.mean(acc):.3f} ± {sd:.3f} | {per_seed} | "
                     f"{statistics.mean(entry['test_nll']):.3f} | {min(acc) - FLOOR_MARGIN:.3f} |")
    lines += ["", "## Claims", "",
              "Expectation: **pass** (supported on every seed), **known failure** (contradicted on every seed: strict "
              "xfail), **seed-dependent** (anything else: non-strict xfail).", "",
              "| claim | model | supported | per seed (decisive part: value [95% CI]) | expectation |", "|---|---|---|---|---|"]
    for claim_id, entry in study.claims.items():
        claim = get_claim(claim_id)
        for model, records in entry["models"].items():
            if all(r["verdict"] == "skipped" for r in records):
                continue
            exp = study.expectation(claim, model)
            cells = "; ".join(f"{r['seed']}: " + (_fmt_part(d) if (d := _decisive(r["parts"])) else r["verdict"])
                              for r in records)
            k = sum(r["verdict"] == "supported" for r in records)
            lines.append(f"| {claim_id} | {model} | {k}/{len(records)} | {cells} | {exp.kind if exp else '-'} |")
    return "\n".join(lines) + "\n"
