"""The model host's mutable state, shared by the loop, the dispatcher and the session API."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, TypeAlias

from attrs import define, field

from pictx_fsm.host.events import ContextUsage, HostContext, ModelInfo
from pictx_fsm.host.extension import Extension
from pictx_fsm.hosts.model.queues import Queued, Queues
from pictx_fsm.hosts.model.records import HostLog
from pictx_fsm.hosts.model.scripted_provider import ScriptedProvider
from pictx_fsm.hosts.model.settings import HostSettings
from pictx_fsm.hosts.model.store import SessionStore
from pictx_fsm.session.estimate import TokenCounter
from pictx_fsm.session.writer import Clock

__all__ = ["JSON", "HostState", "RunState"]

JSON: TypeAlias = Any


@define
class RunState:
    """One run, from the prompt (or a triggered message) to ``agent_settled``."""

    aborted: bool = False
    """``abort()`` was called: no recovery, no ``agent_before_settle``."""
    signal_live: bool = False
    """A low-level run is active (``agent_start`` … ``agent_end``): ``ctx.signal`` is set and
    Pi's ``isStreaming`` is true."""
    turn_index: int | None = None
    retry_attempt: int = 0
    last_message: Mapping[str, JSON] | None = None
    """The final assistant message of the latest low-level run."""
    last_entry_id: str | None = None
    """The entry that persisted ``last_message`` (what recovery hides)."""


@define
class HostState:
    settings: HostSettings
    model: ModelInfo
    provider: ScriptedProvider
    extensions: list[Extension]
    store: SessionStore
    ids: random.Random
    clock: Clock
    counter: TokenCounter
    log: HostLog = field(factory=HostLog)
    queues: Queues = field(factory=Queues)
    files: dict[str, SessionStore] = field(factory=dict)
    settings_file: HostSettings | None = None
    """Pi's settings file as rewritten since the runtime read it: Pi reads it again when it
    rebuilds the runtime (a session replaced, ``/reload``), so it takes effect only then."""
    on_disk: set[str] = field(factory=set)
    """Files written outright before Pi opened them (a handoff target the extension wrote
    itself): Pi loads such a file as flushed and appends every later entry at once."""
    run: RunState | None = None
    starting: bool = False
    abort_requested: bool = False
    """``session.abort()`` came while a busy run was starting (1.x): the run starts aborted."""
    """A prompt was accepted and its run has not started yet (``before_agent_start``)."""
    overtaking: list[str] = field(factory=list)
    """Prompts that came while a run was starting and run before it (Pi 0.87)."""
    overflow_attempted: bool = False
    """Pi's single compact-and-retry has been used in the current failure chain (a session's
    flag: a user message starts a new chain, a reply that is neither an error nor a length
    stop ends it)."""
    triggered: list[Queued] = field(factory=list)
    """What asked for a run while Pi was idle and the session still had steps to take: custom
    messages that trigger a turn, user texts sent at ``agent_settled``. The session starts
    their runs, in order, once those steps are done."""
    last_context: HostContext | None = None
    """The ``ctx`` handed out last: handed out again while the facts are the same (most
    hooks of a run), so an audit record encodes a context once, not on every hook."""

    @property
    def streaming(self) -> bool:
        return self.run is not None and self.run.signal_live

    @property
    def signal_aborted(self) -> bool:
        return self.run is not None and self.run.signal_live and self.run.aborted

    @property
    def signal_state(self) -> str | None:
        """``ctx.signal``: absent outside a low-level run, else live or aborted."""
        if self.run is None or not self.run.signal_live:
            return None
        return "aborted" if self.run.aborted else "live"

    @property
    def idle_while_starting(self) -> bool:
        """A prompt was accepted and Pi is still idle (0.87: ``isIdle()`` holds in
        ``before_agent_start``; 1.x is busy from the prompt's acceptance)."""
        return self.starting and not self.settings.profile.starting_run_is_busy

    @property
    def turn_index(self) -> int | None:
        return None if self.run is None else self.run.turn_index

    def host_context(self) -> HostContext:
        """The ``ctx`` facts a handler reads (lifecycle §1)."""
        tokens = self.store.context_tokens()
        context_window = self.model.context_window
        signal_aborted = self.signal_aborted
        pending = self.queues.user_pending() > 0
        settings = self.settings
        known = self.last_context
        # Equal facts, and tokens of the same type: 7 == 7.0, but a record spells them apart.
        # Compared member by member as ``known == HostContext(...)`` would (attrs compares
        # tuples of fields: identical or equal), before anything is built: most hooks of a
        # run hand out the known one.
        if (
            known is not None
            and known.usage is not None
            and _same(known.usage.tokens, tokens)
            and type(known.usage.tokens) is type(tokens)
            and _same(known.usage.context_window, context_window)
            and _same(known.model, self.model)
            and _same(known.signal_aborted, signal_aborted)
            and _same(known.has_pending_messages, pending)
            and _same(known.idle, True)
            and _same(known.cwd, settings.cwd)
            and _same(known.project_trusted, settings.project_trusted)
            and _same(known.pi_version, settings.profile.pi_version)
        ):
            return known
        context = HostContext(
            usage=ContextUsage(tokens=tokens, context_window=context_window),
            model=self.model,
            signal_aborted=signal_aborted,
            has_pending_messages=pending,
            cwd=settings.cwd,
            project_trusted=settings.project_trusted,
            pi_version=settings.profile.pi_version,
        )
        self.last_context = context
        return context


def _same(known: object, value: object) -> bool:
    """One member of a tuple comparison: the same object, or equal."""
    return known is value or bool(known == value)
