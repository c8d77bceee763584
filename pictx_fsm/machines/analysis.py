"""Questions about a declaration as a whole: completeness gaps and the documents' fingerprint."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from itertools import product
from typing import Any

from pictx_fsm.machines.conditions import compile_condition
from pictx_fsm.machines.spec import MachineSpec, TransitionSpec

__all__ = ["completeness_gaps", "fingerprint"]

# Beyond this many guards in one (state, event) the exact gap check would enumerate too much.
_MAX_EXACT_GUARDS = 12


def completeness_gaps(spec: MachineSpec) -> list[tuple[str, str, str]]:
    """``(region, state, event)`` where the event could be illegal.

    A region answers every event it declares (anywhere) strictly, so each of its states must
    accept each such event. A gap is a state with no transition for one of them, or one whose
    transitions for it are all guarded and some valuation of those guards (treated as
    independent booleans, so facts may rule the valuation out) enables none of them.
    """
    gaps: list[tuple[str, str, str]] = []
    for region in spec.regions:
        for state in region.states:
            for event in spec.region_events(region.name):
                candidates = spec.transitions_from(region.name, state, event)
                if not candidates or _can_disable_all(candidates):
                    gaps.append((region.name, state, event))
    return gaps


def _can_disable_all(candidates: tuple[TransitionSpec, ...]) -> bool:
    if any(not t.is_guarded for t in candidates):
        return False
    names = sorted({name for t in candidates for name in t.guards})
    if len(names) > _MAX_EXACT_GUARDS:
        return True
    checks = [_enabled_check(t) for t in candidates]
    for values in product((False, True), repeat=len(names)):
        valuation = dict(zip(names, values, strict=True))
        if not any(check(valuation.__getitem__) for check in checks):
            return True
    return False


def _enabled_check(transition: TransitionSpec) -> Any:
    cond = compile_condition(transition.cond) if transition.cond is not None else None
    unless = compile_condition(transition.unless) if transition.unless is not None else None

    def enabled(lookup: Any) -> bool:
        if cond is not None and not cond(lookup):
            return False
        return not (unless is not None and unless(lookup))

    return enabled


def fingerprint(specs: Mapping[str, MachineSpec] | Iterable[MachineSpec]) -> str:
    """sha256 over the documents' bytes, sorted by machine name (for the audit log).

    Each document is framed by its name and length so that moving bytes between documents
    changes the fingerprint.
    """
    items: Iterator[MachineSpec] = iter(specs.values() if isinstance(specs, Mapping) else specs)
    digest = hashlib.sha256()
    for spec in sorted(items, key=lambda s: s.name):
        digest.update(f"{spec.name}\0{len(spec.document)}\0".encode())
        digest.update(spec.document)
    return digest.hexdigest()
