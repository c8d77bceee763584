"""The bridge's own notices and the one message it sends the model (exact texts).

The JS extension says these when the Python side cannot (the server is down, hung, or was
never usable); they reach it through the manifest, so each text has one owner here. Every
notice is one action of the ``bridge_connection`` machine, so a failure episode is told once.
Placeholders are ``{name}`` fields filled by the extension.
"""

from __future__ import annotations

from typing import Final

DEGRADED_CONSEQUENCE: Final = (
    "requests are cut at the current window; no resets, reminders or repairs"
)
NOTICE_FAULT: Final = (
    "pi-context: the lifecycle server {fault}; restarting it{lost}. Until it answers, "
    + DEGRADED_CONSEQUENCE
    + "."
)
NOTICE_LOSS: Final = (
    "pi-context: the lifecycle server {fault} again{lost}; restarting it (the failure "
    "already reported)."
)
"""A fault after a restart continues the episode: told only when a reset request was lost."""
NOTICE_GIVE_UP: Final = (
    "pi-context: the lifecycle server {fault}{lost}, and restarting did not help: degraded "
    "mode for the rest of this session (" + DEGRADED_CONSEQUENCE + "). /pi-context shows it."
)
NOTICE_DIAGNOSIS: Final = (
    "pi-context: cannot run the lifecycle server: {problem}. {fix} Degraded mode until Pi "
    "restarts (" + DEGRADED_CONSEQUENCE + ")."
)
LOST_RESET: Final = " (lost: the model's pending wipe_memory request; no reset happened)"
"""Appended to a fault notice when a ``rollover_requested`` reset never reached a boundary."""

PROBLEM_NO_INTERPRETER: Final = "PICTX_FSM_PYTHON={python} was not found ({error})"
PROBLEM_NO_PACKAGE: Final = "{python} cannot import pictx_fsm ({error})"
PROBLEM_VERSION: Final = (
    "the extension is pictx-fsm {extension} but {python} runs pictx-fsm {package}"
)
FIX_PYTHON: Final = (
    "Set PICTX_FSM_PYTHON to the Python that has pictx-fsm installed (for example "
    "/path/to/.venv/bin/python after `pip install pictx-fsm`)."
)
FIX_VERSION: Final = (
    'Load the extension of that installation (pi -e "$({python} -m pictx_fsm.cli pi '
    '--extension-path)") or point PICTX_FSM_PYTHON at the Python of this one.'
)

FAULT_EXITED: Final = "stopped (exit {code})"
FAULT_TIMEOUT: Final = "did not answer {hook} within {ms} ms"
FAULT_ABANDONED: Final = "still had not answered {hook} {ms} ms after the request was aborted"
FAULT_GARBAGE: Final = "wrote a line that is not a reply ({detail})"
FAULT_PIPE: Final = "closed its pipe ({detail})"
FAULT_HANDSHAKE: Final = "did not complete its handshake ({detail})"

NOTICE_LEASE_BROKEN: Final = (
    "pi-context: a hook answered under a lease was not what the lifecycle decided ({detail}); "
    "no more leases on this connection: every hook waits for the lifecycle again."
)
"""A leased answer the server's own decision contradicts (:mod:`.lease`): told once."""

NOTICE_DEGRADED_STATUS: Final = (
    "pi-context: {state} · {reason} · Pi {pi_version}: " + DEGRADED_CONSEQUENCE + "."
)
"""``/pi-context`` while no server answers (``degraded``, or ``restarting``): the extension
answers it alone."""
NOTICE_LIFECYCLE_ERROR: Final = "pi-context: the lifecycle failed in {where}: {error}"
"""A reply that is an error (the lifecycle raised): told once per distinct text."""
TOOL_UNAVAILABLE: Final = (
    "pi-context: the lifecycle server is unavailable ({state}); {tool} did nothing. "
    "Your context window continues."
)

MODEL_LOST_RESET: Final = (
    "Your wipe_memory request was lost: pi-context's lifecycle server stopped before the reset "
    "was committed, so your memory was NOT wiped and this context window continues. Call "
    "wipe_memory again if you still need a fresh window."
)
"""Sent to the model (a hidden custom message) when its reset request was lost."""
BRIDGE_NOTICE_TYPE: Final = "pi-context/bridge-notice"
