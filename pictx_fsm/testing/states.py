"""Canonical states of worlds on the model session: what ``pictx-fsm check`` deduplicates on.

A world's canonical state is three parts, canonicalized together with one renaming
(:class:`~pictx_fsm.testing.canon.Canon`):

1. **the model host's observable state** (:func:`host_state`): every session file — header
   and entries in file order, so the tree, the branches, the windows and what each request
   would carry are all in it — the current file and leaf, the model, the queues, the scripted
   provider's
   unused script, the faux cache, the run and, mid-run, the run's continuation (the
   suspended host procedure's frames);
2. **the extension's state**: its frozen state where it has one (pi-context's
   ``LifecycleState``, pi-context-management's ``CmState``), plus what the world around it
   holds (settings switched mid-run, armed noise, a failing disk); for an extension the kit
   knows nothing of (:class:`~pictx_fsm.testing.host_world.HostWorld`), the inputs it
   recorded (:func:`recorded_inputs`): its state is a function of them and of the files;
3. **the invariants' residual** (:func:`suite_residual`): what an invariant remembers about
   the past that the world no longer shows (a reset already announced, a queued message
   not yet delivered) — a history check is a monitor, and its state is part of the state.

History the host only records (the host log, the audit logs of the kits that have a
frozen state) is left out: nothing reads it back, so two runs that differ only there have
the same future.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.hosts.model.observe import observe
from pictx_fsm.hosts.model.session import ModelSession
from pictx_fsm.testing.canon import Canon, generator_stack

__all__ = ["RECORD_INPUTS", "host_state", "recorded_inputs", "suite_residual"]

RECORD_INPUTS = ("hook", "event", "ctx", "steps", "result")
"""The members of an audit record that say what an extension was given and decided (its
``seq``, ``prev`` and ``hash`` only chain the log)."""


def host_state(session: ModelSession, canon: Canon) -> Hashable:
    """The model session's observable state (:mod:`pictx_fsm.hosts.model.observe`)."""
    seen = observe(session)
    for value, name in seen.atoms:
        canon.atom(value, name)
    files = tuple(
        (canon(path), canon(header), tuple(canon(entry) for entry in entries))
        for path, header, entries in seen.files
    )
    return (
        files,
        canon(seen.current),
        canon(seen.leaf),
        canon(seen.model),
        tuple((name, tuple(canon(item) for item in items)) for name, items in seen.queues),
        tuple(canon(item) for item in seen.triggered),
        tuple(canon(response) for response in seen.script),
        canon(seen.calls_made),
        canon(seen.faux_cache),
        canon(seen.run),
        generator_stack(seen.continuation, canon),
    )


def recorded_inputs(audits: Sequence[AuditLog], canon: Canon) -> Hashable:
    """Every decision each runtime recorded: what it was given and what it decided."""
    return tuple(
        tuple(tuple(canon(record.get(key)) for key in RECORD_INPUTS) for record in log.records)
        for log in audits
    )


def suite_residual(suite: Any, world: Any, canon: Canon) -> Hashable:
    """What the invariants remember beyond the world: the suite's ``residual(world)``, or —
    for a suite that does not say — every invariant's attributes (all it could remember)."""
    residual = getattr(suite, "residual", None)
    if residual is not None:
        return canon(residual(world))
    invariants = getattr(suite, "invariants", None)
    if invariants is None:
        return canon(vars(suite))
    return tuple(canon(invariant.residual(world)) for invariant in invariants)
