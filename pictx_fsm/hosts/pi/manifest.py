"""The bridge manifest: everything the JS extension registers and says, generated from Python.

``pictx-bridge.manifest.json`` sits beside ``pictx-bridge.mjs`` and is committed. Its shared
part is the package version the handshake must find, the protocol, the timeouts and the
connection machine's transition table; then one section per extension the bridge serves
(``extensions``: ``pi-context``, ``context-management``, ``notesoup``), from which the
extension's entry registers its hooks, its tools (names, labels, descriptions, JSON-schema
parameters, execution modes, prompt guidelines), its commands and flags, and takes every text
it may show and what it answers itself while its server cannot (``fallbacks``; pi-context's
and notesoup's window constants for their fail-closed projection, and pi-context's lease on
quiet hooks). So a new hook, tool or text needs no JS change: regenerate with ``pictx-fsm pi
manifest`` (``--check`` fails when the file is stale; a test runs it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from pictx_fsm import __version__
from pictx_fsm.extensions.context_management.adapter import CM_HOOKS
from pictx_fsm.extensions.context_management.commands import SUBCOMMANDS as CM_SUBCOMMANDS
from pictx_fsm.extensions.context_management.texts import (
    CHILD_ENV,
    FLAG_NO_AUTO_HANDOFF,
    FLAG_NO_AUTO_HANDOFF_DESCRIPTION,
    FLAG_NO_BACKGROUND,
    FLAG_NO_BACKGROUND_DESCRIPTION,
    STATUS_KEY,
)
from pictx_fsm.extensions.context_management.texts import COMMAND as CM_COMMAND
from pictx_fsm.extensions.context_management.texts import (
    COMMAND_DESCRIPTION as CM_COMMAND_DESCRIPTION,
)
from pictx_fsm.extensions.context_management.texts import TOOLS as CM_TOOLS
from pictx_fsm.extensions.context_management.tools import TOOL_SCHEMAS as CM_TOOL_SCHEMAS
from pictx_fsm.extensions.notesoup.adapter import NOTESOUP_HOOKS
from pictx_fsm.extensions.notesoup.lifecycle import (
    toggle_completions as notesoup_toggle_completions,
)
from pictx_fsm.extensions.notesoup.texts import BOOT_TYPE as NOTESOUP_BOOT_TYPE
from pictx_fsm.extensions.notesoup.texts import (
    CLEAR_MEMORY_COMMAND,
    CLEAR_MEMORY_COMMAND_ALIAS,
    CLEAR_MEMORY_COMMAND_DESCRIPTION,
    CLEAR_MEMORY_TOOL,
    NOTESOUP_COMMAND,
    NOTESOUP_COMMAND_DESCRIPTION,
)
from pictx_fsm.extensions.notesoup.texts import MARKER_TYPE as NOTESOUP_MARKER_TYPE
from pictx_fsm.extensions.notesoup.texts import NOTICE_MISSING_BOOT as NOTESOUP_MISSING_BOOT
from pictx_fsm.extensions.notesoup.texts import STATUS_REQUESTED as NOTESOUP_STATUS_REQUESTED
from pictx_fsm.extensions.notesoup.tools.specs import TOOL_SPECS as NOTESOUP_TOOLS
from pictx_fsm.extensions.notesoup.windows import SCHEME as NOTESOUP_SCHEME
from pictx_fsm.extensions.pi_context.lifecycle import toggle_completions
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    MARKER_TYPE,
    NOTICE_MISSING_BOOT,
    PI_CONTEXT_COMMAND,
    PI_CONTEXT_COMMAND_DESCRIPTION,
    ROOT_WINDOW_SUFFIX,
    UNBUNDLED_BUILD_LABEL,
    WINDOW_ID_PREFIX,
    WIPE_MEMORY_COMMAND,
    WIPE_MEMORY_COMMAND_DESCRIPTION,
    WIPE_MEMORY_TOOL,
    WIPE_STATUS_REQUESTED,
)
from pictx_fsm.extensions.pi_context.tools import TOOL_SPECS
from pictx_fsm.extensions.pi_context.windows import session_prefix
from pictx_fsm.host.events import HOOKS
from pictx_fsm.hosts.pi import lease, texts
from pictx_fsm.hosts.pi.connection import transition_table
from pictx_fsm.hosts.pi.lease_machine import lease_table
from pictx_fsm.hosts.pi.wire import MESSAGE_HOOKS, PIPELINED_HOOKS, PROTOCOL
from pictx_fsm.session.estimate import CHARS_PER_TOKEN, IMAGE_TOKENS, UNSETTLED_STOPS

__all__ = [
    "ABORT_GRACE_MS",
    "MANIFEST",
    "PIPELINE_DELAY_MS",
    "REQUEST_TIMEOUT_MS",
    "START_TIMEOUT_MS",
    "build_manifest",
    "manifest_is_current",
    "render_manifest",
    "write_manifest",
]

MANIFEST: Final = Path(__file__).with_name("pictx-bridge.manifest.json")
REQUEST_TIMEOUT_MS: Final = 5_000
"""Default wait for one reply (``PICTX_FSM_TIMEOUT_MS`` overrides it)."""
ABORT_GRACE_MS: Final = 1_000
"""How long a request the user aborted (``ctx.signal``, Escape) may still take before the
server counts as hung: a healthy server answers in milliseconds, and the next hooks queue
behind the abandoned one."""
PIPELINE_DELAY_MS: Final = 50
"""How long a pipelined hook's request may wait for the next awaited one to share its write:
its notices (R54, R63) show at most this late; in a turn the next request comes sooner."""
START_TIMEOUT_MS: Final = 20_000
"""Default wait for a new server's handshake and first answer: Python's start and the
lifecycle's load (``PICTX_FSM_START_TIMEOUT_MS`` overrides it)."""


def _commands() -> list[dict[str, Any]]:
    return [
        {
            "name": WIPE_MEMORY_COMMAND,
            "description": WIPE_MEMORY_COMMAND_DESCRIPTION,
            "completions": None,
            "waitForIdle": True,
            "reportsStatus": False,
        },
        {
            "name": PI_CONTEXT_COMMAND,
            "description": PI_CONTEXT_COMMAND_DESCRIPTION,
            "completions": list(toggle_completions("")),
            "waitForIdle": False,
            "reportsStatus": True,
        },
    ]


def _fail_closed(
    marker_type: str,
    boot_type: str,
    *,
    marker_types: list[str] | None = None,
    boot_types: list[str] | None = None,
) -> dict[str, Any]:
    """A section for an extension of the pi-context family: no flags or host facts, and while
    its server cannot answer, its windows cut provider requests (``failclosed.mjs``), a marked
    branch gets no native compaction and no branch summary across a window (R62, R75)."""
    window: dict[str, Any] = {"markerType": marker_type}
    if marker_types is not None:
        window["markerTypes"] = marker_types
    window["bootType"] = boot_type
    if boot_types is not None:
        window["bootTypes"] = boot_types
    window.update(
        {
            "windowIdPrefix": WINDOW_ID_PREFIX,
            "rootWindowSuffix": ROOT_WINDOW_SUFFIX,
            "sessionPrefixLength": len(session_prefix("0" * 64)),
        }
    )
    return {
        "flags": [],
        "childEnv": None,
        "hostFacts": False,
        "statusKey": None,
        "fallbacks": {
            "context_with_system": "cut_request",
            "session_before_compact": "guard_compaction",
            "session_before_tree": "guard_tree_summary",
        },
        "window": window,
    }


def _pi_context_texts() -> dict[str, str]:
    found = texts.bridge_texts(texts.PI_CONTEXT_VOICE)
    found.update({name: getattr(texts, name) for name in texts.PI_CONTEXT_ONLY})
    found["NOTICE_MISSING_BOOT"] = NOTICE_MISSING_BOOT
    found["UNBUNDLED_BUILD_LABEL"] = UNBUNDLED_BUILD_LABEL
    return dict(sorted(found.items()))


def _pi_context() -> dict[str, Any]:
    """pi-context: every lifecycle hook, the eleven tools, both commands; its fail-closed
    projection's constants and fallbacks, and the lease on quiet hooks."""
    return {
        "title": "pi-context",
        "hooks": list(HOOKS),
        "pipelined": list(PIPELINED_HOOKS),
        "messageHooks": list(MESSAGE_HOOKS),
        "tools": [tool.to_json() for tool in TOOL_SPECS],
        "commands": _commands(),
        **_fail_closed(MARKER_TYPE, BOOT_TYPE),
        "wipeTool": WIPE_MEMORY_TOOL,
        "wipeRequested": WIPE_STATUS_REQUESTED,
        "texts": _pi_context_texts(),
        "lease": {
            "hooks": list(lease.LEASED_HOOKS),
            "neutral": list(lease.NEUTRAL_HOOKS),
            "countedEntries": sorted(lease.COUNTED_ENTRIES),
            "countedRoles": sorted(lease.COUNTED_ROLES),
            "plainStops": sorted(lease.PLAIN_STOPS),
            "unsettledStops": sorted(UNSETTLED_STOPS),
            "charsPerToken": CHARS_PER_TOKEN,
            "imageTokens": IMAGE_TOKENS,
            "machine": lease_table(),
        },
    }


def _context_management() -> dict[str, Any]:
    """pi-context-management: its hooks (no ``context`` hook, M2), its four tools with their
    prompt guidelines, ``/ctx-memory``, its two flags (M3) and the child switch (M1). No
    fallback: while its server cannot answer, Pi's own compaction runs (M34)."""
    tools = []
    for name in CM_TOOLS:
        schema = CM_TOOL_SCHEMAS[name]
        tool: dict[str, Any] = {
            "name": name,
            "label": name,
            "description": schema["description"],
            "parameters": schema["parameters"],
        }
        if "promptGuidelines" in schema:
            tool["promptGuidelines"] = list(schema["promptGuidelines"])
        tools.append(tool)
    return {
        "title": "pi-context-management",
        "hooks": [hook for hook in HOOKS if hook in CM_HOOKS],
        "pipelined": [],
        "messageHooks": [],
        "tools": tools,
        "commands": [
            {
                "name": CM_COMMAND,
                "description": CM_COMMAND_DESCRIPTION,
                "completions": list(CM_SUBCOMMANDS),
                "waitForIdle": False,
                "reportsStatus": False,
            }
        ],
        "flags": [
            {"name": FLAG_NO_BACKGROUND, "description": FLAG_NO_BACKGROUND_DESCRIPTION},
            {"name": FLAG_NO_AUTO_HANDOFF, "description": FLAG_NO_AUTO_HANDOFF_DESCRIPTION},
        ],
        "childEnv": CHILD_ENV,
        "hostFacts": True,
        "statusKey": STATUS_KEY,
        "fallbacks": {},
        "texts": dict(sorted(texts.bridge_texts(texts.CONTEXT_MANAGEMENT_VOICE).items())),
    }


def _notesoup() -> dict[str, Any]:
    """notesoup 0.38: every hook, its eleven tools, ``/notesoup``, ``/clear-memory`` and its
    alias ``/cm`` (none waits for idle, S16, S17). It fails closed as pi-context does: its
    windows and, migrated, pi-context 0.25's (both marker and boot types) cut a provider
    request the server cannot answer. No lease and no speculation: every hook waits for it."""
    return {
        "title": "notesoup",
        "hooks": sorted(NOTESOUP_HOOKS, key=HOOKS.index),
        "pipelined": list(PIPELINED_HOOKS),
        "messageHooks": list(MESSAGE_HOOKS),
        "tools": [tool.to_json() for tool in NOTESOUP_TOOLS],
        "commands": [
            {
                "name": NOTESOUP_COMMAND,
                "description": NOTESOUP_COMMAND_DESCRIPTION,
                "completions": list(notesoup_toggle_completions("")),
                "waitForIdle": False,
                "reportsStatus": True,
            },
            *(
                {
                    "name": name,
                    "description": CLEAR_MEMORY_COMMAND_DESCRIPTION,
                    "completions": None,
                    "waitForIdle": False,
                    "reportsStatus": False,
                }
                for name in (CLEAR_MEMORY_COMMAND, CLEAR_MEMORY_COMMAND_ALIAS)
            ),
        ],
        **_fail_closed(
            NOTESOUP_MARKER_TYPE,
            NOTESOUP_BOOT_TYPE,
            marker_types=sorted(NOTESOUP_SCHEME.marker_types),
            boot_types=sorted(NOTESOUP_SCHEME.boot_types),
        ),
        "wipeTool": CLEAR_MEMORY_TOOL,
        "wipeRequested": NOTESOUP_STATUS_REQUESTED,
        "texts": {
            **texts.bridge_texts(texts.NOTESOUP_VOICE),
            **texts.NOTESOUP_ONLY,
            "NOTICE_MISSING_BOOT": NOTESOUP_MISSING_BOOT,
        },
    }


def build_manifest() -> dict[str, Any]:
    """The manifest as data (what :data:`MANIFEST` must hold)."""
    return {
        "generatedBy": "pictx-fsm pi manifest",
        "package": __version__,
        "protocol": PROTOCOL,
        "timeouts": {
            "requestMs": REQUEST_TIMEOUT_MS,
            "startMs": START_TIMEOUT_MS,
            "abortGraceMs": ABORT_GRACE_MS,
            "pipelineMs": PIPELINE_DELAY_MS,
        },
        "connection": transition_table(),
        "extensions": {
            "pi-context": _pi_context(),
            "context-management": _context_management(),
            "notesoup": _notesoup(),
        },
    }


def render_manifest() -> str:
    return json.dumps(build_manifest(), indent=2, ensure_ascii=True) + "\n"


def manifest_is_current(path: Path | None = None) -> bool:
    path = path or MANIFEST
    return path.exists() and path.read_text(encoding="utf-8") == render_manifest()


def write_manifest(path: Path | None = None) -> bool:
    """Write the manifest (default :data:`MANIFEST`); ``True`` when the file changed."""
    path = path or MANIFEST
    text = render_manifest()
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True
