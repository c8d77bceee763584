"""Every call from this host into the lifecycle runtime, and nothing else.

The rest of the package speaks entries (Pi JSON objects), Pi messages and pydantic-ai
messages; this module turns a host moment into the runtime's hook event and ``ctx`` facts,
and carries the result out with the public :func:`pictx_fsm.apply` (notices shown, entries
appended to the session tree in order, ``continue`` and the cancelled request reported). It
uses the names :mod:`pictx_fsm` exports, and besides them only what the runtime is built with
(the token counter, the usage index, the settings protocol, the default profile and notes
home) and the transcript helpers that keep each hook O(window) (``Transcript``,
``fold_system``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

from attrs import evolve, frozen

from pictx_fsm import (
    AgentSettled,
    AuditLog,
    ContextUsage,
    ContextWithSystem,
    HostContext,
    LifecycleRuntime,
    ModelInfo,
    SessionStart,
    SessionTree,
    SessionWriter,
    ToolCall,
    ToolOutcome,
    TurnEnd,
    TurnStart,
    apply,
)
from pictx_fsm.extensions.pi_context.tools import ToolSpec
from pictx_fsm.extensions.pi_context.usage import UsageIndex
from pictx_fsm.extensions.pi_context.windows import boot_window_id
from pictx_fsm.host.apply import Applied
from pictx_fsm.host.effects import AbortRun, HookResult, MessagesResult, Notify, ToolResult
from pictx_fsm.host.events import (
    AgentBeforeSettle,
    AgentEnd,
    Command,
    Context,
    HookEvent,
    ModelSelect,
    SessionStartReason,
    SessionTreeEvent,
)
from pictx_fsm.hosts.pydantic_ai.settings import LifecycleSettings, fresh_window_tokens
from pictx_fsm.session.entries import content_text
from pictx_fsm.session.projection import fold_system
from pictx_fsm.session.transcript import Transcript

__all__ = ["JSON", "Clock", "Lifecycle", "Message", "Outcome", "Provided"]

JSON: TypeAlias = Any
Message: TypeAlias = Mapping[str, JSON]
Outcome: TypeAlias = Literal["completed", "aborted", "error"]
Clock: TypeAlias = Callable[[], int]


@frozen(kw_only=True)
class Provided:
    """The provider context after ``context`` and ``context_with_system``."""

    messages: Sequence[Message]
    cancel: bool


class Lifecycle:
    """One session's runtime, driven by this host's moments."""

    def __init__(
        self,
        tree: SessionTree,
        *,
        config: LifecycleSettings,
        rng: random.Random,
        clock: Clock,
        audit: AuditLog | None,
        on_notice: Callable[[Notify], None],
    ) -> None:
        self.usage = UsageIndex(tree, config.counter)
        self._counter = config.counter
        self.runtime = LifecycleRuntime(
            tree,
            profile=config.profile,
            settings=config.settings_source(),
            boot_writer=config.boot_writer,
            notes_home=config.resolved_notes_home(),
            usage=self.usage,
            counter=config.counter,
            rng=rng,
            clock=clock,
            audit=audit,
        )
        self.writer = SessionWriter(tree, ids=rng, clock=clock)
        self._cwd = config.cwd
        self._on_notice = on_notice
        self.model: ModelInfo | None = None

    @property
    def audit(self) -> AuditLog | None:
        return self.runtime.audit

    # -- host moments ------------------------------------------------------------------------

    def start(self, reason: SessionStartReason) -> Applied:
        """``session_start``: a new session gets its root boot; a resumed one its repair."""
        return self._apply(SessionStart(reason=reason), 0)

    def navigated(self, old_leaf: str | None, new_leaf: str | None) -> Applied:
        """``session_tree``: the history moved the leaf to another branch."""
        return self._apply(SessionTreeEvent(new_leaf_id=new_leaf, old_leaf_id=old_leaf), 0)

    def reserve(self, model: ModelInfo | None) -> tuple[int, bool]:
        """The reserve and whether resets are automatic, as the policy has them for
        ``model`` (Pi's per-model overrides included)."""
        policy = self.runtime.policy(HostContext(model=model, cwd=self._cwd))
        return policy.thresholds.reserve, policy.automatic

    def fresh_window_tokens(self, tools: Sequence[ToolSpec]) -> int:
        """What a new window holds before anything happens in it: the current boot, the
        continuation and the tools' schemas, as this session counts tokens."""
        boots = [e for e in self.runtime.tree.branch() if boot_window_id(e) is not None]
        texts = [content_text(getattr(boots[-1], "content", ""))] if boots else []
        continuation = self.runtime.texts.continuation
        return fresh_window_tokens(self._counter, [*texts, continuation], tools)

    def select(self, model: ModelInfo) -> None:
        """``model_select`` when the serving model changes between requests."""
        changed = self.model is not None and self.model != model
        self.model = model
        if changed:
            self._handle(ModelSelect(model=model), 0)

    def turn_start(self, pending: int) -> None:
        self._handle(TurnStart(), pending)

    def provider_context(
        self,
        messages: Sequence[Message],
        pending: int,
        conversation: Sequence[Message] | None = None,
    ) -> Provided:
        """``context`` then ``context_with_system`` (Pi's order and message shapes).
        ``conversation`` is ``messages`` without system messages when the caller has it: the
        tree's transcripts stay :class:`Transcript` lists, so each hook and its audit record
        cost O(window), not O(session)."""
        current = messages
        visible = conversation if conversation is not None else _visible(messages)
        budget = self._handle(Context(messages=visible), pending).value
        if isinstance(budget, MessagesResult) and not _same(budget.messages, visible):
            current = _headed(fold_system(_systems(current)), budget.messages)
        result = self._handle(ContextWithSystem(messages=current), pending)
        if isinstance(result.value, MessagesResult):
            current = result.value.messages
        cancel = any(isinstance(effect, AbortRun) for effect in result.effects)
        return Provided(messages=current, cancel=cancel)

    def tool(
        self, name: str, arguments: Mapping[str, JSON], call_id: str, pending: int
    ) -> ToolResult | ToolOutcome:
        """One tool call: a lifecycle tool's result (R16, R17), or a notes or history
        tool's outcome (ok, refusal or error, N4)."""
        event = ToolCall(name=name, arguments=dict(arguments), tool_call_id=call_id)
        value = self._handle(event, pending).value
        assert isinstance(value, ToolResult | ToolOutcome), f"tool {name!r} gave no result"
        return value

    def turn_end(self, message: Message, outcome: Outcome, pending: int) -> Applied:
        return self._apply(
            TurnEnd(message=message, outcome=outcome, pending_messages=pending), pending
        )

    def run_end(self, outcome: Outcome, pending: int) -> Applied:
        """``agent_end`` then ``agent_before_settle`` (a run that would stop)."""
        self._handle(AgentEnd(), pending)
        return self._apply(AgentBeforeSettle(outcome=outcome, pending_messages=pending), pending)

    def aborted(self) -> None:
        """The caller cancelled the run: ``agent_end`` with an aborted signal (R37)."""
        result = self.runtime.handle(AgentEnd(), evolve(self.context(0), signal_aborted=True))
        self._notify(result)

    def settled(self) -> None:
        self._handle(AgentSettled(), 0)

    def command(self, name: str, args: str = "") -> Applied:
        """``/wipe-memory`` or ``/pi-context [on|off]`` between runs."""
        return self._apply(Command(name=name, args=args), 0)

    # -- plumbing ----------------------------------------------------------------------------

    def context(self, pending: int) -> HostContext:
        """The ``ctx`` facts: usage of the branch, the serving model, queued input."""
        model = self.model
        window = model.context_window if model is not None else None
        return HostContext(
            usage=ContextUsage(tokens=self.usage.branch_tokens(), context_window=window),
            model=model,
            has_pending_messages=pending > 0,
            cwd=self._cwd,
        )

    def _handle(self, event: HookEvent, pending: int) -> HookResult:
        result = self.runtime.handle(event, self.context(pending))
        self._notify(result)
        return result

    def _apply(self, event: HookEvent, pending: int) -> Applied:
        """A hook whose entries the session takes now (an idle Pi host, pi-host §4)."""
        return apply(self._handle(event, pending), self.writer, event)

    def _notify(self, result: HookResult) -> None:
        for notice in result.notices:
            self._on_notice(notice)


def _visible(messages: Sequence[Message]) -> tuple[Message, ...]:
    """What ``context`` carries: the conversation without system messages."""
    return tuple(m for m in messages if m.get("role") != "system")


def _systems(messages: Sequence[Message]) -> list[Message]:
    if isinstance(messages, Transcript):
        return messages.system_messages()
    return [m for m in messages if m.get("role") == "system"]


def _headed(head: Message | None, messages: Sequence[Message]) -> Sequence[Message]:
    """``[head] + messages`` (no head when ``None``), a transcript's digests reused."""
    if isinstance(messages, Transcript):
        return messages.suffix(0, head)
    return (*([head] if head is not None else []), *messages)


def _same(left: Sequence[Message], right: Sequence[Message]) -> bool:
    """Pi's ``sameMessages``: the same message objects in the same order."""
    return len(left) == len(right) and all(a is b for a, b in zip(left, right, strict=True))
