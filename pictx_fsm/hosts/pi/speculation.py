"""Hooks answered ahead: the server decides Pi's next hooks with the request before them.

Pi waits on the server at each hook whose answer it applies. Some of them follow each other
so closely that the server can tell what Pi will send:

- ``context`` and ``context_with_system`` (one provider request): when the ``context``
  handler returns nothing, Pi passes its own transcript on — the list ``context`` saw with
  the system messages where they are (``restoreSystemMessages``), and they stay where the
  previous request had them (:func:`predict_with_system`);
- the ``turn_end`` of a turn that ends the run, then ``agent_end`` and
  ``agent_before_settle`` with the turn's outcome and nothing pending (:func:`settle_events`).

The server adds those decisions to its reply (``withSystem``, ``ahead``). The extension
checks each against the real hook — the very message objects ``context`` saw and each system
message equal, or the same payload; the same leaf (nothing appended) and facts — and then
answers from the reply without waiting, telling the server to keep the decision (a pipelined
``{"speculated": true}`` request, written before any later one). Anything else — an edit by
the lifecycle or another extension, a new system prompt, an aborted run, a fault — and it
sends the request as before; the server drops what it decided at the next request.

Each decision is the runtime's
:meth:`~pictx_fsm.extensions.pi_context.runtime.LifecycleRuntime.decide` on the very
event a real request would carry (for ``context_with_system`` the same elided list,
:func:`canonical`), in the state the hooks before it leave, kept with its audit record only
when confirmed: the audit log and the state are those of the requests. A decision with an
effect is never offered (its notices or messages belong to the moment of its hook).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from pictx_fsm.extensions.pi_context.lifecycle import LifecycleState
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE
from pictx_fsm.host.effects import HookResult
from pictx_fsm.host.events import HookEvent, HostContext
from pictx_fsm.hosts.pi.wire import ELIDED_ROLE, ExpandedMessages

__all__ = [
    "ELIDED",
    "Speculation",
    "Systems",
    "canonical",
    "is_kept",
    "predict_with_system",
    "settle_events",
    "systems_of",
]

ELIDED: Mapping[str, Any] = {"role": ELIDED_ROLE}
"""A run of messages the lifecycle does not read (:func:`canonical` counts them)."""


@frozen(kw_only=True)
class Speculation:
    """A hook decided ahead of its request, not kept yet."""

    hook: str
    event: HookEvent
    ctx: HostContext
    decision: tuple[LifecycleState, HookResult]

    def keep(self, runtime: LifecycleRuntime) -> HookResult:
        return runtime.keep(self.event, self.ctx, self.decision)


def settle_events(turn_end: Mapping[str, Any]) -> tuple[tuple[str, dict[str, Any]], ...]:
    """The hooks Pi sends after the last turn's ``turn_end`` when the run ends there, with
    the payloads the extension will send (``payload`` in requests.mjs): ``agent_end``, then
    ``agent_before_settle`` with the turn's outcome and nothing pending."""
    settle = {
        "outcome": turn_end.get("outcome"),
        "entries": [],
        "pendingMessages": turn_end.get("pendingMessages", 0),
    }
    return (("agent_end", {}), ("agent_before_settle", settle))


def is_kept(message: Mapping[str, Any]) -> bool:
    """What the extension sends of a provider request (``elide`` in wire.mjs): system
    messages and boots."""
    role = message.get("role")
    return role == "system" or (role == "custom" and message.get("customType") == BOOT_TYPE)


Systems = tuple[tuple[int, Mapping[str, Any]], ...]
"""A request's system messages with their indexes."""


def systems_of(expanded: ExpandedMessages) -> Systems:
    """Where a request's system messages were (they are kept: never in a placeholder)."""
    pairs = zip(expanded.messages, expanded.spans, strict=True)
    return tuple((start, m) for m, (start, _) in pairs if m.get("role") == "system")


def predict_with_system(systems: Systems, context: ExpandedMessages) -> ExpandedMessages | None:
    """``context_with_system``'s messages as Pi will pass them after a ``context`` handler
    that returned nothing: ``context``'s list (Pi's transcript without its system messages)
    with the system messages back where the previous request had them, elided as the
    extension elides a request; ``None`` when one would fall past the end."""
    inserts = [(index - before, message) for before, (index, message) in enumerate(systems)]
    items: list[tuple[Mapping[str, Any], int]] = []
    position = 0
    for message, (start, end) in zip(context.messages, context.spans, strict=True):
        while inserts and inserts[0][0] < end:
            at, system = inserts.pop(0)
            if at > start:  # inside a placeholder's run: split it there
                items.append((ELIDED, at - start))
                start = at
            items.append((system, 1))
        items.append((message, end - start))
        position = end
    while inserts and inserts[0][0] == position:
        items.append((inserts.pop(0)[1], 1))
    return None if inserts else canonical(items)


def canonical(items: Sequence[tuple[Mapping[str, Any], int]]) -> ExpandedMessages:
    """A list of (message, how many host messages it stands for) as a request carries it:
    kept messages (copies) with their index, one placeholder per run of the others."""
    messages: list[Mapping[str, Any]] = []
    spans: list[tuple[int, int]] = []
    position = run = 0
    for message, length in items:
        if message.get("role") != ELIDED_ROLE and is_kept(message):
            if run < position:
                messages.append({"role": ELIDED_ROLE, "count": position - run})
                spans.append((run, position))
            messages.append(dict(message))
            spans.append((position, position + 1))
            run = position + 1
        position += length
    if run < position:
        messages.append({"role": ELIDED_ROLE, "count": position - run})
        spans.append((run, position))
    kept = tuple(m for m in messages if m.get("role") != ELIDED_ROLE)
    return ExpandedMessages(messages=tuple(messages), spans=tuple(spans), kept=kept)
