"""The README's tables come from data: every generated block equals what ``benchmarks/readme_tables.py`` makes
of the claim catalogue, the committed seed study and the coverage simulation."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("readme_tables", ROOT / "benchmarks" / "readme_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _generator()


@pytest.mark.parametrize("block", sorted(GENERATOR.BLOCKS))
def test_readme_block_is_generated_from_data(block):
    readme = (ROOT / "README.md").read_text()
    found = re.search(rf"<!-- generated: {block} -->\n(.*?)\n<!-- end: {block} -->", readme, re.S)
    assert found, f"README.md has no generated block {block!r}"
    assert found.group(1) == GENERATOR.BLOCKS[block](), f"stale: run python benchmarks/readme_tables.py ({block})"
