"""The bridge's own notices and the one message it sends the model (exact texts).

The JS extension says these when the Python side cannot (the server is down, hung, or was
never usable); they reach it through the manifest, each extension's set in its section, so
each text has one owner here: :func:`bridge_texts` fills the templates with who speaks (the
extension's name, what its server is called, what degraded mode means for it). The module's
constants are pi-context's. Every notice is one action of the ``bridge_connection`` machine,
so a failure episode is told once. Placeholders are ``{name}`` fields filled by the extension.
"""

from __future__ import annotations

from typing import Final

from attrs import frozen


@frozen(kw_only=True)
class Voice:
    """Who a set of bridge texts speaks for."""

    name: str
    """The extension's name, the prefix of each notice."""
    server: str
    """What its Python side is called in a notice."""
    consequence: str
    """What the user has while no server answers."""
    extension_path: str
    """The ``--extension-path`` argument that prints this extension's entry."""
    failing: str
    """What failed when a reply is an error."""


PI_CONTEXT_VOICE: Final = Voice(
    name="pi-context",
    server="lifecycle server",
    consequence="requests are cut at the current window; no resets, reminders or repairs",
    extension_path="",
    failing="the lifecycle",
)
CONTEXT_MANAGEMENT_VOICE: Final = Voice(
    name="pi-context-management",
    server="memory server",
    consequence=(
        "context_notes and the history tools answer an error, compactions are Pi's own and "
        "no handoff starts; saved notes stay in the session"
    ),
    extension_path=" context-management",
    failing="the extension",
)

INSTALL_HINT: Final = "`pip install /path/to/pictx_fsm` (a clone of the repository)"
"""How pictx-fsm gets installed (no package index serves it): the README's step 2."""


def bridge_texts(voice: Voice) -> dict[str, str]:
    """Every text the bridge says for one extension (the manifest's ``texts``)."""
    name, server, consequence = voice.name, voice.server, voice.consequence
    return {
        "NOTICE_FAULT": (
            f"{name}: the {server} {{fault}}; restarting it{{lost}}. Until it answers, "
            f"{consequence}."
        ),
        # A fault after a restart continues the episode: told only when a reset request was lost.
        "NOTICE_LOSS": (
            f"{name}: the {server} {{fault}} again{{lost}}; restarting it (the failure "
            "already reported)."
        ),
        "NOTICE_GIVE_UP": (
            f"{name}: the {server} {{fault}}{{lost}}, and restarting did not help: degraded "
            f"mode for the rest of this session ({consequence})."
            + (" /pi-context shows it." if voice is PI_CONTEXT_VOICE else "")
        ),
        "NOTICE_DIAGNOSIS": (
            f"{name}: cannot run the {server}: {{problem}}. {{fix}} Degraded mode until Pi "
            f"restarts ({consequence})."
        ),
        "PROBLEM_NO_INTERPRETER": "PICTX_FSM_PYTHON={python} was not found ({error})",
        "PROBLEM_NO_PACKAGE": "{python} cannot import pictx_fsm ({error})",
        "PROBLEM_VERSION": (
            "the extension is pictx-fsm {extension} but {python} runs pictx-fsm {package}"
        ),
        "FIX_PYTHON": (
            "Set PICTX_FSM_PYTHON to the Python that has pictx-fsm installed (for example "
            f"/path/to/.venv/bin/python after {INSTALL_HINT})."
        ),
        "FIX_VERSION": (
            'Load the extension of that installation (pi -e "$({python} -m pictx_fsm.cli pi '
            f'--extension-path{voice.extension_path})") or point PICTX_FSM_PYTHON at the '
            "Python of this one."
        ),
        "FAULT_EXITED": "stopped (exit {code})",
        "FAULT_TIMEOUT": "did not answer {hook} within {ms} ms",
        "FAULT_ABANDONED": "still had not answered {hook} {ms} ms after the request was aborted",
        "FAULT_GARBAGE": "wrote a line that is not a reply ({detail})",
        "FAULT_PIPE": "closed its pipe ({detail})",
        "FAULT_HANDSHAKE": "did not complete its handshake ({detail})",
        # /pi-context while no server answers: the extension answers it alone.
        "NOTICE_DEGRADED_STATUS": (
            f"{name}: {{state}} · {{reason}} · Pi {{pi_version}}: {consequence}."
        ),
        # A reply that is an error (the extension raised): told once per distinct text.
        "NOTICE_LIFECYCLE_ERROR": f"{name}: {voice.failing} failed in {{where}}: {{error}}",
        "TOOL_UNAVAILABLE": (
            f"{name}: the {server} is unavailable ({{state}}); {{tool}} did nothing."
            + (" Your context window continues." if voice is PI_CONTEXT_VOICE else "")
        ),
    }


_PI_CONTEXT: Final = bridge_texts(PI_CONTEXT_VOICE)

NOTICE_FAULT: Final = _PI_CONTEXT["NOTICE_FAULT"]
NOTICE_LOSS: Final = _PI_CONTEXT["NOTICE_LOSS"]
NOTICE_GIVE_UP: Final = _PI_CONTEXT["NOTICE_GIVE_UP"]
NOTICE_DIAGNOSIS: Final = _PI_CONTEXT["NOTICE_DIAGNOSIS"]
PROBLEM_NO_INTERPRETER: Final = _PI_CONTEXT["PROBLEM_NO_INTERPRETER"]
PROBLEM_NO_PACKAGE: Final = _PI_CONTEXT["PROBLEM_NO_PACKAGE"]
PROBLEM_VERSION: Final = _PI_CONTEXT["PROBLEM_VERSION"]
FIX_PYTHON: Final = _PI_CONTEXT["FIX_PYTHON"]
FIX_VERSION: Final = _PI_CONTEXT["FIX_VERSION"]
FAULT_EXITED: Final = _PI_CONTEXT["FAULT_EXITED"]
FAULT_TIMEOUT: Final = _PI_CONTEXT["FAULT_TIMEOUT"]
FAULT_ABANDONED: Final = _PI_CONTEXT["FAULT_ABANDONED"]
FAULT_GARBAGE: Final = _PI_CONTEXT["FAULT_GARBAGE"]
FAULT_PIPE: Final = _PI_CONTEXT["FAULT_PIPE"]
FAULT_HANDSHAKE: Final = _PI_CONTEXT["FAULT_HANDSHAKE"]
NOTICE_DEGRADED_STATUS: Final = _PI_CONTEXT["NOTICE_DEGRADED_STATUS"]
NOTICE_LIFECYCLE_ERROR: Final = _PI_CONTEXT["NOTICE_LIFECYCLE_ERROR"]
TOOL_UNAVAILABLE: Final = _PI_CONTEXT["TOOL_UNAVAILABLE"]

# -- pi-context's alone ------------------------------------------------------------------------

LOST_RESET: Final = " (lost: the model's pending wipe_memory request; no reset happened)"
"""Appended to a fault notice when a ``rollover_requested`` reset never reached a boundary."""
NOTICE_LEASE_BROKEN: Final = (
    "pi-context: a hook answered under a lease was not what the lifecycle decided ({detail}); "
    "no more leases on this connection: every hook waits for the lifecycle again."
)
"""A leased answer the server's own decision contradicts (:mod:`.lease`): told once."""
MODEL_LOST_RESET: Final = (
    "Your wipe_memory request was lost: pi-context's lifecycle server stopped before the reset "
    "was committed, so your memory was NOT wiped and this context window continues. Call "
    "wipe_memory again if you still need a fresh window."
)
"""Sent to the model (a hidden custom message) when its reset request was lost."""
BRIDGE_NOTICE_TYPE: Final = "pi-context/bridge-notice"
PI_CONTEXT_ONLY: Final = (
    "LOST_RESET",
    "NOTICE_LEASE_BROKEN",
    "MODEL_LOST_RESET",
    "BRIDGE_NOTICE_TYPE",
)
"""The texts only pi-context's bridge says (a lost reset, a broken lease)."""

__all__ = [
    "CONTEXT_MANAGEMENT_VOICE",
    "PI_CONTEXT_VOICE",
    "Voice",
    "bridge_texts",
]
