"""The documentation stands on its own and tells the truth: every generated block of the README and the docs pages
equals what ``docs/generate.py`` makes of the data; every reference from the code to a docs page resolves to a page
and a section that exist; no file points outside the repository; the README stays short; every page is in the
site's navigation."""

from __future__ import annotations

import functools
import importlib.util
import re
import subprocess
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
REFERENCE = re.compile(r"docs/([a-z0-9-]+)\.md(?:#([a-z0-9-]+))?")
# data/deadleaves.py is in the training code's import closure, so editing its docstring would re-key every trained
# model and stale the seed study: it keeps the design section's former name, resolved here.
ALIASES = {"design Sec. 5": ("design", "data")}


def _generator():
    spec = importlib.util.spec_from_file_location("generate", DOCS / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()
BLOCKS = [(path, name) for path in GENERATOR.documents() for name in re.findall(r"<!-- generated: ([\w-]+) -->",
                                                                                 path.read_text())]  # fmt: skip


@functools.cache
def _made(block: str) -> str:
    """What the generator makes of block ``block``, once per run: a block in two documents (the reproduction
    calibration's 50 trials in the README and docs/verdicts.md) is made once."""
    return GENERATOR.BLOCKS[block]()


@pytest.mark.parametrize(("path", "block"), BLOCKS, ids=[f"{p.name}-{b}" for p, b in BLOCKS])
def test_a_generated_block_is_what_the_generator_makes_of_the_data(path, block):
    found = re.search(rf"<!-- generated: {block} -->\n(.*?)\n<!-- end: {block} -->", path.read_text(), re.S)
    assert found, f"{path.name}: block {block!r} is not closed"
    assert found.group(1) == _made(block), f"stale: run python docs/generate.py ({path.name}: {block})"


def test_every_generator_has_a_block():
    assert {b for _, b in BLOCKS} == set(GENERATOR.BLOCKS)


def _slug(heading: str) -> str:
    """Python-Markdown's default heading id (what mkdocs links to)."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: str) -> set[str]:
    return {_slug(h) for h in re.findall(r"^#+ (.+)$", (DOCS / f"{page}.md").read_text(), re.M)}


def _tracked() -> list[Path]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return [ROOT / n for n in names if n.endswith((".py", ".md", ".toml", ".yml", ".yaml", ".mjs", ".json", ".txt"))]


def test_every_reference_from_the_code_to_a_docs_page_resolves():
    found = []
    for path in _tracked():
        text = path.read_text()
        refs = [(m.group(1), m.group(2)) for m in REFERENCE.finditer(text)]
        refs += [ALIASES[a] for a in ALIASES if a in text]
        found += [(path.relative_to(ROOT).as_posix(), page, anchor) for page, anchor in refs]
    assert len(found) >= 30  # the code cites the design, measurement and paper pages throughout
    broken = [f"{where}: docs/{page}.md" + (f"#{anchor}" if anchor else "") for where, page, anchor in found
              if not (DOCS / f"{page}.md").is_file() or (anchor and anchor not in _anchors(page))]  # fmt: skip
    assert not broken, broken
    old = [f"{p.relative_to(ROOT)}: {m}" for p in _tracked() for m in re.findall(r"design Sec\. \d+", p.read_text())
           if m not in ALIASES]  # fmt: skip
    assert not old, f"a design section cited by its old number: {old}"


def test_no_file_refers_to_anything_outside_the_repository():
    outside = ["../" + "shared", "shared" + "/DESIGN", "DESIGN" + ".md", "PAPER" + ".md"]
    hits = [f"{p.relative_to(ROOT)}: {o}" for p in _tracked() for o in outside if o in p.read_text()]
    assert not hits, hits


def test_the_readme_is_short_and_links_into_the_site():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200, len(readme.splitlines())
    for page in ("getting-started", "verdicts", "your-model", "gate", "design"):
        assert f"docs/{page}.md" in readme


def test_every_page_is_in_the_sites_navigation():
    nav = set(re.findall(r":\s*([a-z0-9-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))
    assert nav == {p.name for p in DOCS.glob("*.md")}


@pytest.fixture(scope="module")
def claim_pages():
    """The claim pages as the generator makes them (path -> text)."""
    return GENERATOR.claim_pages.pages()


def test_there_is_one_current_page_per_claim_and_none_other(claim_pages):
    from model_props.claims import list_claims

    assert sorted(p.name for p in claim_pages) == sorted(f"{c.id}.md" for c in list_claims())
    differ = GENERATOR.claim_pages.differences(claim_pages)
    assert not differ, f"run python docs/generate.py: {[f'{p.name} ({why})' for p, why in differ]}"


def test_the_check_names_a_changed_a_missing_and_an_orphaned_page(claim_pages, tmp_path):
    fresh = {tmp_path / p.name: text for p, text in claim_pages.items()}
    for path, text in fresh.items():
        path.write_text(text)
    assert GENERATOR.claim_pages.differences(fresh, tmp_path) == []
    changed, missing = sorted(fresh)[:2]
    changed.write_text(changed.read_text().replace("| supported |", "| contradicted |", 1) + "\n")
    missing.unlink()
    (orphan := tmp_path / "park2022.withdrawn-claim.md").write_text("# 31. park2022.withdrawn-claim\n")
    found = GENERATOR.claim_pages.differences(fresh, tmp_path)
    assert sorted(found) == sorted([(changed, "stale"), (missing, "missing"), (orphan, "orphaned")])


def test_the_sites_navigation_lists_the_catalogue_then_every_claim_page_in_order():
    from model_props.claims import list_claims

    nav = re.findall(r"^\s+- (.+): (claims(?:/[\w.-]+)?\.md)$", (ROOT / "mkdocs.yml").read_text(), re.M)
    expected = [("The claim catalogue", "claims.md")]
    expected += [(f'"{c.number}. {c.id}"', f"claims/{c.id}.md") for c in list_claims()]
    assert nav == expected
