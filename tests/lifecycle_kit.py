"""A small stand-in for Pi 0.87 that drives one :class:`LifecycleRuntime` in rule tests.

The kit holds a :class:`SessionTree` and a runtime, appends the entries the host would
append (user, assistant, tool results, custom entries and messages), raises hook events with
a configurable :class:`HostContext`, and applies each :class:`HookResult` the way Pi does
(pi-host §4, §5):

* boundary drafts of ``turn_end`` / ``agent_before_settle`` are appended in order after the
  turn's last entry (the assistant message or its last tool result); when the handler
  returns ``undefined`` the incoming drafts of earlier extensions are committed unchanged;
* ``SendMessage`` and ``AppendEntry`` append at once (the kit is an idle host: every send in
  the lifecycle happens at startup, tree navigation or in a command);
* notices are collected in :attr:`Kit.notices`, ``ctx.abort()`` calls are counted.

It is deliberately not the model host (``pictx_fsm.hosts.model``): no agent loop, no queues,
no ``continue`` refusal. Every kit records an audit log; :func:`audits_verify` (autouse where
imported) verifies every chain written during a test.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from session_builders import SessionBuilder

from pictx_fsm.audit.log import AuditLog, verify_chain, verify_records
from pictx_fsm.extensions.pi_context.boot_writer import BootWriter
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime, SettingsFactory
from pictx_fsm.extensions.pi_context.texts import Profile, Texts
from pictx_fsm.extensions.pi_context.windows import WindowIndex
from pictx_fsm.host.effects import (
    AbortRun,
    AppendEntry,
    BoundaryResult,
    CustomDraft,
    CustomMessageDraft,
    Draft,
    HookResult,
    Notify,
    SendMessage,
    ToolResult,
)
from pictx_fsm.host.events import (
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
    SessionBeforeCompact,
    SessionBeforeTree,
    SessionShutdown,
    SessionStart,
    SessionTreeEvent,
    ToolCall,
    TurnEnd,
    TurnStart,
)
from pictx_fsm.host.settings import SettingsSource
from pictx_fsm.machines import Configuration
from pictx_fsm.session.entries import ABSENT, CustomEntry, CustomMessageEntry, Entry, MessageEntry
from pictx_fsm.session.projection import project_branch
from pictx_fsm.session.tree import SessionTree

SESSION_ID = "12345678-abcd"
ROOT_ID = "pcw:12345678:root"
WINDOW = 200_000
MODEL = ModelInfo(provider="faux", id="faux-1", context_window=WINDOW, max_tokens=16_384)
OVERFLOW_ERROR = "Prompt too long: context exceeds maximum context length"
_OUTCOMES = {"aborted": "aborted", "error": "error"}

_LIVE_KITS: list[Kit] = []


@attrs.define
class Kit:
    """One session, one runtime, and what the host saw (notices, aborts, results)."""

    tree: SessionTree
    runtime: LifecycleRuntime
    audit: AuditLog
    build: SessionBuilder
    ctx: HostContext
    notices: list[Notify] = attrs.field(factory=list)
    results: list[HookResult] = attrs.field(factory=list)
    aborts: int = 0

    @classmethod
    def create(
        cls,
        *,
        profile: str = "0.25.1",
        session_id: str = SESSION_ID,
        settings: SettingsSource | SettingsFactory | None = None,
        notes: Any = None,
        texts: Texts | None = None,
        seed: int = 0,
        tokens: int | None = 1_000,
        audit_path: Path | None = None,
        **runtime: Any,
    ) -> Kit:
        build = SessionBuilder(session_id)
        if notes is not None:
            texts = texts or Texts.for_profile(Profile.parse(profile))
            runtime["boot_writer"] = BootWriter(texts=texts, notes=notes)
        rt = LifecycleRuntime(
            build.tree,
            profile=profile,
            texts=texts,
            settings=settings,
            rng=random.Random(seed),
            clock=lambda: 1_796_000_000_000,
            audit=AuditLog(audit_path),
            **runtime,
        )
        assert rt.audit is not None
        ctx = HostContext(usage=ContextUsage(tokens=tokens, context_window=WINDOW), model=MODEL)
        kit = cls(tree=build.tree, runtime=rt, audit=rt.audit, build=build, ctx=ctx)
        _LIVE_KITS.append(kit)
        return kit

    # -- raising hooks ---------------------------------------------------------------------------

    def handle(self, event: HookEvent, **ctx: Any) -> HookResult:
        """Raise one hook with ``self.ctx`` (fields overridden by ``ctx``) and apply it."""
        result = self.runtime.handle(event, attrs.evolve(self.ctx, **ctx))
        self.results.append(result)
        self._apply_effects(result)
        if isinstance(event, TurnEnd | AgentBeforeSettle):
            self._commit(event, result)
        return result

    def _apply_effects(self, result: HookResult) -> None:
        for effect in result.effects:
            if isinstance(effect, Notify):
                self.notices.append(effect)
            elif isinstance(effect, AppendEntry):
                self.append_draft(CustomDraft(custom_type=effect.custom_type, data=effect.data))
            elif isinstance(effect, SendMessage):
                self.append_draft(_send_draft(effect))
            elif isinstance(effect, AbortRun):
                self.aborts += 1

    def _commit(self, event: TurnEnd | AgentBeforeSettle, result: HookResult) -> None:
        value = result.value
        drafts = value.entries if isinstance(value, BoundaryResult) else event.entries
        for draft in drafts:
            self.append_draft(draft)

    def append_draft(self, draft: Draft) -> str:
        """Append one draft as Pi commits it (``custom`` or ``custom_message``)."""
        if isinstance(draft, CustomDraft):
            extra = {} if draft.data is ABSENT else {"data": draft.data}
            return self.build.add("custom", customType=draft.custom_type, **extra)
        assert isinstance(draft, CustomMessageDraft), draft
        fields = {"customType": draft.custom_type, "content": draft.content}
        fields["display"] = draft.display
        if draft.details is not ABSENT:
            fields["details"] = draft.details
        return self.build.add("custom_message", **fields)

    # -- hooks by name ---------------------------------------------------------------------------

    def start(self, reason: str = "startup", **ctx: Any) -> HookResult:
        return self.handle(SessionStart(reason=reason), **ctx)  # type: ignore[arg-type]

    def turn_start(self, **ctx: Any) -> HookResult:
        return self.handle(TurnStart(), **ctx)

    def turn_end(
        self,
        text: str = "answer",
        *,
        stop: str = "stop",
        outcome: str | None = None,
        total: int = 100,
        error: str | None = None,
        incoming: Sequence[Draft] = (),
        pending: int = 0,
        **ctx: Any,
    ) -> HookResult:
        """The model answered: append the assistant message, then raise ``turn_end``."""
        fields: dict[str, Any] = {} if error is None else {"errorMessage": error}
        entry_id = self.build.assistant(text, stop=stop, total=total, **fields)
        message = self.message(entry_id)
        kind = outcome or _OUTCOMES.get(stop, "completed")
        event = TurnEnd(message=message, outcome=kind, entries=incoming, pending_messages=pending)  # type: ignore[arg-type]
        return self.handle(event, **ctx)

    def overflow_turn(self, **ctx: Any) -> HookResult:
        """A provider overflow error (R33), as Pi reports it at ``turn_end``."""
        return self.turn_end("", stop="error", error=OVERFLOW_ERROR, **ctx)

    def tool_turn(self, *tools: str, **ctx: Any) -> HookResult:
        """The model calls lifecycle tools in one batch; results are appended in call order,
        then ``turn_end`` closes the turn."""
        calls = [{"name": name, "arguments": {}} for name in tools]
        entry_id = self.build.assistant("calling", stop="toolUse", calls=calls)
        for name in tools:
            reply = self.tool(name, **ctx)
            assert isinstance(reply.value, ToolResult)
            self.build.tool_result(reply.value.text, name=name)
        event = TurnEnd(message=self.message(entry_id), outcome="completed")
        return self.handle(event, **ctx)

    def tool(self, name: str, **ctx: Any) -> HookResult:
        return self.handle(ToolCall(name=name), **ctx)

    def tool_payload(self, name: str, **ctx: Any) -> Any:
        value = self.tool(name, **ctx).value
        assert isinstance(value, ToolResult)
        return json.loads(value.text)

    def agent_end(self, **ctx: Any) -> HookResult:
        return self.handle(AgentEnd(), **ctx)

    def before_settle(
        self,
        outcome: str = "completed",
        *,
        pending: int = 0,
        incoming: Sequence[Draft] = (),
        **ctx: Any,
    ) -> HookResult:
        event = AgentBeforeSettle(outcome=outcome, pending_messages=pending, entries=incoming)  # type: ignore[arg-type]
        return self.handle(event, **ctx)

    def settled(self, **ctx: Any) -> HookResult:
        return self.handle(AgentSettled(), **ctx)

    def context(self, messages: Sequence[Any] = (), **ctx: Any) -> HookResult:
        return self.handle(Context(messages=messages), **ctx)

    def project(self, **ctx: Any) -> HookResult:
        """``context_with_system`` with Pi's projection of the active branch."""
        return self.handle(ContextWithSystem(messages=self.projection()), **ctx)

    def compact(self, reason: str = "manual", *, signal_aborted: bool = False) -> HookResult:
        event = SessionBeforeCompact(reason=reason, signal_aborted=signal_aborted)  # type: ignore[arg-type]
        return self.handle(event)

    def before_tree(self, target_id: str | None, *, wants_summary: bool = True) -> HookResult:
        return self.handle(SessionBeforeTree(user_wants_summary=wants_summary, target_id=target_id))

    def navigate(self, entry_id: str | None, **ctx: Any) -> HookResult:
        """Tree navigation without a summary: move the leaf, then ``session_tree``."""
        self.tree.navigate(entry_id)
        return self.handle(SessionTreeEvent(new_leaf_id=entry_id), **ctx)

    def shutdown(self) -> HookResult:
        return self.handle(SessionShutdown())

    def model_select(self, model: ModelInfo = MODEL) -> HookResult:
        return self.handle(ModelSelect(model=model), model=model)

    def command(self, name: str, args: str = "", **ctx: Any) -> HookResult:
        return self.handle(Command(name=name, args=args), **ctx)

    def wipe(self, **ctx: Any) -> HookResult:
        return self.command("wipe-memory", **ctx)

    def toggle(self, args: str, **ctx: Any) -> HookResult:
        return self.command("pi-context", args, **ctx)

    # -- reading -------------------------------------------------------------------------------

    def message(self, entry_id: str) -> dict[str, Any]:
        entry = self.tree.get(entry_id)
        assert isinstance(entry, MessageEntry)
        return dict(entry.message.raw)

    def projection(self) -> tuple[Any, ...]:
        return tuple(project_branch(self.tree.branch()).messages)

    def branch_types(self) -> list[str]:
        """The active branch as ``type`` or ``type:customType`` labels, root first."""
        return [_label(entry) for entry in self.tree.branch()]

    def tail_types(self, since: int) -> list[str]:
        """Labels of the entries appended after the first ``since`` entries of the branch."""
        return self.branch_types()[since:]

    def of_type(self, custom_type: str) -> list[Any]:
        """Entries on the active branch whose ``customType`` is ``custom_type`` (typed ``Any``:
        tests read ``data`` or ``details`` of custom entries and messages alike)."""
        return [e for e in self.tree.branch() if getattr(e, "custom_type", None) == custom_type]

    def notice_texts(self) -> list[str]:
        return [notice.message for notice in self.notices]

    def take_notices(self) -> list[Notify]:
        taken, self.notices = self.notices, []
        return taken

    def configuration(self, machine: str) -> dict[str, str]:
        return dict(self.runtime.configuration(machine).states)

    def set_toggle(self, state: str) -> None:
        """Put the toggle machine in ``state`` directly (``off`` without its clear)."""
        toggle = Configuration(states=(("toggle", state),))
        self.runtime.state = self.runtime.state.with_configuration("toggle", toggle)

    def window_id(self) -> str:
        return WindowIndex.of(self.tree).current_window.window_id

    def set_tokens(self, tokens: int | None) -> None:
        """What ``ctx.getContextUsage()`` reports from now on (the root window's usage)."""
        self.ctx = attrs.evolve(self.ctx, usage=ContextUsage(tokens=tokens, context_window=WINDOW))

    def verify(self) -> None:
        """The kit's audit chain verifies (in memory, or the file it was written to)."""
        if self.audit.path is None:
            verify_records(self.audit.records)
        else:
            self.audit.close()
            # Another runtime may have continued the same file (a resumed session).
            assert verify_chain(self.audit.path).records >= len(self.audit.records)


def _send_draft(effect: SendMessage) -> CustomMessageDraft:
    return CustomMessageDraft(
        custom_type=effect.custom_type,
        content=effect.content,
        display=effect.display,
        details=effect.details,
    )


def _label(entry: Entry) -> str:
    if isinstance(entry, CustomEntry | CustomMessageEntry):
        return f"{entry.type}:{entry.custom_type}"
    if isinstance(entry, MessageEntry):
        return f"message:{entry.message.role}"
    return str(getattr(entry, "type", "?"))


def boot_ids(content: str) -> dict[str, str]:
    """The ids a boot's ``<context_window>`` block states: ``first``, ``current``,
    ``previous`` (absent for a root boot)."""
    keys = {"First": "first", "Current": "current", "Previous": "previous"}
    ids: dict[str, str] = {}
    for line in content.splitlines():
        for word, key in keys.items():
            prefix = f"{word} context window id: "
            if line.startswith(prefix):
                ids[key] = line[len(prefix) :]
    return ids


@pytest.fixture(autouse=True)
def audits_verify() -> Iterator[None]:
    """Every audit log a test wrote must verify (issue 3 item 7)."""
    _LIVE_KITS.clear()
    yield
    kits, _LIVE_KITS[:] = list(_LIVE_KITS), []
    for kit in kits:
        kit.verify()
