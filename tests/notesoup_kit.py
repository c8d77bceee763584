"""The rule-test stand-in for Pi, driving one :class:`NotesoupRuntime` (notesoup 0.38).

The same idle host as :mod:`lifecycle_kit` (it appends what Pi would, raises hooks with a
configurable context, commits boundary drafts in order, collects notices); only the runtime,
the commands and the window scheme are notesoup's. Hooks can be raised in any order, so
rule tests also reach what Pi's event order never produces (the exempted transitions of
``models/notesoup/coverage-exemptions.toml``).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from lifecycle_kit import SESSION_ID, Kit, audits_verify
from session_builders import SessionBuilder

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.notesoup.lifecycle.facts import RESET_CONTROL
from pictx_fsm.extensions.notesoup.runtime import NotesoupRuntime
from pictx_fsm.extensions.notesoup.texts import (
    CLEAR_MEMORY_COMMAND,
    CLEAR_MEMORY_COMMAND_ALIAS,
    NOTESOUP_COMMAND,
)
from pictx_fsm.extensions.notesoup.windows import NotesoupWindows
from pictx_fsm.host.effects import CompactionDraft, Draft, HookResult, ToolResult
from pictx_fsm.host.events import ToolCall, TurnEnd
from pictx_fsm.host.settings import SettingsSource, StaticSettingsSource
from pictx_fsm.machines import Configuration

__all__ = ["NotesoupKit", "audits_verify"]

CLOCK_MS = 1_796_000_000_000


class NotesoupKit(Kit):
    """One session and one notesoup runtime."""

    @classmethod
    def create(  # type: ignore[override]
        cls,
        *,
        session_id: str = SESSION_ID,
        settings: SettingsSource | None = None,
        notes_home: Path | None = None,
        seed: int = 0,
        tokens: int | None = 1_000,
        **runtime: Any,
    ) -> NotesoupKit:
        build = SessionBuilder(session_id)
        rt = NotesoupRuntime(
            build.tree,
            settings=settings or StaticSettingsSource(global_settings={}),
            notes_home=notes_home,
            notes_agent="tester",
            rng=random.Random(seed),
            clock=lambda: CLOCK_MS,
            audit=AuditLog(None),
            **runtime,
        )
        kit: NotesoupKit = cls.attach(build, rt, tokens)
        return kit

    def append_draft(self, draft: Draft) -> str:
        """As Pi commits it; notesoup's checkpoint is an empty native compaction that keeps
        nothing before it (S38, S39)."""
        if isinstance(draft, CompactionDraft):
            return self.build.compaction(draft.summary, first_kept=draft.first_kept_entry_id)
        return super().append_draft(draft)

    # -- commands and tools --------------------------------------------------------------------

    def clear_memory(self, prompt: str = "", *, alias: bool = False, **ctx: Any) -> HookResult:
        name = CLEAR_MEMORY_COMMAND_ALIAS if alias else CLEAR_MEMORY_COMMAND
        return self.command(name, prompt, **ctx)

    def notesoup(self, args: str = "", **ctx: Any) -> HookResult:
        return self.command(NOTESOUP_COMMAND, args, **ctx)

    def tool_turn(self, *tools: str, **ctx: Any) -> HookResult:
        """The model calls ``tools`` in one batch; results appended in order, then
        ``turn_end``."""
        calls = [{"name": name, "arguments": {}} for name in tools]
        entry_id = self.build.assistant("calling", stop="toolUse", calls=calls)
        for name in tools:
            reply = self.handle(ToolCall(name=name), **ctx)
            value = reply.value
            text = value.text if isinstance(value, ToolResult) else str(value)
            self.build.tool_result(text, name=name)
        event = TurnEnd(message=self.message(entry_id), outcome="completed")
        return self.handle(event, **ctx)

    # -- reading and forcing state ----------------------------------------------------------------

    def region(self, machine: str, region: str) -> str:
        return self.configuration(machine)[region]

    @property
    def request(self) -> str:
        return self.region(RESET_CONTROL, "request")

    @property
    def overflow(self) -> str:
        return self.region(RESET_CONTROL, "overflow")

    def force(self, machine: str, **regions: str) -> None:
        """Put regions of ``machine`` in the given states directly — a state Pi's event order
        never produces, for the rules that still decide it."""
        states = dict(self.configuration(machine))
        states.update(regions)
        configuration = Configuration(states=tuple(states.items()))
        self.runtime.state = self.runtime.state.with_configuration(machine, configuration)

    def window_id(self) -> str:
        return NotesoupWindows.of(self.tree).current_window.window_id
