"""The model session's state as data: everything its future depends on, for a checker that
deduplicates states (``pictx-fsm check``).

What is *not* here is history: the host log (events, requests, notices, deliveries) records
what happened and is never read back by the host. What is here: every session file (header
and entries in file order), the current file and leaf, the model, the queues, the scripted
provider's
unused script and call counter, the faux cache, the run and — while a run is under way —
the run's continuation (the host procedure suspended between two steps, as a generator:
a checker reads its frames). :attr:`Observation.atoms` names the host's own objects, which a
continuation's frames refer to by identity.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from attrs import frozen

from pictx_fsm.host.events import ModelInfo
from pictx_fsm.hosts.model.provider_usage import FauxCacheUsage
from pictx_fsm.hosts.model.queues import Queued
from pictx_fsm.hosts.model.session import ModelSession
from pictx_fsm.hosts.model.state import RunState
from pictx_fsm.session.entries import Entry, SessionHeader

__all__ = ["Observation", "observe"]


@frozen(kw_only=True)
class Observation:
    files: tuple[tuple[str, SessionHeader, tuple[Entry, ...]], ...]
    """Every file the session wrote, in creation order: path, header, entries."""
    current: str
    leaf: str | None
    model: ModelInfo
    queues: tuple[tuple[str, tuple[Queued, ...]], ...]
    triggered: tuple[Queued, ...]
    script: tuple[object, ...]
    """The scripted provider's responses not used yet."""
    calls_made: int
    faux_cache: Mapping[str, str]
    """The faux provider's last prompt per session (empty with estimated usage)."""
    run: RunState | None
    continuation: object | None
    """The suspended host procedure (a generator), ``None`` when idle."""
    atoms: tuple[tuple[object, Hashable], ...]
    """The host's objects a continuation refers to, and the name each stands for."""


def observe(session: ModelSession) -> Observation:
    host = session._host
    queues = host.queues
    atoms: list[tuple[object, Hashable]] = [(host, "host"), (session, "session")]
    atoms += [(extension, ("extension", i)) for i, extension in enumerate(host.extensions)]
    for index, store in enumerate(host.files.values()):
        atoms += [(store, ("file", index)), (store.tree, ("tree", index))]
    accounting: Any = host.provider.accounting
    cache = dict(accounting._previous) if isinstance(accounting, FauxCacheUsage) else {}
    return Observation(
        files=tuple(
            (path, store.tree.header, tuple(store.tree.entries))
            for path, store in host.files.items()
        ),
        current=host.store.path,
        leaf=host.store.leaf_id,
        model=host.model,
        queues=(
            ("steering", tuple(queues.steering)),
            ("follow_up", tuple(queues.follow_up)),
            ("held", tuple(queues.held)),
            ("next_turn", tuple(queues.next_turn)),
            ("in_flight", tuple(queues.in_flight)),
        ),
        triggered=tuple(host.triggered),
        script=tuple(host.provider._script),
        calls_made=host.provider.calls_made,
        faux_cache=cache,
        run=host.run,
        continuation=session._steps,
        atoms=tuple(atoms),
    )
