"""Every call from this host into the lifecycle runtime, and nothing else.

The rest of the package speaks entries (Pi JSON objects), Pi messages and pydantic-ai
messages; this module turns a host moment into the runtime's hook event and ``ctx`` facts,
and the :class:`~pictx_fsm.effects.HookResult` back into plain data: entries to append,
notices, whether to continue, whether the provider request must be cancelled. When the
runtime's public API settles, only this module changes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

from attrs import define, evolve, field, frozen

from pictx_fsm.audit import AuditLog
from pictx_fsm.effects import (
    AbortRun,
    AppendEntry,
    BoundaryResult,
    HookResult,
    MessagesResult,
    SendMessage,
    ToolResult,
)
from pictx_fsm.hooks import (
    AgentBeforeSettle,
    AgentEnd,
    AgentSettled,
    Command,
    Context,
    ContextUsage,
    ContextWithSystem,
    HookEvent,
    HostContext,
    ModelInfo,
    ModelSelect,
    SessionStart,
    SessionStartReason,
    SessionTreeEvent,
    ToolCall,
    TurnEnd,
    TurnStart,
)
from pictx_fsm.hosts.pydantic_ai.views import iso_ms
from pictx_fsm.policy import SettingsSource
from pictx_fsm.protocol import DEFAULT_PROFILE, Profile
from pictx_fsm.resets import BootWriter
from pictx_fsm.runtime import LifecycleRuntime
from pictx_fsm.session.estimate import TiktokenCounter, TokenCounter
from pictx_fsm.session.projection import fold_system
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.session.usage import UsageIndex

JSON: TypeAlias = Any
Message: TypeAlias = Mapping[str, JSON]
Outcome: TypeAlias = Literal["completed", "aborted", "error"]
Clock: TypeAlias = Callable[[], int]


ModelFacts: TypeAlias = ModelInfo
"""``ctx.model``: what the budget and the overflow classifier need of the serving model."""


@frozen(kw_only=True)
class Notice:
    level: str
    message: str


@frozen(kw_only=True)
class Applied:
    """What one hook asks of the host: entries to append (in order), whether the run goes on
    (``continue``), whether the provider request must be cancelled (R68)."""

    entries: tuple[dict[str, JSON], ...] = ()
    continue_: bool = False
    cancel: bool = False


@frozen(kw_only=True)
class Provided:
    """The provider context after ``context`` and ``context_with_system``."""

    messages: tuple[Message, ...]
    cancel: bool


@define(kw_only=True)
class LifecycleSettings:
    """How the runtime is built for a session (all optional, all injected)."""

    profile: Profile | str = DEFAULT_PROFILE
    settings: SettingsSource | None = None
    boot_writer: BootWriter | None = None
    counter: TokenCounter = field(factory=TiktokenCounter)
    cwd: str = ""


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
        on_notice: Callable[[Notice], None],
    ) -> None:
        self.usage = UsageIndex(tree, config.counter)
        self.runtime = LifecycleRuntime(
            tree,
            profile=config.profile,
            settings=config.settings,
            boot_writer=config.boot_writer,
            usage=self.usage,
            counter=config.counter,
            rng=rng,
            clock=clock,
            audit=audit,
        )
        self._clock = clock
        self._cwd = config.cwd
        self._on_notice = on_notice
        self.model: ModelFacts | None = None

    @property
    def audit(self) -> AuditLog | None:
        return self.runtime.audit

    # -- host moments ------------------------------------------------------------------------

    def start(self, reason: SessionStartReason) -> Applied:
        """``session_start``: a new session gets its root boot; a resumed one its repair."""
        return self._applied(self._handle(SessionStart(reason=reason), 0))

    def navigated(self, old_leaf: str | None, new_leaf: str | None) -> Applied:
        """``session_tree``: the history moved the leaf to another branch."""
        event = SessionTreeEvent(new_leaf_id=new_leaf, old_leaf_id=old_leaf)
        return self._applied(self._handle(event, 0))

    def select(self, model: ModelFacts) -> None:
        """``model_select`` when the serving model changes between requests."""
        changed = self.model is not None and self.model != model
        self.model = model
        if changed:
            self._handle(ModelSelect(model=model), 0)

    def turn_start(self, pending: int) -> None:
        self._handle(TurnStart(), pending)

    def provider_context(self, messages: Sequence[Message], pending: int) -> Provided:
        """``context`` then ``context_with_system`` (Pi's order and message shapes)."""
        current = list(messages)
        visible = tuple(m for m in current if m.get("role") != "system")
        budget = self._handle(Context(messages=visible), pending).value
        if isinstance(budget, MessagesResult) and not _same(budget.messages, visible):
            head = fold_system(current)
            current = [*([head] if head is not None else []), *budget.messages]
        result = self._handle(ContextWithSystem(messages=tuple(current)), pending)
        if isinstance(result.value, MessagesResult):
            current = list(result.value.messages)
        cancel = any(isinstance(effect, AbortRun) for effect in result.effects)
        return Provided(messages=tuple(current), cancel=cancel)

    def tool(self, name: str, pending: int) -> str:
        """A lifecycle tool's result text (R16, R17)."""
        value = self._handle(ToolCall(name=name), pending).value
        assert isinstance(value, ToolResult), f"tool {name!r} gave no result"
        return value.text

    def turn_end(self, message: Message, outcome: Outcome, pending: int) -> Applied:
        event = TurnEnd(message=message, outcome=outcome, pending_messages=pending)
        return self._applied(self._handle(event, pending))

    def run_end(self, outcome: Outcome, pending: int) -> Applied:
        """``agent_end`` then ``agent_before_settle`` (a run that would stop)."""
        self._handle(AgentEnd(), pending)
        event = AgentBeforeSettle(outcome=outcome, pending_messages=pending)
        return self._applied(self._handle(event, pending))

    def aborted(self) -> None:
        """The caller cancelled the run: ``agent_end`` with an aborted signal (R37)."""
        result = self.runtime.handle(AgentEnd(), evolve(self.context(0), signal_aborted=True))
        for effect in result.notices:
            self._on_notice(Notice(level=effect.level, message=effect.message))

    def settled(self) -> None:
        self._handle(AgentSettled(), 0)

    def command(self, name: str, args: str = "") -> Applied:
        """``/wipe-memory`` or ``/pi-context [on|off]`` between runs."""
        return self._applied(self._handle(Command(name=name, args=args), 0))

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
        for effect in result.notices:
            self._on_notice(Notice(level=effect.level, message=effect.message))
        return result

    def _applied(self, result: HookResult) -> Applied:
        entries = [
            self._entry(effect)
            for effect in result.effects
            if isinstance(effect, AppendEntry | SendMessage)
        ]
        value = result.value
        go_on = False
        if isinstance(value, BoundaryResult):
            entries += [self._stamped(draft.to_json()) for draft in value.entries]
            go_on = bool(value.continue_)
        cancel = any(isinstance(effect, AbortRun) for effect in result.effects)
        return Applied(entries=tuple(entries), continue_=go_on, cancel=cancel)

    def _entry(self, effect: AppendEntry | SendMessage) -> dict[str, JSON]:
        if isinstance(effect, AppendEntry):
            return self._stamped(effect.to_json() | {"type": "custom"})
        drafted = {k: v for k, v in effect.to_json().items() if k != "triggerTurn"}
        return self._stamped(drafted | {"type": "custom_message"})

    def _stamped(self, obj: Mapping[str, JSON]) -> dict[str, JSON]:
        body = {k: v for k, v in obj.items() if k != "effect"}
        return {**body, "id": "", "parentId": None, "timestamp": iso_ms(self._clock())}


def _same(left: Sequence[Message], right: Sequence[Message]) -> bool:
    """Pi's ``sameMessages``: the same message objects in the same order."""
    return len(left) == len(right) and all(a is b for a, b in zip(left, right, strict=True))
