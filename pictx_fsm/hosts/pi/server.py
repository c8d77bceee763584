"""The bridge server: one extension's runtime behind a JSON-lines pipe to the real Pi.

The Pi extension (``pictx-bridge.mjs`` for pi-context, ``context-management.mjs`` for
pi-context-management, ``notesoup.mjs`` for notesoup) starts ``python -m pictx_fsm.hosts.pi
--extension NAME`` on first use and sends one line per handler call; the server answers each
with one line holding the handler's return value and the effects to apply (notices, sent
messages, appended entries, abort). Pi re-runs extension factories on fork, resume and reload,
so one server serves one extension in one session, and exits when its input closes.
:func:`serve` is the one loop for every extension; :func:`open_session` picks the session that
runs the named one — this module's :class:`BridgeSession` for pi-context and (with its runtime,
:mod:`.served_notesoup`, no leases and no decisions ahead) for notesoup, :mod:`.served_cm` for
pi-context-management, whose answers may make host calls into Pi meanwhile (:mod:`.channel`).

This module's :class:`BridgeSession` is pi-context's:
The server keeps a mirror of the session: the first request carries the header and every
entry of the branch, later ones the entries appended since and the current leaf. A restarted
server is sent everything again (``resync``) and rebuilds the lifecycle from the session as a
reload would (boot repair, R63–R66). Message lists travel elided both ways (:mod:`.wire`).
The host's usage (``ctx.getContextUsage()``, R47) is computed here from the mirror by the
incremental twin of Pi's estimate (:class:`~pictx_fsm.session.usage.ContextUsageIndex` with
chars/4, as the model session computes it): Pi's own call rebuilds the whole projection, an
O(session) cost on every hook. With ``PICTX_FSM_CHECK_USAGE=<file>`` the extension also
sends Pi's figure and every comparison is appended to that file (the tests check the twin).

Request:  ``{"id", "kind": "hello"|"resync"|"hook"|"tool"|"command"|"event", "name", "event", "ctx",
"session": {"header"?, "entries", "leaf"}, "connection"?: [transition, ...],
"pipelined"?: true}`` (an observational hook the extension does not wait for). The event of
``context`` or of a ``turn_end`` may ask for the next hooks decided ahead (``"speculate":
true``); ``"event": {"speculated": true}`` confirms the next decision (:mod:`.speculation`).
Reply:    ``{"id", "value", "effects", "withSystem"?: {"slices"}, "ahead"?: [{"name",
"event", "value"}, ...]}``, ``{"id", "hello": {...}}`` or ``{"id", "error"}``;
always ASCII (``\\uXXXX`` escapes), so a lone surrogate in a message cannot break the pipe.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Final, Protocol

import attrs

from pictx_fsm.audit.log import AuditLog
from pictx_fsm.errors import PictxError
from pictx_fsm.extensions.pi_context.boot_writer import BootWriter
from pictx_fsm.extensions.pi_context.lifecycle import LifecycleState
from pictx_fsm.extensions.pi_context.notes import FileNotesSource, default_notes_home
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime, pi_file_settings
from pictx_fsm.extensions.pi_context.texts import (
    DEFAULT_PROFILE,
    NOTES_AGENT_ENV,
    PI_CONTEXT_COMMAND,
    Profile,
    Texts,
)
from pictx_fsm.extensions.pi_context.tools import migrate_legacy_homes
from pictx_fsm.extensions.pi_context.windows import WindowIndex
from pictx_fsm.host.effects import HookResult, Notify
from pictx_fsm.host.events import Command, ContextUsage, HookEvent, HostContext, SessionStart
from pictx_fsm.host.settings import default_agent_dir
from pictx_fsm.hosts.pi import lease, texts
from pictx_fsm.hosts.pi.channel import Channel
from pictx_fsm.hosts.pi.connection_audit import record_transitions
from pictx_fsm.hosts.pi.convert import BridgeProtocolError, context_of, event_of
from pictx_fsm.hosts.pi.handshake import (
    NOTESOUP,
    PI_CONTEXT,
    SERVED,
    UnknownExtensionError,
    hello,
)
from pictx_fsm.hosts.pi.mirror import Mirror
from pictx_fsm.hosts.pi.speculation import (
    Speculation,
    Systems,
    predict_with_system,
    settle_events,
    systems_of,
)
from pictx_fsm.hosts.pi.support import version_notice
from pictx_fsm.hosts.pi.wire import (
    MESSAGE_HOOKS,
    PIPELINED_HOOKS,
    ExpandedMessages,
    WireError,
    encode_messages,
    expand_messages,
)
from pictx_fsm.session.estimate import CharsCounter
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.session.usage import ContextUsageIndex

__all__ = [
    "AUDIT_DIR_ENV",
    "CHECK_USAGE_ENV",
    "EXTENSION",
    "PROFILE_ENV",
    "WITH_SYSTEM",
    "AuditFactory",
    "BridgeSession",
    "PipeLines",
    "PipelinedEffectError",
    "RuntimeFactory",
    "ServedRuntime",
    "Session",
    "answer",
    "audit_from_environment",
    "check_pipelined",
    "check_usage",
    "migrate_notes_home",
    "notes_home",
    "open_session",
    "profile_from_environment",
    "runtime_from_environment",
    "serve",
    "version_notices",
]

AUDIT_DIR_ENV: Final = "PICTX_FSM_AUDIT_DIR"
CHECK_USAGE_ENV: Final = "PICTX_FSM_CHECK_USAGE"
PROFILE_ENV: Final = "PICTX_FSM_PROFILE"
WITH_SYSTEM: Final = "context_with_system"


class PipelinedEffectError(PictxError):
    """A pipelined hook's reply held more than notices (a lifecycle bug the user is told)."""


class ServedRuntime(Protocol):
    """What the server asks of every runtime it serves; leases and decisions ahead are
    pi-context's alone (a :class:`LifecycleRuntime`, see :meth:`BridgeSession.lifecycle`)."""

    def handle(self, event: HookEvent, ctx: HostContext | None = None) -> HookResult: ...


RuntimeFactory = Callable[[SessionTree, Mapping[str, Any], "AuditLog | None"], ServedRuntime]
AuditFactory = Callable[[str], "AuditLog | None"]


def profile_from_environment() -> Profile:
    return Profile.parse(os.environ.get(PROFILE_ENV, DEFAULT_PROFILE.value))


def audit_from_environment(session_id: str) -> AuditLog | None:
    """``$PICTX_FSM_AUDIT_DIR/<session id>.audit.jsonl``, continued across restarts; an
    unusable directory keeps the records in memory and says so, once (:class:`AuditLog`)."""
    audit_dir = os.environ.get(AUDIT_DIR_ENV)
    if not audit_dir:
        return None
    return AuditLog(Path(audit_dir) / f"{session_id}.audit.jsonl")


def runtime_from_environment(
    tree: SessionTree, ctx: Mapping[str, Any], audit: AuditLog | None
) -> LifecycleRuntime:
    """The runtime a real Pi session gets: Pi's settings files, the notes home on disk, the
    profile from ``PICTX_FSM_PROFILE``."""
    env = os.environ
    home = Path.home()
    profile = profile_from_environment()
    model: Mapping[str, Any] = ctx["model"] if isinstance(ctx.get("model"), Mapping) else {}
    notes = FileNotesSource.for_session(
        tree.session_id,
        str(ctx.get("cwd") or tree.header.cwd or "."),
        home=notes_home(),
        agent=env.get(NOTES_AGENT_ENV),
        model=str(model.get("id") or "") or None,
    )
    return LifecycleRuntime(
        tree,
        profile=profile,
        settings=pi_file_settings(default_agent_dir(env, home)),
        boot_writer=BootWriter(
            texts=Texts.for_profile(profile), notes=notes, agent_name=env.get(NOTES_AGENT_ENV)
        ),
        rng=random.SystemRandom(),
        clock=_now_ms,
        audit=audit,
    )


def notes_home() -> Path:
    """``$PI_NOTES_HOME``, else ``~/.agents/notes``: what the boots index and the tools write."""
    return default_notes_home(os.environ, Path.home())


def migrate_notes_home() -> list[Notify]:
    """N16, once at activation: a legacy ``personal/`` home becomes ``human/``; a conflict is
    told (pi-context warns on its console; the bridge's console is Pi's notices)."""
    try:
        warning = migrate_legacy_homes(notes_home())
    except OSError as error:  # the rename failed: told, and the session goes on
        where = "the notes home's migration (N16)"
        warning = texts.NOTICE_LIFECYCLE_ERROR.format(where=where, error=error)
    return [] if warning is None else [Notify(message=warning, level="warning")]


def check_pipelined(hook: str, reply: Mapping[str, Any]) -> None:
    """A pipelined hook's reply is applied after Pi moved on: only notices may be in it
    (:data:`~pictx_fsm.hosts.pi.wire.PIPELINED_HOOKS`); anything else is refused, and told."""
    if hook not in PIPELINED_HOOKS:
        raise BridgeProtocolError(f"field 'pipelined': hook {hook!r} is answered, not pipelined")
    kinds = sorted({e["effect"] for e in reply["effects"]} - {"notify"})
    if reply["value"] is not None or kinds:
        found = ", ".join(kinds + (["a value"] if reply["value"] is not None else []))
        raise PipelinedEffectError(
            f"the lifecycle answered the pipelined hook {hook} with {found}; Pi did not wait"
        )


def version_notices(ctx: Mapping[str, Any]) -> list[Notify]:
    """At Pi's startup: one notice when the Pi the extension reports is too old
    (:func:`~pictx_fsm.hosts.pi.support.version_notice`)."""
    notice = version_notice(context_of(ctx).pi_version)
    return [] if notice is None else [notice]


def _now_ms() -> int:
    return int(time.time() * 1000)


class BridgeSession:
    """The mirror of one Pi session and the runtime that reads it."""

    def __init__(
        self,
        factory: RuntimeFactory = runtime_from_environment,
        audit_factory: AuditFactory = audit_from_environment,
        *,
        extension: str = PI_CONTEXT,
        toggle_command: str = PI_CONTEXT_COMMAND,
        activation: Callable[[], list[Notify]] | None = None,
        leases: bool = True,
    ) -> None:
        """``extension``: the name the handshake says; ``toggle_command``: the command a
        restarted server replays when the user had switched the extension off;
        ``activation``: the notices of a first activation (pi-context's notes home
        migration, N16, by default); ``leases``: whether this extension's hooks may be leased
        (its manifest section has a lease) and decided ahead."""
        self._factory = factory
        self._audit_factory = audit_factory
        self.extension = extension
        self.toggle_command = toggle_command
        self.activation = migrate_notes_home if activation is None else activation
        self.profile = profile_from_environment()
        self.mirror = Mirror()
        self.tree: SessionTree | None = None
        self.runtime: ServedRuntime | None = None
        self.audit: AuditLog | None = None
        self.host_usage: ContextUsageIndex | None = None
        self.activated = False
        """Whether this server already answered a first request (N16 runs once)."""
        self.kept: dict[str, tuple[Mapping[str, Any], ...]] = {}
        """Per message hook, the kept messages of its last request (``{SAME: k}`` refers)."""
        self.systems: Systems | None = None
        """The last ``context_with_system``'s system messages: where a speculated one has
        them (:mod:`.speculation`)."""
        self.ahead: list[Speculation] = []
        """The hooks decided with the last request, in the order Pi sends them."""
        self.leasing = leases
        """Whether this connection may still get leases (a broken one ends them)."""
        self.ahead_allowed = leases

    def sync(self, session: Mapping[str, Any], ctx: Mapping[str, Any]) -> None:
        if "header" in session and session["header"] is not None:
            self.mirror.apply({"header": session["header"]})
            self.tree = self.mirror.require()
            self.host_usage = ContextUsageIndex(self.tree, CharsCounter())
            if self.audit is not None:
                self.audit.close()
            self.audit = self._audit_factory(self.tree.session_id)
            self.runtime = self._factory(self.tree, ctx, self.audit)
        self.mirror.apply({**session, "header": None})

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]:
        kind = str(request.get("kind"))
        if kind == "hello":
            return {"hello": hello(self.extension)}
        ahead, self.ahead = self.ahead, []
        ctx = request.get("ctx") or {}
        self.sync(request.get("session") or {}, ctx)
        assert self.runtime is not None
        record_transitions(self.audit, request.get("connection"), self.profile)
        # A restarted server (resync) continues an activation: N16 ran in its first server.
        first, self.activated = not self.activated and kind != "resync", True
        if kind == "resync":
            return self._resync(request, ctx)
        name = str(request.get("name"))
        event = request.get("event")
        if kind == "hook" and _confirms(event):
            return self._confirm(name, ahead)
        expanded, speculate = None, False
        if kind == "hook" and name in MESSAGE_HOOKS and isinstance(event, Mapping):
            speculate = name == "context" and event.get("speculate") is True
            previous = self.kept.pop(name, ())
            expanded = expand_messages(event.get("messages") or [], previous=previous)
            self.kept[name] = expanded.kept
            if name == WITH_SYSTEM:
                self.systems = systems_of(expanded)
            event = {**event, "messages": list(expanded.messages)}
        hook_event = event_of(kind, name, event)
        reply = self._answer(hook_event, ctx, expanded)
        if "leased" in request:
            return self._check_lease(name, reply, expanded, request["leased"])
        if not self.ahead_allowed:
            pass  # every hook waits for this extension's decision: nothing leased or ahead
        elif request.get("lease") is True and self._lease(reply, ctx, name):
            pass  # the leased hooks that follow are answered by the extension: nothing ahead
        elif speculate and expanded is not None:
            self._speculate(reply, ctx, expanded)
        elif name == "turn_end" and isinstance(event, Mapping) and event.get("speculate"):
            self._settle_ahead(reply, ctx, event)
        if request.get("pipelined") is True:
            check_pipelined(name, reply)
        notices = self.activation() if first else []
        if isinstance(hook_event, SessionStart) and hook_event.reason == "startup":
            notices += version_notices(ctx)
        if notices:
            reply["effects"] = [n.to_json() for n in notices] + reply["effects"]
        return reply

    def lifecycle(self) -> LifecycleRuntime:
        """pi-context's runtime, for what only it does (leases, decisions ahead)."""
        if not isinstance(self.runtime, LifecycleRuntime):
            raise BridgeProtocolError(f"{self.extension}: no leases and no decisions ahead")
        return self.runtime

    def _lease(self, reply: dict[str, Any], ctx: Mapping[str, Any], hook: str) -> bool:
        """Grant a lease with this awaited reply when the state allows one (:mod:`.lease`)."""
        if not self.leasing or reply["effects"]:
            return False
        model = ctx.get("model") if isinstance(ctx.get("model"), Mapping) else None
        granted = lease.grant(self.lifecycle(), self.context(ctx, hook), model)
        if granted is not None:
            reply["lease"] = granted.to_json()
        return granted is not None

    def _check_lease(
        self, hook: str, reply: dict[str, Any], expanded: ExpandedMessages | None, claimed: Any
    ) -> dict[str, Any]:
        """A hook the extension answered under a lease, decided here as ever: the answers
        must agree, else the lease is broken for this connection (told, audited)."""
        if hook not in lease.LEASED_HOOKS:
            raise BridgeProtocolError(f"field 'leased': hook {hook!r} is not leased")
        assert self.tree is not None
        expected = None
        if expanded is not None:
            expected = lease.expected_projection(expanded, WindowIndex.of(self.tree).current_window)
        state = self.lifecycle().state
        detail = lease.disagreement(hook, reply, expected, claimed, state)
        notices = [e for e in reply["effects"] if e["effect"] == "notify"]
        if detail is None or not self.leasing:  # a break is told once per connection
            return {"value": None, "effects": notices}
        self.leasing = False
        lease.record_broken(self.audit, hook, detail, self.profile)
        told = Notify(message=texts.NOTICE_LEASE_BROKEN.format(detail=detail), level="error")
        return {"value": None, "effects": [*notices, told.to_json()], "broken": detail}

    def _speculate(
        self, reply: dict[str, Any], ctx: Mapping[str, Any], expanded: ExpandedMessages
    ) -> None:
        """Decide, not keep, the ``context_with_system`` Pi will send next (:mod:`.speculation`);
        offered in ``reply["withSystem"]`` when ``context`` returned nothing and the decision
        is a plain message list."""
        if self.systems is None or reply["value"] is not None or reply["effects"]:
            return
        predicted = predict_with_system(self.systems, expanded)
        if predicted is None:
            return
        decided = self._decide(WITH_SYSTEM, predicted, ctx)
        if decided is None or not isinstance(decided[1], dict) or "messages" not in decided[1]:
            return
        self.ahead = [decided[0]]
        reply["withSystem"] = {"slices": encode_messages(decided[1]["messages"], predicted)}

    def _settle_ahead(
        self, reply: dict[str, Any], ctx: Mapping[str, Any], turn_end: Mapping[str, Any]
    ) -> None:
        """Decide, not keep, the ``agent_end`` and ``agent_before_settle`` that follow a
        ``turn_end`` ending the run (:func:`settle_events`); offered in ``reply["ahead"]``
        (their events and values) when ``agent_end`` has no value."""
        if reply["value"] is not None or reply["effects"]:
            return
        state, decided, offered = self.lifecycle().state, [], []
        for hook, payload in settle_events(turn_end):
            found = self._decide(hook, payload, ctx, state)
            if found is None or (hook == "agent_end" and found[1] is not None):
                return
            state = found[0].decision[0]
            decided.append(found[0])
            offered.append({"name": hook, "event": payload, "value": found[1]})
        self.ahead = decided
        reply["ahead"] = offered

    def _decide(
        self,
        hook: str,
        payload: Mapping[str, Any] | ExpandedMessages,
        ctx: Mapping[str, Any],
        state: LifecycleState | None = None,
    ) -> tuple[Speculation, Any] | None:
        """``hook`` decided ahead in ``state`` and its reply's value; ``None`` when deciding
        fails or the reply has an effect (then the real request meets it, as ever)."""
        runtime = self.lifecycle()
        if isinstance(payload, ExpandedMessages):
            payload = {"messages": list(payload.messages)}
        try:
            event = event_of("hook", hook, payload)
            facts = self.context(ctx, hook)
            decision = runtime.decide(event, facts, state)
            result = decision[1].to_json()
        except Exception:  # not offered: the real request reports the failure
            return None
        if result["effects"]:
            return None
        return Speculation(hook=hook, event=event, ctx=facts, decision=decision), result["value"]

    def _confirm(self, name: str, ahead: list[Speculation]) -> dict[str, Any]:
        """The extension answered hook ``name`` as decided ahead: keep that decision (the
        next ones decided with it stay held)."""
        if not ahead or ahead[0].hook != name:
            raise BridgeProtocolError(f"field 'event.speculated': no {name} was decided ahead")
        ahead[0].keep(self.lifecycle())
        self.ahead = ahead[1:]
        return {"value": None, "effects": []}

    def context(self, ctx: Mapping[str, Any], hook: str) -> HostContext:
        """The ``ctx`` facts, the host's usage from the mirror unless the request has one."""
        facts = context_of(ctx)
        if "usage" in ctx or self.host_usage is None:
            return facts
        model = facts.model
        window = model.context_window if model is not None else None
        usage = None
        if window is not None and window > 0:
            usage = ContextUsage(tokens=self.host_usage.branch_tokens(), context_window=window)
        if "hostUsage" in ctx:
            check_usage(hook, ctx.get("hostUsage"), usage)
        return attrs.evolve(facts, usage=usage)

    def _answer(
        self, event: HookEvent, ctx: Any, expanded: ExpandedMessages | None = None
    ) -> dict[str, Any]:
        assert self.runtime is not None
        result = self.runtime.handle(event, self.context(ctx, type(event).HOOK))
        reply = result.to_json()
        value = reply["value"]
        if expanded is not None and isinstance(value, dict) and "messages" in value:
            value = {"slices": encode_messages(value["messages"], expanded)}
        return {"value": value, "effects": reply["effects"]}

    def _resync(self, request: Mapping[str, Any], ctx: Any) -> dict[str, Any]:
        """A restarted server: the toggle as the user left it (its notice was already
        shown), then the session start a reload gives (boot repair, R63–R66)."""
        if request.get("toggle") == "off":
            self._answer(Command(name=self.toggle_command, args="off"), ctx)
        return self._answer(SessionStart(reason="reload"), ctx)


def _confirms(event: Any) -> bool:
    return isinstance(event, Mapping) and event.get("speculated") is True


def check_usage(hook: str, host: Any, mirror: ContextUsage | None) -> None:
    """Append Pi's usage and the mirror's to ``$PICTX_FSM_CHECK_USAGE`` (the twin's test)."""
    path = os.environ.get(CHECK_USAGE_ENV)
    if not path:
        return
    tokens = None if mirror is None else mirror.tokens
    line = {"hook": hook, "host": None if host is None else host.get("tokens"), "mirror": tokens}
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def serve(
    lines: Iterable[str],
    out: IO[str],
    factory: RuntimeFactory = runtime_from_environment,
    audit_factory: AuditFactory = audit_from_environment,
    extension: str = PI_CONTEXT,
) -> int:
    """Answer every request line for ``extension``; an unusable request gets an error line,
    never a crash."""
    source = PipeLines.of(lines)
    pending = source.pending if isinstance(source, PipeLines) else _nothing_pending
    channel = Channel(source, out, pending)
    session = open_session(extension, channel, factory, audit_factory)
    channel.answer = lambda line: answer(session, line)
    for line in channel.requests():
        channel.reply(answer(session, line))
    return 0


def _nothing_pending() -> bool:
    return False


class Session(Protocol):
    """What the server asks of the session it runs: one request in, one reply out."""

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]: ...


def open_session(
    extension: str,
    channel: Channel,
    factory: RuntimeFactory = runtime_from_environment,
    audit_factory: AuditFactory = audit_from_environment,
) -> Session:
    """The session that runs ``extension`` (one of :data:`SERVED`)."""
    if extension == PI_CONTEXT:
        return BridgeSession(factory, audit_factory)
    if extension == "context-management":
        from pictx_fsm.hosts.pi.served_cm import CmBridgeSession

        return CmBridgeSession(channel)
    if extension == NOTESOUP:
        from pictx_fsm.extensions.notesoup.texts import NOTESOUP_COMMAND
        from pictx_fsm.hosts.pi.served_notesoup import (
            no_activation,
            notesoup_runtime_from_environment,
        )

        return BridgeSession(
            notesoup_runtime_from_environment,
            audit_factory,
            extension=NOTESOUP,
            toggle_command=NOTESOUP_COMMAND,
            activation=no_activation,
            leases=False,
        )
    raise UnknownExtensionError(f"--extension {extension!r}: this server runs {', '.join(SERVED)}")


class PipeLines:
    """Request lines read straight from the pipe, so the server knows whether the next
    request is already there: the replies to a batch (pipelined hooks and the awaited request
    they were written with) go out in one write, one wake-up of Pi."""

    def __init__(self, fd: int, encoding: str) -> None:
        self._fd = fd
        self._encoding = encoding
        self._buffer = b""

    @classmethod
    def of(cls, lines: Iterable[str]) -> Iterable[str]:
        """A stream with a descriptor read as :class:`PipeLines`; anything else as it is."""
        try:
            fd = lines.fileno()  # type: ignore[attr-defined]
        except (AttributeError, OSError, ValueError):
            return lines
        return cls(fd, getattr(lines, "encoding", None) or "utf-8")

    def __iter__(self) -> Iterator[str]:
        while True:
            end = self._buffer.find(b"\n")
            if end < 0 and not self._fill():
                if self._buffer:
                    yield self._decode(self._buffer)
                return
            if end >= 0:
                line, self._buffer = self._buffer[:end], self._buffer[end + 1 :]
                yield self._decode(line)

    def pending(self) -> bool:
        """Whether a whole request line is already read and waiting."""
        return b"\n" in self._buffer

    def _fill(self) -> bool:
        """Read up to the next line end (chunks joined once); ``False`` at end of input."""
        parts = [self._buffer]
        while True:
            chunk = os.read(self._fd, 1 << 16)
            if not chunk:
                self._buffer = b"".join(parts)
                return False
            parts.append(chunk)
            if b"\n" in chunk:
                self._buffer = b"".join(parts)
                return True

    def _decode(self, line: bytes) -> str:
        return line.decode(self._encoding, errors="surrogateescape")


def answer(session: Session, line: str) -> dict[str, Any]:
    """One request line → one reply object (errors included)."""
    request_id: Any = None
    try:
        request = json.loads(line)
        if not isinstance(request, dict):
            raise BridgeProtocolError("a request must be a JSON object")
        request_id = request.get("id")
        return {"id": request_id, **session.handle(request)}
    except (json.JSONDecodeError, BridgeProtocolError, WireError) as error:
        return {"id": request_id, "error": f"bad request: {error}"}
    except Exception as error:  # the lifecycle's own failure, told to the user once
        return {"id": request_id, "error": f"{type(error).__name__}: {error}"}


EXTENSION = Path(__file__).with_name("pictx-bridge.mjs")
"""The Pi extension to load with ``pi -e`` (it starts this server)."""
