"""The layers are declared as import contracts (``[tool.importlinter]`` in pyproject.toml)
and checked by ``lint-imports``: nothing generic imports an extension, a host or the testing
kit; the testing kit imports no extension; no host imports the testing kit or an extension's
kit; an extension's core imports no host; no extension imports another; no import cycle.

The checker is tested too: a contract that cannot fail proves nothing, so a planted forbidden
import and a planted cycle in a copy of the package must each break their contract."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"


def _lint_imports() -> str:
    """The ``lint-imports`` beside this interpreter (the venv's), else the one on PATH."""
    beside = Path(sys.executable).with_name("lint-imports")
    if beside.exists():
        return str(beside)
    found = shutil.which("lint-imports")
    if found is None:
        pytest.fail("lint-imports is not installed: install the package's test extra")
    return found


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on ``root``'s pyproject.toml and ``root``'s own copy of the package."""
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "200"}
    return subprocess.run(
        [_lint_imports(), "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def _contract_names() -> list[str]:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    return [c["name"] for c in config["tool"]["importlinter"]["contracts"]]


def _verdicts(stdout: str) -> tuple[int, int]:
    """(kept, broken) from lint-imports' summary line."""
    summary = re.search(r"Contracts: (\d+) kept, (\d+) broken\.", stdout)
    assert summary is not None, stdout
    return int(summary.group(1)), int(summary.group(2))


def _is_broken(stdout: str, contract: str) -> bool:
    """Whether ``contract`` is listed BROKEN (names may wrap at the terminal width)."""
    flat = " ".join(stdout.split())
    return f"{contract} BROKEN" in flat


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The package and its contracts, copied where a test may plant an import."""
    shutil.copytree(
        ROOT / "pictx_fsm",
        tmp_path / "pictx_fsm",
        ignore=shutil.ignore_patterns("*.pyc", "__pycache__"),
    )
    shutil.copy(PYPROJECT, tmp_path / "pyproject.toml")
    return tmp_path


def _plant(root: Path, module: str, line: str) -> None:
    path = root / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")


def test_every_declared_layer_holds() -> None:
    # Given the package as it is in this checkout
    contracts = _contract_names()
    # When its import contracts are checked
    result = _lint(ROOT)
    # Then every declared contract is kept and none is broken
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr
    assert _verdicts(result.stdout) == (len(contracts), 0)
    for name in contracts:
        assert not _is_broken(result.stdout, name), name


def test_pis_session_format_importing_an_extension_breaks_the_generic_layer(copy: Path) -> None:
    # Given Pi's session format importing pi-context
    _plant(copy, "pictx_fsm.session.problems", "import pictx_fsm.extensions.pi_context")
    # When the contracts are checked
    result = _lint(copy)
    # Then the generic-layer contract is broken, naming the planted import
    assert result.returncode == 1, result.stdout
    assert _is_broken(
        result.stdout, "Nothing generic imports an extension, a host, the testing kit or the CLI"
    )
    assert "pictx_fsm.session.problems -> pictx_fsm.extensions.pi_context" in result.stdout
    assert _verdicts(result.stdout)[1] >= 1


def test_a_host_importing_an_extensions_kit_breaks_the_host_layer(copy: Path) -> None:
    # Given the model host importing pi-context's verification kit (which runs on hosts)
    _plant(copy, "pictx_fsm.hosts.model.replace", "import pictx_fsm.extensions.pi_context.kit.kit")
    # When the contracts are checked
    result = _lint(copy)
    # Then the host contract is broken: a kit's upward imports are no licence to import it back
    assert result.returncode == 1, result.stdout
    assert _is_broken(
        result.stdout,
        "No host imports the testing kit, an extension's verification kit or the CLI",
    )


def test_a_planted_cycle_breaks_the_acyclic_contract(copy: Path) -> None:
    # Given the machines importing the diagrams, which import the machines
    _plant(copy, "pictx_fsm.machines.spec", "import pictx_fsm.diagrams.ir")
    # When the contracts are checked
    result = _lint(copy)
    # Then the acyclic contract is broken and names the two parts of the cycle
    assert result.returncode == 1, result.stdout
    assert _is_broken(result.stdout, "No import cycle between the package's parts")
    assert ".machines -> .diagrams" in result.stdout or ".diagrams -> .machines" in result.stdout
    assert _verdicts(result.stdout) == (len(_contract_names()) - 1, 1)
