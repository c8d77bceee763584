"""The bridge server: one lifecycle runtime behind a JSON-lines pipe to the real Pi.

The Pi extension ``pictx-bridge.mjs`` starts ``python -m pictx_fsm.hosts.pi`` when its
session starts and sends one line per handler call; the server answers each with one line
holding the handler's return value and the effects to apply (notices, sent messages,
appended entries, abort). Pi re-runs extension factories on fork, resume and reload, so one
server serves one session, and exits when its input closes.

The server keeps a mirror of the session: the first request carries the header and every
entry, later ones the entries appended since and the current leaf (navigation without a
summary appends nothing). The mirror feeds the runtime's facts exactly as the model session
feeds them in ``pictx-fsm verify``.

Request:  ``{"id", "kind": "hook"|"tool"|"command", "name", "event", "ctx",
"session": {"header"?, "entries", "leaf"}}``.
Reply:    ``{"id", "value", "effects"}`` or ``{"id", "error"}``.
"""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from pictx_fsm.audit import AuditLog
from pictx_fsm.hosts.pi.convert import BridgeProtocolError, context_of, event_of
from pictx_fsm.notes import (
    FileNotesSource,
    NotesIdentity,
    agent_slug,
    default_notes_home,
    model_slug,
    project_key,
)
from pictx_fsm.policy import default_agent_dir
from pictx_fsm.protocol import DEFAULT_PROFILE, NOTES_AGENT_ENV, Profile, Texts
from pictx_fsm.resets import BootWriter
from pictx_fsm.runtime import LifecycleRuntime, pi_file_settings
from pictx_fsm.session.entries import entry_from_json, header_from_json
from pictx_fsm.session.tree import SessionTree

RuntimeFactory = Callable[[SessionTree, Mapping[str, Any]], LifecycleRuntime]


def runtime_from_environment(tree: SessionTree, ctx: Mapping[str, Any]) -> LifecycleRuntime:
    """The runtime a real Pi session gets: Pi's settings files, the notes home on disk, an
    optional audit log (``PICTX_FSM_AUDIT_DIR``), the profile from ``PICTX_FSM_PROFILE``."""
    env = os.environ
    home = Path.home()
    cwd = Path(str(ctx.get("cwd") or "."))
    audit_dir = env.get("PICTX_FSM_AUDIT_DIR")
    audit = None
    if audit_dir:  # an unusable directory keeps records in memory and says so, once
        audit = AuditLog(Path(audit_dir) / f"{tree.session_id}.audit.jsonl")
    profile = Profile.parse(env.get("PICTX_FSM_PROFILE", DEFAULT_PROFILE.value))
    model: Mapping[str, Any] = ctx["model"] if isinstance(ctx.get("model"), Mapping) else {}
    identity = NotesIdentity(
        session_id=tree.session_id,
        project_key=project_key(cwd),
        agent=agent_slug(env.get(NOTES_AGENT_ENV)),
        model=model_slug(str(model.get("id") or "") or None),
    )
    notes = FileNotesSource(home=default_notes_home(env, home), identity=identity)
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


def _now_ms() -> int:
    return int(time.time() * 1000)


class BridgeSession:
    """The mirror of one Pi session and the runtime that reads it."""

    def __init__(self, factory: RuntimeFactory = runtime_from_environment) -> None:
        self._factory = factory
        self.tree: SessionTree | None = None
        self.runtime: LifecycleRuntime | None = None

    def sync(self, session: Mapping[str, Any], ctx: Mapping[str, Any]) -> None:
        header_json = session.get("header")
        if header_json is not None:
            header, problems = header_from_json(header_json)
            if header is None:
                raise BridgeProtocolError(f"field 'session.header': {problems[0].message}")
            self.tree = SessionTree(header)
            self.runtime = self._factory(self.tree, ctx)
        if self.tree is None:
            raise BridgeProtocolError("field 'session.header' is required on the first request")
        for raw in session.get("entries") or ():
            entry, _ = entry_from_json(raw)
            self.tree.add(entry)
        leaf = session.get("leaf")
        if leaf != self.tree.leaf_id and (leaf is None or leaf in self.tree):
            self.tree.navigate(leaf)

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]:
        self.sync(request.get("session") or {}, request.get("ctx") or {})
        assert self.runtime is not None
        event = event_of(str(request.get("kind")), str(request.get("name")), request.get("event"))
        result = self.runtime.handle(event, context_of(request.get("ctx") or {}))
        reply = result.to_json()
        return {"value": reply["value"], "effects": reply["effects"]}


def serve(
    lines: Iterable[str],
    out: IO[str],
    factory: RuntimeFactory = runtime_from_environment,
) -> int:
    """Answer every request line; an unusable request gets an error line, never a crash."""
    session = BridgeSession(factory)
    for line in lines:
        if not line.strip():
            continue
        request_id: Any = None
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise BridgeProtocolError("a request must be a JSON object")
            request_id = request.get("id")
            reply: dict[str, Any] = {"id": request_id, **session.handle(request)}
        except (json.JSONDecodeError, BridgeProtocolError) as error:
            reply = {"id": request_id, "error": f"bad request: {error}"}
        except Exception as error:  # the lifecycle's own failure, reported to Pi's onError
            reply = {"id": request_id, "error": f"{type(error).__name__}: {error}"}
        out.write(json.dumps(reply, ensure_ascii=False) + "\n")
        out.flush()
    return 0


EXTENSION = Path(__file__).with_name("pictx-bridge.mjs")
"""The Pi extension to load with ``pi -e`` (it starts this server)."""
