"""The sentence a generated block prints under numbers from a benchmark or the seed study: where they were measured.

:func:`stamp` reads a results file's stamp (``benchmarks/provenance.py``: commit, date, machine, the hash of the code
the benchmark exercises, the command) and compares the recorded code hash with the current tree's. The sentence is
a function of the results file and the tree only, so ``python docs/generate.py --check`` fails once the code under a
rendered benchmark changes, until the docs are regenerated and say that it changed: CI's stale check covers the
benchmarks. :func:`study_stamp` does the same for the seed study with its own fingerprints
(:meth:`~model_props.verdicts.study.SeedStudy.stale`).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"

__all__ = ["benchmark_provenance", "code_current", "entry_stamps", "stamp", "study_stamp"]


@functools.cache
def benchmark_provenance() -> Any:
    """``benchmarks/provenance.py``, loaded from its file (``benchmarks/`` is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("benchmark_provenance", ROOT / "benchmarks" / "provenance.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache  # one tree per process; every stamped block asks, and each walk parses the import closure
def code_current(code: str, script: str, runs: tuple[str, ...]) -> bool:
    """Whether a stamp's ``code`` is the current tree's for the benchmark ``script`` (a path under the repository)
    that starts ``runs``, hashed in the form it was recorded in (``benchmarks/provenance.py``: ``current``)."""
    return benchmark_provenance().current(code, ROOT / script, list(runs))


def _machine(machine: Mapping[str, Any]) -> str:
    """The machine in words: "AMD EPYC (AVX512), 2 cores" (the instruction set torch's kernels ran, where recorded;
    and its GPU), or "an unrecorded machine"."""
    if not machine.get("cpu"):
        return "an unrecorded machine"
    isa = f" ({machine['cpu_capability']})" if machine.get("cpu_capability") else ""
    gpu = f", {machine['gpu']}" if machine.get("gpu") else ""
    return f"{machine['cpu']}{isa}, {machine.get('cpu_count', '?')} cores{gpu}"


def _script(results_file: str) -> str:
    """The benchmark that writes a results file that names none: the longest ``benchmarks/*.py`` name its name
    starts with (``extra-seeds-pit-x.json``: ``extra_seeds.py``)."""
    stem = Path(results_file).stem.replace("-", "_")
    names = [p.stem for p in (ROOT / "benchmarks").glob("*.py") if stem.startswith(p.stem)]
    if not names:
        raise ValueError(f"no benchmark under benchmarks/ writes {results_file}")
    return f"benchmarks/{max(names, key=len)}.py"


def stamp(results_file: str, entry: str | None = None, args: str = "") -> str:
    """Where the numbers of ``benchmarks/results/<results_file>`` (of its ``entry``, e.g. run_times.json's
    ``"cold"``, where entries are measured apart) were measured, and whether the code they measure changed since.
    ``args``: the benchmark's arguments that re-measure a file that records no command."""
    return _stamp(results_file, entry, args, f"The `{entry}` entry was measured" if entry else "Measured")


def entry_stamps(results_file: str, entries: Sequence[tuple[str, str]]) -> str:
    """The stamps of the ``entries`` (name, ``args`` as for :func:`stamp`) the results file holds, one sentence for
    the entries stamped alike (measured by one command): "The `cold` and `warm` entries were measured ..."."""
    data = json.loads((RESULTS / results_file).read_text())
    alike: dict[str, list[str]] = {}
    for entry, args in entries:
        if entry in data:
            alike.setdefault(_stamp(results_file, entry, args, ""), []).append(f"`{entry}`")
    return " ".join(f"The {' and '.join(names)} {'entry was' if len(names) == 1 else 'entries were'} measured{rest}"
                    for rest, names in alike.items())  # fmt: skip


def _portable(command: str) -> str:
    """The recorded command as a reader runs it: the measuring machine's cache folder (``--cache PATH``, a new or
    empty one for a cold run) becomes ``NEW_FOLDER``."""
    return re.sub(r"--cache \S+", "--cache NEW_FOLDER", command)


def _stamp(results_file: str, entry: str | None, args: str, subject: str) -> str:
    """:func:`stamp`'s sentences after ``subject`` (what was measured)."""
    data = json.loads((RESULTS / results_file).read_text())
    item = data[entry] if entry else data
    recorded = item.get("provenance") or {}
    machine = recorded.get("machine") or (data.get("provenance") or {}).get("machine") or {}
    script = recorded.get("script") or _script(results_file)
    command = _portable(recorded.get("command") or " ".join(["python", script, *([args] if args else [])]))
    at = recorded.get("commit") or item.get("commit")
    on = recorded.get("date") or item.get("date")
    sentence = (f"{subject} {f'at commit `{at}`' if at else 'at an unrecorded commit'} "
                f"{f'on {on}' if on else 'on an unrecorded date'} on {_machine(machine)} (`{command}`).")  # fmt: skip
    if not recorded.get("code"):
        return sentence + (" It predates code stamps, so whether the code it measures changed since is unknown; "
                           f"re-measure with `{command}`.")  # fmt: skip
    if not code_current(recorded["code"], script, tuple(recorded.get("runs", []))):
        return sentence + f" The code it measures changed since; re-measure with `{command}`."
    return sentence


@functools.cache  # two blocks print it; its check reads every claim's fingerprints
def study_stamp(profile: str = "smoke") -> str:
    """Where the profile's seed study was measured, its entries added later, and whether every claim's entry still
    matches the profile's data (its fingerprints, :meth:`~model_props.verdicts.study.SeedStudy.stale`; the code is
    judged by the study's canaries when a run reads it)."""
    from model_props.claims import list_claims
    from model_props.training.profiles import load_profile
    from model_props.verdicts.study import load_study, regenerate

    study = load_study(profile)
    if study is None:
        return f"No seed study of profile `{profile}`: run `{regenerate(profile)}`."
    claims = list_claims()
    stale = [c.id for c in claims if study.stale(c, load_profile(profile))]
    added = sorted({(e["added"]["date"], _machine(e["added"]["provenance"]["machine"]))
                    for e in study.claims.values() if "added" in e})  # fmt: skip
    count = sum("added" in e for e in study.claims.values())
    later = (f"; {count} claims' entries added later (`model-props seed-study --add`) on "
             + ", ".join(f"{d} on {m}" for d, m in added)) if added else ""  # fmt: skip
    source = Path(study.source).relative_to(ROOT).as_posix() if study.source.startswith(str(ROOT)) else study.source
    sentence = (f"From the seed study `{source}` (seeds {list(study.seeds)}), measured on "
                f"{study.date or 'an unrecorded date'} on {_machine(study.provenance.get('machine', {}))}"
                f"{later}.")  # fmt: skip
    if stale:
        return sentence + (f" Its entries for {len(stale)} of {len(claims)} claims no longer match the "
                           f"profile ({', '.join(stale)}); regenerate with `{regenerate(profile)}`.")  # fmt: skip
    return sentence + (f" Its rules and measurement settings match the profile for all {len(claims)} claims; the code "
                       "is judged by the study's canaries when a run "
                       "reads it.")  # fmt: skip
