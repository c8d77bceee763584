"""Symbolic checks of the pure decision functions with CrossHair (issue 4, item 5).

The functions that decide — tail classification, window-id minting, thresholds and margin
validation, overflow classification, the boundary composer, usage arithmetic — carry PEP 316
contracts in their docstrings (``pre:`` / ``post:`` / ``raises:``). CrossHair explores each
symbolically within a bounded time per condition and reports any input that breaks one.
CrossHair runs in a subprocess so that ``verify`` can explore the machines meanwhile.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from attrs import frozen

__all__ = [
    "ContractReport",
    "ContractRun",
    "ContractTarget",
    "Counterexample",
    "check_contracts",
    "contract_targets",
    "parse_report",
]

_FINDING = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+): (?:error|warning): (?P<message>.*)$")


@frozen(kw_only=True)
class ContractTarget:
    module: str
    function: str
    conditions: int


@frozen(kw_only=True)
class Counterexample:
    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@frozen(kw_only=True)
class ContractReport:
    targets: tuple[ContractTarget, ...]
    counterexamples: tuple[Counterexample, ...]
    returncode: int
    output: str

    @property
    def conditions(self) -> int:
        return sum(t.conditions for t in self.targets)

    @property
    def passed(self) -> bool:
        return not self.counterexamples and self.returncode == 0


def contract_targets(modules: Sequence[str]) -> tuple[ContractTarget, ...]:
    """Every function of ``modules`` whose docstring states ``post:`` or ``raises:``."""
    targets = []
    for name in modules:
        module = _import(name)
        for attr, value in vars(module).items():
            if not inspect.isfunction(value) or value.__module__ != module.__name__:
                continue
            doc = inspect.getdoc(value) or ""
            count = sum(
                1 for line in doc.splitlines() if line.strip().startswith(("post:", "pre:"))
            )
            if any(line.strip().startswith("post:") for line in doc.splitlines()):
                targets.append(ContractTarget(module=name, function=attr, conditions=count))
    return tuple(targets)


def _import(name: str) -> ModuleType:
    """A module by dotted name, or a ``.py`` file by path (CrossHair accepts both)."""
    if not name.endswith(".py"):
        return importlib.import_module(name)
    path = Path(name)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {name}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ContractRun:
    """A CrossHair check running in the background."""

    def __init__(self, modules: Sequence[str], *, per_condition_timeout: float = 2.0) -> None:
        self.modules = tuple(modules)
        self.targets = contract_targets(self.modules)
        command = [
            sys.executable,
            "-m",
            "crosshair",
            "check",
            "--analysis_kind=PEP316",
            f"--per_condition_timeout={per_condition_timeout}",
            *self.modules,
        ]
        self._process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
        )

    def result(self, timeout: float | None = None) -> ContractReport:
        output, _ = self._process.communicate(timeout=timeout)
        return parse_report(self.targets, output, self._process.returncode)

    def cancel(self) -> None:
        self._process.kill()
        self._process.communicate()


def parse_report(
    targets: tuple[ContractTarget, ...], output: str, returncode: int
) -> ContractReport:
    found = []
    for line in output.splitlines():
        match = _FINDING.match(line.strip())
        if match:
            found.append(
                Counterexample(
                    file=match["file"], line=int(match["line"]), message=match["message"]
                )
            )
    return ContractReport(
        targets=targets, counterexamples=tuple(found), returncode=returncode, output=output
    )


def check_contracts(
    modules: Sequence[str], *, per_condition_timeout: float = 2.0
) -> ContractReport:
    """Run CrossHair on ``modules`` and wait for the verdict."""
    return ContractRun(modules, per_condition_timeout=per_condition_timeout).result()
