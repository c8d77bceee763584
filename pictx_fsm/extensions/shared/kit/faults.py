"""Planting a fault in a family's machines, the same way for every kit of the family: an edit
of one model document (a transition changed, removed or added), replaced facts and replaced
actions — the way a real regression would change the declared lifecycle."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from attrs import field, frozen

from pictx_fsm.extensions.shared.machinery import Fact, Facts, MachineFamily, bind_family
from pictx_fsm.machines import MachineSpec, load_models

__all__ = ["FamilyFault", "patched_specs", "planted_fact"]


@frozen(kw_only=True)
class FamilyFault:
    """A deliberate bug planted in an extension's machines; an extension's fault adds what
    else it can plant (a host change, a window scheme)."""

    name: str
    description: str
    caught_by: str
    """The invariant expected to report it."""
    facts: Mapping[str, Callable[[Any, Facts], Any]] = field(factory=dict)
    """Facts replaced by name (every guard reading one sees the replacement)."""
    actions: Mapping[str, Any] = field(factory=dict)
    """Actions replaced by name."""
    model_patch: tuple[str, str, str] | None = None
    """(document, old text, new text): an edit of one model document."""

    def planted(self, base: MachineFamily) -> MachineFamily:
        """``base``'s machines rebuilt with this fault planted: the model patch applied, its
        facts and actions in place of those ``base`` is bound to."""
        specs, directory = patched_specs(base, self.name, self.model_patch)
        return bind_family(
            specs,
            tuple(base.machines),
            directory,
            facts={**base.facts, **{n: planted_fact(n, fn) for n, fn in self.facts.items()}},
            actions={**base.actions, **self.actions},
            state_facts=base.state_facts,
        )


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
