"""The bridge manifest: everything the JS extension registers and says, generated from Python.

``pictx-bridge.manifest.json`` sits beside ``pictx-bridge.mjs`` and is committed. The
extension reads it at load time and registers from it every hook of the lifecycle's hook
table (:data:`pictx_fsm.host.events.HOOKS`), all eleven tools of
:data:`pictx_fsm.extensions.pi_context.tools.TOOL_SPECS`
(the one owner of their names, labels, descriptions, JSON-schema parameters and execution
modes) and both commands; it also takes from it the window identity constants its fail-closed
projection needs, every text it may show, the connection machine's transition table and the
package version the handshake must find. So a new hook, tool or text needs no JS change:
regenerate with ``pictx-fsm pi manifest`` (``--check`` fails when the file is stale; a test
runs it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from pictx_fsm import __version__
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


def _texts() -> dict[str, str]:
    names = [name for name in dir(texts) if name.isupper()]
    found = {name: getattr(texts, name) for name in sorted(names)}
    found["NOTICE_MISSING_BOOT"] = NOTICE_MISSING_BOOT
    found["UNBUNDLED_BUILD_LABEL"] = UNBUNDLED_BUILD_LABEL
    return found


def build_manifest() -> dict[str, Any]:
    """The manifest as data (what :data:`MANIFEST` must hold)."""
    return {
        "generatedBy": "pictx-fsm pi manifest",
        "package": __version__,
        "protocol": PROTOCOL,
        "hooks": list(HOOKS),
        "pipelined": list(PIPELINED_HOOKS),
        "messageHooks": list(MESSAGE_HOOKS),
        "tools": [tool.to_json() for tool in TOOL_SPECS],
        "commands": _commands(),
        "window": {
            "markerType": MARKER_TYPE,
            "bootType": BOOT_TYPE,
            "windowIdPrefix": WINDOW_ID_PREFIX,
            "rootWindowSuffix": ROOT_WINDOW_SUFFIX,
            "sessionPrefixLength": len(session_prefix("0" * 64)),
        },
        "wipeTool": WIPE_MEMORY_TOOL,
        "wipeRequested": WIPE_STATUS_REQUESTED,
        "texts": _texts(),
        "timeouts": {
            "requestMs": REQUEST_TIMEOUT_MS,
            "startMs": START_TIMEOUT_MS,
            "abortGraceMs": ABORT_GRACE_MS,
            "pipelineMs": PIPELINE_DELAY_MS,
        },
        "connection": transition_table(),
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
