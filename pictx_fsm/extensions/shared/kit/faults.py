"""Planting a fault in a family's machines, the same way for every kit of the family: an edit
of one model document (a transition changed, removed or added), replaced facts and replaced
actions — the way a real regression would change the declared lifecycle."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pictx_fsm.extensions.shared.machinery import Fact, MachineFamily
from pictx_fsm.machines import MachineSpec, load_models

__all__ = ["patched_specs", "planted_fact"]


def patched_specs(
    base: MachineFamily, fault: str, patch: tuple[str, str, str] | None
) -> tuple[Mapping[str, MachineSpec], Path]:
    """``base``'s documents with ``patch`` = (document, old text, new text) applied, loaded
    from a copy; unchanged (and where they are) without a patch."""
    if patch is None:
        return dict(base.specs), base.directory
    document, old, new = patch
    text = (base.directory / f"{document}.yaml").read_text(encoding="utf-8")
    if old not in text:
        raise ValueError(f"fault {fault}: the model text to patch was not found")
    tmp = Path(tempfile.mkdtemp(prefix=f"pictx-fault-{fault}-"))
    for spec in base.specs.values():
        (tmp / Path(spec.source).name).write_bytes(spec.document)
    (tmp / f"{document}.yaml").write_text(text.replace(old, new, 1), encoding="utf-8")
    return dict(load_models(tmp)), tmp


def planted_fact(name: str, compute: Any) -> Fact:
    return Fact(name=name, compute=compute, doc=f"planted fault: {name}")
