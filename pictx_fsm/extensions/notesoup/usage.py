"""The active window's usage as notesoup 0.38 measures it (S52, S53).

In the root window the host's own ``getContextUsage()`` is used. In a reset window the
window is measured directly: Pi's canonical projection of the branch (which a
checkpoint-backed marker has already cut at its checkpoint, S41), or, for a legacy
marker-only window (a migrated 0.25 window among them), that projection cut at the window's
boot (S78); then pi-ai 1.1's estimator (chars / 3.5 after the last trustworthy usage) over
``convertToLlm`` of it. Anything that would throw — a legacy window whose boot is gone, a
message the estimator rejects — makes the usage unknown.
"""

from __future__ import annotations

from pictx_fsm.extensions.notesoup.windows import checkpoint_backed
from pictx_fsm.extensions.shared.policy import Usage
from pictx_fsm.extensions.shared.projection import project_marker_window
from pictx_fsm.extensions.shared.window_index import SchemeWindowIndex
from pictx_fsm.host.events import HostContext
from pictx_fsm.session.estimate import EstimateError, estimate_context_1x
from pictx_fsm.session.projection import convert_to_llm
from pictx_fsm.session.tree import SessionTree

__all__ = ["window_usage"]


def window_usage(tree: SessionTree, ctx: HostContext, windows: SchemeWindowIndex) -> Usage | None:
    """S52: the active window's usage, or ``None`` when it cannot be known."""
    window = windows.current_window
    if window.is_root:
        if ctx.usage is None:
            return None
        return Usage(tokens=ctx.usage.tokens, context_window=ctx.usage.context_window)
    context_window = ctx.model.context_window if ctx.model else None
    if context_window is None and ctx.usage is not None:
        context_window = ctx.usage.context_window
    if not context_window:
        return None
    messages = tuple(tree.transcripts.transcript())
    if not checkpoint_backed(tree, window):
        projected = project_marker_window(messages, window.window_id, windows.scheme)
        if projected.missing_boot:
            return None
        messages = projected.messages
    try:
        tokens = estimate_context_1x(convert_to_llm(messages))
    except EstimateError:
        return None
    return Usage(tokens=tokens, context_window=context_window)
