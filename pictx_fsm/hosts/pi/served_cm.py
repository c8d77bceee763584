"""pi-context-management behind the bridge: its runtime on a mirror of the real Pi session,
every host service it needs carried out by Pi through host calls (:mod:`.channel`).

The server keeps the session's mirror as for pi-context (the first request carries the header
and the branch, later ones what was appended) and runs one
:class:`~pictx_fsm.extensions.context_management.runtime.ContextMemoryRuntime` on it; hooks
become the extension's events through its one host mapping
(:mod:`pictx_fsm.extensions.context_management.adapter`), as on the model session. What the
runtime asks of its host (:class:`~pictx_fsm.extensions.context_management.runtime.CmHost`)
is done by Pi, through the extension:

- ``append_entry`` (``pi.appendEntry``; a refused write is a :class:`StorageError`, M15),
  ``notify``, ``set_status`` and ``show_panel`` (Pi's UI: ``ctx.ui.notify``, ``setStatus``,
  ``setWidget``; stderr lines in print mode);
- ``generate``: a model request through Pi's configured model (``ctx.modelRegistry``); a
  compaction waits for it, a background job's or a handoff preparation's reply comes back as
  an ``event`` request (``generation_replied``, or ``deadline_reached`` when its 300 s ran
  out first);
- ``wait_for_idle`` (M57: the extension dispatches its own command, whose context waits for
  idle and sends ``idle_reached``), ``create_session``, ``switch_session`` (Pi's
  ``switchSession`` from that command context), ``send_takeover`` (the target's prompt, sent
  by the switch's ``withSession``, answered ``handoff_replied``) and ``compact``.

A reply carries ``hold`` while a handoff runs in this (source) session: the command that began
it keeps its context — the one Pi's session switch needs — until the flow ends.

Time is the wall clock (``$PICTX_FSM_CLOCK_OFFSET_FILE``, a file holding milliseconds, moves
it ahead: the real-Pi tests let a 300 s deadline or a 5-minute cooldown pass). With
``$PICTX_FSM_AUDIT_DIR`` every step's event and fired transitions go to
``<session id>.context-management.jsonl`` there, beside the connection transitions.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from pictx_fsm.extensions.context_management import adapter
from pictx_fsm.extensions.context_management import events as ev
from pictx_fsm.extensions.context_management.diaglog import OsLogFiles
from pictx_fsm.extensions.context_management.effects import CmResult
from pictx_fsm.extensions.context_management.generation import (
    GenerationReply,
    GenerationRequest,
)
from pictx_fsm.extensions.context_management.notes import FileRecord
from pictx_fsm.extensions.context_management.parents import FileParents
from pictx_fsm.extensions.context_management.records import RECEIPT_TYPE
from pictx_fsm.extensions.context_management.runtime import ContextMemoryRuntime, StorageError
from pictx_fsm.extensions.context_management.state import CmState, Flags
from pictx_fsm.extensions.context_management.texts import (
    FLAG_NO_AUTO_HANDOFF,
    FLAG_NO_BACKGROUND,
    GENERATION_POLICY_TEXT,
)
from pictx_fsm.hosts.pi.channel import Channel, HostCallFailed
from pictx_fsm.hosts.pi.connection_audit import checked_step
from pictx_fsm.hosts.pi.convert import BridgeProtocolError, context_of, event_of, tool_call
from pictx_fsm.hosts.pi.handshake import hello
from pictx_fsm.hosts.pi.mirror import Mirror
from pictx_fsm.session.tree import SessionTree

EXTENSION: Final = "context-management"
AUDIT_DIR_ENV: Final = "PICTX_FSM_AUDIT_DIR"
CLOCK_OFFSET_ENV: Final = "PICTX_FSM_CLOCK_OFFSET_FILE"
SOURCE_PHASES: Final = frozenset({"filling_notes", "packaging", "saving", "creating", "switching"})
"""The handoff machine's states in the source session, while the flow needs a command context."""
REPLY_KINDS: Final = frozenset({"ok", "error", "incomplete", "aborted"})
HOST_CALLS: Final = (
    "append_entry",
    "notify",
    "set_status",
    "show_panel",
    "generate",
    "cancel_generation",
    "wait_for_idle",
    "create_session",
    "switch_session",
    "send_takeover",
    "compact",
)
"""Every host call the runtime's host makes (``hostcalls.mjs`` carries out each)."""


def wall_clock() -> int:
    """Milliseconds since the epoch, moved ahead by ``$PICTX_FSM_CLOCK_OFFSET_FILE``."""
    now = int(time.time() * 1000)
    path = os.environ.get(CLOCK_OFFSET_ENV)
    if not path:
        return now
    try:
        return now + int(Path(path).read_text().strip() or 0)
    except (OSError, ValueError):
        return now


class DecisionLog:
    """Each step's event and fired transitions, one JSON line each (the differential tests
    compare them with the model session's); the bridge's connection transitions beside."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.seq = 0

    def write(self, event: str, fired: list[str]) -> None:
        if self.path is None:
            return
        self.seq += 1
        line = {"seq": self.seq, "at": time.time_ns(), "event": event, "fired": fired}
        try:
            with self.path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(line) + "\n")
        except OSError:
            self.path = None  # an unusable directory never stops the extension


def decision_log(session_id: str) -> DecisionLog:
    directory = os.environ.get(AUDIT_DIR_ENV)
    if not directory:
        return DecisionLog(None)
    return DecisionLog(Path(directory) / f"{session_id}.{EXTENSION}.jsonl")


def cm_context(facts: Mapping[str, Any], now: int) -> ev.CmContext:
    """The extension's ``ctx`` observations from the facts the extension sent (Pi's own
    ``getContextUsage()``, M53; the session file only when Pi persists the session, M45)."""
    host = context_of(facts)
    usage = facts.get("usage")
    tokens = window = None
    if isinstance(usage, Mapping):
        tokens, window = _number(usage.get("tokens")), _number(usage.get("contextWindow"))
    session_file = facts.get("sessionFile")
    return ev.CmContext(
        now=now,
        tokens=tokens,
        context_window=window,
        model=adapter.model_name(host.model),
        pending_input=host.has_pending_messages,
        idle=host.idle,
        session_file=session_file if isinstance(session_file, str) and session_file else None,
        cwd=host.cwd,
    )


def _number(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def flags_of(facts: Mapping[str, Any]) -> Flags:
    """M3 as the extension read them (``pi.getFlag`` of each, by name). A child session
    (M1) never gets here: the extension registers nothing in one."""
    flags = facts.get("flags")
    flags = flags if isinstance(flags, Mapping) else {}
    return Flags(
        no_background=flags.get(FLAG_NO_BACKGROUND) is True,
        no_auto_handoff=flags.get(FLAG_NO_AUTO_HANDOFF) is True,
    )


def generation_call(request: GenerationRequest, deadline: int, now: int) -> dict[str, Any]:
    """A model request as the extension sends it to Pi's model: the policy as the system
    prompt, the payload (notes, batch, sources) as the user's message."""
    return {
        "job": request.job,
        "system": GENERATION_POLICY_TEXT,
        "prompt": json.dumps(request.payload(), ensure_ascii=False, separators=(",", ":")),
        "timeoutMs": max(0, deadline - now),
    }


def reply_of(value: Any) -> GenerationReply:
    """A model reply as the extension returns it: ``{kind, text, input, output, cost}``."""
    if not isinstance(value, Mapping) or value.get("kind") not in REPLY_KINDS:
        raise BridgeProtocolError("field 'reply.kind' must be ok, error, incomplete or aborted")
    cost = value.get("cost")
    return GenerationReply(
        kind=value["kind"],
        text=str(value.get("text") or ""),
        input_tokens=_number(value.get("input")),
        output_tokens=_number(value.get("output")),
        cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else 0.0,
    )


class BridgeGenerator:
    """A compaction's model requests (M25): sent through Pi's model, waited for."""

    def __init__(self, session: CmBridgeSession) -> None:
        self.session = session

    def generate(self, request: GenerationRequest) -> GenerationReply:
        run = self.session.runtime_state().generation
        now = self.session.clock()
        deadline = run.deadline if run is not None else now
        value = self.session.call("generate", **generation_call(request, deadline, now))
        return reply_of(value)


class BridgeCmHost:
    """The runtime's host: Pi, through host calls."""

    def __init__(self, session: CmBridgeSession, tree: SessionTree) -> None:
        self.session = session
        self.tree = tree
        self.deadlines: dict[int, int] = {}
        """The outstanding model requests answered later: job → deadline."""

    def context(self) -> ev.CmContext:
        return cm_context(self.session.facts, self.session.clock())

    def append_entry(self, custom_type: str, data: object) -> None:
        try:
            self.session.call("append_entry", customType=custom_type, data=data)
        except HostCallFailed as error:
            raise StorageError(str(error)) from None

    def notify(self, message: str, level: str) -> None:
        self.session.channel.send("notify", message=message, level=level)

    def set_status(self, text: str) -> None:
        self.session.channel.send("set_status", text=text)

    def show_panel(self, text: str) -> None:
        self.session.channel.send("show_panel", text=text)

    def advance(self, ms: int) -> None:
        """Nothing: Pi's model call took its time on the wall clock."""

    def request_generation(self, request: GenerationRequest, deadline: int) -> None:
        self.deadlines[request.job] = deadline
        now = self.session.clock()
        self.session.channel.send("generate", wait=False, **generation_call(request, deadline, now))

    def cancel_reply(self, job: int) -> None:
        self.deadlines.pop(job, None)
        self.session.channel.send("cancel_generation", job=job)

    def wait_for_idle(self) -> None:
        self.session.channel.send("wait_for_idle")

    def create_session(self, receipt: object) -> str | None:
        try:
            value = self.session.call("create_session", customType=RECEIPT_TYPE, data=receipt)
        except HostCallFailed:
            return None
        path = value.get("path") if isinstance(value, Mapping) else None
        return path if isinstance(path, str) and path else None

    def switch_session(self, path: str) -> bool:
        try:
            value = self.session.call("switch_session", path=path)
        except HostCallFailed:
            return False
        return isinstance(value, Mapping) and value.get("switched") is True

    def send_takeover(self, text: str) -> None:
        self.session.channel.send("send_takeover", text=text)

    def compact(self) -> None:
        self.session.call("compact")

    def log_files(self) -> OsLogFiles:
        return OsLogFiles()


class CmBridgeSession:
    """The mirror of one Pi session and the pi-context-management runtime that reads it."""

    def __init__(self, channel: Channel, clock: Callable[[], int] = wall_clock) -> None:
        self.channel = channel
        self.clock = clock
        self.mirror = Mirror()
        self.facts: Mapping[str, Any] = {}
        self.runtime: ContextMemoryRuntime | None = None
        self.host: BridgeCmHost | None = None
        self.log = DecisionLog(None)

    # -- requests -------------------------------------------------------------------------------

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]:
        kind = str(request.get("kind"))
        if kind == "hello":
            return {"hello": hello(EXTENSION)}
        with self.channel.answering(request.get("id")):
            self._observe(request.get("ctx"), request.get("session"))
            self._record_connection(request.get("connection"))
            value = self._answer(kind, str(request.get("name")), request.get("event"))
        return {"value": value, "effects": [], "hold": self.holding}

    @property
    def holding(self) -> bool:
        """Whether a handoff runs in this session (its command keeps its context)."""
        runtime = self.runtime
        return runtime is not None and runtime.state.state_of("handoff") in SOURCE_PHASES

    def runtime_state(self) -> CmState:
        assert self.runtime is not None
        return self.runtime.state

    def call(self, op: str, **args: Any) -> Any:
        """A host call whose return may carry fresh ``ctx`` facts and the entries Pi appended
        meanwhile (``session``)."""
        value = self.channel.call(op, **args)
        if isinstance(value, Mapping):
            self._observe(value.get("ctx"), value.get("session"))
        return value

    def _observe(self, ctx: Any, session: Any) -> None:
        if ctx is not None:
            if not isinstance(ctx, Mapping):
                raise BridgeProtocolError("field 'ctx' must be an object")
            self.facts = ctx
        if session is None:
            return
        if not isinstance(session, Mapping):
            raise BridgeProtocolError("field 'session' must be an object")
        if self.mirror.apply(session):
            self._start(self.mirror.require())

    def _start(self, tree: SessionTree) -> None:
        self.host = BridgeCmHost(self, tree)
        self.log = decision_log(tree.session_id)
        runtime = ContextMemoryRuntime(
            tree=tree,
            host=self.host,
            generator=BridgeGenerator(self),
            parents=FileParents(),
            flags=flags_of(self.facts),
        )
        runtime.on_step = self._logged
        self.runtime = runtime

    def _logged(self, event: ev.CmEvent, state: CmState, result: CmResult) -> None:
        self.log.write(type(event).__name__, list(result.fired))

    def _record_connection(self, reports: Any) -> None:
        """The bridge's connection transitions, checked against the declaration, logged."""
        if not reports:
            return
        if not isinstance(reports, list):
            raise BridgeProtocolError("field 'connection' must be a list of transitions")
        for report in reports:
            step = checked_step(report)
            self.log.write("bridge_connection", [f.transition for f in step.fired])

    # -- answers --------------------------------------------------------------------------------

    def _answer(self, kind: str, name: str, payload: Any) -> Any:
        runtime = self.runtime
        if runtime is None:
            raise BridgeProtocolError("field 'session.header' is required on the first request")
        if kind == "resync":  # a restarted server rebuilds from the session, as a reload
            runtime.handle(ev.SessionStarted(reason="reload"))
            return None
        if kind == "event":
            self._event(runtime, name, _object(payload, "event"))
            return None
        if kind == "tool":
            call = tool_call(name, _object(payload, "event"))
            result = runtime.handle(ev.ToolCalled(name=name, arguments=dict(call.arguments)))
            return {"content": [{"type": "text", "text": adapter.tool_text(result)}]}
        if kind == "command":
            runtime.handle(ev.CommandIssued(args=str(_object(payload, "event").get("args", ""))))
            return None
        hook = event_of(kind, name, payload)
        data = _object(payload, "event")
        mapped = adapter.event_of(hook, context_of(self.facts), _preparation(data))
        if mapped is None:
            return None
        return adapter.compaction_json(adapter.reply_of(runtime.handle(mapped), hook))

    def _event(self, runtime: ContextMemoryRuntime, name: str, event: Mapping[str, Any]) -> None:
        """An answer Pi gives later: a model reply, its deadline, idle, a handoff outcome."""
        host = self.host
        assert host is not None
        if name == "idle_reached":
            runtime.handle(ev.IdleReached())
        elif name == "handoff_replied":
            outcome, target = event.get("outcome"), event.get("target")
            if not isinstance(outcome, str):
                raise BridgeProtocolError("field 'event.outcome' must be a string")
            target = target if isinstance(target, str) else None
            runtime.handle(ev.HandoffReplied(outcome=outcome, target=target))
        elif name in ("generation_replied", "deadline_reached"):
            job = event.get("job")
            if isinstance(job, bool) or not isinstance(job, int):
                raise BridgeProtocolError("field 'event.job' must be an integer")
            deadline = host.deadlines.pop(job, None)
            if deadline is None:
                return  # cancelled, or a job of an earlier instance: dropped
            if name == "deadline_reached" or self.clock() >= deadline:
                runtime.handle(ev.DeadlineReached(job=job))
            else:
                runtime.handle(ev.GenerationReplied(job=job, reply=reply_of(event.get("reply"))))
        else:
            raise BridgeProtocolError(f"field 'name': no event {name!r}")


def _object(value: Any, field: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise BridgeProtocolError(f"field {field!r} must be an object")
    return value


def _preparation(payload: Mapping[str, Any]) -> adapter.Preparation:
    """``session_before_compact``'s preparation as the extension sends it."""
    files = _object(payload.get("files"), "event.files")
    first = payload.get("firstKeptEntryId")
    return adapter.Preparation(
        first_kept=first if isinstance(first, str) else None,
        custom_instructions=payload.get("customInstructions") is True,
        files=FileRecord(
            read=tuple(str(f) for f in files.get("read") or ()),
            modified=tuple(str(f) for f in files.get("modified") or ()),
        ),
    )


__all__ = ["HOST_CALLS", "CmBridgeSession", "cm_context", "wall_clock"]
