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

import os
from pathlib import Path

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
    "Fired",
    "MachineBindings",
    "MachineSpec",
    "RegionSpec",
    "Step",
    "TransitionSpec",
    "bind",
    "completeness_gaps",
    "fingerprint",
    "load_machine_document",
    "load_models",
    "models_dir",
]

MODELS_ENV = "PICTX_FSM_MODELS"


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
