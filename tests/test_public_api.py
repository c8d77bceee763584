"""The public surface (issue 9, item 4): the root exports what an embedder needs, every
package declares ``__all__``, and every declared name exists."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import sys
from pathlib import Path

import pytest

import pictx_fsm

PACKAGES = sorted(
    name
    for _, name, is_package in pkgutil.walk_packages(pictx_fsm.__path__, "pictx_fsm.")
    if is_package
)
ROOT = Path(__file__).resolve().parents[1]
EMBEDDING = ROOT / "docs" / "embedding.md"


def test_the_root_exports_exactly_its_declared_names() -> None:
    # Given the root package's lazily imported names
    declared = set(pictx_fsm.__all__)
    # Then each resolves, and nothing else is offered
    assert declared == {*pictx_fsm._PUBLIC, "__version__"}
    for name in declared:
        assert getattr(pictx_fsm, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'memory'"):
        pictx_fsm.memory  # noqa: B018


def _names_the_docs_import_from_the_root() -> set[str]:
    from test_docs import python_blocks

    names: set[str] = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in python_blocks(page.read_text(encoding="utf-8")):
            try:
                tree = ast.parse(block)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module == "pictx_fsm":
                    names.update(alias.name for alias in node.names)
    return names


def test_the_root_exports_what_the_docs_use_and_nothing_else() -> None:
    # Given every name the README and docs/ import from the package root
    used = _names_the_docs_import_from_the_root()
    # Then the root exports exactly those (issue 23, item 7: a surface a user can learn)
    assert set(pictx_fsm.__all__) - {"__version__"} == used


def test_a_name_the_root_no_longer_exports_imports_from_its_home_with_a_warning() -> None:
    # Given a name the 0.1 root exported beyond what the docs use
    from pictx_fsm.host.effects import Notify

    # When it is read from the root / Then it is the same object, and the warning names its home
    with pytest.warns(DeprecationWarning, match=r"pictx_fsm\.Notify moved to pictx_fsm\.host"):
        assert pictx_fsm.Notify is Notify  # type: ignore[attr-defined]


MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(pictx_fsm.__path__, "pictx_fsm.")
    if not name.endswith("__main__")
)


@pytest.mark.parametrize("module", MODULES)
def test_every_module_declares_all_and_every_declared_name_exists(module: str) -> None:
    # Given any module of the package (issue 23, item 7: a surface a user can learn)
    imported = importlib.import_module(module)
    declared = getattr(imported, "__all__", None)
    # Then it says which of its names are public, and each of them is there
    assert isinstance(declared, list | tuple), f"{module} has no __all__"
    assert [name for name in declared if not hasattr(imported, name)] == []


@pytest.mark.parametrize("package", ["pictx_fsm", *PACKAGES])
def test_every_package_declares_all_and_every_declared_name_exists(package: str) -> None:
    module = importlib.import_module(package)
    declared = getattr(module, "__all__", None)
    assert isinstance(declared, list | tuple), f"{package} has no __all__"
    missing = [name for name in declared if not hasattr(module, name)]
    assert missing == []


def test_importing_the_root_loads_no_lifecycle_until_a_name_is_used() -> None:
    # Given a fresh interpreter state for the root only (a CLI must be able to report a
    # broken model instead of failing on its own import)
    code = (
        "import sys, pictx_fsm; print('pictx_fsm.extensions.pi_context.lifecycle' in sys.modules)"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_embedding_guide_imports_from_the_root_package_only() -> None:
    # Given every python block of docs/embedding.md
    text = EMBEDDING.read_text(encoding="utf-8")
    from test_docs import python_blocks

    modules = set()
    for block in python_blocks(text):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom):
                modules.add(node.module or "")
            elif isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
    # Then the only pictx_fsm module it imports is the root
    assert "pictx_fsm" in modules
    assert {m for m in modules if m.startswith("pictx_fsm")} == {"pictx_fsm"}


def test_the_hook_list_lives_in_one_place() -> None:
    # Given the one list of host hooks
    from pictx_fsm.extensions.pi_context.adapter import LIFECYCLE_HOOKS
    from pictx_fsm.extensions.pi_context.lifecycle import HOOK_EVENTS
    from pictx_fsm.host.events import HOOK_EVENT_TYPES, Command, ToolCall
    from pictx_fsm.hosts.model import HOST_HOOKS

    hooks = pictx_fsm.HOOKS
    # Then it is the hook events' own names, and every other list is derived from it
    assert hooks == tuple(t.HOOK for t in HOOK_EVENT_TYPES if t not in (ToolCall, Command))
    assert len(set(hooks)) == len(hooks) == 13
    assert set(HOOK_EVENTS) == set(hooks)
    assert LIFECYCLE_HOOKS == HOST_HOOKS == frozenset(hooks)
