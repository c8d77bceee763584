"""One provider request, one round trip: ``context_with_system`` answered with ``context``.

Pi runs the ``context`` handlers and then, at once, the ``context_with_system`` handlers. When
the bridge's ``context`` handler returns nothing, Pi passes its own transcript on: the list
``context`` saw with the system messages where they are (``restoreSystemMessages``), and the
system messages stay where the previous request had them. So the server can tell in its
``context`` reply what it would answer to that list (:func:`predict_with_system`): the
extension checks that the real event is exactly it (each system message equal to the
previous one, every other message the very object ``context`` saw, nothing appended to the
session, the same facts) and answers from the reply without waiting, telling the server to
keep the decision (a pipelined ``{"speculated": true}`` request, written before any later
one). Anything else — an edit by the lifecycle or another extension, a new system prompt, a
fault — and it sends the request as before; the server drops the decision it held.

The decision is the runtime's :meth:`~pictx_fsm.runtime.LifecycleRuntime.decide` on the very
event a real request would carry (the same elided list, :func:`canonical`), kept with its
audit record only when confirmed: the audit log and the state are those of the two requests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from pictx_fsm.effects import HookResult
from pictx_fsm.hooks import HookEvent, HostContext
from pictx_fsm.hosts.pi.wire import ELIDED_ROLE, ExpandedMessages
from pictx_fsm.lifecycle import LifecycleState
from pictx_fsm.protocol import BOOT_TYPE
from pictx_fsm.runtime import LifecycleRuntime

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
