"""The fail-closed projection: what a provider request may carry when Python cannot answer.

The bridge extension carries the same algorithm in JavaScript (``failclosed.mjs``) and uses
it only when the lifecycle server is down, hung, broken or degraded; the model-session twin
(:mod:`.twin`) uses this Python form in the same situations. Both find the current window
by a scan from the leaf back to the nearest valid marker (R8, R9, R11; no index to keep in
step) and then cut the request exactly as the lifecycle does (R67–R69, the projection
functions of :mod:`pictx_fsm.extensions.pi_context.reset_projection`). A reset window whose boot is
not in
the request (R68) keeps only the folded system head and the request is aborted: erased
history is never sent, whichever side answers. Tests prove the JS and Python forms equal,
and both equal to the lifecycle's projection, on every corpus session, every real Pi trace
and generated branches.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from pictx_fsm.extensions.pi_context.reset_projection import (
    ResetProjection,
    project_marker_window,
    project_root_window,
)
from pictx_fsm.extensions.pi_context.windows import root_window_id, window_id_of_marker
from pictx_fsm.session.projection import Message
from pictx_fsm.session.tree import SessionTree

__all__ = ["ScannedWindow", "fail_closed", "marker_on_path", "scan_window"]


@frozen(kw_only=True)
class ScannedWindow:
    """The current window as a scan from the leaf finds it."""

    window_id: str
    marker_id: str | None

    @property
    def is_root(self) -> bool:
        return self.marker_id is None


def scan_window(tree: SessionTree) -> ScannedWindow:
    """R9/R11: the last valid marker on the active branch, found from the leaf backwards;
    else the root window of the current session id (R10)."""
    leaf = tree.leaf
    for node in leaf.ancestors() if leaf is not None else ():
        window_id = window_id_of_marker(node.entry)
        if window_id is not None:
            return ScannedWindow(window_id=window_id, marker_id=node.id)
    return ScannedWindow(window_id=root_window_id(tree.session_id), marker_id=None)


def marker_on_path(tree: SessionTree, entry_id: str | None) -> bool:
    """Whether the path from ``entry_id`` back to the root holds a valid marker (R62, R75:
    native compaction and branch summaries would send that path's history to the provider)."""
    node = tree.find(entry_id) if entry_id else None
    return node is not None and any(
        window_id_of_marker(n.entry) is not None for n in node.ancestors()
    )


def fail_closed(messages: Sequence[Message], window: ScannedWindow) -> ResetProjection:
    """R67–R69 for ``window``; ``missing_boot`` means: abort the request (R68)."""
    if window.is_root:
        return project_root_window(messages, window.window_id)
    return project_marker_window(messages, window.window_id)
