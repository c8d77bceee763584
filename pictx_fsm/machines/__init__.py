"""The declared machines: load ``models/``, bind guards and actions, run them two ways.

- :mod:`~pictx_fsm.machines.document` reads a declaration, :mod:`~pictx_fsm.machines.builder`
  validates it into the frozen IR of :mod:`~pictx_fsm.machines.spec` (:class:`MachineSpec`),
  whose guard conditions are :mod:`~pictx_fsm.machines.conditions` trees;
- :mod:`~pictx_fsm.machines.analysis` finds completeness gaps and fingerprints documents;
- :mod:`~pictx_fsm.machines.bindings` supplies guards and actions and checks them against it;
- :mod:`~pictx_fsm.machines.compiled` runs it as an immutable table with a pure ``step``;
- :mod:`~pictx_fsm.machines.reference` runs the same document on python-statemachine, to
  check the compiled engine against the library it mirrors.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol, TypeVar

from pictx_fsm.machines.bindings import MachineBindings, bind
from pictx_fsm.machines.compiled import CompiledMachine, Configuration, Fired, Step
from pictx_fsm.machines.document import (
    MachineSpec,
    RegionSpec,
    TransitionSpec,
    completeness_gaps,
    fingerprint,
    load_machine_document,
    load_models,
)

__all__ = [
    "MODELS_ENV",
    "CompiledMachine",
    "Configuration",
    "FamilyLoad",
    "Fired",
    "MachineBindings",
    "MachineSpec",
    "RegionSpec",
    "Step",
    "TransitionSpec",
    "bind",
    "completeness_gaps",
    "family_loader",
    "fingerprint",
    "load_machine_document",
    "load_models",
    "models_dir",
]

MODELS_ENV = "PICTX_FSM_MODELS"

F = TypeVar("F")
F_co = TypeVar("F_co", covariant=True)


class FamilyLoad(Protocol[F_co]):
    """Loads an extension's machine family (default: from ``<models>/<family>``)."""

    def __call__(self, directory: str | os.PathLike[str] | None = None) -> F_co: ...


def models_dir() -> Path:
    """Where the declarations live.

    ``$PICTX_FSM_MODELS`` when set; else the copy a wheel carries (``pictx_fsm/_models``,
    force-included from ``models/`` by pyproject); else ``<repo>/models`` of a source checkout
    (the parent of the package directory). The wheel copy is tried first so that an installed
    package never picks up an unrelated ``models/`` directory beside ``site-packages``.
    """
    override = os.environ.get(MODELS_ENV)
    if override:
        return Path(override)
    package = Path(__file__).resolve().parent.parent
    bundled = package / "_models"
    if bundled.is_dir():
        return bundled
    return package.parent / "models"


def family_loader(
    family: str, build: Callable[[Mapping[str, MachineSpec], Path], F]
) -> FamilyLoad[F]:
    """How an extension loads its machine family: ``build`` over the documents of a
    directory — by default ``<models>/<family>`` (:func:`models_dir`) — bound once per
    directory (a process loads the same family again and again)."""

    @functools.lru_cache(maxsize=8)
    def bound(directory: str) -> F:
        path = Path(directory)
        return build(load_models(path), path)

    def load(directory: str | os.PathLike[str] | None = None) -> F:
        path = Path(directory) if directory is not None else models_dir() / family
        return bound(str(path.resolve()))

    return load
