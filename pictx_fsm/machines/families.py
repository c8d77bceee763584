"""Machine families: one directory of declarations per extension or component.

Each subdirectory of ``models/`` holding machine documents is a family named after it:
``models/pi_context/`` for pi-context's lifecycle, ``models/context_management/`` for
pi-context-management's machines, ``models/bridge/`` for the Pi bridge's connection and lease
machines. A root that itself holds documents (a directory of one family given with
``--models``) is a family too, named after the root. Families are discovered, not registered, so a
new
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

__all__ = ["Family", "families", "load_families"]


@frozen(kw_only=True)
class Family:
    """One family: its name, its directory and its machines, by name."""

    name: str
    directory: Path
    machines: dict[str, MachineSpec]


def families(root: str | os.PathLike[str]) -> list[tuple[str, Path]]:
    """``(name, directory)`` of every family under ``root``: the root when it holds machine
    documents, then each subdirectory that does, in name order."""
    base = Path(root)
    if not base.is_dir():
        return []
    found = [(base.name, base)] if _holds_documents(base) else []
    for child in sorted(p for p in base.iterdir() if p.is_dir()):
        if _holds_documents(child):
            found.append((child.name, child))
    return found


def _holds_documents(directory: Path) -> bool:
    return any(f.suffix in DOCUMENT_SUFFIXES for f in directory.iterdir() if f.is_file())


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
