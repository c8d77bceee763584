"""pi-context's provider-context projection (``context_with_system``, lifecycle R67–R69).

Pure functions over the message list Pi hands to ``context_with_system`` (its projection,
system messages included) and the current :class:`Window`. The notice and the abort of R68
are the runtime's effects; here a missing boot is only a flag on the result.

Given a :class:`~pictx_fsm.session.transcript.Transcript` (a list that knows where its system
messages are and, by :func:`~pictx_fsm.extensions.pi_context.windows.boot_key`, its boots),
each function answers from what the list knows, in O(what it
returns) — the window, not the session; given any other sequence, it scans. Both give the
same result (``tests/test_transcript.py``).

Source: ``projectWindow`` / ``projectRootWindow`` in ``src/context/context-window.ts`` of
pi-context 0.25.0 (astrosheep-zero/pi-context@5a9d4b49), which match R67–R69.
"""

from __future__ import annotations

from collections.abc import Sequence

from attrs import frozen

from pictx_fsm.extensions.pi_context.windows import Window, boot_key, is_boot_message
from pictx_fsm.session.projection import Message, fold_system
from pictx_fsm.session.transcript import Transcript

__all__ = [
    "ResetProjection",
    "first_boot_index",
    "project_marker_window",
    "project_reset",
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


def first_boot_index(messages: Sequence[Message], window_id: str | None = None) -> int | None:
    """R14: the first boot message (for ``window_id`` when given)."""
    if isinstance(messages, Transcript):
        return messages.first_tagged(boot_key, window_id)
    for index, message in enumerate(messages):
        if is_boot_message(message, window_id):
            return index
    return None


def project_marker_window(messages: Sequence[Message], window_id: str) -> ResetProjection:
    """R67/R68: ``[folded system prefix] ++ messages[cut:]`` where ``cut`` is the first boot
    for ``window_id``; without one, only the folded system message of the whole list."""
    if isinstance(messages, Transcript):
        return _project_marker_known(messages, window_id)
    cut = first_boot_index(messages, window_id)
    if cut is None:
        head = fold_system(messages)
        return ResetProjection(
            messages=() if head is None else (head,), cut_index=None, missing_boot=True
        )
    head = fold_system(messages[:cut])
    prefix = () if head is None else (head,)
    return ResetProjection(messages=(*prefix, *messages[cut:]), cut_index=cut, missing_boot=False)


def project_root_window(messages: Sequence[Message], root_id: str) -> ResetProjection:
    """R69: with boots for ``root_id``, keep only the last of them, at the index of the first
    boot of any window (a fork's copied root boot carries the old session's root id)."""
    if isinstance(messages, Transcript):
        return _project_root_known(messages, root_id)
    matching = [message for message in messages if is_boot_message(message, root_id)]
    if not matching:
        return ResetProjection(messages=tuple(messages), cut_index=None, missing_boot=False)
    first = first_boot_index(messages)
    assert first is not None
    without_boots = [message for message in messages if not is_boot_message(message)]
    projected = (*without_boots[:first], matching[-1], *without_boots[first:])
    return ResetProjection(messages=projected, cut_index=None, missing_boot=False)


def project_reset(messages: Sequence[Message], window: Window) -> ResetProjection:
    """R67–R69 for the current window (root: R69; after a marker: R67/R68)."""
    if window.is_root:
        return project_root_window(messages, window.window_id)
    return project_marker_window(messages, window.window_id)


def _project_marker_known(messages: Transcript, window_id: str) -> ResetProjection:
    """R67/R68 from what the transcript knows: O(window + system messages before the cut)."""
    cut = messages.first_tagged(boot_key, window_id)
    head = fold_system(messages.system_messages(cut))
    if cut is None:
        return ResetProjection(
            messages=() if head is None else (head,), cut_index=None, missing_boot=True
        )
    return ResetProjection(messages=messages.suffix(cut, head), cut_index=cut, missing_boot=False)


def _project_root_known(messages: Transcript, root_id: str) -> ResetProjection:
    """R69 from what the transcript knows: the list itself when it holds no root boot, or one
    boot that is already where R69 puts it; otherwise one pass over the list."""
    matching = messages.tagged(boot_key, root_id)
    if not matching:
        return ResetProjection(messages=messages, cut_index=None, missing_boot=False)
    boots = messages.tagged(boot_key)
    if boots == matching[-1:]:
        return ResetProjection(messages=messages, cut_index=None, missing_boot=False)
    projected = messages.without(boots, boots[0], messages[matching[-1]])
    return ResetProjection(messages=projected, cut_index=None, missing_boot=False)
