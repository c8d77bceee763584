"""The pydantic-ai page keeps its promise: from ``pip install`` to an agent with durable reset
windows in under 30 lines (the blocks themselves run offline in ``tests/test_docs.py``), and
the README names both hosts."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "pydantic-ai.md"
SECTION = "## From `pip install` to durable reset windows"


def _blocks(section: str) -> list[tuple[str, str]]:
    return re.findall(r"^```(\w+)\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)


def test_the_page_takes_a_user_from_pip_install_to_an_agent_in_under_30_lines() -> None:
    # Given the page's first section
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index(SECTION) : text.index("\n## ", text.index(SECTION) + 1)]
    [(shell, install), (python, example)] = _blocks(section)
    # Then it installs the extra and builds the agent with the capability on a session file
    assert (shell, install.strip()) == ("sh", "pip install 'pictx-fsm[pydantic-ai]'")
    assert python == "python"
    assert "PiSession.create(path" in example and "capabilities=[PiContext(session" in example
    # And both blocks together are under 30 lines
    assert len(install.splitlines()) + len(example.splitlines()) < 30


def test_the_readme_names_both_hosts() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "**Pi coding agent**" in readme
    assert "pydantic-ai" in readme and "docs/pydantic-ai.md" in readme
