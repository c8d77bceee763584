"""A lease on quiet hooks: the common turn answered by the extension, checked by the server.

Pi waits on the server at every hook whose answer it applies, and in the common turn the
lifecycle decides nothing: ``context`` returns nothing, ``context_with_system`` is the R67–R69
projection alone, ``turn_end`` and ``agent_before_settle`` return nothing. Whether that holds
is a function of the lifecycle's state, of the model's context window and of one number, the
active window's token estimate (R47–R57). With an awaited reply the server may grant a *lease*
(:func:`grant`): "while the estimate stays at or below ``limit`` and nothing else happens,
those hooks decide nothing". The extension (``lease.mjs``) then answers them itself — the
projection by its fail-closed twin (``failclosed.mjs``, proven equal to the lifecycle's) —
from a conservative upper bound of the estimate (:func:`entry_bound`, kept incrementally over
the entries it ships), and still sends each hook to the server, pipelined: the server decides
it as ever (same state, same audit record) and checks the answer (:func:`agrees`). A
disagreement breaks the lease for the connection (one notice, one audit record, awaited
requests again); anything the lease does not cover (a tool, a command, a tree, compaction or
model hook, a fault, a restart, an estimate past the limit) voids it.

The conditions below are R19–R57 read for "every covered hook is a no-op":

- active (R19), nothing staged, no committed reminder awaiting its notice (R53–R54), no
  pending reset notice (R63), no explicit request (R20, R27), overflow idle (R24, R35), no
  boot repair owed to the turn's end (R64, issue 27);
- the settings policy cached (R40; a live settings source could change the lines);
- the limit: the largest estimate whose ``remaining`` stays above every line a covered hook
  tests (R50's reserve for ``turn_end``, R51's warning and reminder lines for ``context``, a
  line dropped when its reminder is already persisted in the window, R56); with the toggle
  off, or no context window, no hook tests the estimate and the lease has no limit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

from attrs import frozen

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.pi_context import policy
from pictx_fsm.extensions.pi_context.lifecycle import LifecycleState, in_state
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    GUIDANCE_TYPE,
    MARKER_TYPE,
    WARNING_TYPE,
    Profile,
)
from pictx_fsm.extensions.pi_context.windows import Window, WindowIndex
from pictx_fsm.host.effects import HookResult, MessagesResult
from pictx_fsm.host.events import HostContext, ModelInfo
from pictx_fsm.hosts.pi.failclosed import ScannedWindow, fail_closed
from pictx_fsm.hosts.pi.wire import ExpandedMessages, encode_messages
from pictx_fsm.js import is_number, is_plain_object
from pictx_fsm.session.estimate import (
    CHARS_PER_TOKEN,
    IMAGE_TOKENS,
    CharsCounter,
    is_settled_assistant,
    js_json,
    js_length,
    usage_tokens,
)

__all__ = [
    "BROKEN_HOOK",
    "COUNTED_ENTRIES",
    "COUNTED_ROLES",
    "LARGE_NUMBER",
    "LEASED_HOOKS",
    "NEUTRAL_HOOKS",
    "PLAIN_STOPS",
    "WITH_SYSTEM",
    "HeldLease",
    "Lease",
    "LeaseBroken",
    "bound_after",
    "decided_otherwise",
    "disagreement",
    "entry_bound",
    "expected_projection",
    "grant",
    "plain_turn",
    "quiet",
    "record_broken",
    "token_limit",
    "usage_floor",
]

WITH_SYSTEM: Final = "context_with_system"
LEASED_HOOKS: Final = ("context", "context_with_system", "turn_end", "agent_before_settle")
"""The hooks a lease answers."""
NEUTRAL_HOOKS: Final = ("turn_start", "agent_end", "agent_settled")
"""Pipelined hooks that leave a lease standing: under its conditions they only clear what is
already clear (R37, R54, R55, R63)."""
COUNTED_ENTRIES: Final = frozenset(
    {
        "message",
        "custom_message",
        "custom",
        "model_change",
        "thinking_level_change",
        "label",
        "session_info",
    }
)
"""Entry types the bound counts; any other (compaction, branch summary, context edit, …)
voids the lease: it can change the estimate other than by appending."""
COUNTED_ROLES: Final = frozenset({"user", "assistant", "toolResult", "custom"})
"""Message roles whose estimate the JSON length bounds (a system message or a bash run
counts text the entry does not hold verbatim: it voids the lease)."""
LARGE_NUMBER: Final = "e+"
"""``JSON.stringify`` writes a number ≥ 1e21 in exponent form, Python's estimate digit by
digit: an entry holding one voids the lease (checked as a digit, ``e+``, digit)."""


@frozen(kw_only=True)
class Lease:
    """What the server grants: the base estimate, the limit and how to bound new entries."""

    base: int
    """The active window's estimate now (the lifecycle's own figure; 0 when it tests none)."""
    limit: int | None
    """The largest estimate every covered hook still decides nothing at; ``None``: any."""
    per_byte: bool
    """The estimate counts at most one token per UTF-8 byte (a tokenizer), not chars/4."""
    window_id: str
    marker_id: str | None
    model: Mapping[str, Any] | None
    """The model facts the lease was decided with (a different model voids it)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "limit": self.limit,
            "perByte": self.per_byte,
            "windowId": self.window_id,
            "markerId": self.marker_id,
            "model": self.model,
        }


def quiet(state: LifecycleState) -> bool:
    """Whether ``state`` holds nothing a covered hook would act on (the module's first list)."""
    if not in_state(state, "active") or state.staged or state.notices or state.pending_resets:
        return False
    return (
        state.state_of("reset_control", "request") == "none"
        and state.state_of("reset_control", "overflow") == "idle"
        and state.state_of("boot_repair", "boot_repair") == "standby"
    )


def token_limit(
    usage: policy.Usage, thresholds: policy.Thresholds, automatic: bool, window: tuple[bool, bool]
) -> int | None:
    """The largest estimate at which no covered hook acts, for the window's persisted
    ``(guidance, warning)`` (R50–R52, R56); ``None`` when no line applies."""
    guidance_in, warning_in = window
    lines = [thresholds.reserve] if automatic else []
    if not warning_in:
        lines.append(thresholds.warning)
        if not guidance_in:
            lines.append(thresholds.reminder)
    if not lines or usage.context_window is None:
        return None
    return usage.context_window - max(lines) - 1


def grant(
    runtime: LifecycleRuntime,
    ctx: HostContext,
    model: Mapping[str, Any] | None,
    *,
    live: bool = False,
) -> Lease | None:
    """The lease the runtime's state allows now, or ``None``. The settings policy must be
    cached (R40: it changes only at a transition, which voids the lease) unless ``live``: a
    holder that checks the policy at every leased hook (:class:`HeldLease`, the twin)."""
    state = runtime.state
    if not quiet(state) or not (live or (state.policy and runtime.services.cache_policy)):
        return None
    rules = runtime.policy(ctx)
    tree = runtime.tree
    windows = WindowIndex.of(tree)
    window = windows.current_window
    usage = runtime.services.window_usage(ctx)
    base = 0
    limit: int | None = None
    if in_state(state, "enabled") and (usage is not None or _window_known(ctx)):
        if usage is None or usage.tokens is None:
            return None  # the estimate may become known: nothing to bound it from
        persisted = (
            windows.has_window_message(GUIDANCE_TYPE),
            windows.has_window_message(WARNING_TYPE),
        )
        limit = token_limit(usage, rules.thresholds, rules.automatic, persisted)
        base = usage.tokens
        if limit is not None and base > limit:
            return None
    per_byte = not window.is_root and not isinstance(runtime.services.usage.counter, CharsCounter)
    marker = None if window.is_root else window.marker_id
    return Lease(
        base=base,
        limit=limit,
        per_byte=per_byte,
        window_id=window.window_id,
        marker_id=marker,
        model=model,
    )


def _window_known(ctx: HostContext) -> bool:
    window = ctx.model.context_window if ctx.model is not None else None
    return bool(window) or ctx.usage is not None


# -- the bound (the Python twin of lease.mjs's entryBound) --------------------------------------


def entry_bound(entry: Mapping[str, Any], per_byte: bool) -> int | None:
    """An upper bound of what ``entry`` adds to either estimate (host or window, chars/4 or a
    tokenizer), ``None`` when it may change the estimate otherwise (the lease is void): the
    length of its JSON (text parts, tool-call names and arguments are substrings of it, each
    at least as long escaped), per 4 chars or per UTF-8 byte, plus an image's tokens per
    non-text content block."""
    kind = entry.get("type")
    if kind not in COUNTED_ENTRIES:
        return None
    message = _message_of(entry)
    if kind == "custom" and entry.get("customType") == MARKER_TYPE:
        return None
    if kind == "custom_message" and entry.get("customType") == BOOT_TYPE:
        return None
    if message is not None and message.get("role") not in COUNTED_ROLES:
        return None
    text = js_json(entry)
    if _has_large_number(text):
        return None
    size = len(text.encode("utf-8", "surrogatepass")) if per_byte else js_length(text)
    tokens = size if per_byte else math.ceil(size / CHARS_PER_TOKEN)
    return tokens + IMAGE_TOKENS * _blocks(message)


def usage_floor(entry: Mapping[str, Any]) -> int | None:
    """The usage a settled assistant reports (the estimate restarts from it when trusted)."""
    message = _message_of(entry)
    if message is None or not is_settled_assistant(message):
        return None
    return usage_tokens(message, strict=False)


def bound_after(bound: int, entries: Sequence[Mapping[str, Any]], per_byte: bool) -> int | None:
    """The bound after ``entries`` are appended (``None``: void). A trusted usage may anchor
    the estimate at itself, an untrusted one leaves it counting on: the larger covers both."""
    for entry in entries:
        added = entry_bound(entry, per_byte)
        if added is None:
            return None
        bound += added
        floor = usage_floor(entry)
        if floor is not None:
            bound = max(bound, floor)
    return bound


def _message_of(entry: Mapping[str, Any]) -> Mapping[str, Any] | None:
    message = entry.get("message")
    if entry.get("type") == "custom_message":
        return {"role": "custom", "content": entry.get("content")}
    return message if entry.get("type") == "message" and is_plain_object(message) else None


def _blocks(message: Mapping[str, Any] | None) -> int:
    content = message.get("content") if message is not None else None
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if not (is_plain_object(b) and b.get("type") == "text"))


def _has_large_number(text: str) -> bool:
    start = text.find(LARGE_NUMBER)
    while start > 0:
        if text[start - 1].isdigit() and text[start + 2 : start + 3].isdigit():
            return True
        start = text.find(LARGE_NUMBER, start + 1)
    return False


# -- the agreement check ---------------------------------------------------------------------


BROKEN_HOOK: Final = "bridge_lease"
"""The audit record of a broken lease (its "hook")."""


@frozen(kw_only=True)
class LeaseBroken:
    """A leased answer the lifecycle did not decide: audited, then no lease on the connection."""

    HOOK: ClassVar[str] = BROKEN_HOOK
    hook: str
    detail: str


def expected_projection(expanded: ExpandedMessages, window: Window) -> list[Any]:
    """What the extension answers a leased ``context_with_system`` with, as slices: the
    fail-closed projection (``failclosed.mjs``, proven equal to :func:`.failclosed.fail_closed`)
    of the same list; ``[]`` when that projection aborts (the extension does not lease it)."""
    scanned = ScannedWindow(window_id=window.window_id, marker_id=window.marker_id)
    projected = fail_closed(expanded.messages, scanned)
    if projected.missing_boot:
        return []
    return encode_messages(projected.messages, expanded)


def disagreement(
    hook: str,
    reply: Mapping[str, Any],
    expected: list[Any] | None,
    claimed: Any,
    after: LifecycleState,
) -> str | None:
    """Why the lifecycle's decision of a leased hook is not what the extension answered
    (``None``: it is). A covered hook decides nothing — no value, no effect, and a state still
    :func:`quiet` (a reminder staged at ``context`` returns nothing yet commits at
    ``turn_end``); ``context_with_system`` decides the projection the extension computed
    (``claimed``: its length)."""
    if not quiet(after):
        return f"the lifecycle's {hook} staged or requested something"
    if reply["effects"]:
        kinds = sorted({effect["effect"] for effect in reply["effects"]})
        return f"the lifecycle's {hook} had effects ({', '.join(kinds)})"
    value = reply["value"]
    if hook != WITH_SYSTEM:
        return None if value is None else f"the lifecycle's {hook} returned a value"
    slices = value.get("slices") if is_plain_object(value) else None
    if slices != expected or not expected:
        return "the lifecycle's projection differs from the fail-closed projection"
    if not is_plain_object(claimed) or claimed.get("length") != _length(expected):
        return "the extension's projection differs from the lifecycle's"
    return None


def _length(slices: list[Any]) -> int:
    return sum(1 if is_plain_object(piece) else piece[1] - piece[0] for piece in slices)


def record_broken(audit: AuditLog | None, hook: str, detail: str, profile: Profile) -> None:
    """The audit record of a broken lease, next to the lifecycle's record of the same hook."""
    if audit is None:
        return
    audit.record(
        event=LeaseBroken(hook=hook, detail=detail),
        ctx=None,
        result=HookResult(hook=BROKEN_HOOK),
        profile=profile.value,
        fingerprint="",
    )


# -- holding a lease (the Python twin of lease.mjs's Lease, for the model session) -----------


PLAIN_STOPS: Final = frozenset({"stop", "toolUse"})


def plain_turn(message: Mapping[str, Any], outcome: str, drafts: int, ctx: HostContext) -> bool:
    """A ``turn_end`` that decides nothing under a lease (lease.mjs's ``plainTurn``):
    completed, not aborted, no drafts, a reply that is no overflow of any kind (R21, R33)."""
    if ctx.signal_aborted or outcome != "completed" or drafts:
        return False
    if message.get("role") != "assistant" or message.get("stopReason") not in PLAIN_STOPS:
        return False
    if message.get("errorMessage") not in (None, ""):
        return False
    usage = message.get("usage")
    usage = usage if is_plain_object(usage) else {}
    parts = (usage.get("input", 0), usage.get("cacheRead", 0))
    if not all(is_number(part) and math.isfinite(part) for part in parts):
        return False
    window = ctx.model.context_window if ctx.model is not None else None
    return not window or window <= 0 or sum(parts) <= window


class HeldLease:
    """A lease as the extension holds it: the bound over the entries since its base."""

    def __init__(
        self, lease: Lease, leaf: str | None, rules: policy.Policy, model: ModelInfo | None
    ) -> None:
        self.lease = lease
        self.bound = lease.base
        self.leaf = leaf
        self.policy = rules
        """The settings policy it was granted under (a live source may change it: void)."""
        self.model = model

    def observe(self, entries: Sequence[Mapping[str, Any]], leaf: str | None) -> bool:
        """The entries appended since the last hook (parent first): ``False`` when they void
        the lease (another branch, an entry it cannot bound, past the limit)."""
        if entries and entries[0].get("parentId") != self.leaf:
            return False
        if not entries and leaf != self.leaf:
            return False
        bound = bound_after(self.bound, entries, self.lease.per_byte)
        if bound is None:
            return False
        self.bound, self.leaf = bound, leaf
        return self.lease.limit is None or bound <= self.lease.limit


def decided_otherwise(answer: HookResult, decided: HookResult, after: LifecycleState) -> str | None:
    """The twin's agreement check (:func:`disagreement` on the decided values): the same
    value, no effect, a state still :func:`quiet`."""
    if not quiet(after):
        return f"the lifecycle's {decided.hook} staged or requested something"
    if decided.effects:
        return f"the lifecycle's {decided.hook} had effects"
    mine, theirs = answer.value, decided.value
    if isinstance(mine, MessagesResult) and isinstance(theirs, MessagesResult):
        same = list(mine.messages) == list(theirs.messages)
    else:
        same = mine is None and theirs is None
    return None if same else f"the lifecycle's {decided.hook} decided another value"
