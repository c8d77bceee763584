"""The documentation's examples run: every fenced ``python`` block of a ``docs/*.md`` page is
executed, in order, as one program per page (so a guide cannot drift from the code)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def python_blocks(text: str) -> list[str]:
    """The fenced ``python`` blocks of a Markdown text, in order."""
    return [match.group(1) for match in FENCE.finditer(text)]


README = DOCS.parent / "README.md"
PAGES = [
    *sorted(p for p in DOCS.glob("*.md") if python_blocks(p.read_text(encoding="utf-8"))),
    README,
]


def test_the_embedding_guide_has_runnable_examples() -> None:
    assert DOCS / "embedding.md" in PAGES


def test_python_blocks_are_found_in_order() -> None:
    text = "a\n```python\nx = 1\n```\nb\n```sh\nno\n```\n```python\ny = x\n```\n"
    assert python_blocks(text) == ["x = 1\n", "y = x\n"]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_python_block_of_the_page_runs(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the page's blocks, run from the repository root as a reader would
    monkeypatch.chdir(DOCS.parent)
    namespace: dict[str, object] = {"__name__": f"docs.{page.stem}"}
    for number, block in enumerate(python_blocks(page.read_text(encoding="utf-8")), start=1):
        code = compile(block, f"{page.name} block {number}", "exec")
        # When each runs, Then none raises (assertions inside the blocks are the checks)
        exec(code, namespace)
