"""Import paths moved by the 0.2 layout keep working for one release, with a warning that
names the new path, and CHANGELOG.md lists every one of them."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from pictx_fsm._moved import MOVED, MOVED_NAMES, new_name

CHANGELOG = Path(__file__).resolve().parents[1] / "CHANGELOG.md"


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_moved_path_is_listed_in_the_changelog(old: str) -> None:
    # Given the changelog / Then it names the old path beside the new one in one table row
    assert f"| `{old}` | `{MOVED[old]}` |" in CHANGELOG.read_text(encoding="utf-8")


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_imports_the_module_at_its_new_place_with_a_deprecation_warning(
    old: str,
) -> None:
    # Given a fresh interpreter (the aliases are made once per process)
    parent = old.rsplit(".", 1)[0]
    code = (
        "import importlib, warnings\n"
        "warnings.simplefilter('ignore', DeprecationWarning)\n"
        f"importlib.import_module({parent!r})\n"
        "warnings.simplefilter('error', DeprecationWarning)\n"
        f"new = importlib.import_module({MOVED[old]!r})\n"
        "try:\n"
        f"    importlib.import_module({old!r})\n"
        "except DeprecationWarning as warning:\n"
        "    print(warning)\n"
        "warnings.simplefilter('ignore', DeprecationWarning)\n"
        f"print(importlib.import_module({old!r}) is new)\n"
    )
    # When the old path is imported
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    # Then it warns naming the new path, and it is the same module object
    assert result.returncode == 0, result.stderr
    warning, same = result.stdout.splitlines()
    assert f"{old} moved to {MOVED[old]}" in warning
    assert same == "True"


def test_a_submodule_of_a_moved_package_is_the_same_module_under_both_names() -> None:
    # Given the moved lifecycle package / When a private submodule is imported by its old name
    with pytest.warns(DeprecationWarning):
        old = importlib.import_module("pictx_fsm.lifecycle._step")
    # Then it is not executed a second time: it is the module at the new place
    assert old is importlib.import_module("pictx_fsm.extensions.pi_context.lifecycle._step")
    assert new_name("pictx_fsm.lifecycle._step") == (
        "pictx_fsm.extensions.pi_context.lifecycle._step"
    )


def test_a_name_that_did_not_move_is_not_aliased() -> None:
    assert new_name("pictx_fsm.session.tree") is None
    assert new_name("pictx_fsm.hostsx") is None


def test_a_name_a_package_stopped_exporting_still_imports_with_a_deprecation_warning() -> None:
    # Given pi-context's adapter, once exported by the model host
    from pictx_fsm.extensions.pi_context.adapter import LifecycleExtension

    # When it is imported from its old place / Then it warns and is the same class
    with pytest.warns(DeprecationWarning, match="moved to pictx_fsm.extensions.pi_context"):
        from pictx_fsm.hosts.model import LifecycleExtension as old
    assert old is LifecycleExtension
    with pytest.raises(ImportError):
        from pictx_fsm.hosts.model import NoSuchName  # noqa: F401


@pytest.mark.parametrize(("module", "name"), sorted(MOVED_NAMES))
def test_every_name_a_module_stopped_exporting_still_resolves_with_a_deprecation_warning(
    module: str, name: str
) -> None:
    # Given a name that moved out of a module that still exists
    home = importlib.import_module(MOVED_NAMES[module, name])
    old = importlib.import_module(module)
    # When it is read from its old module / Then it is the same object; a module that no
    # longer binds it (some still import it for their own use) warns naming the new home
    if name in vars(old):
        value = getattr(old, name)
    else:
        with pytest.warns(DeprecationWarning, match=f"moved to {MOVED_NAMES[module, name]}"):
            value = getattr(old, name)
    assert value is getattr(home, name)


@pytest.mark.parametrize(("module", "name"), sorted(MOVED_NAMES))
def test_every_name_a_module_stopped_exporting_is_listed_with_its_home(
    module: str, name: str
) -> None:
    # Given the changelog's table of moved names
    text = CHANGELOG.read_text(encoding="utf-8")
    home = MOVED_NAMES[(module, name)]
    # Then the name stands in the row of its old module and its home
    rows = [
        line
        for line in text.splitlines()
        if line.startswith(f"| `{module}` |") and line.endswith(f"| `{home}` |")
    ]
    assert any(f"`{name}`" in row for row in rows)
