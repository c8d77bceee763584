"""Machine families: one directory of declarations per extension or component.

``models/`` itself holds pi-context's lifecycle (the family ``pi-context``); each
subdirectory holding machine documents is a further family named after it (for example
``models/bridge/`` for the Pi bridge's connection machine, ``models/context_management/``
for pi-context-management's machines). Families are discovered, not registered, so a new
component adds its declarations without touching this module. Machine names are unique
across all families: diagrams and coverage key transitions by ``<machine>:<n>``.
"""

from __future__ import annotations

import os
from pathlib import Path

from attrs import frozen

from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.machines.document import DOCUMENT_SUFFIXES, load_models
from pictx_fsm.machines.spec import MachineSpec

__all__ = ["ROOT_FAMILY", "Family", "families", "load_families"]

ROOT_FAMILY = "pi-context"
"""The family whose documents lie directly in ``models/``."""


@frozen(kw_only=True)
class Family:
    """One family: its name, its directory and its machines, by name."""

    name: str
    directory: Path
    machines: dict[str, MachineSpec]


def families(root: str | os.PathLike[str]) -> list[tuple[str, Path]]:
    """``(name, directory)`` of every family under ``root``: the root first, then each
    subdirectory that holds at least one machine document, in name order."""
    base = Path(root)
    found = [(ROOT_FAMILY, base)]
    if base.is_dir():
        for child in sorted(p for p in base.iterdir() if p.is_dir()):
            if any(f.suffix in DOCUMENT_SUFFIXES for f in child.iterdir()):
                found.append((child.name, child))
    return found


def load_families(root: str | os.PathLike[str]) -> list[Family]:
    """Load every family under ``root``; a machine name declared twice is an error."""
    loaded: list[Family] = []
    seen: dict[str, MachineSpec] = {}
    for name, directory in families(root):
        specs = load_models(directory)
        for machine, spec in specs.items():
            if machine in seen:
                raise ModelDocumentError(
                    spec.source,
                    "name",
                    f"machine {machine!r} is also declared in {seen[machine].source}",
                )
            seen[machine] = spec
        loaded.append(Family(name=name, directory=directory, machines=specs))
    return loaded
