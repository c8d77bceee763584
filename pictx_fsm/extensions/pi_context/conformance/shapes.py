"""The shape of each pi-context entry (R1–R8) and, in profile 0.25.1, its text (D1, §2.3).

Shape is checked in both profiles: a marker's ``data`` is exactly ``{windowId}`` (R1); boot,
continuation, guidance and warning are ``display: false`` (R7); a boot's ``details`` is
exactly ``{windowId: string}`` (R2); continuation, guidance and warning carry no ``details``
(R3–R5). Texts are checked only in 0.25.1, whose texts are known (§2.4: an auditor in 0.25.0
never checks texts): the continuation is D1's ``CONTINUATION``, boots start with
``<context_window>`` (no reset line, D1), warning and guidance follow §2.3.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.conformance.findings import Finding
from pictx_fsm.extensions.pi_context.conformance import kinds as K
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTEXT_WINDOW_OPEN_TAG,
    CONTINUATION_0_25_1,
    CONTINUATION_TYPE,
    GUIDANCE_TYPE,
    MARKER_TYPE,
    WARNING_CONTENT,
    WARNING_TYPE,
    Profile,
    guidance_content,
)
from pictx_fsm.extensions.pi_context.windows import window_id_of_marker
from pictx_fsm.session.entries import ABSENT, CustomEntry, CustomMessageEntry, Entry
from pictx_fsm.session.tree import TreeNode

__all__ = ["EntryShapeCheck", "TextCheck"]

_HIDDEN_RULES: Final = {
    BOOT_TYPE: "R2",
    CONTINUATION_TYPE: "R3",
    GUIDANCE_TYPE: "R4",
    WARNING_TYPE: "R5",
}
_SENTINEL: Final = 918273645
_GUIDANCE_RE: Final = re.compile(
    re.escape(guidance_content(_SENTINEL)).replace(str(_SENTINEL), r"\d+") + r"\Z"
)


class EntryShapeCheck:
    """R1–R8: markers that are not markers, flags, details and data keys."""

    entry_types: Final = frozenset({CustomEntry.TYPE, CustomMessageEntry.TYPE})

    def check(self, entry: Entry, node: TreeNode, ctx: AuditContext) -> list[Finding]:
        if isinstance(entry, CustomEntry) and entry.custom_type == MARKER_TYPE:
            return _marker(node, entry, ctx)
        if isinstance(entry, CustomMessageEntry) and entry.custom_type in _HIDDEN_RULES:
            return _hidden_message(node, entry, ctx)
        return []


def _marker(node: TreeNode, entry: CustomEntry, ctx: AuditContext) -> list[Finding]:
    if window_id_of_marker(entry) is None:
        message = (
            f"reset marker with data {_short(entry.data)}: windowId must be a non-empty string"
        )
        return [ctx.finding(K.INVALID_MARKER, message, [node])]
    data = entry.data
    if isinstance(data, Mapping) and set(data) != {"windowId"}:
        message = f"marker data has keys {sorted(data)}; R1 allows exactly ['windowId']"
        return [ctx.finding(K.ENTRY_SHAPE, message, [node], rule="R1")]
    return []


def _hidden_message(node: TreeNode, entry: CustomMessageEntry, ctx: AuditContext) -> list[Finding]:
    rule = _HIDDEN_RULES[entry.custom_type]
    name = entry.custom_type.removeprefix("pi-context/")
    problems = []
    if entry.display is not False:
        problems.append(f"display is {_short(entry.display)}, not false (R7)")
    if entry.custom_type == BOOT_TYPE:
        problems += _boot_details(entry.details)
    elif entry.details is not ABSENT:
        problems.append(f"carries details {_short(entry.details)}; {rule} has none")
    if not problems:
        return []
    return [ctx.finding(K.ENTRY_SHAPE, f"{name}: " + "; ".join(problems), [node], rule=rule)]


def _boot_details(details: object) -> list[str]:
    if not isinstance(details, Mapping) or not isinstance(details.get("windowId"), str):
        return [f"details {_short(details)} has no string windowId (R2)"]
    if set(details) != {"windowId"}:
        return [f"details has keys {sorted(details)}; R2 allows exactly ['windowId']"]
    return []


class TextCheck:
    """D1/§2.3 texts, profile 0.25.1 only."""

    entry_types: Final = frozenset({CustomMessageEntry.TYPE})

    def __init__(self, profile: Profile) -> None:
        self.profile = profile

    def check(self, entry: Entry, node: TreeNode, ctx: AuditContext) -> list[Finding]:
        if self.profile is not Profile.V0_25_1 or not isinstance(entry, CustomMessageEntry):
            return []
        problem = _text_problem(entry.custom_type, entry.text())
        if problem is None:
            return []
        message, rule = problem
        return [ctx.finding(K.TEXT_MISMATCH, message, [node], rule=rule)]


def _text_problem(custom_type: str, text: str) -> tuple[str, str] | None:
    if custom_type == CONTINUATION_TYPE and text != CONTINUATION_0_25_1:
        return f"continuation text {_short(text)} is not D1's CONTINUATION", "D1"
    if custom_type == BOOT_TYPE and not text.startswith(CONTEXT_WINDOW_OPEN_TAG):
        return f"boot starts with {_short(text)}, not {CONTEXT_WINDOW_OPEN_TAG} (D1)", "D1"
    if custom_type == WARNING_TYPE and text != WARNING_CONTENT:
        return f"warning text {_short(text)} is not §2.3's warning", "R5"
    if custom_type == GUIDANCE_TYPE and not _GUIDANCE_RE.match(text):
        return f"guidance text {_short(text)} does not follow §2.3's template", "R4"
    return None


def _short(value: object, limit: int = 48) -> str:
    text = "absent" if value is ABSENT else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
