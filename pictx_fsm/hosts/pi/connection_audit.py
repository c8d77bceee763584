"""The connection machine's transitions, as the extension reports them, in the audit log.

The extension follows ``bridge_connection`` in JavaScript and sends every transition it took
with its next request; a server that is up checks each one against the declaration (the same
compiled engine, the same guard values) and writes it to the session's audit log next to the
lifecycle's decisions. Transitions taken while no server was up (the fault, the restart)
reach the restarted server, so the log shows the whole episode.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from attrs import frozen

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.extensions.pi_context.texts import Profile
from pictx_fsm.host.effects import HookResult
from pictx_fsm.hosts.pi.connection import MACHINE, Connection, connection_spec
from pictx_fsm.hosts.pi.convert import BridgeProtocolError
from pictx_fsm.machines import Configuration, Fired, Step

__all__ = ["ConnectionEvent", "checked_step", "record_transitions"]


@frozen(kw_only=True)
class ConnectionEvent:
    """One reported transition as an audited "hook"."""

    HOOK: ClassVar[str] = MACHINE
    event: str
    detail: str


def checked_step(report: Mapping[str, Any]) -> Step[str]:
    """Re-run one reported transition on the declaration; the report must match it."""
    source, event = str(report.get("source")), str(report.get("event"))
    restarts = report.get("restarts")
    if not isinstance(restarts, int) or isinstance(restarts, bool):
        raise BridgeProtocolError("field 'connection[].restarts' must be an integer")
    follower = Connection.at(source, restarts - (event == "retry"))
    transition = follower.fire(event)
    if (transition.transition_id, transition.target) != (report.get("id"), report.get("target")):
        raise BridgeProtocolError(
            f"connection transition {report.get('id')!r} -> {report.get('target')!r} is not "
            f"what {MACHINE} declares for {event!r} in {source!r} ({transition.transition_id})"
        )
    fired = Fired(
        transition=transition.transition_id,
        region=MACHINE,
        source=transition.source,
        target=transition.target,
        guards=transition.guards,
        actions=transition.actions,
    )
    return Step(
        machine=MACHINE,
        event=event,
        before=Configuration(states=((MACHINE, transition.source),)),
        after=Configuration(states=((MACHINE, transition.target),)),
        fired=(fired,),
        effects=(),
        facts=(("restarts", restarts), ("max_restarts", follower.max_restarts)),
    )


def record_transitions(audit: AuditLog | None, reports: Any, profile: Profile) -> None:
    """Check every reported transition, then audit them in order (none if one is wrong)."""
    if not reports:
        return
    if not isinstance(reports, list):
        raise BridgeProtocolError("field 'connection' must be a list of transitions")
    steps = [(report, checked_step(report)) for report in reports]
    if audit is None:
        return
    fingerprint = connection_spec().sha256
    for report, step in steps:
        audit.record(
            event=ConnectionEvent(event=step.event, detail=str(report.get("detail") or "")),
            ctx=None,
            result=HookResult(hook=MACHINE, steps=(step,)),
            profile=profile.value,
            fingerprint=fingerprint,
        )
