"""``ModelSession``: an executable model of one Pi 0.87.1 session, driven step by step.

Host actions mirror Pi's SDK (``prompt``, ``steer``, ``follow_up``, ``abort``,
``send_message``, ``navigate``, ``fork``, ``switch_session``/``reload``,
``reload_extensions``, ``compact``,
``command``, ``set_model``, ``dispose``). A run advances only through :meth:`step` (one hook,
persistence point or wait at a time) or :meth:`run_until_idle`, so a test can steer, queue or
abort between any two host steps. Everything observable is in :attr:`log`.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, TypeAlias

import attrs

from pictx_fsm.host.effects import HookResult, HostEffect
from pictx_fsm.host.events import ModelInfo, ModelSelect, SessionShutdown
from pictx_fsm.host.extension import Extension
from pictx_fsm.hosts.model import replace
from pictx_fsm.hosts.model.compaction import CompactOutcome, run_compaction
from pictx_fsm.hosts.model.dispatch import abort, apply_effects, emit, error, record, send_custom
from pictx_fsm.hosts.model.errors import ALREADY_PROCESSING, AgentBusyError, ModelHostError
from pictx_fsm.hosts.model.messages import (
    TickClock,
    message_text,
    system_message,
    tool_declaration,
    user_message,
)
from pictx_fsm.hosts.model.navigation import NavigationOutcome, navigate
from pictx_fsm.hosts.model.queues import Queued
from pictx_fsm.hosts.model.records import HostLog, Step
from pictx_fsm.hosts.model.runs import SETTLED, agent_run, check_before_prompt
from pictx_fsm.hosts.model.scripted_provider import ScriptedProvider
from pictx_fsm.hosts.model.settings import HostSettings
from pictx_fsm.hosts.model.state import HostState
from pictx_fsm.hosts.model.steps import Steps, drain
from pictx_fsm.hosts.model.store import SessionStore
from pictx_fsm.hosts.model.tools import ECHO_TOOL, NESTING_TOOL
from pictx_fsm.session.entries import ABSENT, Entry
from pictx_fsm.session.estimate import CharsCounter, TokenCounter
from pictx_fsm.session.jsonl import parse_session
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.session.writer import Clock

__all__ = ["DEFAULT_MAX_STEPS", "JSON", "ModelSession"]

JSON: TypeAlias = Any
DEFAULT_MAX_STEPS = 100_000


class ModelSession:
    """A Pi session with scripted model replies and the given extensions, in load order."""

    def __init__(
        self,
        extensions: Iterable[Extension] = (),
        *,
        provider: ScriptedProvider | None = None,
        settings: HostSettings | None = None,
        rng: random.Random | None = None,
        clock: Clock | None = None,
        counter: TokenCounter | None = None,
        jsonl: str | None = None,
        tree: SessionTree | None = None,
        brain: ScriptedProvider | None = None,
    ) -> None:
        """Start a new session, or open an existing one: a file's text (``jsonl``) or a tree
        of entries (``tree``, which the session then appends to); either way the extensions
        are bound and see ``session_start{startup}``. ``brain`` is ``provider``'s 0.1 name."""
        if brain is not None:
            warnings.warn(
                "ModelSession(brain=...) is now ModelSession(provider=...); the old name goes "
                "away in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
            provider = provider or brain
        if jsonl is not None and tree is not None:
            raise ModelHostError("open a session from jsonl or from a tree, not both")
        settings = settings or HostSettings()
        rng = rng or random.Random(0)
        clock = clock or TickClock()
        counter = counter or CharsCounter()
        self._host = _new_host(
            list(extensions), provider or ScriptedProvider(), settings, rng, clock, counter
        )
        self._steps: Steps[None] | None = None
        self.last_step: Step | None = None
        if jsonl is not None:
            tree = self._parse(jsonl)
        if tree is None:
            self._create()
        else:
            self._open(tree)
        replace.bind(self._host, "startup")

    def _create(self) -> None:
        host = self._host
        now = host.clock()
        session_id = replace.new_session_id(host, now)
        header = replace.new_header(host.settings, session_id, now, parent=None)
        replace.open_store(
            host, SessionTree(header), replace.session_path(host.settings, now, session_id)
        )
        replace.restore_model_entries(host)

    @staticmethod
    def _parse(text: str) -> SessionTree:
        loaded = parse_session(text)
        if loaded.header is None:
            raise ModelHostError("the session text has no session header")
        return SessionTree.from_entries(loaded.header, loaded.entries)

    def _open(self, tree: SessionTree) -> None:
        path = replace.session_path(self._host.settings, self._host.clock(), tree.session_id)
        replace.open_store(self._host, tree, path)

    # -- observation --------------------------------------------------------------------------

    @property
    def log(self) -> HostLog:
        return self._host.log

    @property
    def store(self) -> SessionStore:
        return self._host.store

    @property
    def tree(self) -> SessionTree:
        return self._host.store.tree

    @property
    def entries(self) -> Sequence[Entry]:
        """The current session file's entries in file order."""
        return self._host.store.tree.entries

    @property
    def leaf_id(self) -> str | None:
        return self._host.store.leaf_id

    @property
    def session_file(self) -> str:
        return self._host.store.path

    @property
    def files(self) -> dict[str, SessionStore]:
        """Every session file this model session has written, by path."""
        return dict(self._host.files)

    def saved_files(self) -> dict[str, SessionStore]:
        """The session files a real Pi of the host profile has on disk by now: one is written
        once it holds an assistant message (0.87) or a user or assistant message (1.x)."""
        return {
            path: store
            for path, store in self._host.files.items()
            if replace.is_written(self._host, store)
        }

    @property
    def model(self) -> ModelInfo:
        return self._host.model

    @property
    def provider(self) -> ScriptedProvider:
        return self._host.provider

    @property
    def brain(self) -> ScriptedProvider:
        """``provider``'s 0.1 name (deprecated)."""
        warnings.warn(
            "ModelSession.brain is now ModelSession.provider", DeprecationWarning, stacklevel=2
        )
        return self._host.provider

    @property
    def is_idle(self) -> bool:
        return self._steps is None and not self._host.triggered

    @property
    def is_streaming(self) -> bool:
        return self._host.streaming

    @property
    def pending_messages(self) -> int:
        """``ctx.hasPendingMessages()`` as a count (queued user texts)."""
        return self._host.queues.user_pending()

    def jsonl(self) -> str:
        """The current session file's text."""
        return self._host.store.jsonl()

    # -- prompting and queues -----------------------------------------------------------------

    def prompt(self, text: str) -> None:
        """``session.prompt(text)``: starts a run when idle; throws while a run is active."""
        record(self._host, "input", text=text, source="interactive", streamingBehavior=None)
        if not self.is_idle:
            raise AgentBusyError(ALREADY_PROCESSING)
        self._steps = _prompt_run(self._host, text)

    def steer(self, text: str) -> None:
        """Queue a steering message (a plain prompt when idle)."""
        self._queue(text, "steer")

    def follow_up(self, text: str) -> None:
        """Queue a follow-up message (a plain prompt when idle)."""
        self._queue(text, "follow_up")

    def _queue(self, text: str, kind: Literal["steer", "follow_up"]) -> None:
        if self.is_idle:
            self.prompt(text)
            return
        host = self._host
        if host.idle_while_starting:
            # Pi 0.87: still idle while a prompt starts, so this is a prompt of its own, run
            # to its end before the starting one goes on.
            record(host, "input", text=text, source="extension", streamingBehavior=None)
            assert self._steps is not None
            if not host.overtaking:
                self._steps = _overtaken(host, self._steps)
            host.overtaking.append(text)
            return
        if self.last_step is SETTLED and host.run is None:
            # The run has settled: Pi is idle again, so this is a prompt of its own, run once
            # the settled run's handlers are done (found by the differential).
            record(host, "input", text=text, source="extension", streamingBehavior=None)
            host.triggered.append(Queued(kind="prompt", message=user_message(text, host.clock())))
            return
        behavior = "steer" if kind == "steer" else "followUp"
        record(host, "input", text=text, source="interactive", streamingBehavior=behavior)
        item = Queued(kind=kind, message=user_message(text, host.clock()))
        queue = host.queues.steering if kind == "steer" else host.queues.follow_up
        queue.append(item)

    def send_message(
        self,
        custom_type: str,
        content: JSON,
        *,
        display: bool = False,
        details: JSON = ABSENT,
        trigger_turn: bool = False,
        deliver_as: str | None = None,
    ) -> None:
        """``pi.sendMessage`` from outside a handler (``deliver_as``: ``steer``,
        ``followUp`` or ``nextTurn``)."""
        send_custom(
            self._host,
            custom_type,
            content,
            display=display,
            details=details,
            trigger_turn=trigger_turn,
            deliver_as=deliver_as,
        )

    def apply_effects(self, effects: Sequence[HostEffect], source: str) -> None:
        """Effects an extension carries out itself through Pi's API in the middle of a
        handler (``pi.sendMessage``, ``ctx.ui.notify``, ``ctx.abort``), applied at once, as
        Pi applies them: an idle ``sendMessage`` is in the session before the handler goes on."""
        apply_effects(self._host, effects, source)

    def abort(self) -> None:
        """``session.abort()``: aborts the active run (no-op when idle)."""
        abort(self._host)

    # -- stepping -----------------------------------------------------------------------------

    def step(self) -> Step | None:
        """Advance exactly one host step; ``None`` when the session is idle."""
        while True:
            if self._steps is None and not self._start_triggered():
                return None
            assert self._steps is not None
            try:
                self.last_step = next(self._steps)
                return self.last_step
            except StopIteration:
                self._steps = None

    def _start_triggered(self) -> bool:
        host = self._host
        if not host.triggered:
            return False
        queued = host.triggered.pop(0)
        if queued.is_user:
            self._steps = _prompt_run(host, message_text(queued.message))
        else:
            self._steps = _triggered_run(host, queued)
        return True

    def run_until(
        self, predicate: Callable[[Step], bool], max_steps: int = DEFAULT_MAX_STEPS
    ) -> Step:
        """Step until ``predicate(step)`` holds; raises when the session goes idle first."""
        for _ in range(max_steps):
            step = self.step()
            if step is None:
                raise ModelHostError("the session went idle before the awaited step")
            if predicate(step):
                return step
        raise ModelHostError(f"no awaited step within {max_steps} steps")

    def run_until_idle(self, max_steps: int = DEFAULT_MAX_STEPS) -> int:
        """Step until idle; returns the number of steps taken."""
        for count in range(max_steps + 1):
            if self.step() is None:
                return count
        raise ModelHostError(f"the session is still running after {max_steps} steps")

    def _require_idle(self, action: str) -> None:
        if not self.is_idle:
            raise AgentBusyError(f"{action} needs an idle session; a run is active")

    # -- session operations -------------------------------------------------------------------

    def navigate(
        self, target_id: str, *, summarize: bool = False, label: str | None = None
    ) -> NavigationOutcome:
        """``navigateTree(targetId, {summarize, label})``."""
        self._require_idle("navigate")
        return navigate(self._host, target_id, summarize=summarize, label=label)

    def fork(self, entry_id: str, position: str = "before") -> str:
        """``fork(entryId, {position})``; returns the new session file's path."""
        self._require_idle("fork")
        return replace.fork(self._host, entry_id, position)

    def switch_session(self, path: str) -> None:
        """``switchSession(path)``: resume a session file of this model session."""
        self._require_idle("switch_session")
        replace.resume(self._host, path)

    def reload(self) -> None:
        """Write the current file, read it back (leaf = last entry) and resume it."""
        self.switch_session(self._host.store.path)

    @property
    def settings(self) -> HostSettings:
        """The settings the current runtime read."""
        return self._host.settings

    def rewrite_settings(self, settings: HostSettings) -> None:
        """Pi's settings file rewritten: read when the runtime is next rebuilt (a session
        replaced, ``/reload``), as Pi reads it."""
        self._host.settings_file = settings

    def reload_extensions(self) -> None:
        """Pi's ``/reload``: ``session_shutdown{reload}``, the extensions bind again,
        ``session_start{reload}``; the session (and its leaf) stays as it is."""
        self._require_idle("reload_extensions")
        replace.reload(self._host)

    def compact(self) -> CompactOutcome:
        """``/compact``: aborts an active run first, then a manual compaction."""
        if not self.is_idle:
            self.abort()
            self.run_until_idle()
        return drain(run_compaction(self._host, "manual", will_retry=False))

    def command(self, name: str, args: str = "") -> None:
        """``/name args``. A command its extension declares idle-only (it waits for idle in
        Pi: ``/wipe-memory``) requires an idle session here."""
        host = self._host
        owner = next((e for e in host.extensions if name in e.commands), None)
        if owner is None:
            raise ModelHostError(f"unknown command /{name}")
        handler = owner.commands[name]
        if name in getattr(owner, "idle_commands", frozenset()):
            self._require_idle(f"/{name}")
        try:
            # ``ctx.isIdle()``: also while a prompt starts on 0.87 (found by the differential:
            # ``/pi-context on`` at ``before_agent_start`` repairs at once there).
            idle = self.is_idle or host.idle_while_starting
            reply = handler(args, attrs.evolve(host.host_context(), idle=idle))
        except Exception as exc:  # Pi reports command errors as extension errors
            error(host, "command", name, f"{type(exc).__name__}: {exc}")
            return
        if isinstance(reply, HookResult):
            apply_effects(host, reply.effects, f"command:{name}")

    def set_model(self, model: ModelInfo) -> None:
        """``setModel``: a ``model_change`` entry, then ``model_select``."""
        host = self._host
        host.model = model
        host.store.model_change(model.provider, model.id)
        emit(host, ModelSelect(model=model), source="set")

    def dispose(self) -> None:
        """``runtime.dispose()``: ``session_shutdown{quit}``."""
        emit(self._host, SessionShutdown(reason="quit"), reason="quit")


def _new_host(
    extensions: list[Extension],
    provider: ScriptedProvider,
    settings: HostSettings,
    rng: random.Random,
    clock: Clock,
    counter: TokenCounter,
) -> HostState:
    placeholder = SessionStore(
        SessionTree(replace.new_header(settings, "pending", 0, None)),
        path="",
        ids=rng,
        clock=clock,
        counter=counter,
        on_append=lambda entry: None,
    )
    return HostState(
        settings=settings,
        model=settings.model,
        provider=provider,
        extensions=extensions,
        store=placeholder,
        ids=rng,
        clock=clock,
        counter=counter,
    )


def _prompt_run(host: HostState, text: str) -> Steps[None]:
    """``prompt()`` after ``input``: threshold check, ``before_agent_start``, the run."""
    host.starting = True
    yield from check_before_prompt(host)
    yield record(host, "before_agent_start")
    prompts = [
        *_system_prompt(host),
        Queued(kind="prompt", message=user_message(text, host.clock())),
    ]
    yield from agent_run(host, [*prompts, *host.queues.take_next_turn()])


def _overtaken(host: HostState, then: Steps[None]) -> Steps[None]:
    """The prompts that overtook a starting run (``host.overtaking``), each to its end, in the
    order they came; then the rest of the run, still starting."""
    while host.overtaking:
        yield from _prompt_run(host, host.overtaking.pop(0))
    host.starting = True
    yield from then


def _triggered_run(host: HostState, message: Queued) -> Steps[None]:
    """A run a custom message started while idle (no ``input``; ``before_agent_start`` only
    where the Pi version starts such runs like prompts)."""
    if host.settings.profile.custom_runs_start_like_prompts:
        yield record(host, "before_agent_start", messageType="custom")
    yield from agent_run(host, [message])


def _system_prompt(host: HostState) -> list[Queued]:
    """The full system message, when the context has none yet (the first request)."""
    if any(m.get("role") == "system" for m in host.store.context_messages()):
        return []
    given = host.settings.system_message
    if given is not None:
        return [Queued(kind="prompt", message={**given, "timestamp": host.clock()})]
    names = [ECHO_TOOL, *([NESTING_TOOL] if host.settings.profile.nested_tool_calls else [])]
    for ext in host.extensions:
        names += [name for name in ext.tools if name not in names]
    tools = [tool_declaration(name) for name in names]
    message = system_message(tools, host.settings.cwd, host.clock())
    return [Queued(kind="prompt", message=message)]
