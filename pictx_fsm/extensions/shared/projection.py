"""The family's provider-context projection (lifecycle R67–R69, notesoup S78–S80), as pure
functions over the message list Pi hands ``context_with_system`` and a window scheme.

A marker window is cut at its boot: the folded system head of what precedes the boot, then
the boot and everything after it (R67, S78). A missing boot yields only the folded head, and
the caller cancels the request (R68, S79). The root window keeps the transcript with one
active root boot, the last one, where the first boot stood (R69, S80).
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from pictx_fsm.extensions.shared.windows import WindowScheme
from pictx_fsm.session.projection import Message, fold_system

__all__ = [
    "ResetProjection",
    "first_boot_index",
    "project_marker_window",
    "project_root_window",
]


@frozen(kw_only=True)
class ResetProjection:
    """What the provider receives for the current window.

    ``cut_index`` is the index, in the input, of the boot that opens the active window (R67);
    ``None`` when nothing was cut (root window, or a missing boot). ``missing_boot`` is R68:
    the runtime must notify and abort, and ``messages`` is the safe head alone.
    """

    messages: tuple[Message, ...]
    cut_index: int | None
    missing_boot: bool


def first_boot_index(
    messages: Sequence[Message], scheme: WindowScheme, window_id: str | None = None
) -> int | None:
    """R14: the first boot message (for ``window_id`` when given)."""
    for index, message in enumerate(messages):
        if scheme.is_boot_message(message, window_id):
            return index
    return None


def project_marker_window(
    messages: Sequence[Message], window_id: str, scheme: WindowScheme
) -> ResetProjection:
    """R67/R68: ``[folded system prefix] ++ messages[cut:]`` where ``cut`` is the first boot
    for ``window_id``; without one, only the folded system message of the whole list."""
    cut = first_boot_index(messages, scheme, window_id)
    if cut is None:
        head = fold_system(messages)
        return ResetProjection(
            messages=() if head is None else (head,), cut_index=None, missing_boot=True
        )
    head = fold_system(messages[:cut])
    prefix = () if head is None else (head,)
    return ResetProjection(messages=(*prefix, *messages[cut:]), cut_index=cut, missing_boot=False)


def project_root_window(
    messages: Sequence[Message], root_id: str, scheme: WindowScheme
) -> ResetProjection:
    """R69: with boots for ``root_id``, keep only the last of them, at the index of the first
    boot of any window (a fork's copied root boot carries the old session's root id)."""
    matching = [message for message in messages if scheme.is_boot_message(message, root_id)]
    if not matching:
        return ResetProjection(messages=tuple(messages), cut_index=None, missing_boot=False)
    first = first_boot_index(messages, scheme)
    assert first is not None
    without_boots = [message for message in messages if not scheme.is_boot_message(message)]
    projected = (*without_boots[:first], matching[-1], *without_boots[first:])
    return ResetProjection(messages=projected, cut_index=None, missing_boot=False)
