"""The pydantic-ai page keeps its promises: from ``pip install`` to an agent with durable reset
windows in under 30 lines, the settings a pydantic-ai user sets in one table, the tested
pydantic-ai versions named as the pin allows them (the blocks themselves run offline in
``tests/test_docs.py``), and the README names both hosts."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "pydantic-ai.md"
SECTION = "## From `pip install` to durable reset windows"


def _blocks(section: str) -> list[tuple[str, str]]:
    return re.findall(r"^```(\w+)\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)


def _section(title: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(title)
    return text[start : text.index("\n## ", start + 1)]


def test_the_page_takes_a_user_from_pip_install_to_an_agent_in_under_30_lines() -> None:
    # Given the page's first section, its first two blocks
    [(shell, install), (python, example), *_] = _blocks(_section(SECTION))
    # Then it installs the extra and builds the agent with the capability on a session file
    assert (shell, install.strip()) == ("sh", "pip install 'pictx-fsm[pydantic-ai]'")
    assert python == "python"
    assert "PiSession.create(path" in example and "capabilities=[PiContext(session" in example
    # And both blocks together are under 30 lines
    assert len(install.splitlines()) + len(example.splitlines()) < 30


def test_the_settings_table_has_each_setting_where_it_is_given() -> None:
    table = _section("## Settings")
    for setting, where in [
        ("window", "PiContext(context_window=…)"),
        ("reserve", "LifecycleSettings(reserve_tokens=…)"),
        ("automatic resets", "LifecycleSettings(automatic_reset=…)"),
        ("notes home", "LifecycleSettings(notes_home=…)"),
        ("profile", "LifecycleSettings(profile=…)"),
    ]:
        assert re.search(rf"^\| {setting} \| `{re.escape(where)}` \|", table, re.MULTILINE)
    # And the notes home says it is the one Pi reads
    assert "`$PI_NOTES_HOME`, else `~/.agents/notes`" in table and "a Pi agent" in table


def test_the_page_names_the_tested_pydantic_ai_versions_as_the_pin_allows() -> None:
    # Given the pydantic-ai extra's pin
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    [pin] = extras["pydantic-ai"]
    assert pin in extras["test"]  # the tests run on what users install
    oldest = re.fullmatch(r"pydantic-ai-slim>=([\d.]+),<(\d+)", pin)
    assert oldest is not None
    # Then the page names its lower bound as the oldest tested, and a newest one below the cap
    tested = re.search(
        r"Tested with pydantic-ai-slim ([\d.]+) \(the oldest[^)]*\) and ([\d.]+)", PAGE.read_text()
    )
    assert tested is not None
    assert tested.group(1).removesuffix(".0") == oldest.group(1).removesuffix(".0")
    assert int(tested.group(2).split(".")[0]) < int(oldest.group(2))
    # And CI installs that oldest one in a venv of its own
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "pydantic-ai-slim==$oldest" in ci and "tests/test_pydantic_ai_" in ci


def test_the_readme_names_both_hosts() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "**Pi coding agent**" in readme
    assert "pydantic-ai" in readme and "docs/pydantic-ai.md" in readme
