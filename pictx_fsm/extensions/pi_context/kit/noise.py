"""Other extensions beside pi-context: the boundary and queue behaviour a real Pi host allows
and the lifecycle must survive.

Pi runs every extension's handlers in load order and chains boundary results (pi-host §3,
§4.2), so what pi-context returns is not necessarily what Pi commits, and what pi-context
sees can already include another extension's doing. The world loads two such extensions,
inert until a host action arms them for one event (:class:`Arms`):

* **late** (loaded after pi-context; ``turn_end``, ``agent_before_settle``):
  ``void`` answers with the incoming drafts plus a ``context_edit`` on an unknown entry, so Pi
  voids every draft of the boundary and its continue flag (rule 2, trace ``c3b``) — pi-context
  believes it committed a reset or a reminder that never reaches the branch; ``hide_boot``
  (``turn_end`` only) adds a valid ``context_edit`` that hides the current window's boot from
  the model context (the boot R65 refuses to repair and R68 must catch).
* **early** (loaded before pi-context; ``agent_before_settle``): ``queue`` queues a follow-up,
  as ``pi.sendUserMessage(text, {deliverAs: "followUp"})`` from that handler would, so
  pi-context's own handler sees a queued message (R35).

Pi re-runs extension factories on every runtime replacement, so a bind disarms everything.
"""

from __future__ import annotations

from collections.abc import Callable

from attrs import define

from pictx_fsm.extensions.pi_context.windows import WindowIndex, boot_window_id
from pictx_fsm.host.effects import BoundaryResult, ContextEditDraft, Draft, HookResult
from pictx_fsm.host.events import AgentBeforeSettle, HookEvent, HostContext, TurnEnd
from pictx_fsm.host.extension import BaseExtension, Reply
from pictx_fsm.session.tree import SessionTree

__all__ = ["UNKNOWN_TARGET", "Arms", "EarlyNoise", "LateNoise"]

UNKNOWN_TARGET = "noise-no-such-entry"
"""The ``context_edit`` target that makes Pi's preview throw ``Entry … not found``."""


@define
class Arms:
    """What the noise extensions will do at their next matching event (each fires once)."""

    void: bool = False
    hide_boot: bool = False
    queue: str | None = None
    """The follow-up text to queue."""

    def clear(self) -> None:
        self.void = self.hide_boot = False
        self.queue = None


class LateNoise(BaseExtension):
    """Loaded after pi-context: rewrites the accumulated boundary result."""

    name = "noise"
    hooks = frozenset({"turn_end", "agent_before_settle"})

    def __init__(self, arms: Arms) -> None:
        self._arms = arms
        self._tree: SessionTree | None = None

    def bind(self, tree: SessionTree) -> None:
        self._arms.clear()
        self._tree = tree

    def handle(self, event: HookEvent, ctx: HostContext) -> Reply:
        if not isinstance(event, TurnEnd | AgentBeforeSettle):
            return None
        if self._arms.void:
            self._arms.void = False
            return _boundary(event, (ContextEditDraft(target_id=UNKNOWN_TARGET),))
        if self._arms.hide_boot and isinstance(event, TurnEnd):
            self._arms.hide_boot = False
            edits = tuple(ContextEditDraft(target_id=boot) for boot in self._boots())
            return _boundary(event, edits) if edits else None
        return None

    def _boots(self) -> list[str]:
        """Ids of the current window's boot entries on the active branch."""
        tree = self._tree
        if tree is None:
            return []
        window_id = WindowIndex.of(tree).current_window.window_id
        return [e.id for e in tree.branch() if e.id and boot_window_id(e) == window_id]


class EarlyNoise(BaseExtension):
    """Loaded before pi-context: queues a follow-up from its ``agent_before_settle``."""

    name = "noise-early"
    hooks = frozenset({"agent_before_settle"})

    def __init__(self, arms: Arms, follow_up: Callable[[str], None]) -> None:
        self._arms = arms
        self._follow_up = follow_up

    def bind(self, tree: SessionTree) -> None:
        self._arms.clear()

    def handle(self, event: HookEvent, ctx: HostContext) -> Reply:
        text = self._arms.queue
        if text is not None and isinstance(event, AgentBeforeSettle):
            self._arms.queue = None
            self._follow_up(text)
        return None


def _boundary(event: TurnEnd | AgentBeforeSettle, drafts: tuple[Draft, ...]) -> HookResult:
    """The incoming drafts followed by ``drafts`` (the incoming continue flag is kept)."""
    value = BoundaryResult(entries=(*event.entries, *drafts))
    return HookResult(hook=type(event).HOOK, value=value)
