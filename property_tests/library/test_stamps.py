"""Every generated benchmark number is stamped: ``docs/stamps.py`` names the commit, the date, the machine and the
command of a results file, and says when the code it measures changed since or when the file predates code stamps;
the code hash (``benchmarks/provenance.py``) moves with any module of the benchmark's import closure and with no
module outside it. No test here needs a trained model."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COVERAGE = ROOT / "benchmarks" / "coverage.py"
MACHINE = {"cpu": "Intel(R) Xeon(R) Processor", "cpu_count": 2, "torch_threads": 2, "device": "cpu"}


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STAMPS = _load("stamps", ROOT / "docs" / "stamps.py")
PROVENANCE = _load("benchmark_provenance", ROOT / "benchmarks" / "provenance.py")


@pytest.fixture
def results(tmp_path, monkeypatch):
    """Writes a results file into a scratch results folder that :func:`stamp` reads."""
    monkeypatch.setattr(STAMPS, "RESULTS", tmp_path)

    def write(name: str, data: dict) -> str:
        (tmp_path / name).write_text(json.dumps(data))
        return name

    return write


def _stamp(code: str | None) -> dict:
    recorded = {"commit": "abc1234", "date": "2026-11-28", "machine": MACHINE, "versions": {},
                "script": "benchmarks/coverage.py", "runs": [], "command": "python benchmarks/coverage.py"}  # fmt: skip
    return recorded | ({"code": code} if code else {})


def test_a_stamp_names_the_commit_the_date_the_machine_and_the_command(results):
    name = results("coverage.json", {"rows": [], "provenance": _stamp(PROVENANCE.code_hash(COVERAGE))})
    assert STAMPS.stamp(name) == ("Measured at commit `abc1234` on 2026-11-28 on Intel(R) Xeon(R) Processor, 2 cores "
                                  "(`python benchmarks/coverage.py`).")  # fmt: skip


def test_an_entry_measured_apart_is_stamped_with_its_own_stamp(results):
    other = _stamp(PROVENANCE.code_hash(COVERAGE)) | {"commit": "def5678", "date": "2026-11-20"}
    name = results("coverage.json", {"cold": {"provenance": other}, "provenance": _stamp(None)})
    assert STAMPS.stamp(name, "cold").startswith("The `cold` entry was measured at commit `def5678` on 2026-11-20 ")


def test_a_file_whose_code_differs_from_the_tree_says_the_code_changed_since(results):
    name = results("coverage.json", {"rows": [], "provenance": _stamp("0" * 16)})
    assert STAMPS.stamp(name).endswith(
        "The code it measures changed since; re-measure with `python benchmarks/coverage.py`."
    )


def test_a_file_without_a_stamp_says_it_predates_stamps(results):
    name = results("extra-seeds-pit-some-claim.json", {"rows": []})
    assert STAMPS.stamp(name) == (
        "Measured at an unrecorded commit on an unrecorded date on an unrecorded machine "
        "(`python benchmarks/extra_seeds.py`). It predates code stamps, so whether the code it measures changed since "
        "is unknown; re-measure with `python benchmarks/extra_seeds.py`."
    )


@pytest.fixture
def package(tmp_path) -> Path:
    """A copy of the package to edit (the real one holds frozen files)."""
    return Path(shutil.copytree(ROOT / "model_props", tmp_path / "model_props", ignore=shutil.ignore_patterns("__pycache__")))  # fmt: skip


def test_the_code_hash_moves_with_what_a_module_in_the_closure_runs_and_with_nothing_else(package):
    before = PROVENANCE.code_hash(COVERAGE, root=package)
    assert before == PROVENANCE.code_hash(COVERAGE) and before.startswith("ast:")  # paths relative to the package
    with (package / "gate" / "__init__.py").open("a") as fh:  # outside coverage.py's closure
        fh.write("\nEDITED = 1\n")
    assert PROVENANCE.code_hash(COVERAGE, root=package) == before
    imported = package / "verdicts" / "coverage.py"  # what coverage.py imports
    as_bytes = PROVENANCE.code_hash(COVERAGE, root=package, form="bytes")
    imported.write_text(imported.read_text().replace('"""', '"""Reworded. ', 1) + "\n# a comment\n")
    assert PROVENANCE.code_hash(COVERAGE, root=package) == before  # a docstring and a comment run nothing
    assert PROVENANCE.current(before, COVERAGE, root=package)
    assert not PROVENANCE.current(as_bytes, COVERAGE, root=package)  # a bytes stamp is judged as it was made
    with imported.open("a") as fh:
        fh.write("\nEDITED = 1\n")
    assert PROVENANCE.code_hash(COVERAGE, root=package) != before


def test_restamp_rewrites_a_current_bytes_stamp_in_the_ast_form_and_leaves_a_stale_one(tmp_path):
    folder, quickstart = tmp_path / "results", tmp_path / "quickstart-output.txt"
    folder.mkdir()
    as_bytes = PROVENANCE.code_hash(COVERAGE, form="bytes")
    data = {"provenance": _stamp(as_bytes), "cold": {"seconds": 1.0, "provenance": _stamp("0" * 16)}}
    (folder / "coverage.json").write_text(json.dumps(data, indent=1) + "\n")
    quickstart_now = PROVENANCE.code_hash(ROOT / "benchmarks" / "quickstart.py", PROVENANCE.PYTEST_RUNS, form="bytes")
    quickstart.write_text(f"# title\n## run: default | cache: warm | code: {quickstart_now}\nline\n")
    done = PROVENANCE.restamp(folder, quickstart)
    assert done == ["coverage.json", f"quickstart-output.txt ({quickstart_now})"]
    again = json.loads((folder / "coverage.json").read_text())
    assert (
        again["provenance"]["code"] == PROVENANCE.code_hash(COVERAGE)
        and again["cold"]["provenance"]["code"] == "0" * 16
    )
    assert (folder / "coverage.json").read_text() == json.dumps(data, indent=1).replace(
        as_bytes, again["provenance"]["code"]
    ) + "\n"
    assert quickstart.read_text().endswith(
        f"code: {PROVENANCE.code_hash(ROOT / 'benchmarks' / 'quickstart.py', PROVENANCE.PYTEST_RUNS)}\nline\n"
    )
    assert PROVENANCE.restamp(folder, quickstart) == []  # nothing left in the bytes form that is current


def test_a_benchmark_exercises_the_modules_of_the_benchmarks_it_imports():
    gpu, run_times = (PROVENANCE.script_modules(ROOT / "benchmarks" / f"{n}.py") for n in ("gpu", "run_times"))
    assert run_times <= gpu and "model_props.training.parallel" in run_times  # imported inside a function


def test_the_study_stamp_names_its_date_machine_and_whether_its_data_matches():
    from model_props.verdicts.study import load_study

    study = load_study("smoke")
    assert study is not None
    said = STAMPS.study_stamp("smoke")
    assert f"measured on {study.date} on {study.provenance['machine']['cpu']}" in said
    assert ("measurement settings match the profile" in said) != ("no longer match" in said)
    assert "judged by the study's canaries" in said or "no longer match" in said


def _gen_site(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "docs"))  # gen_site imports stamps as the docs generator does
    return importlib.import_module("gen_site")


def test_a_quickstart_output_says_when_the_code_it_shows_changed(monkeypatch, tmp_path):
    gen_site = _gen_site(monkeypatch)
    quickstart = ROOT / "benchmarks" / "quickstart.py"
    now, as_bytes = (PROVENANCE.code_hash(quickstart, PROVENANCE.PYTEST_RUNS, form=f) for f in ("ast", "bytes"))
    header = "## run: default | command: pytest | note: n | commit: abc | date: d | machine: m | cache: warm"
    for code, says in [(f" | code: {now}", ""), (f" | code: {as_bytes}", ""),
                       (" | code: 0123456789abcdef", "The code this output shows changed"),
                       (" | code: ast:0123456789abcdef", "The code this output shows changed"),
                       ("", "This output predates code stamps")]:  # fmt: skip
        (tmp_path / "out.txt").write_text(f"# title\n{header}{code}\nline\n")
        changed = gen_site.runs(tmp_path / "out.txt")["default"].changed()
        assert changed.strip().startswith(says) and (says or not changed), changed
        assert not says or "re-capture with `python benchmarks/quickstart.py`" in changed


def test_a_wide_terminal_table_is_split_into_tables_that_fit_with_every_cell(monkeypatch):
    gen_site = _gen_site(monkeypatch)
    cells = [[f"claim-{r}"] + [f"c{r}{m}" * (1 + (r + m) % 4) for m in range(5)] for r in range(6)]
    cells.insert(0, ["claim", "alternet", "pit", "resnet", "swin", "vit"])
    widths = [max(len(row[i]) for row in cells) for i in range(6)]
    lines = ["  ".join(f"{c:{w}s}" for c, w in zip(row, widths)).rstrip() for row in cells]
    parts = gen_site.split_columns(lines, width=40)
    assert len(parts) > 1 and all(len(line) <= 40 for part in parts for line in part)
    for r, row in enumerate(cells):  # every part starts with the row's first cell; together they hold every cell
        assert [part[r].split()[0] for part in parts] == [row[0]] * len(parts)
        assert [c for part in parts for c in part[r].split()[1:]] == row[1:]


def test_a_long_failure_line_wraps_under_its_prefix_and_keeps_every_word(monkeypatch):
    gen_site = _gen_site(monkeypatch)
    line = "E           [accuracy] inconclusive: " + " ".join(f"word{i}" for i in range(60))
    wrapped = gen_site.wrapped(line, width=80)
    assert len(wrapped) > 1 and all(len(part) <= 80 for part in wrapped)
    assert all(part.startswith(" " * 12 + "↪ ") for part in wrapped[1:])
    assert " ".join(part.replace("↪", "").strip() for part in wrapped).split() == line.split()
