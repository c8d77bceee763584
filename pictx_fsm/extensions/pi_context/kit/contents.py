"""Exact contents where the spec gives them: the entries of a reset, the notices, the
lifecycle tools' answers — compared with the oracle (:mod:`.oracle`), not only their shape.

A boot that names the previous window as the current one, a marker with a field too many,
a notice naming another window, ``get_context_remaining`` counting the warning runway: each
keeps every structural invariant and misleads the model or the human. These invariants
recompute the window ids (R10–R15), the texts (§2.3, §16, D1) and the answers (R16, R17)
from what the world observably holds and compare them character for character.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from pictx_fsm import js
from pictx_fsm.extensions.pi_context.kit.account import Account, Following, command_of, place_of
from pictx_fsm.extensions.pi_context.kit.oracle import (
    Place,
    lines_of,
    marker_window,
    place_at,
    remaining_of,
    tool_pair_open,
    usage_at,
)
from pictx_fsm.extensions.pi_context.kit.records import result_of
from pictx_fsm.extensions.pi_context.kit.tool_answers import ExactToolAnswers
from pictx_fsm.extensions.pi_context.kit.view import WorldView
from pictx_fsm.extensions.pi_context.kit.walks import PerRecord, PerTree
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTEXT_WINDOW_OPEN_TAG,
    CONTINUATION_TYPE,
    GET_CONTEXT_REMAINING_TOOL,
    GUIDANCE_TYPE,
    MARKER_TYPE,
    NOTICE_COMPACT_DISABLED,
    NOTICE_GUIDANCE_RECORDED,
    NOTICE_INVALID_MARGIN,
    NOTICE_MEMORY_CLEARED,
    NOTICE_MISSING_BOOT,
    NOTICE_NOTES_INCOMPLETE,
    NOTICE_RESET_BUILD_FAILED,
    NOTICE_SETTINGS_UNREADABLE,
    NOTICE_TOGGLE_STATUS,
    NOTICE_TOGGLE_USAGE,
    NOTICE_TREE_SUMMARY_SKIPPED,
    NOTICE_WARNING_RECORDED,
    NOTICE_WIPE_NEEDS_ON,
    NOTICE_WIPE_SPLITS_TOOL_PAIR,
    PROTOCOL_BLOCK,
    WARNING_CONTENT,
    WARNING_TYPE,
    WIPE_DISABLED_ERROR,
    WIPE_MEMORY_TOOL,
    WIPE_STATUS_ALREADY_PENDING,
    WIPE_STATUS_REQUESTED,
    Texts,
    guidance_content,
)
from pictx_fsm.session.entries import ABSENT, CustomEntry, CustomMessageEntry
from pictx_fsm.session.tree import SessionTree, TreeNode
from pictx_fsm.testing.invariants import Violation

__all__ = [
    "CONTENT_INVARIANTS",
    "ExactLifecycleAnswers",
    "ExactNotices",
    "ExactResetEntries",
    "ExactToolAnswers",
]

Record = Mapping[str, Any]
_HEX8: Final = re.compile(r"[0-9a-f]{8}")
_GUIDANCE: Final = re.compile(re.escape(guidance_content(0)).replace(r"\ 0\ ", r"\ (\d+)\ "))


class ExactResetEntries(PerTree):
    """every marker, boot, continuation and reminder pi-context writes holds exactly what the
    spec gives: the marker only its fresh windowId (pcw:<session>:<8 hex>, new on the
    branch); the boot hidden, details the window id, and the identity lines of its window
    (first = the session's root, current = its window, previous = the window before its
    marker, none for a root boot); the continuation and reminders their texts"""

    name = "exact_reset_entries"
    rule = "R1–R3, R7, R10, R12, R15, R72, D1, §2.3"

    def check_node(self, world: WorldView, tree: SessionTree, node: TreeNode) -> list[Violation]:
        entry = node.entry
        if isinstance(entry, CustomEntry) and entry.custom_type == MARKER_TYPE:
            problem = _marker_problem(tree, node)
        elif isinstance(entry, CustomMessageEntry) and entry.custom_type == BOOT_TYPE:
            problem = _boot_problem(world, tree, node, entry)
        elif isinstance(entry, CustomMessageEntry) and entry.custom_type in _TEXTS:
            problem = _message_problem(world, entry)
        else:
            return []
        return [self.violation(f"{node.entry.type} {node.id}: {problem}")] if problem else []


def _marker_problem(tree: SessionTree, node: TreeNode) -> str | None:
    """R1, R12: ``data`` is exactly ``{windowId}``, minted for this session, new on the branch."""
    entry = node.entry
    assert isinstance(entry, CustomEntry)
    data = entry.data
    if not isinstance(data, Mapping) or list(data) != ["windowId"]:
        return f"marker data {data!r} is not exactly {{windowId}}"
    window_id = marker_window(entry)
    prefix = f"pcw:{tree.session_id[:8]}:"
    if window_id is None or not (
        window_id.startswith(prefix) and _HEX8.fullmatch(window_id[len(prefix) :])
    ):
        return f"window id {data['windowId']!r} is not {prefix}<8 hex digits>"
    earlier = place_at(tree, node.parent.id) if node.parent is not None else None
    taken = {marker_window(e) for e in earlier.branch} if earlier is not None else set()
    return f"window id {window_id} is already taken on the branch" if window_id in taken else None


def _boot_problem(
    world: WorldView, tree: SessionTree, node: TreeNode, entry: CustomMessageEntry
) -> str | None:
    """R2, R7, R15, R72: a hidden boot for the window it opens, naming the right windows."""
    place = place_at(tree, node.id)
    if entry.display is not False:
        return "the boot is not hidden (display false)"
    if entry.details != {"windowId": place.window_id}:
        return f"details {entry.details!r}, the window is {place.window_id}"
    content = entry.content if isinstance(entry.content, str) else ""
    expected = _identity(place)
    lines = content.split("\n")
    missing = [line for line in expected if line not in lines]
    previous = [line for line in lines if line.startswith("Previous context window id:")]
    if missing or previous != expected[2:]:
        return f"identity lines {missing or previous} (expected {expected})"
    texts = Texts.for_profile(world.profile)
    summary = texts.reset_summary if not place.is_root else None
    start = (
        f"{summary}\n\n{CONTEXT_WINDOW_OPEN_TAG}\n" if summary else f"{CONTEXT_WINDOW_OPEN_TAG}\n"
    )
    if not content.startswith(start) or not content.endswith(PROTOCOL_BLOCK):
        return "the boot does not start with its identity block or end with the protocol"
    return None


def _identity(place: Place) -> list[str]:
    """R72's identity lines of a boot in ``place``'s window (R10, R11, R15)."""
    lines = [
        f"First context window id: {place.root_id}",
        f"Current context window id: {place.window_id}",
    ]
    if not place.is_root:
        lines.append(f"Previous context window id: {place.previous_id}")
    return lines


_TEXTS: Final = (CONTINUATION_TYPE, GUIDANCE_TYPE, WARNING_TYPE)


def _message_problem(world: WorldView, entry: CustomMessageEntry) -> str | None:
    """R3, R4, R5, R7, D1, §2.3: hidden, no details, the profile's text."""
    if entry.display is not False or entry.details is not ABSENT:
        return "not hidden, or carries details"
    content = entry.content
    if entry.custom_type == CONTINUATION_TYPE:
        expected = Texts.for_profile(world.profile).continuation
        return None if content == expected else f"continuation text {content!r}"
    if entry.custom_type == WARNING_TYPE:
        return None if content == WARNING_CONTENT else "not the warning text"
    matched = _GUIDANCE.fullmatch(content) if isinstance(content, str) else None
    return None if matched else "not the guidance text"


# -- notices -----------------------------------------------------------------------------------


def _pattern(template: str) -> re.Pattern[str]:
    """A notice template (``{name}`` placeholders) as a pattern capturing each placeholder."""
    parts = re.split(r"\{(\w+)\}", template)
    return re.compile(
        "".join(
            f"(?P<{part}>.+)" if index % 2 else re.escape(part) for index, part in enumerate(parts)
        )
    )


_CATALOGUE: Final = {
    name: (_pattern(template), level)
    for name, template, level in (
        ("cleared", NOTICE_MEMORY_CLEARED, "info"),
        ("build_failed", NOTICE_RESET_BUILD_FAILED, "warning"),
        ("compact", NOTICE_COMPACT_DISABLED, "warning"),
        ("wipe_needs_on", NOTICE_WIPE_NEEDS_ON, "error"),
        ("wipe_splits", NOTICE_WIPE_SPLITS_TOOL_PAIR, "error"),
        ("usage", NOTICE_TOGGLE_USAGE, "error"),
        ("status", NOTICE_TOGGLE_STATUS, "info"),
        ("missing_boot", NOTICE_MISSING_BOOT, "error"),
        ("tree_summary", NOTICE_TREE_SUMMARY_SKIPPED, "info"),
        ("guidance", NOTICE_GUIDANCE_RECORDED, "warning"),
        ("warning", NOTICE_WARNING_RECORDED, "warning"),
        ("notes", NOTICE_NOTES_INCOMPLETE, "warning"),
        ("margin", NOTICE_INVALID_MARGIN, "warning"),
        ("settings", NOTICE_SETTINGS_UNREADABLE, "warning"),
    )
}
"""§16 (and pictx_fsm's one notice of its own), each with its level."""


class ExactNotices(Following):
    """every notice pi-context gives is one of the spec's texts at its level, and says what
    happened at its hook: the window a missing boot names is the current one, /pi-context
    reports the state it left, /wipe-memory refuses only when off or between a tool call and
    its result, /compact is refused only when manual"""

    name = "exact_notices"
    rule = "§16, R54, R59, R60, R62, R68"

    def judge(
        self, world: WorldView, record: Record, runtime: int, account: Account
    ) -> list[Violation]:
        found: list[Violation] = []
        for effect in result_of(record).get("effects", ()):
            if effect.get("effect") == "notify":
                problem = self._problem(world, record, runtime, account, effect)
                if problem:
                    found.append(self.violation(f"{record.get('hook')}: {problem}"))
        return found

    def _problem(
        self,
        world: WorldView,
        record: Record,
        runtime: int,
        account: Account,
        effect: Mapping[str, Any],
    ) -> str | None:
        message, level = str(effect.get("message")), effect.get("level")
        for kind, (pattern, expected) in _CATALOGUE.items():
            matched = pattern.fullmatch(message)
            if matched is None:
                continue
            if level != expected:
                return f"{message!r} at level {level}, not {expected}"
            return _context_problem(world, record, runtime, account, kind, matched)
        return f"{message!r} is no notice of the spec"


def _context_problem(
    world: WorldView,
    record: Record,
    runtime: int,
    account: Account,
    kind: str,
    matched: re.Match[str],
) -> str | None:
    """Whether the notice says what happened at this hook (where the spec ties it to one)."""
    command = command_of(record)
    if kind == "missing_boot":  # R68: the current window has no visible boot
        place = place_of(world, runtime, record)
        named = matched["window_id"]
        if place is not None and named != place.window_id:
            return f"the missing-boot notice names {named}, the window is {place.window_id}"
    elif kind == "status" and command is not None:  # R60: the state it left
        state = "on" if command[1] == "on" or (command[1] == "" and account.enabled) else "off"
        if matched["state"] != state:
            return f"/pi-context reports {matched['state']}, it is {state}"
    elif kind == "wipe_needs_on" and account.enabled:  # R59
        return "/wipe-memory refused as off while on"
    elif kind == "wipe_splits":
        place = place_of(world, runtime, record)
        if place is not None and not tool_pair_open(place.branch):
            return "/wipe-memory refused though no tool call waits for its result"
    elif kind == "compact":  # R62: only a manual /compact is told
        if (record.get("event") or {}).get("reason") != "manual":
            return "an automatic compaction was announced"
    elif kind == "usage" and command is not None and command[1] in ("on", "off", ""):
        return f"/pi-context {command[1]!r} answered with its usage"
    return None


# -- the lifecycle tools' answers (R16, R17) ---------------------------------------------------


class ExactLifecycleAnswers(Following):
    """wipe_memory answers exactly {status: rollover_requested} to the first call of a batch,
    rollover_already_pending to the next, the off error when switched off (JSON with 2-space
    indent; terminating only when it requested); get_context_remaining exactly
    {remaining_tokens: max(0, remaining − warning line)} of the active window, null when
    usage is unknown"""

    name = "exact_lifecycle_answers"
    rule = "R16, R17, R30"

    def judge(
        self, world: WorldView, record: Record, runtime: int, account: Account
    ) -> list[Violation]:
        problem = self._problem(world, record, runtime, account)
        return [self.violation(problem)] if problem else []

    @staticmethod
    def _problem(world: WorldView, record: Record, runtime: int, account: Account) -> str | None:
        event, ctx = record.get("event") or {}, record.get("ctx") or {}
        if record.get("hook") != "tool":
            return None
        name = event.get("name")
        if name == WIPE_MEMORY_TOOL:
            expected, terminate = _wipe(account)
        elif name == GET_CONTEXT_REMAINING_TOOL:
            place = place_of(world, runtime, record)
            if place is None:
                return None
            lines = lines_of(world.budget.reserve, world.budget.margin)
            remaining = remaining_of(usage_at(ctx, place, world.counter))
            left = None if remaining is None else max(0, remaining - lines.warning)
            expected, terminate = {"remaining_tokens": left}, False
        else:
            return None
        value = result_of(record).get("value") or {}
        text = js.stringify(expected, indent=2)
        given = [block.get("text") for block in value.get("content") or ()]
        if given != [text] or bool(value.get("terminate")) != terminate:
            return (
                f"{name} answered {given} (terminate {value.get('terminate')}), expected {text!r}"
            )
        return None


def _wipe(account: Account) -> tuple[dict[str, str | int | None], bool]:
    """R16, R30: the first request of a batch, a repeat, or the error when off."""
    if not account.enabled:
        return {"error": WIPE_DISABLED_ERROR}, False
    status = WIPE_STATUS_ALREADY_PENDING if account.requested else WIPE_STATUS_REQUESTED
    return {"status": status}, True


CONTENT_INVARIANTS: tuple[type[PerTree | PerRecord], ...] = (
    ExactResetEntries,
    ExactNotices,
    ExactLifecycleAnswers,
    ExactToolAnswers,
)
