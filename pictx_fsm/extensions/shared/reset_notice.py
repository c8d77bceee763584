"""The success notice of a reset (pi-context R63, D3; notesoup S46), the same actions in
every extension of the family: the built window is remembered, announced once its reset is
committed (the extension's ``notice`` with the window id), and forgotten when the reset is
abandoned."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pictx_fsm.extensions.shared.machinery import Facts
from pictx_fsm.host.effects import Notify

__all__ = ["reset_notice_actions"]


def reset_notice_actions(notice: str) -> dict[str, Callable[[Facts, Any], Any]]:
    """The three actions, by name, announcing ``notice`` (a ``{window_id}`` template)."""

    def remember_reset_notice(facts: Facts, turn: Any) -> Any:
        window_id = facts["built_window_id"]
        state = turn.state
        if window_id in state.pending_resets:
            return turn
        return turn.evolve(state=state.evolve(pending_resets=(*state.pending_resets, window_id)))

    def announce_committed_resets(facts: Facts, turn: Any) -> Any:
        announced = facts["committed_pending_resets"]
        notices = (
            Notify(message=notice.format(window_id=window_id), level="info")
            for window_id in announced
        )
        pending = tuple(w for w in turn.state.pending_resets if w not in announced)
        return turn.emit(*notices).evolve(state=turn.state.evolve(pending_resets=pending))

    def forget_reset_notices(facts: Facts, turn: Any) -> Any:
        return turn.evolve(state=turn.state.evolve(pending_resets=()))

    actions = (remember_reset_notice, announce_committed_resets, forget_reset_notices)
    return {fn.__name__: fn for fn in actions}
