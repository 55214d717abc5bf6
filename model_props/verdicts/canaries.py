"""Canaries: whether the code still computes what built a seed study, judged by behaviour rather than bytes.

A study's per-seed estimates were computed by one version of the training, measurement and statistics code. Instead
of hashing that code (a docstring reflow, a rename or a new torch would stale a study whose numbers it cannot move),
each study generation records its *canaries*: the same study run shrunk to a few optimizer steps and a few images
(every recipe, every report kind, every claim part; :mod:`model_props.study.canaries`), computed by the code that
built the study with three seeds, in ``<profile>-canaries.json`` beside ``<profile>-seeds.json``.

Later code keeps the study valid while it reproduces the first canary seed: every statistic within
:data:`MARGIN_SD` (0.1) of that statistic's seed-to-seed standard deviation over the recorded seeds, plus a float
floor of :data:`FLOAT_FLOOR` (10⁻⁶) of its magnitude for a statistic that does not vary with the seed. The margin was
fixed before any canary was measured. It is always measured against the generation's record, never the previous
commit's, so that drift cannot add up. A canary that moves stales the claims that read it and names its report kind;
a recipe whose training canary (test accuracy and NLL at each checkpoint) moves stales every claim that reads the
recipe. The recipes' and the canaries' own settings are data and are compared as such. (The record is plain JSON
read by this module, not pytest-regressions' ``num_regression``: every run of the claims judges it, inside the
library and outside any test, and it needs a margin per value from the recorded seeds.)

Canaries run on one torch thread, so one machine reproduces its own record bit for bit. Another kind of machine (CPU
model or instruction set) sums floats in another order, and training amplifies that: AdamW turns the float noise of a
gradient that is zero in exact arithmetic (a bias before a batch norm) into a step of the full learning rate. So on
another machine kind a moved canary may be the machine's, not the code's: there it stales its claim only where the
claim's code (:func:`code_digest`: its statistics, the measurement code of the kinds it reads and the training code,
as syntax trees) also differs from the recording code's. On the record's machine kind every move stales.

Later code whose canaries were run once and did not move is *confirmed* (``model-props seed-study
--canaries-confirm``): the record keeps, per machine kind and library versions, the code digests shown to reproduce
it there. A confirmed digest then runs no canary on that kind with those versions (as the recording code runs none),
and counts as the recording code's wherever a move is taken as the machine's. A confirmation is always judged
against the generation's record or the kind's reference, never against an earlier confirmation, so drift cannot add
up.
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..claims import get_claim
from ..claims.base import Claim
from ..training.checkpoints import code_hash as training_code_hash
from ..training.profiles import Profile
from ..training.recipes import Recipe
from .fingerprint import claim_fingerprint

__all__ = ["CANARY_SCHEMA", "MARGIN_SD", "FLOAT_FLOOR", "ALL", "CanaryRecord", "recipe_data", "margin", "code_digest",
           "machine_kind", "libraries"]  # fmt: skip

CANARY_SCHEMA = 1
MARGIN_SD = 0.1  # a canary statistic may move by this share of its seed-to-seed SD (fixed before measuring)
FLOAT_FLOOR = 1e-6  # ... plus this share of its largest recorded magnitude (reduction order, CPU kernels)
ALL = "*"  # the key of reasons that stale every claim of a study
_METRICS = ("test_accuracy", "test_nll")  # a recipe's training canary at each checkpoint


def recipe_data(recipe: Recipe) -> str:
    """12 hex digits of sha256 over a recipe's fields (not its description, seed, name or profile): the data a
    study's recipe is, apart from the code that trains it (which the canaries judge)."""
    fields = {k: v for k, v in recipe.to_dict().items() if k not in ("description", "seed", "name", "profile")}
    return hashlib.sha256(json.dumps(fields, sort_keys=True, default=str).encode()).hexdigest()[:12]


def code_digest(claim: Claim, profile: Profile) -> str:
    """16 hex digits of sha256 over the code a claim's study entry is computed by: its statistics' source, the
    measurement code of each kind it reads and the training code (source hashes of syntax trees, no docstrings)."""
    found = claim_fingerprint(claim, profile)
    code = [found["statistics"], found["measurement"], training_code_hash()]
    return hashlib.sha256(json.dumps(code, sort_keys=True).encode()).hexdigest()[:16]


def machine_kind(machine: Mapping[str, Any]) -> str:
    """A provenance's machine as a kind: its CPU model and the instruction set torch uses on it."""
    return f"{machine.get('cpu', '?')} ({machine.get('cpu_capability', '?')})"


def libraries(versions: Mapping[str, str]) -> dict[str, str]:
    """The library versions a canary outcome depends on (torch, timm, numpy): all but the project's own."""
    return {k: v for k, v in versions.items() if k != "model-props"}


def margin(recorded: Sequence[float | None]) -> float:
    """How far the first recorded value may move: MARGIN_SD · SD over the seeds + FLOAT_FLOOR · max |value|."""
    defined = [v for v in recorded if v is not None]
    spread = statistics.stdev(defined) if len(defined) > 1 else 0.0
    return MARGIN_SD * spread + FLOAT_FLOOR * max((abs(v) for v in defined), default=0.0)


def _moved(recorded: Sequence[float | None], now: float | None, reference: Any = ...) -> str | None:
    """How ``now`` left the margin around the first recorded value (or ``reference``, a machine's), or None."""
    then = recorded[0] if reference is ... else reference
    if then is None or now is None or (isinstance(now, float) and math.isnan(now)):
        return None if then is None and (now is None or math.isnan(now)) else f"{then} -> {now}"
    allowed = margin(recorded)
    return None if abs(now - then) <= allowed else f"{then:.6g} -> {now:.6g} (margin ±{allowed:.3g})"


@dataclass(frozen=True)
class CanaryRecord:
    """A study generation's canaries as recorded by the code that built it (``<profile>-canaries.json``)."""

    profile: str
    study: Mapping[str, Any]  # the study it speaks for: its date and seeds
    seeds: tuple[int, ...]  # canary seeds; later code reproduces the first
    overlay: Mapping[str, Mapping[str, Any]]  # the canaries' size, laid over the profile
    recipes: Mapping[str, str]  # recipe -> recipe_data()
    training: Mapping[str, Mapping[str, Mapping[str, list[float]]]]  # recipe -> checkpoint -> metric -> per seed
    claims: Mapping[str, Mapping[str, Mapping[str, list[float | None]]]]  # claim -> part -> model -> per seed
    code: Mapping[str, str]  # claim -> code_digest() of the recording code
    provenance: Mapping[str, Any]
    source: str = ""
    machines: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # other kinds' references
    confirmed: tuple[Mapping[str, Any], ...] = ()  # later code that reproduced it: machine, versions, code

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "") -> CanaryRecord:
        return cls(data["profile"], data["study"], tuple(data["seeds"]), data["overlay"], data["recipes"],
                   data["training"], data["claims"], data["code"], data.get("provenance", {}), source,
                   data.get("machines", {}), tuple(data.get("confirmed", ())))  # fmt: skip

    @property
    def machine(self) -> str:
        """The kind of machine the first seed was recorded on (:func:`machine_kind`)."""
        return machine_kind(self.provenance.get("machine", {}))

    @staticmethod
    def to_json(profile: str, study: Mapping[str, Any], seeds: Sequence[int], overlay: Mapping[str, Any],
                recipes: Mapping[str, str], per_seed: Sequence[Mapping[str, Any]], code: Mapping[str, str],
                provenance: Mapping[str, Any]) -> dict[str, Any]:  # fmt: skip
        """The record of ``per_seed`` canary runs (:func:`~model_props.study.run.seed_estimates` outputs)."""
        first = per_seed[0]
        claims = {cid: {part: {m: [s["claims"][cid]["parts"][part]["values"].get(m) for s in per_seed]
                               for m in record["values"]}
                        for part, record in entry["parts"].items()}
                  for cid, entry in first["claims"].items()}  # fmt: skip
        training = {name: {c: {k: [s["recipes"][name][c][k] for s in per_seed] for k in _METRICS} for c in ckpts}
                    for name, ckpts in first["recipes"].items()}  # fmt: skip
        return {"schema_version": CANARY_SCHEMA, "profile": profile, "study": dict(study), "seeds": list(seeds),
                "margin_sd": MARGIN_SD, "float_floor": FLOAT_FLOOR, "overlay": overlay, "recipes": dict(recipes),
                "training": training, "claims": claims, "code": dict(code), "provenance": dict(provenance)}  # fmt: skip

    def reference(self, machine: str, now: Mapping[str, Any],
                  code: Mapping[str, str]) -> dict[str, Any]:  # fmt: skip
        """The JSON of :attr:`machines`' entry for ``machine``: ``now``, the first canary seed run there by code
        whose :func:`code_digest` is ``code``, for the claims whose code is the recording code's (and the training
        canaries, where the training code is)."""
        same = [c for c in self.claims if code.get(c) == self.code.get(c)]
        claims = {c: {p: {m: now["claims"][c]["parts"][p]["values"].get(m) for m in models}
                      for p, models in self.claims[c].items()} for c in same if c in now["claims"]}  # fmt: skip
        training = {n: {c: {k: now["recipes"][n][c][k] for k in per} for c, per in ckpts.items()}
                    for n, ckpts in self.training.items() if n in now["recipes"]} if same else {}  # fmt: skip
        return {"claims": claims, "training": training, "code": {c: code[c] for c in claims}}

    def moved(self, now: Mapping[str, Any], profile: Profile, study: Mapping[str, Any],
              overlay: Mapping[str, Any], machine: str | None = None) -> dict[str, list[str]]:  # fmt: skip
        """Why each claim's study entry no longer speaks for the code, by claim id (:data:`ALL`: every claim), from
        ``now``, the first canary seed's run by the current code (of the claims it ran); empty where nothing moved.
        ``study`` and ``overlay``: the identity of the study and the canaries' size now; ``machine``: the kind it
        ran on, whose reference (:attr:`machines`) it is compared with where the record has one for its claim."""
        reasons: dict[str, list[str]] = {}
        ref = self.machines.get(machine or self.machine, {"claims": {}, "training": {}})
        if dict(study) != dict(self.study) or json.loads(json.dumps(overlay)) != self.overlay:
            what = "another study" if dict(study) != dict(self.study) else "canaries of another size"
            return {ALL: [f"its canary record {self.source} is of {what}"]}
        changed = self.changed_recipes(profile)

        def trained_moved(on: Mapping[str, Any]) -> dict[str, list[str]]:
            """Per recipe, how its training canaries left their margin, around the record's first seed or, where
            ``on`` holds it, this machine kind's reference."""
            return {n: [f"{c} {k.replace('_', ' ')} {why}" for c, per in ckpts.items() for k, rec in per.items()
                        if (why := _moved(rec, now["recipes"].get(n, {}).get(c, {}).get(k),
                                          on.get(n, {}).get(c, {}).get(k, ...)))]
                    for n, ckpts in self.training.items() if n in now["recipes"]}  # fmt: skip

        by_record = trained_moved({})
        by_reference = trained_moved(ref["training"]) if ref["training"] else by_record

        for cid, parts in self.claims.items():
            if cid not in now["claims"]:  # a canary run of some claims only (``only``) judges those
                continue
            claim, found, on = get_claim(cid), [], ref["claims"].get(cid)
            for part, models in parts.items():
                declared = next((p for p in claim.parts if p.name == part), None)
                if declared is None:
                    found.append(f"its canary record has a part {part!r} the claim no longer has")
                    continue
                values = now["claims"].get(cid, {}).get("parts", {}).get(part, {}).get("values", {})
                for model in [*models, *([declared.partner] if declared.partner and models else [])]:  # a pair's other
                    trained = (by_reference if on is not None else by_record).get(model)
                    then = on[part].get(model, ...) if on is not None else ...  # this machine kind's reference
                    why = _moved(models[model], values.get(model), then) if model in models else None
                    if model in changed:
                        found.append(f"recipe {model!r} changed")
                    elif trained:
                        found.append(f"the training canary of {model} moved ({'; '.join(trained)})")
                    elif why is not None:
                        found.append(f"the {declared.reads} canary moved: {part} on {model} {why}")
            if found:
                reasons[cid] = list(dict.fromkeys(found))
        return reasons

    def equivalent(self, cid: str, digest: str | None) -> bool:
        """Whether code of :func:`code_digest` ``digest`` computes what the recording code computed for claim ``cid``:
        it is the recording code, or a confirmation (on any machine kind) saw its canaries reproduce the record."""
        return digest == self.code.get(cid) or any(c["code"].get(cid) == digest for c in self.confirmed)

    def confirmed_here(self, cid: str, digest: str, machine: str, versions: Mapping[str, str]) -> bool:
        """Whether code of ``digest`` was confirmed for ``cid`` on ``machine`` with these library versions."""
        return any(c["machine"] == machine and c["code"].get(cid) == digest and c["versions"] == libraries(versions)
                   for c in self.confirmed)  # fmt: skip

    def changed_recipes(self, profile: Profile) -> set[str]:
        """The recorded recipes whose data (:func:`recipe_data`) the profile no longer has."""
        return {n for n, h in self.recipes.items() if n not in profile.recipes or recipe_data(profile.recipes[n]) != h}

    def to_run(self, claims: Sequence[str], profile: Profile, machine: str,
               versions: Mapping[str, str]) -> list[str]:  # fmt: skip
        """Of ``claims``, those whose canaries must run to be judged on machine kind ``machine`` (:func:`machine_kind`)
        with library ``versions`` (torch, timm, numpy; the project's own version is not judged). The outcome of the
        others is fixed without running them, for a claim whose code is the recording code's (:func:`code_digest`)
        and whose recipes are the recorded ones:
        - on a kind with no reference for it, any move is the machine's (:meth:`machine_excused`);
        - on the kind of its reference (the record's, or :attr:`machines`') with that reference's versions, it
          reproduces the reference bit for bit (one torch thread): nothing moves.
        The same holds for code :attr:`confirmed` on that kind with these versions (on a kind without a reference:
        confirmed anywhere). A claim the record lacks is left to :meth:`moved`'s caller (stale without running)."""
        changed = self.changed_recipes(profile)
        if machine == self.machine:
            referenced, then = set(self.claims), libraries(self.provenance.get("versions", {}))
        else:
            own = self.machines.get(machine, {})
            referenced, then = set(own.get("claims", {})), libraries(own.get("provenance", {}).get("versions", {}))
        run = []
        for cid in claims:
            if cid not in self.claims:
                continue
            claim = get_claim(cid)
            partners = {p.partner for p in claim.parts if p.partner}
            reads = {model for models in self.claims[cid].values() for model in models} | partners
            digest = code_digest(claim, profile)
            if cid not in referenced:
                fixed = self.equivalent(cid, digest)
            else:
                recorded = digest == self.code.get(cid) and then == libraries(versions)
                fixed = recorded or self.confirmed_here(cid, digest, machine, versions)
            if reads & changed or not fixed:
                run.append(cid)
        return run

    def machine_excused(self, moved: Mapping[str, list[str]], profile: Profile, machine: str,
                        code: Mapping[str, str] | None = None) -> tuple[dict[str, list[str]], list[str]]:  # fmt: skip
        """``moved`` split on machine ``machine`` (a :func:`machine_kind`) into what stales and the claims whose move
        is taken as the machine's: on another kind than the record's, those whose code is the recording code's.
        ``code``: the :func:`code_digest` per claim of the code that ran the canaries (default: this code)."""
        if machine == self.machine:
            return dict(moved), []
        ran = code if code is not None else {c: code_digest(get_claim(c), profile) for c in moved if c != ALL}
        referenced = self.machines.get(machine, {}).get("claims", {})  # judged against that kind's own reference
        excused = [c for c in moved if c != ALL and c not in referenced and self.equivalent(c, ran.get(c))]
        other = f"(on {machine}, not the record's {self.machine}, and with other code than the record's)"
        kept = {c: [*r, other] if c != ALL and c not in referenced else list(r) for c, r in moved.items()
                if c not in excused}  # fmt: skip
        return kept, excused
