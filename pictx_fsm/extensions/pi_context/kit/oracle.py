"""pi-context's oracle: what the spec says a decision must be, computed from what a world
observably holds — the branch a hook saw, the usage the host reported, the settings and
commands the user gave — never from the runtime's facts, state or helpers.

Each function restates one rule of ``lifecycle.md`` on its own: window identity (R8–R15),
the budget lines and usage arithmetic (R43, R44, R47–R52, R17), which tail a repair
completes (R64, R65, D4), the tool-pair guard (FM19). Host semantics (Pi's projection of a
branch, pi-ai's token estimate and overflow classifier, the tokenizer) are the host's and
are read from :mod:`pictx_fsm.session` like any observation; texts and constants come from
:mod:`pictx_fsm.extensions.pi_context.texts`, the one transcription of the spec's §2 and §16
(``tests/test_spec_texts.py`` compares it with the spec). An invariant that judges a
decision by this module catches a rule the runtime gets wrong, not only a shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

from attrs import frozen

from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    MARKER_TYPE,
    ROOT_WINDOW_SUFFIX,
    WARNING_RUNWAY_TOKENS,
    WINDOW_ID_PREFIX,
    Profile,
)
from pictx_fsm.js import is_plain_object, string_property
from pictx_fsm.session.entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomEntry,
    CustomMessageEntry,
    Entry,
    MessageEntry,
)
from pictx_fsm.session.estimate import EstimateError, TokenCounter, estimate_window
from pictx_fsm.session.projection import Message, convert_to_llm, fold_system, project_branch
from pictx_fsm.session.tree import SessionTree

__all__ = [
    "Lines",
    "Place",
    "Stage",
    "TailNeeds",
    "boot_message_for",
    "boot_window",
    "is_continuation_entry",
    "lines_of",
    "marker_window",
    "place_at",
    "remaining_of",
    "repair_needs",
    "root_window_id",
    "stage_of",
    "tool_pair_open",
    "usage_at",
]

JSON: TypeAlias = Any
Stage: TypeAlias = Literal["warning", "guidance"] | None


# -- window identity (R8–R15) ------------------------------------------------------------------


def marker_window(entry: object) -> str | None:
    """R8: the window id of a valid reset marker (a ``custom`` entry of the marker type whose
    ``data.windowId`` is a non-empty string), else ``None``."""
    if not isinstance(entry, CustomEntry) or entry.custom_type != MARKER_TYPE:
        return None
    return string_property(entry.data, "windowId") or None


def root_window_id(session_id: str) -> str:
    """R10: ``pcw:`` + the first eight characters of the session id + ``:root``."""
    return f"{WINDOW_ID_PREFIX}{session_id[:8]}{ROOT_WINDOW_SUFFIX}"


def boot_window(entry: object) -> str | None:
    """R14 (raw entries): the ``details.windowId`` of a boot custom message."""
    if not isinstance(entry, CustomMessageEntry) or entry.custom_type != BOOT_TYPE:
        return None
    return string_property(entry.details, "windowId")


def is_continuation_entry(entry: object) -> bool:
    return isinstance(entry, CustomMessageEntry) and entry.custom_type == CONTINUATION_TYPE


def boot_message_for(message: Message, window_id: str) -> bool:
    """R14 (projection messages): role ``custom``, the boot type, ``details.windowId`` equal."""
    if message.get("role") != "custom" or message.get("customType") != BOOT_TYPE:
        return False
    details = message.get("details")
    return is_plain_object(details) and details.get("windowId") == window_id


@frozen(kw_only=True)
class Place:
    """Where the session stood at a hook: the active branch and its current window."""

    branch: tuple[Entry, ...]
    root_id: str
    window_id: str
    """R11: the last valid marker's id on the branch, else the root id."""
    marker_at: int | None
    """R9: the index of that marker in :attr:`branch` (``None``: the root window)."""
    previous_id: str
    """R15: the window before the current one (the root id before the first marker)."""

    @property
    def is_root(self) -> bool:
        return self.marker_at is None

    @property
    def tail(self) -> tuple[Entry, ...]:
        """The entries after the current marker (the whole branch in the root window)."""
        return self.branch[(self.marker_at + 1) if self.marker_at is not None else 0 :]

    def has_window_message(self, custom_type: str) -> bool:
        """R13: a custom message of that type after the current marker on this branch."""
        return any(
            isinstance(entry, CustomMessageEntry) and entry.custom_type == custom_type
            for entry in self.tail
        )


def place_at(tree: SessionTree, leaf: str | None) -> Place:
    """The :class:`Place` of ``leaf`` in ``tree`` (the branch is read again: the tree only
    grows)."""
    branch = tuple(tree.branch(leaf)) if leaf is not None else ()
    root = root_window_id(tree.session_id)
    markers = [(index, marker_window(e)) for index, e in enumerate(branch)]
    valid = [(index, window) for index, window in markers if window is not None]
    if not valid:
        return Place(branch=branch, root_id=root, window_id=root, marker_at=None, previous_id=root)
    index, window_id = valid[-1]
    previous = valid[-2][1] if len(valid) > 1 else root
    assert window_id is not None and previous is not None
    return Place(
        branch=branch, root_id=root, window_id=window_id, marker_at=index, previous_id=previous
    )


# -- budget lines and usage (R43, R44, R47–R52, R17) -------------------------------------------


@frozen(kw_only=True)
class Lines:
    """R44, as remaining tokens: reset at or below ``reserve``, the final warning at or below
    ``warning``, guidance at or below ``reminder``."""

    reserve: int
    reminder: int
    warning: int


def lines_of(reserve: int, margin: int) -> Lines:
    """R44: ``reminder = reserve + margin``, ``warning = reserve + 12288``."""
    return Lines(
        reserve=reserve, reminder=reserve + margin, warning=reserve + WARNING_RUNWAY_TOKENS
    )


def usage_at(
    ctx: Mapping[str, JSON], place: Place, counter: TokenCounter
) -> tuple[int, int] | None:
    """R47/R48: ``(tokens, contextWindow)`` of the active window at a hook, ``None`` when
    unknown. The root window uses what the host reported (``ctx`` as the audit record holds
    it); a reset window the estimate of its projection cut at its boot (R67), unknown without
    that boot or without a context window."""
    usage = ctx.get("usage") if is_plain_object(ctx.get("usage")) else None
    if place.is_root:
        if usage is None or usage.get("tokens") is None or usage.get("context_window") is None:
            return None
        return int(usage["tokens"]), int(usage["context_window"])
    model = ctx.get("model") if is_plain_object(ctx.get("model")) else None
    window = model.get("context_window") if model is not None else None
    if window is None and usage is not None:
        window = usage.get("context_window")
    if not window:
        return None
    tokens = _window_estimate(place, counter)
    return None if tokens is None else (tokens, int(window))


def _window_estimate(place: Place, counter: TokenCounter) -> int | None:
    messages = list(project_branch(place.branch).messages)
    cut = next((i for i, m in enumerate(messages) if boot_message_for(m, place.window_id)), None)
    if cut is None:
        return None
    head = fold_system(messages[:cut])
    window = ([head] if head is not None else []) + messages[cut:]
    try:
        return estimate_window(convert_to_llm(window), counter)
    except EstimateError:
        return None


def remaining_of(usage: tuple[int, int] | None) -> int | None:
    """R49: ``max(0, contextWindow − tokens)``."""
    return None if usage is None else max(0, usage[1] - usage[0])


def stage_of(remaining: int | None, lines: Lines) -> Stage:
    """R51/R52: the warning at or below its line, else guidance at or below the reminder."""
    if remaining is None:
        return None
    if remaining <= lines.warning:
        return "warning"
    if remaining <= lines.reminder:
        return "guidance"
    return None


# -- the tool-pair guard (FM19) and boot repair (R64, R65, D4) ---------------------------------


def tool_pair_open(branch: Sequence[Entry]) -> bool:
    """FM19: the leaf sits after an assistant's tool calls whose results are not all there
    (entries that are not messages do not close the pair)."""
    results = 0
    for entry in reversed(branch):
        if not isinstance(entry, MessageEntry):
            continue
        role = entry.message.role
        if role == "toolResult":
            results += 1
        elif role == "assistant":
            return len(entry.message.tool_calls()) > results
        else:
            return False
    return False


@frozen(kw_only=True)
class TailNeeds:
    """What a repair of the current reset window must append, in this order."""

    boot: bool = False
    continuation: bool = False

    @property
    def anything(self) -> bool:
        return self.boot or self.continuation


NOTHING = TailNeeds()
_CONVERSATION = (MessageEntry, CompactionEntry, BranchSummaryEntry)


def repair_needs(place: Place, profile: Profile) -> TailNeeds:
    """R64 steps 2–4, R65 (0.25.0) and D4 (0.25.1) for a reset window: what is missing from
    its tail, or nothing when the tail is complete or not repairable (later conversation,
    another custom message, a summary, a boot or continuation out of order)."""
    window = place.window_id
    tail = place.tail
    if profile is Profile.V0_25_0:
        if any(boot_message_for(m, window) for m in project_branch(place.branch).messages):
            return NOTHING  # step 2: a boot for the window is in the projection
        if any(boot_window(e) == window or _conversation(e, window) for e in tail):
            return NOTHING  # R65: a raw boot (even hidden), or later conversation
        return TailNeeds(boot=True)
    boot = continuation = False
    for entry in tail:
        if boot_window(entry) == window:
            if boot or continuation:
                return NOTHING
            boot = True
        elif is_continuation_entry(entry):
            if continuation or not boot:
                return NOTHING
            continuation = True
        elif _conversation(entry, window):
            return NOTHING
    return TailNeeds(boot=not boot, continuation=not continuation)


def _conversation(entry: Entry, window: str) -> bool:
    """An entry no repair may append after: a message, a summary, a marker of another
    window, or a custom message that is not this window's boot or a continuation."""
    if isinstance(entry, _CONVERSATION) or marker_window(entry) is not None:
        return True
    if isinstance(entry, CustomMessageEntry):
        return boot_window(entry) != window and not is_continuation_entry(entry)
    return False
